#!/bin/bash
# A connection done with its answer still in the kernel's send queue is
# not orphaned: Linux resets an orphaned socket behind a zero window once
# its probe backoff reaches two minutes, and the peer (nginx before a slow
# client) gets a reset instead of the end of the answer.  evfcgid shuts it
# for writing and holds it (/status "lingering") until the queue is empty,
# the peer closes, or the write timeout passes without progress.
#
# What this depends on is set, not taken from the machine's tcp_rmem and
# tcp_wmem: the daemon's send buffer (--sndbuf 64k, 128 KiB once the
# kernel doubles it) and the peer's receive buffer (SO_RCVBUF 4096, 8 KiB
# doubled).  A 32 KiB answer is more than the peer's buffer takes, so
# bytes stay queued, and well under the daemon's, so all of it leaves
# evfcgid for the kernel and the request is done.  The test waits on the
# daemon's and the socket's state, bounded, not for fixed times.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"
SIZE=32768

# slow_fcgi.py PORT SIZE GO LIMIT: one request for /size?SIZE without
# FCGI_KEEP_CONN on a 4096-byte SO_RCVBUF (printed on stderr as the
# kernel set it); nothing read until the file GO exists (LIMIT s at most),
# then everything; prints "STDOUT-BYTES END-REQUEST(0/1)" or "error ...".
cat >"$T/slow_fcgi.py" <<'PY'
import os, socket, struct, sys, time
port, size, go, limit = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3], float(sys.argv[4])
def rec(t, body): return struct.pack(">BBHHBB", 1, t, 1, len(body), 0, 0) + body
def nv(k, v): return bytes([len(k), len(v)]) + k + v
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
sys.stderr.write("# peer SO_RCVBUF %d\n" % s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
s.connect(("127.0.0.1", port))
p = b"".join(nv(k, v) for k, v in [(b"REQUEST_METHOD", b"GET"),
    (b"REQUEST_URI", b"/size?" + size), (b"SCRIPT_NAME", b"/size"),
    (b"QUERY_STRING", size)])
s.sendall(rec(1, bytes([0, 1, 0, 0, 0, 0, 0, 0])) + rec(4, p) + rec(4, b"") +
    rec(5, b""))
end = time.monotonic() + limit
while not os.path.exists(go) and time.monotonic() < end:
    time.sleep(0.05)
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

lingering() { status_of "127.0.0.1:$EVFCGID_PORT" lingering; }
held() { [ "$(lingering)" = 1 ]; }
let_go() { [ "$(lingering)" = 0 ]; }
# fin_wait_queued: the daemon's side is shut for writing (FIN-WAIT-1) with
# bytes still in its send queue.
fin_wait_queued() {
	ss -tnH state fin-wait-1 "( sport = :$EVFCGID_PORT )" | awk '$2 > 0 { q = 1 } END { exit !q }'
}

start_evfcgid --write-timeout 4 --sndbuf 64k
python3 "$T/slow_fcgi.py" "$EVFCGID_PORT" "$SIZE" "$T/go1" 30 >"$T/out1" 2>"$T/err1" &
reader=$!
PIDS+=("$reader")
wait_until 10 held
n=$(lingering)
cat "$T/err1"
echo "# daemon's side: $(ss -tnH "( sport = :$EVFCGID_PORT )" | awk '{ printf "%s send-q %s; ", $1, $3 }')"
check "done with $SIZE bytes unread by its peer: the socket is held, not closed (lingering $n)" \
	test "$n" = 1
check "ss: shut for writing (FIN-WAIT-1) with bytes queued" wait_until 5 fin_wait_queued
touch "$T/go1"
wait "$reader"
# STDOUT is the CGI header (67 bytes) and the body.
check "the peer reads late and gets the whole answer, END_REQUEST included ($(cat "$T/out1"))" \
	grep -qx "$((SIZE + 67)) 1" "$T/out1"
check "then it is let go (lingering 0)" wait_until 5 let_go

# A peer that never reads: given up after the write timeout, logged.
python3 "$T/slow_fcgi.py" "$EVFCGID_PORT" "$SIZE" "$T/never" 60 >"$T/out2" 2>/dev/null &
reader=$!
PIDS+=("$reader")
check "a second one lingers" wait_until 10 held
check "after the write timeout without progress it is closed, logged" \
	wait_for_line "$EVFCGID_LOG" "no write progress for 4 s, [0-9]+ bytes of the answer still queued" 15
check "and no longer held" wait_until 5 let_go
kill "$reader" 2>/dev/null
check "the daemon is still up" kill -0 "$EVFCGID_PID"
finish
