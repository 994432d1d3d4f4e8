#!/bin/bash
# A connection done with its answer still in the kernel's send queue is
# not orphaned: Linux resets an orphaned socket behind a zero window once
# its probe backoff reaches two minutes, and the peer (nginx before a slow
# client) gets a reset instead of the end of the answer.  evfcgid shuts it
# for writing and holds it (/status "lingering") until the queue is empty,
# the peer closes, or the write timeout passes without progress.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

# slow_fcgi.py PORT SIZE SLEEP: one request for /size?SIZE without
# FCGI_KEEP_CONN on a 4 KiB receive buffer, nothing read for SLEEP s, then
# everything; prints "STDOUT-BYTES END-REQUEST(0/1)" or "error ...".
cat >"$T/slow_fcgi.py" <<'PY'
import socket, struct, sys, time
port, size, pause = int(sys.argv[1]), sys.argv[2].encode(), float(sys.argv[3])
def rec(t, body): return struct.pack(">BBHHBB", 1, t, 1, len(body), 0, 0) + body
def nv(k, v): return bytes([len(k), len(v)]) + k + v
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
p = b"".join(nv(k, v) for k, v in [(b"REQUEST_METHOD", b"GET"),
    (b"REQUEST_URI", b"/size?" + size), (b"SCRIPT_NAME", b"/size"),
    (b"QUERY_STRING", size)])
s.sendall(rec(1, bytes([0, 1, 0, 0, 0, 0, 0, 0])) + rec(4, p) + rec(4, b"") +
    rec(5, b""))
time.sleep(pause)
got, ended = 0, 0
try:
    while True:
        h = s.recv(8, socket.MSG_WAITALL)
        if len(h) < 8:
            break
        n, pad = struct.unpack(">H", h[4:6])[0], h[6]
        if n + pad:
            b = s.recv(n + pad, socket.MSG_WAITALL)
        if h[1] == 6:
            got += n
        if h[1] == 3:
            ended = 1
            break
    print(got, ended)
except OSError as e:
    print("error", e)
PY

# 60000 bytes fit in the kernel's queues: evfcgid's buffer empties and the
# connection, not kept, is done while the client has read nothing.
start_evfcgid --write-timeout 4
python3 "$T/slow_fcgi.py" "$EVFCGID_PORT" 60000 2 >"$T/out1" &
reader=$!
sleep 1
lingering() { status_of "127.0.0.1:$EVFCGID_PORT" lingering; }
n=$(lingering)
check "done with 60000 bytes unread by its peer: the socket is held, not closed (lingering $n)" \
	test "$n" = 1
check "ss: shut for writing (FIN-WAIT-1) with bytes queued" bash -c \
	"ss -tnH state fin-wait-1 '( sport = :$EVFCGID_PORT )' | awk '\$2 > 0' | grep -q ."
wait "$reader"
# STDOUT is the CGI header (67 bytes) and the 60000 of the body.
check "the peer reads late and gets the whole answer, END_REQUEST included ($(cat "$T/out1"))" \
	grep -qx '60067 1' "$T/out1"
wait_zero() { [ "$(lingering)" = 0 ]; }
check "then it is let go (lingering 0)" wait_until 3 wait_zero

# A peer that never reads: given up after the write timeout, logged.
python3 "$T/slow_fcgi.py" "$EVFCGID_PORT" 60000 30 >"$T/out2" &
reader=$!
PIDS+=("$reader")
sleep 1
check "a second one lingers" test "$(lingering)" = 1
check "after the write timeout without progress it is closed, logged" \
	wait_for_line "$EVFCGID_LOG" "no write progress for 4 s, [0-9]+ bytes of the answer still queued" 8
check "and no longer held" wait_until 2 wait_zero
kill "$reader" 2>/dev/null
check "the daemon is still up" kill -0 "$EVFCGID_PID"
finish
