#!/bin/bash
# Input memory is counted and given back (issue 36): 1000 uploads of 1 MiB
# at once to the demo's streamed /upload, on the defaults.  Each
# connection keeps the partial record a read ends in (up to two records,
# in chains sized to the power of two above them): 118 KiB a connection
# that --max-input never saw (the requests' own charges peaked at 248 KB),
# and glibc kept the freed heap: RSS stayed at 60-80 MiB afterwards.  Now
# the input buffers count against --max-input (twice their bytes, for
# their chains), and the heap is trimmed once the input held falls to a
# sixteenth of its peak.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load
N=1000

# fcgi_load holds N sockets at once, beside this shell's own.
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((N + 64)) ]; then
	echo "# SKIP: the hard descriptor limit ($(ulimit -Hn)) is below $((N + 64))"
	ok "skipped: no room for $N connections"
	finish
fi
ulimit -n $((N + 64)) 2>/dev/null || ulimit -n "$(ulimit -Hn)"

head -c $((1 << 20)) /dev/urandom >"$T/body"
start_evfcgid
addr=127.0.0.1:$EVFCGID_PORT
rss0=$(rss_kib "$EVFCGID_PID")
"$FCGI_LOAD" -c $N -n $N -b "$T/body" -t 120 "$addr" /upload >"$T/load" 2>&1
ok200=$(awk '$1 == "status" && $2 == "200:" { print $3 }' "$T/load")
check "$N uploads of 1 MiB at once all answered 200 (${ok200:-0})" \
	test "${ok200:-0}" -eq $N
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$EVFCGID_PID/status")
# gone: the last connection has closed (the /status asking is the one).
gone() {
	local n
	read -r n <<<"$(status_of "$addr" connections)"
	[ "${n:-9}" -le 1 ]
}
wait_until 10 gone
read -r peak input <<<"$(status_of "$addr" peak_bytes_input bytes_input)"
rss1=$(rss_kib "$EVFCGID_PID")
echo "# RSS $rss0 KiB idle, $hwm KiB at the peak, $rss1 KiB after; peak_bytes_input $peak B, now $input B"
check "the input path's memory is counted: peak_bytes_input at least half the RSS growth (${peak:-0} B, $(( (hwm - rss0) / 2 )) KiB)" \
	test "${peak:-0}" -ge $(( (hwm - rss0) / 2 * 1024 ))
check "the burst over, RSS back within 4 MiB of idle ($rss0 -> $hwm -> $rss1 KiB)" \
	test "$rss1" -le $((rss0 + 4096))

# At a small cap the same burst is served, not refused: reading pauses at
# the cap, and a record of a streamed body passes to a handler that keeps
# up (the demo's /upload takes what it is handed) even while the input is
# past the cap, as it leaves the connection's input as it goes.  The input
# held stays near the cap: at most the cap, plus a record (counted twice)
# in each connection's input.
kill "$EVFCGID_PID" 2>/dev/null
start_evfcgid --max-input 16m
addr=127.0.0.1:$EVFCGID_PORT
"$FCGI_LOAD" -c $N -n $N -b "$T/body" -t 120 "$addr" /upload >"$T/load16" 2>&1
ok200=$(awk '$1 == "status" && $2 == "200:" { print $3 }' "$T/load16")
grep -v "^#" "$T/load16" | head -n 12 | sed "s/^/# --max-input 16m: /"
check "--max-input 16m: $N uploads of 1 MiB at once all answered 200 (${ok200:-0})" \
	test "${ok200:-0}" -eq $N
wait_until 10 gone
read -r peak <<<"$(status_of "$addr" peak_bytes_input)"
check "--max-input 16m: the input held peaked within the cap and a record a connection (${peak:-?} B)" \
	test "${peak:-999999999999}" -le $((16 * 1048576 + N * 2 * 65600))
finish
