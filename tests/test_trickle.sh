#!/bin/bash
# Peers that send nothing useful are not kept (issue 37, item 5): with
# --idle-timeout 2, an idle connection closes 2 s after its last
# progress even if the peer goes on sending
# - a record every 1.5 s for a request id not in flight (PARAMS, STDIN,
#   ABORT_REQUEST for ids never begun: the spec says ignore them), or
# - one byte every 1.5 s of a record it never completes.
# Before: each read restarted the idle countdown, and such a peer was
# still connected at 12 s (and at 16 s for the dribble, the record timeout
# being 30 s).  A request body sent a byte at a time inside the idle
# timeout is progress and is still served whole.
source "$(dirname "$0")/lib.sh"

command -v python3 >/dev/null || { not_ok "python3 is installed"; finish; }

cat >"$T/trickle.py" <<'PY'
import socket, struct, sys, time, select

host, port = sys.argv[1].rsplit(':', 1)
how, every, limit = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])

def rec(t, rid, content):
	pad = (8 - len(content) % 8) % 8
	return struct.pack('>BBHHBB', 1, t, rid, len(content), pad, 0) + content + b'\0' * pad

def nv(n, v):
	return bytes([len(n), len(v)]) + n + v

s = socket.create_connection((host, int(port)))
t0 = time.monotonic()
stray = [rec(4, 7, nv(b'A', b'b')), rec(5, 9, b'x'), rec(2, 11, b'')]
partial = rec(1, 1, struct.pack('>HB5x', 1, 0))
i = 0
while time.monotonic() - t0 < limit:
	try:
		if how == 'stray':
			s.sendall(stray[i % len(stray)])
		elif how == 'dribble':
			s.sendall(partial[i % (len(partial) - 1):][:1])
		i += 1
	except OSError:
		break
	r, _, _ = select.select([s], [], [], every)
	if r:
		try:
			if s.recv(4096) == b'':
				break
		except OSError:
			break
print('%.1f' % (time.monotonic() - t0))
PY

start_evfcgid --idle-timeout 2
for how in stray dribble; do
	secs=$(python3 "$T/trickle.py" "127.0.0.1:$EVFCGID_PORT" "$how" 1.5 16)
	echo "# $how every 1.5 s, --idle-timeout 2: closed after $secs s (16.x: never)"
	check "$how: a record or byte every 1.5 s is no progress: closed within 6 s ($secs s)" \
		awk -v s="$secs" 'BEGIN { exit !(s < 6) }'
done
# A body a byte at a time, each within the idle timeout, is progress.
body=$(printf 'x%.0s' $(seq 5))
out=$(python3 - "127.0.0.1:$EVFCGID_PORT" <<'PY'
import socket, struct, sys, time
host, port = sys.argv[1].rsplit(':', 1)
def rec(t, content):
	pad = (8 - len(content) % 8) % 8
	return struct.pack('>BBHHBB', 1, t, 1, len(content), pad, 0) + content + b'\0' * pad
def nv(n, v):
	return bytes([len(n), len(v)]) + n + v
s = socket.create_connection((host, int(port)))
p = nv(b'REQUEST_METHOD', b'POST') + nv(b'REQUEST_URI', b'/echo') + nv(b'CONTENT_LENGTH', b'5')
s.sendall(rec(1, struct.pack('>HB5x', 1, 0)) + rec(4, p) + rec(4, b''))
for c in b'xxxxx':
	time.sleep(1.5)
	s.sendall(rec(5, bytes([c])))
s.sendall(rec(5, b''))
raw = b''
while True:
	d = s.recv(65536)
	if not d:
		break
	raw += d
data = b''
while len(raw) >= 8:
	clen, plen = raw[4] << 8 | raw[5], raw[6]
	if raw[1] == 6:
		data += raw[8:8 + clen]
	raw = raw[8 + clen + plen:]
i = data.find(b'\r\n\r\n')
print(data[i + 4:i + 9].decode() if i >= 0 else 'none')
PY
)
check "a body a byte every 1.5 s (--idle-timeout 2) is served whole ($out)" test "$out" = "$body"
finish
