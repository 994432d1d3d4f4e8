#!/bin/bash
# Several hosts behind one nginx: the kill phase of tools/multi-host.
# Three evfcgid hosts, each in a network namespace of its own, behind a
# copy of nginx.conf.example; http_load -rate 500 through it for 12 s in
# three phases: steady, one host killed with kill -9, that host
# restarted.  An open loop: what is judged is that none fails, not the
# pace (-parallel 20 made 11000 a second and 13 processor-seconds here).  Asserts 0 failed requests while the host is dead and after
# its restart, that nginx did retry on the others (the kill happened under
# load), that the restarted host answers again, and that the run left no
# namespace behind.  Skipped, with the reason, where namespaces cannot be
# made (not root, no iproute2, no namespaces).
source "$(dirname "$0")/lib.sh"
source "$TOP/tools/netlab.sh"

netlab_usable || { ok "# SKIP multi-host kill phase: $NETLAB_SKIP"; finish; }

spawn "$TOP/tools/multi-host" --phases kill --seconds 12 --rate 500 --settings example \
	--workers-seconds 0 --out "$T/out" --tag mhtest >"$T/run" 2>&1
wait "$SPAWNED"
rc=$?
check "tools/multi-host --phases kill ran (exit $rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/# /' "$T/run" | tail -n 15
TSV=$T/out/results.tsv
grep -E '^(phase|back|load)' "$TSV" 2>/dev/null | cut -f 3- | sed 's/^/# /'

# field K F: field F of the phase row of phase K (4 name, 5 requests,
# 7 failed, 8 cut, 10 retried, 12..14 answered by h1..h3).
field() { awk -F'\t' -v k="$1" -v f="$2" '$1 == "phase" && $3 == k { print $f }' "$TSV"; }

n=$(field 1 5) bad=$(field 1 7) retried=$(field 1 10)
check "h1 killed: requests went on (${n:-none})" test "${n:-0}" -gt 100
check "h1 killed: 0 failed (${bad:-none})" test "${bad:-x}" = 0
check "h1 killed: nginx sent requests that found h1 gone to h2, h3 (${retried:-none} retried)" \
	test "${retried:-0}" -gt 0
bad=$(field 2 7) h1=$(field 2 12)
check "h1 restarted: 0 failed (${bad:-none})" test "${bad:-x}" = 0
check "h1 restarted: it answers again (${h1:-none} requests)" test "${h1:-0}" -gt 0
back=$(awk -F'\t' '$1 == "back" && $3 == "h1" { print $5 }' "$TSV")
check "h1 restarted: traffic back after ${back:-?} s" test -n "$back" -a "$back" != -
left=$(netlab_leftovers mhtest)
check "no namespace or link left behind (${left:-none})" test -z "$left"
finish
