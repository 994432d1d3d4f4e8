#!/bin/bash
# --event-backend: the loop on epoll, poll and select serves alike; select
# caps --max-conns below FD_SETSIZE and stays up with more clients at once
# than that (accept waits instead of making a descriptor select cannot
# take); an unknown name is a usage error.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
FCGI_LOAD=$TOP/tools/fcgi_load

for b in epoll poll select; do
	start_evfcgid --event-backend "$b"
	addr=127.0.0.1:$EVFCGID_PORT
	check "$b: the log names the loop's backend" grep -q "event loop on $b\$" "$EVFCGID_LOG"
	"$FCGI_LOAD" -c 10 -k -n 2000 "$addr" /hello >"$T/load.$b" 2>&1
	check "$b: 2000 /hello on 10 kept connections, none failed" \
		grep -q '^requests: 2000$' "$T/load.$b"
	"$FCGI_LOAD" -n 1 -o "$T/big.$b" "$addr" /big >/dev/null 2>&1
	pattern 96256 >"$T/big.expected"
	check "$b: /big whole" same_file "$T/big.expected" "$T/big.$b"
	kill "$EVFCGID_PID"
	wait "$EVFCGID_PID"
done

capture "$EVFCGID" --event-backend kqueue2 --listen 127.0.0.1:1
check "an unknown backend: exit 2 ($RC)" test "$RC" -eq 2
check "an unknown backend: says which names it takes" \
	grep -q "is not epoll, poll or select" "$T/capture.err"

# select: more clients at once than it may hold.
start_evfcgid --event-backend select --max-conns 5000
addr=127.0.0.1:$EVFCGID_PORT
check "select: --max-conns capped, with a warning" \
	grep -q 'max-conns 5000 capped at 960' "$EVFCGID_LOG"
check "select: /status says the cap (960)" \
	test "$(status_of "$addr" max_conns)" -eq 960
# Each request holds its connection half a second: 1000 at once pass 960.
"$FCGI_LOAD" -c 1000 -n 2000 --timeout 30 "$addr" "/sleep?500" >"$T/many" 2>&1
check "select: 1000 clients at once, all 2000 requests answered" \
	grep -q '^requests: 2000$' "$T/many"
check "select: accept paused at the cap" grep -q '960 connections: not accepting' "$EVFCGID_LOG"
check "select: the daemon is up" kill -0 "$EVFCGID_PID"
finish
