#!/bin/bash
# check: alone (its verdict is a ratio of fetch rates)
# check: lab (make check-lab: about 2 minutes of shaped links)
# tools/slow-client-experiment --links, reduced to two cells over
# kernel-shaped links (tools/netlab.sh): ten slow clients on modem links
# (33.6 kbit/s each, their own address and HTB class) beside the fast
# load (on an unshaped link), behind nginx.  evfcgid keeps 0.9 of its rate
# while every slow client of 16 KiB gets its whole answer, byte for byte
# (ten a round); the blocking libfcgi loop stalls below 0.2 beside ten of
# 8 MiB.  Nothing of the lab is left after the run, nor after a run killed
# with SIGTERM in the middle of a cell: no namespace, no interface, no
# process.  Skipped, saying why, where network namespaces cannot be made.
source "$(dirname "$0")/lib.sh"
source "$TOP/tools/netlab.sh" || { not_ok "tools/netlab.sh can be sourced"; finish; }
EXP=$TOP/tools/slow-client-experiment

netlab_usable || { ok "# SKIP --links: $NETLAB_SKIP"; finish; }

# left TAG: what a run of lab TAG left: its namespaces and interfaces, and
# processes still carrying its tag in their environment.
left() {
	netlab_leftovers "$1"
	grep -lz "^EVF_LINKS_TAG=$1\$" /proc/[0-9]*/environ 2>/dev/null | sed 's/^/process /'
}

start=$(now_ns)
EVF_LINKS_TAG=tlinks "$EXP" --links --out "$T/exp" --rounds 2 --max-rounds 8 --pairs 4 --warmup 1 \
	--cells evfcgid:nginx:16384:10:modem,blocking1:nginx:8388608:10:modem >"$T/exp.out" 2>&1
rc=$?
echo "# $(ms_since "$start") ms"
grep '^\[' "$T/exp.out" | sed 's/^/# /'
if [ "$rc" -eq 0 ]; then
	ok "slow-client-experiment --links (modem): verdict PROVEN (exit 0)"
else
	not_ok "slow-client-experiment --links (modem): verdict PROVEN (exit $rc)"
	tail -n 12 "$T/exp.out" | sed 's/^/# /'
fi
TSV=$T/exp/results.tsv
row() { awk -F'\t' -v b="$1" -v c="$2" '$1 == b && $15 == "modem" { print $c }' "$TSV"; }
r=$(row evfcgid 8)
check "evfcgid behind nginx keeps >= 0.9 beside 10 slow clients on modem links (ratio $r)" \
	awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r >= 0.9) }'
w=$(row evfcgid 16)
n=$(( $(row evfcgid 13 | tr ',' '\n' | wc -l) * 10 ))
check "all $n slow clients of 16 KiB (10 a round) got their whole answer, byte for byte ($w)" \
	test "$w" = "$n/$n" -a "$n" -ge 20
check "... the table says so" grep -q "| modem | evfcgid | nginx | 16384 | 10 |.*| $n/$n |" "$T/exp/results.md"
check "no slow client of evfcgid was cut ($(row evfcgid 14))" test "$(row evfcgid 14)" = 0
r=$(row blocking1 8)
check "the blocking control group falls below 0.2 (ratio $r)" \
	awk -v r="$r" 'BEGIN { exit !(r != "" && r != "-" && r < 0.2) }'
check "results.md has the profile column and the verdict" \
	grep -q '^| profile | backend |' "$T/exp/results.md"
check "ratio_by_profile.png is a PNG" \
	bash -c "head -c 8 '$T/exp/ratio_by_profile.png' | od -An -c | grep -q 'P   N   G'"
check "nothing of the lab is left after the run ($(left tlinks | tr '\n' ' '))" test -z "$(left tlinks)"

# The verdict can fail: a slow client that could finish and did not.
awk -F'\t' 'BEGIN { OFS = "\t" } $1 == "evfcgid" { $16 = "19/20" } $1 == "calibration" { $8 = "1.000" } { print }' \
	"$TSV" >"$T/short.tsv"
"$EXP" --verdict "$T/short.tsv" --out "$T/short" >"$T/short.out" 2>&1
check "verdict fails when a slow client that could finish lacks its whole answer (exit $?)" \
	grep -q 'only 19 of 20 slow clients that could finish' "$T/short.out"

# A run killed with SIGTERM in the middle of its cell.
EVF_LINKS_TAG=tlinkskill "$EXP" --links --out "$T/kill" --warmup 2 --pairs 1 --seconds 0.25 --max-rounds 2 \
	--cells evfcgid:nginx:8388608:4:modem >"$T/kill.out" 2>&1 &
victim=$!
wait_for_line "$T/kill.out" '^\[2/2\]' 40
sleep 1.5
had=$(left tlinkskill | wc -l)
kill -TERM "$victim"
wait "$victim"
check "a run killed with SIGTERM mid-cell (it had $had namespaces and processes) leaves nothing ($(left tlinkskill | tr '\n' ' '))" \
	test "$had" -gt 2 -a -z "$(left tlinkskill)"
finish
