#!/bin/bash
# tools/slow-client-experiment --cgi --measure-only: the CGI measurements
# of the experiment, which judge no rate and so run beside other tests
# (the cells, which judge ratios, are tests/test_experiment.sh's, alone):
# wrk through nginx gets answers from evfcgid --cgi and from fcgiwrap -c 4,
# every one a 2xx; evfcgid --cgi's RSS beside 100 slow clients downloading
# 8 MiB of CGI output each stays under 100 MiB while their programs wait
# in write(); results.md quotes the figures.
source "$(dirname "$0")/lib.sh"
EXP=$TOP/tools/slow-client-experiment
MOUT=$T/measure

"$EXP" --cgi --measure-only --out "$MOUT" >"$T/measure.out" 2>&1
rc=$?
grep '^CGI requests/s' "$MOUT/results.md" 2>/dev/null | sed 's/^/# /'
check "slow-client-experiment --cgi --measure-only: exit 0 (exit $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || tail -n 30 "$T/measure.out" | sed 's/^/# /'
check "--measure-only runs no cell (no results.tsv)" test ! -e "$MOUT/results.tsv"
# measure NAME: a value of cgi_measure.tsv.
measure() { awk -F'\t' -v k="$1" '$1 == k { print $2 }' "$MOUT/cgi_measure.tsv" 2>/dev/null; }
e=$(measure evfcgid_cgi_rps) f=$(measure fcgiwrap4_rps)
check "CGI requests/s measured for both (evfcgid --cgi $e, fcgiwrap -c 4 $f)" \
	awk -v e="$e" -v f="$f" 'BEGIN { exit !(e > 0 && f > 0) }'
check "... and every answer was a 2xx ($(measure evfcgid_cgi_failures), $(measure fcgiwrap4_failures) failed)" \
	test "$(measure evfcgid_cgi_failures)" = 0 -a "$(measure fcgiwrap4_failures)" = 0
rss=$(measure rss_beside_kib) kids=$(measure programs_running)
# An unbounded queue would hold the 8 MiB outputs; bounded, a slow
# download costs about a watermark and a pipe buffer: under 1 MiB each.
check "evfcgid --cgi RSS beside 100 slow CGI downloads under 100 MiB ($rss KiB)" \
	test "${rss:-999999999}" -gt 0 -a "${rss:-999999999}" -lt 102400
check "... with their programs running, waiting in write() ($kids)" test "${kids:-0}" -ge 90
check "results.md quotes the measurements" grep -q '^CGI requests/s on the trivial script' "$MOUT/results.md"

"$EXP" --quick --measure-only >"$T/bad.out" 2>&1
rc=$?
check "--quick --measure-only: exit 2, says why" \
	eval 'test $rc -eq 2 && grep -q "measure-only" "$T/bad.out"'
"$EXP" --cgi --measure-only --no-measure >"$T/bad.out" 2>&1
check "--measure-only --no-measure: exit 2" test $? -eq 2
finish
