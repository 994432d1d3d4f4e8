#!/bin/bash
# A library application in several processes (evfcgi_run_workers()), the
# drop box with --workers 2: both workers serve the one port, a worker
# killed with -9 is replaced, a session made in one worker is good in the
# other (sessions are files), and SIGTERM to the parent drains: an upload
# in flight when it comes is still answered, then every process exits 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/http.sh"

[ -x "$TOP/examples/dropbox" ] || { not_ok "examples/dropbox is built (make)"; finish; }
DIR=$T/drop
mkdir -p "$DIR"
port=$(freeport)
ADDR=127.0.0.1:$port
DROPBOX_PASSWORD=sesame spawn "$TOP/examples/dropbox" --listen "$ADDR" \
	--dir "$DIR" --workers 2 2>>"$T/dropbox.log"
PID=$SPAWNED
wait_port "$port" || { not_ok "dropbox starts: $(tail -n 3 "$T/dropbox.log")"; finish; }

workers() { pgrep -P "$PID" | sort; }
nworkers_is() { [ "$(workers | wc -l)" -eq "$1" ]; }
check "2 worker processes" wait_until 5 nworkers_is 2

# fcgi METHOD URI [BODY] [HEADER=VALUE...]: one request, a new connection.
fcgi() {
	local m=$1 uri=$2 body=${3:-}
	shift 3 2>/dev/null || shift $#
	printf '%s' "$body" | env REQUEST_METHOD="$m" REQUEST_URI="$uri" \
		SCRIPT_NAME="$uri" CONTENT_LENGTH=${#body} "$@" \
		cgi-fcgi -bind -connect "$ADDR"
}
ok=0
for i in $(seq 20); do
	fcgi GET /api/files | grep -q '^Status: 200' && ok=$((ok + 1))
done
check "20 of 20 listings answered by the workers ($ok)" test "$ok" -eq 20

first=$(workers | head -n 1)
kill -9 "$first"
check "a worker killed with -9 is replaced" wait_until 5 nworkers_is 2
check "by a new one" bash -c "! pgrep -P $PID | grep -qx $first"

sid=$(fcgi POST /login password=sesame \
	CONTENT_TYPE=application/x-www-form-urlencoded |
	sed -n 's/^Set-Cookie: sid=\([0-9a-f]*\);.*/\1/p')
check "a login sets a session" test ${#sid} -eq 32
ok=0
for i in $(seq 10); do
	: >"$DIR/f$i"
	fcgi DELETE "/files/f$i" "" HTTP_COOKIE="sid=$sid" | grep -q '^Status: 204' &&
		ok=$((ok + 1))
done
check "the session is good in every worker: 10 of 10 deletes ($ok)" test "$ok" -eq 10

# An upload in flight over its own FastCGI connection when SIGTERM comes.
cat >"$T/slow_upload.py" <<'PY'
import os, socket, struct, sys, time
port, flag = int(sys.argv[1]), sys.argv[2]
def rec(t, body):
    return struct.pack(">BBHHBB", 1, t, 1, len(body), 0, 0) + body
def nv(k, v):
    return bytes([len(k), len(v)]) + k + v
b = b"ZzZ"
data = b"--" + b + b'\r\nContent-Disposition: form-data; name="file"; filename="late"\r\n\r\n'
data += b"x" * 100000 + b"\r\n--" + b + b"--\r\n"
p = (nv(b"REQUEST_METHOD", b"POST") + nv(b"REQUEST_URI", b"/upload") +
     nv(b"CONTENT_TYPE", b"multipart/form-data; boundary=" + b) +
     nv(b"CONTENT_LENGTH", str(len(data)).encode()))
s = socket.create_connection(("127.0.0.1", port))
s.sendall(rec(1, struct.pack(">HB5x", 1, 0)) + rec(4, p) + rec(4, b"") +
          rec(5, data[:1000]))
open(flag, "w").close()                 # half sent: the test signals now
while os.path.exists(flag):
    time.sleep(0.01)
time.sleep(0.3)
for i in range(1000, len(data), 8000):
    s.sendall(rec(5, data[i:i + 8000]))
s.sendall(rec(5, b""))
out = b""
while True:
    c = s.recv(65536)
    if not c:
        break
    out += c
print("303" if b"Status: 303" in out else "no 303: %r" % out[:200])
PY
python3 "$T/slow_upload.py" "$port" "$T/flag" >"$T/upload.out" 2>&1 &
upid=$!
wait_until 5 test -e "$T/flag"
wpids=$(workers)
kill -TERM "$PID"
rm -f "$T/flag"
wait "$upid"
check "the upload in flight at SIGTERM is answered ($(cat "$T/upload.out"))" \
	test "$(cat "$T/upload.out")" = 303
check "and whole on disk" test "$(stat -c %s "$DIR/late" 2>/dev/null)" = 100000
gone() { ! kill -0 "$PID" 2>/dev/null; }
check "the parent exits once its workers drained" wait_until 15 gone
wait "$PID"
rc=$?
check "with status 0 ($rc)" test "$rc" -eq 0
left=""
for w in $wpids; do kill -0 "$w" 2>/dev/null && left+=" $w"; done
check "no worker left (${left:-none})" test -z "$left"
finish
