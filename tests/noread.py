"""Clients that send one request each and then never read: COUNT
connections at once, each with a 4 KiB SO_RCVBUF set before connect(), so
the server's writes stop soon and its answers wait in its queues.

usage: python3 noread.py ADDR COUNT fcgi URI [ROLE [DATA_BYTES]]
       python3 noread.py ADDR COUNT http URI
       python3 noread.py ADDR COUNT kept URI
ADDR is HOST:PORT.  fcgi: a FastCGI request (ROLE 1 Responder, 3 Filter
with DATA_BYTES of DATA), sent whole (the server reads input while its
output waits); http: "GET URI HTTP/1.1".  Prints "sent COUNT" once every
request is out, then holds the connections until killed.
kept: the other way round, idle kept connections: each sends one
Responder request with FCGI_KEEP_CONN and reads its answer to its
END_REQUEST (20 s at most for all); prints "answered N of COUNT", then
holds them all, idle, until killed."""
import selectors
import socket
import sys
import time

from fcgi_wire import nv, record


def fcgi_request(uri, role, data_len, flags=0):
    q = uri.split('?', 1)[1] if '?' in uri else ''
    params = b''.join(nv(k.encode(), v.encode()) for k, v in (
        ('REQUEST_METHOD', 'GET'), ('REQUEST_URI', uri),
        ('QUERY_STRING', q), ('SCRIPT_NAME', uri.split('?')[0]),
        ('SERVER_PROTOCOL', 'HTTP/1.1')))
    out = record(1, 1, bytes([0, role, flags, 0, 0, 0, 0, 0]))
    out += record(4, 1, params) + record(4, 1)
    out += record(5, 1)
    if role == 3:
        data = b'd' * 65528
        left = data_len
        while left > 0:
            n = min(left, len(data))
            out += record(8, 1, data[:n])
            left -= n
        out += record(8, 1)
    return out


def kept(host, port, count, uri):
    req = fcgi_request(uri, 1, 0, 1)
    sel = selectors.DefaultSelector()
    socks, bufs, answered = [], {}, 0
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.connect((host, int(port)))
        s.sendall(req)
        s.setblocking(False)
        socks.append(s)
        bufs[s] = b''
        sel.register(s, selectors.EVENT_READ)
    end = time.monotonic() + 20
    while bufs and time.monotonic() < end:
        for key, _ in sel.select(1):
            s = key.fileobj
            try:
                got = s.recv(65536)
            except OSError:
                got = b''
            buf = bufs[s] + got
            while len(buf) >= 8:
                n = 8 + (buf[4] << 8 | buf[5]) + buf[6]
                if len(buf) < n or buf[1] == 3:
                    break
                buf = buf[n:]
            if not got or (len(buf) >= 8 and buf[1] == 3):
                answered += bool(got)
                sel.unregister(s)
                del bufs[s]
            else:
                bufs[s] = buf
    print('answered %d of %d' % (answered, count), flush=True)
    while True:
        time.sleep(3600)


def main():
    host, port = sys.argv[1].rsplit(':', 1)
    count = int(sys.argv[2])
    kind, uri = sys.argv[3], sys.argv[4]
    if kind == 'kept':
        kept(host, port, count, uri)
    if kind == 'fcgi':
        role = int(sys.argv[5]) if len(sys.argv) > 5 else 1
        dlen = int(sys.argv[6]) if len(sys.argv) > 6 else 0
        req = fcgi_request(uri, role, dlen)
    else:
        req = ('GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' % uri).encode()
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, int(port)))
        s.sendall(req)
        socks.append(s)
    print('sent %d' % count, flush=True)
    while True:
        time.sleep(3600)


main()
