#!/bin/bash
# Limits a peer runs into, as processes: out of descriptors (accept backs
# off and says so once per episode, not every 200 ms, then works again).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

# --- EMFILE: 40 idle connections against a daemon allowed 24 descriptors.
EVFCGID_PORT=$(freeport)
EVFCGID_LOG=$T/emfile.log
spawn bash -c "ulimit -n 24 && exec '$EVFCGID' --listen 127.0.0.1:$EVFCGID_PORT 2>'$EVFCGID_LOG'"
EVFCGID_PID=$SPAWNED
wait_port "$EVFCGID_PORT"
# wait_port's probe must be closed on the daemon's side first: closed
# while it was out of descriptors, it freed one, an accept worked, and a
# second episode began (2 'pausing' on a busy machine).
probe_closed() { [ -z "$(ss -Htn "( sport = :$EVFCGID_PORT )")" ]; }
wait_until 5 probe_closed
fds=()
for i in $(seq 40); do
	exec {fd}<>"/dev/tcp/127.0.0.1/$EVFCGID_PORT" && fds+=("$fd")
done
sleep 3
pauses=$(grep -c 'pausing accept' "$EVFCGID_LOG")
lines=$(grep -c 'accept:' "$EVFCGID_LOG")
echo "# out of descriptors for 3 s: $lines accept lines in the log ($pauses 'pausing')"
check "EMFILE: the back-off is logged once, not every 200 ms ($pauses)" test "$pauses" -eq 1
check "EMFILE: at most one more line while it lasts ($lines)" test "$lines" -le 2
for fd in "${fds[@]}"; do exec {fd}>&-; done
sleep 0.5
check "EMFILE: serves again once descriptors are free" fcgi_hello "127.0.0.1:$EVFCGID_PORT" 5
check "EMFILE: the end of the episode is logged" grep -q 'accepting again after' "$EVFCGID_LOG"
kill -0 "$EVFCGID_PID" 2>/dev/null && ok "EMFILE: evfcgid still running" || not_ok "EMFILE: evfcgid still running"
finish
