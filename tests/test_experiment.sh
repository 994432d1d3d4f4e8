#!/bin/bash
# check: alone (its verdict is a ratio of fetch rates)
# tools/slow-client-experiment --quick, the project's headline, in every
# make check: first its calibration cell (twins alike, no slow clients)
# reads within 1 +- 0.05, or the run is NOT JUDGED and this test fails
# with the figure in its line; then behind the real nginx and lighttpd and direct, evfcgid keeps
# 0.9 of its fast rate beside 10 slow clients of 8 MiB while the blocking
# libfcgi loop stalls below 0.2 in the same run.  Then --cgi in a reduced
# form (8 MiB, 10 slow clients, 4 hung scripts): evfcgid --cgi keeps 0.9
# while fcgiwrap -c 1 stalls (the CGI measurements, which judge no rate,
# are tests/test_experiment_measure.sh's, beside other tests).  Then the verdict
# is shown to fail on results where either half does not hold, and the
# command line's errors.
source "$(dirname "$0")/lib.sh"
EXP=$TOP/tools/slow-client-experiment
OUT=$T/exp

"$EXP" --quick --out "$OUT" >"$T/exp.out" 2>&1
rc=$?
grep '^\[' "$T/exp.out" | sed 's/^/# /'
sed -n '/^| backend/,/^$/p; /^Verdict/,/^- evfcgid/p' "$T/exp.out" | sed 's/^/# /'
calib=$(awk -F'\t' '$1 == "calibration" { print $8 }' "$OUT/results.tsv" 2>/dev/null)
if [ "$rc" -eq 0 ]; then
	ok "slow-client-experiment --quick: verdict PROVEN (exit 0; calibration, twins alike: ${calib:-none})"
elif [ "$rc" -eq 3 ]; then
	not_ok "slow-client-experiment --quick: verdict NOT JUDGED: the calibration cell (twins alike) read ${calib:-none}, outside 1 +- 0.05 (exit 3)"
	tail -n 30 "$T/exp.out" | sed 's/^/# /'
else
	not_ok "slow-client-experiment --quick: verdict PROVEN (exit $rc; calibration, twins alike: ${calib:-none})"
	tail -n 30 "$T/exp.out" | sed 's/^/# /'
fi
check "it shows progress (cell n of N, elapsed, estimate)" \
	grep -q '^\[5/5\] *[0-9]*s elapsed, ~[0-9]*s left' "$T/exp.out"
check "the calibration cell comes first and its ratio is printed (${calib:-none})" \
	grep -q "^\[1/5\].*calibration: .* 0 slow \.\.\. .*ratio ${calib:-none} " "$T/exp.out"
check "results.md holds the table and the verdict" \
	grep -q '^Verdict: PROVEN\.$' "$OUT/results.md"
check "results.md has the calibration row" grep -q '^| calibration |' "$OUT/results.md"
rows=$(awk -F'\t' 'NR > 1' "$OUT/results.tsv" | wc -l)
check "results.tsv: the calibration and one row per decisive cell (5, got $rows)" test "$rows" -eq 5
for f in nginx lighttpd direct; do
	r=$(awk -F'\t' -v f="$f" '$1 == "evfcgid" && $2 == f { print $8 }' "$OUT/results.tsv")
	check "evfcgid behind $f keeps >= 0.9 beside 10 slow clients (ratio $r)" \
		awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r >= 0.9) }'
	q=$(awk -F'\t' -v f="$f" '$1 == "evfcgid" && $2 == f { print $11 }' "$OUT/results.tsv")
	# Per slow client at most the high mark and one record; plus the ten
	# fast fetches of /big in flight.
	check "evfcgid behind $f queues at most a watermark per slow client ($q bytes)" \
		test "${q:-999999999}" -le $((10 * (262144 + 65600) + 10 * 96256))
	cut=$(awk -F'\t' -v f="$f" '$1 == "evfcgid" && $2 == f { print $14 }' "$OUT/results.tsv")
	check "evfcgid behind $f: no slow client cut before its own time limit (${cut:-no count})" \
		test "${cut:-1}" -eq 0
done
r=$(awk -F'\t' '$1 == "blocking1" && $2 == "nginx" { print $8 }' "$OUT/results.tsv")
check "the blocking control group behind nginx falls below 0.2 (ratio $r)" \
	awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r < 0.2) }'
b=$(awk -F'\t' '$1 == "blocking1" && $2 == "nginx" { print $5 }' "$OUT/results.tsv")
check "the control group had a real baseline first ($b fetches/s alone)" \
	awk -v b="$b" 'BEGIN { exit !(b >= 100) }'
for p in fast_vs_slow ratio_vs_slow timeline; do
	check "$p.png is a PNG" bash -c "head -c 8 '$OUT/$p.png' | od -An -c | grep -q 'P   N   G'"
done
tl=$(awk -F'\t' '$1 == "blocking1" && $4 > 0 && $3 == 0' "$OUT/timeline.tsv" | wc -l)
check "timeline: the control group drops to 0 fetches/s once slow clients join ($tl s at 0)" \
	test "$tl" -ge 3

# The proof can fail: the same verdict on doctored results.
# rejudge TSV COLUMN NAME BACKEND KEY RATIO WHY: re-judges the results in
# TSV with the ratio of BACKEND's cell whose COLUMN is KEY replaced; ok
# when the verdict fails saying WHY.
rejudge() {
	local tsv=$1 col=$2 name=$3 rc
	awk -F'\t' -v c="$col" -v b="$4" -v k="$5" -v r="$6" 'BEGIN { OFS = "\t" }
		$1 == b && $c == k { $8 = r } { print }' "$tsv" >"$T/$name.tsv"
	"$EXP" --verdict "$T/$name.tsv" --out "$T/$name" >"$T/$name.out" 2>&1
	rc=$?
	check "verdict fails when $name (exit $rc)" test "$rc" -eq 1
	check "... and says: $7" grep -q "$7" "$T/$name.out"
}
# doctored NAME BACKEND FRONTEND RATIO WHY: rejudge of the --quick run.
doctored() { rejudge "$OUT/results.tsv" 2 "$@"; }
doctored "the control group does not stall" blocking1 nginx 0.500 \
	'the blocking control group did not stall'
doctored "evfcgid falls below 0.9 in one cell" evfcgid lighttpd 0.850 \
	'evfcgid fell to 0.850 behind lighttpd'
doctored "a cell of evfcgid has no ratio" evfcgid direct - \
	'evfcgid has no ratio (a round whose twin got nothing done or whose slices outlasted'
"$EXP" --verdict "$OUT/results.tsv" --out "$T/v3" >/dev/null 2>&1
check "verdict holds when re-judged from the run's own results.tsv" test $? -eq 0
# The calibration judges the method: at 0.890 nothing else is judged.
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "calibration" { $8 = "0.890" } { print }' "$OUT/results.tsv" >"$T/calib.tsv"
"$EXP" --verdict "$T/calib.tsv" --out "$T/calib" >"$T/calib.out" 2>&1
rc=$?
check "a calibration of 0.890: verdict NOT JUDGED, exit 3 (exit $rc)" test "$rc" -eq 3
check "... naming the figure" grep -q 'NOT JUDGED.*0\.890' "$T/calib.out"
check "... and results.md says so" grep -q '^Verdict: NOT JUDGED\.$' "$T/calib/results.md"

# --- the CGI cells (issue 12), reduced ---------------------------------------
COUT=$T/cgi
"$EXP" --cgi --backends evfcgid-cgi,fcgiwrap1 --sizes 8388608 --slow 10 --hang 4 --seconds 0.25 --pairs 8 --warmup 1 \
	--no-measure --out "$COUT" >"$T/cgi.out" 2>&1
rc=$?
grep '^\[' "$T/cgi.out" | sed 's/^/# /'
sed -n '/^| backend/,/^$/p; /^Verdict/,$p' "$COUT/results.md" | sed 's/^/# /'
if [ "$rc" -eq 0 ]; then
	ok "slow-client-experiment --cgi: verdict PROVEN (exit 0)"
else
	not_ok "slow-client-experiment --cgi: verdict PROVEN (exit $rc)"
	tail -n 30 "$T/cgi.out" | sed 's/^/# /'
fi
rows=$(awk -F'\t' 'NR > 1 && $1 != "calibration"' "$COUT/results.tsv" | wc -l)
check "--cgi results.tsv: 8 MiB and hang cells of both backends (4, got $rows)" test "$rows" -eq 4
c=$(awk -F'\t' '$1 == "calibration" { print $8 }' "$COUT/results.tsv")
check "--cgi ran its own calibration cell (${c:-none})" test -n "$c"
# cgi_cell BACKEND SIZE COLUMN: that column of the cell's row.
cgi_cell() { awk -F'\t' -v b="$1" -v s="$2" -v c="$3" '$1 == b && $3 == s { print $c }' "$COUT/results.tsv"; }
for s in 8388608 hang; do
	r=$(cgi_cell evfcgid-cgi "$s" 8)
	check "evfcgid --cgi keeps >= 0.9 beside the $s cell's slow clients (ratio $r)" \
		awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r >= 0.9) }'
	cut=$(cgi_cell evfcgid-cgi "$s" 14)
	check "evfcgid --cgi, $s: no slow client cut before its own time limit (${cut:-no count})" \
		test "${cut:-1}" -eq 0
	r=$(cgi_cell fcgiwrap1 "$s" 8)
	check "fcgiwrap -c 1 falls below 0.2 beside the $s cell's slow clients (ratio $r)" \
		awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r < 0.2) }'
	b=$(cgi_cell fcgiwrap1 "$s" 5)
	check "fcgiwrap -c 1 had a real baseline first in the $s cell ($b fetches/s alone)" \
		awk -v b="$b" 'BEGIN { exit !(b >= 20) }'
done
check "--no-measure: no measurement taken here (tests/test_experiment_measure.sh takes them)" \
	test ! -e "$COUT/cgi_measure.tsv"
check "ratio_vs_slow.png of the CGI run is a PNG" \
	bash -c "head -c 8 '$COUT/ratio_vs_slow.png' | od -An -c | grep -q 'P   N   G'"
# cgi_doctored NAME BACKEND SIZE RATIO WHY: rejudge of the --cgi run.
cgi_doctored() { rejudge "$COUT/results.tsv" 3 "$@"; }
cgi_doctored "fcgiwrap1 does not stall beside hung scripts" fcgiwrap1 hang 0.500 \
	'fcgiwrap1 did not stall: ratio 0.500 beside 4 hung scripts'
cgi_doctored "evfcgid --cgi falls below 0.9" evfcgid-cgi 8388608 0.850 \
	'evfcgid-cgi fell to 0.850 behind nginx'
"$EXP" --cgi --backends evfcgid >"$T/bad.out" 2>&1
check "--cgi with a non-CGI backend: exit 2" test $? -eq 2

"$EXP" --bogus >"$T/bad.out" 2>&1
check "unknown flag: exit 2" test $? -eq 2
check "unknown flag: names it" grep -q 'unknown argument: --bogus' "$T/bad.out"
"$EXP" --slow ten >/dev/null 2>&1
check "--slow ten: exit 2" test $? -eq 2
"$EXP" --frontends apache >/dev/null 2>&1
check "--frontends apache: exit 2" test $? -eq 2
"$EXP" --pairs 0 >/dev/null 2>&1
check "--pairs 0: exit 2" test $? -eq 2
"$EXP" --rounds 4 --max-rounds 2 >"$T/bad.out" 2>&1
rc=$?
check "--max-rounds below --rounds: exit 2, says why" \
	eval 'test $rc -eq 2 && grep -q "at least --rounds" "$T/bad.out"'
"$EXP" --help >"$T/help.out" 2>"$T/help.err"
check "--help: exit 0 and lists --quick" grep -q -- '--quick' "$T/help.out"
check "--help: nothing on stderr" test ! -s "$T/help.err"
"$EXP" --bogus >/dev/null 2>"$T/bad.err"
check "unknown flag: only the usage and the error on stderr" \
	eval '! grep -q "command not found" "$T/bad.err"'
finish
