#!/usr/bin/env python3
"""fcgi_order.py: a raw FastCGI client that sends records in the order a
multiplexing client may: every BEGIN_REQUEST first, then the PARAMS and
STDIN of each request, on one connection.

  fcgi_order.py PORT N [wait-close]

It asks FCGI_GET_VALUES first on the same connection, then begins
requests 1..N (FCGI_KEEP_CONN), then sends each one's PARAMS (a GET of
/size?L, L = id * 13 % 3000) and its empty STDIN, reading all the while.
It stops at the last END_REQUEST (with wait-close: then waits up to 2 s
for the server to close), at the server's close, or after 10 s without a
byte, and prints one line:

  max_reqs M mpxs X served S overloaded O unanswered U bad B closed C
  first_overloaded F

served: END_REQUEST FCGI_REQUEST_COMPLETE with status 200 and the right
body; overloaded: FCGI_OVERLOADED with no STDOUT; unanswered: no
END_REQUEST; bad: anything else; closed: 1 if the server closed; F: the
lowest id refused (0: none).
"""
import socket
import struct
import sys
import threading

from fcgi_wire import nv, record

LINE = b'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n'


def size_of(rid):
    return rid * 13 % 3000


def params(rid):
    q = str(size_of(rid)).encode()
    return b''.join(nv(k, v) for k, v in (
        (b'REQUEST_METHOD', b'GET'), (b'REQUEST_URI', b'/size?' + q),
        (b'SCRIPT_NAME', b'/size'), (b'QUERY_STRING', q),
        (b'SERVER_PROTOCOL', b'HTTP/1.1')))


def parse_nv(b):
    out, i = {}, 0
    while i < len(b):
        lens = []
        for _ in range(2):
            if b[i] & 0x80:
                lens.append(struct.unpack_from('>I', b, i)[0] & 0x7fffffff)
                i += 4
            else:
                lens.append(b[i])
                i += 1
        out[b[i:i + lens[0]]] = b[i + lens[0]:i + lens[0] + lens[1]]
        i += lens[0] + lens[1]
    return out


def main():
    port, n = int(sys.argv[1]), int(sys.argv[2])
    s = socket.create_connection(('127.0.0.1', port))
    s.settimeout(10)
    begins = b''.join(record(1, i, struct.pack('>HB5x', 1, 1))
                      for i in range(1, n + 1))
    rest = b''.join(record(4, i, params(i)) + record(4, i) + record(5, i)
                    for i in range(1, n + 1))
    ask = record(9, 0, nv(b'FCGI_MAX_REQS', b'') + nv(b'FCGI_MPXS_CONNS', b''))

    def send():
        try:
            s.sendall(ask + begins + rest)
        except OSError:
            pass
    threading.Thread(target=send, daemon=True).start()

    out, ended, values = {}, {}, {}
    buf, closed = b'', 0
    while len(ended) < n:
        try:
            d = s.recv(1 << 20)
        except socket.timeout:
            break
        except OSError:
            d = b''
        if not d:
            closed = 1
            break
        buf += d
        off = 0
        while len(buf) - off >= 8:
            _, kind, rid, clen, plen = struct.unpack_from('>BBHHB', buf, off)
            if len(buf) - off < 8 + clen + plen:
                break
            content = buf[off + 8:off + 8 + clen]
            off += 8 + clen + plen
            if kind == 10:
                values = parse_nv(content)
            elif kind == 6:
                out[rid] = out.get(rid, b'') + content
            elif kind == 3:
                ended[rid] = content[4]
        buf = buf[off:]
    if not closed and sys.argv[3:] == ['wait-close']:
        s.settimeout(2)
        try:
            while s.recv(65536):
                pass
            closed = 1
        except OSError:
            pass
    served = overloaded = bad = 0
    first = 0
    for rid in range(1, n + 1):
        if rid not in ended:
            continue
        body = out.get(rid, b'')
        want = (LINE * (size_of(rid) // 64 + 1))[:size_of(rid)]
        if ended[rid] == 0 and body.startswith(b'Status: 200') and \
                body.split(b'\r\n\r\n', 1)[-1] == want:
            served += 1
        elif ended[rid] == 2 and not body:
            overloaded += 1
            first = first or rid
        else:
            bad += 1
    print('max_reqs %s mpxs %s served %d overloaded %d unanswered %d bad %d '
          'closed %d first_overloaded %d' % (
              values.get(b'FCGI_MAX_REQS', b'-').decode(),
              values.get(b'FCGI_MPXS_CONNS', b'-').decode(), served,
              overloaded, n - len(ended), bad, closed, first))


main()
