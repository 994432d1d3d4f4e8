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
# 64 kept connections opened at once, then /status on each: the pid that
# answers is the worker that accepted it.  Without a share per wakeup the
# first worker woken took 60 to 63 of them (bench/workers).
cat >"$T/spread.py" <<'PY'
import json, socket, struct, sys
port = int(sys.argv[1])
def rec(t, rid, body):
    return struct.pack(">BBHHBB", 1, t, rid, len(body), 0, 0) + body
def nv(k, v):
    return bytes([len(k), len(v)]) + k + v
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(64)]
params = b"".join(nv(k, v) for k, v in [(b"REQUEST_METHOD", b"GET"),
    (b"REQUEST_URI", b"/status"), (b"SCRIPT_NAME", b"/status"),
    (b"QUERY_STRING", b"")])
pids = {}
for c in conns:
    c.sendall(rec(1, 1, bytes([0, 1, 1, 0, 0, 0, 0, 0])) + rec(4, 1, params) +
        rec(4, 1, b"") + rec(5, 1, b""))
    out = b""
    while b"\r\n\r\n{" not in out or not out.rstrip(b"\0").endswith(b"}}"):
        hdr = c.recv(8, socket.MSG_WAITALL)
        n, pad = struct.unpack(">H", hdr[4:6])[0], hdr[6]
        body = c.recv(n + pad, socket.MSG_WAITALL) if n + pad else b""
        if hdr[1] == 6:
            out += body[:n]
        if hdr[1] == 3:
            break
    pid = json.loads(out.split(b"\r\n\r\n", 1)[1])["pid"]
    pids[pid] = pids.get(pid, 0) + 1
print(" ".join(str(v) for v in sorted(pids.values())))
PY
spread=$(python3 "$T/spread.py" "$EVFCGID_PORT")
echo "# 64 kept connections opened at once, per worker: $spread"
low=$(echo "$spread" | awk '{ print NF == 2 ? $1 : 0 }')
check "64 connections opened at once are shared: each worker has at least 10 ($spread)" \
	test "$low" -ge 10
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
