#!/bin/bash
# Nothing lost in a drain: requests that reached the daemon before SIGTERM
# are answered whole, even those still unread in the input of a
# connection paused above its high mark (over real TCP, where closing a
# socket with unread input would reset the answers queued in the kernel).
source "$(dirname "$0")/lib.sh"
FCGI_LOAD=$TOP/tools/fcgi_load

# --- 16 /big multiplexed in one write on one kept connection, read slowly:
# the daemon is paused with most of them unread when SIGTERM comes.
for round in 1 2 3; do
	start_evfcgid --sndbuf 4k
	"$FCGI_LOAD" -c 1 -k -m 16 -n 16 --rcvbuf 4096 --read-size 4096 \
		--pause 5 "127.0.0.1:$EVFCGID_PORT" /big >"$T/load" 2>&1 &
	load=$!
	sleep 0.5
	kill -TERM "$EVFCGID_PID"
	wait "$load"
	lrc=$?
	wait "$EVFCGID_PID"
	rc=$?
	got=$(awk '$1 == "status" && $2 == "200:" { print $3 }' "$T/load")
	echo "# round $round: $(grep -E '^(requests|errors)' "$T/load" | tr '\n' ' ')"
	check "drain round $round: all 16 paused requests answered whole (got ${got:-0})" \
		test "${got:-0}" -eq 16 -a "$lrc" -eq 0
	check "drain round $round: exit 0 (got $rc)" test "$rc" -eq 0
done
finish
