#!/usr/bin/env python3
"""fcgi_idle.py: asks paths one after another on one kept FastCGI
connection (FCGI_KEEP_CONN, a 4 KiB receive buffer set before connect),
then keeps the connection open and idle.

  fcgi_idle.py PORT HOLD PATH...

The first answer is read only after 1 s, so that the server's write
blocks and then drains; the others are read at once.  Each path may carry
a query (/size?4000000).  After the last END_REQUEST it prints
"idle N BYTES" (N answers complete, BYTES of STDOUT in all), flushes, and
holds the connection HOLD seconds before closing it.  Exit 1 when an
answer did not end.
"""
import socket
import struct
import sys
import time

from fcgi_wire import nv, record


def request(path):
    script, _, query = path.partition('?')
    p = b''.join(nv(k.encode(), v.encode()) for k, v in (
        ('REQUEST_METHOD', 'GET'), ('REQUEST_URI', path),
        ('SCRIPT_NAME', script), ('QUERY_STRING', query),
        ('SERVER_PROTOCOL', 'HTTP/1.1')))
    return record(1, 1, struct.pack('>HB5x', 1, 1)) + record(4, 1, p) + \
        record(4, 1) + record(5, 1)


def answer(s):
    """Reads one answer to its END_REQUEST; returns its STDOUT bytes or
    None when the connection ended first."""
    buf, got = b'', 0
    while True:
        d = s.recv(65536)
        if not d:
            return None
        buf += d
        while len(buf) >= 8:
            _, kind, _, clen, plen = struct.unpack_from('>BBHHB', buf)
            if len(buf) < 8 + clen + plen:
                break
            if kind == 6:
                got += clen
            buf = buf[8 + clen + plen:]
            if kind == 3:
                return got


def main():
    port, hold, paths = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(('127.0.0.1', port))
    s.settimeout(20)
    total = 0
    for i, path in enumerate(paths):
        s.sendall(request(path))
        if i == 0:
            time.sleep(1)
        got = answer(s)
        if got is None:
            print('closed before the answer to %s ended' % path, flush=True)
            return 1
        total += got
    print('idle %d %d' % (len(paths), total), flush=True)
    time.sleep(hold)
    s.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
