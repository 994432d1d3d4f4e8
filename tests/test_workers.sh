#!/bin/bash
# --workers under faults: a worker killed with -9 is replaced, all of them
# killed at once are replaced and the port keeps answering, SIGTERM to the
# parent drains every worker.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

workers() { pgrep -P "$EVFCGID_PID" | sort; }
nworkers_is() { [ "$(workers | wc -l)" -eq "$1" ]; }
wait_workers() { wait_until 5 nworkers_is "$1"; }

start_evfcgid --workers 2
check "2 workers at start" wait_workers 2
first=$(workers | head -n 1)
kill -9 "$first"
sleep 0.2
check "a worker killed with -9 is replaced" wait_workers 2
check "the killed one is gone from the list" bash -c "! pgrep -P $EVFCGID_PID | grep -qx $first"
ok=0
for i in $(seq 20); do fcgi_hello "127.0.0.1:$EVFCGID_PORT" && ok=$((ok + 1)); done
check "20 of 20 requests answered after the kill ($ok)" test "$ok" -eq 20
kill -9 $(workers)
sleep 0.1
check "the parent is still there when every worker died" kill -0 "$EVFCGID_PID"
check "both are replaced" wait_workers 2
ok=0
for i in $(seq 20); do fcgi_hello "127.0.0.1:$EVFCGID_PORT" && ok=$((ok + 1)); done
check "20 of 20 requests answered after all were killed ($ok)" test "$ok" -eq 20
grep -q 'replaced by' "$EVFCGID_LOG" && ok "replacements are logged" || not_ok "replacements are logged"
fcgi_req "127.0.0.1:$EVFCGID_PORT" "/sleep?800" >"$T/slept" 2>&1 &
req=$!
sleep 0.3
kill -TERM "$EVFCGID_PID"
wait "$req"
check "SIGTERM: the request in flight was answered" grep -q '^slept 800 ms$' "$T/slept"
wait "$EVFCGID_PID"
rc=$?
check "SIGTERM: the parent exits 0 after its workers drained (got $rc)" test "$rc" -eq 0
no_worker_left() { ! pgrep -f "[e]vfcgid --listen 127.0.0.1:$EVFCGID_PORT" >/dev/null; }
check "SIGTERM: no worker replaced or left" no_worker_left
finish
