#!/usr/bin/env python3
"""sse_clients.py: holds N server-sent-event streams straight over FastCGI.

    sse_clients.py ADDR [-n N] [--seconds S] [--path /events]

Opens N connections to the FastCGI server at ADDR (HOST:PORT or
unix:/path), asks PATH on each (GET, one request per connection), and
reads every stream for S seconds, counting the events ("id:" lines) each
client receives.  Prints "connected N" once all are connected (and have
their header), then one summary line:

    clients N connected C refused R ended E events min A median B max C

refused: answered other than 200 (503 past --max-clients); ended: the
server ended the stream (END_REQUEST) or closed the connection.  A client
speaks FastCGI 1.0 itself (records, name-value pairs), so no web server
sits between it and the daemon: what is measured is the daemon alone.
Used by tests/test_examples.sh and examples/sse-measure.
"""
import argparse
import resource
import selectors
import socket
import struct
import sys
import time

BEGIN, END, PARAMS, STDIN, STDOUT = 1, 3, 4, 5, 6


def record(rtype, body):
    pad = -len(body) % 8
    return struct.pack(">BBHHBx", 1, rtype, 1, len(body), pad) + body + \
        b"\0" * pad


def pair(name, value):
    def length(n):
        return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    return length(len(name)) + length(len(value)) + name + value


def request(path):
    params = [(b"REQUEST_METHOD", b"GET"), (b"REQUEST_URI", path),
              (b"SCRIPT_NAME", path), (b"QUERY_STRING", b""),
              (b"SERVER_PROTOCOL", b"HTTP/1.1"),
              (b"REMOTE_ADDR", b"127.0.0.1")]
    body = b"".join(pair(k, v) for k, v in params)
    return (record(BEGIN, struct.pack(">HB5x", 1, 0)) + record(PARAMS, body)
            + record(PARAMS, b"") + record(STDIN, b""))


class Client:
    """One stream: the records parsed as they come, events counted."""

    def __init__(self, sock):
        self.sock = sock
        self.inbuf = b""
        self.head = b""          # the CGI header block, until it ends
        self.status = None
        self.tail = b""          # the last bytes of the body seen
        self.events = 0
        self.ended = False

    def feed(self, data):
        self.inbuf += data
        while len(self.inbuf) >= 8:
            _, rtype, _, clen, pad = struct.unpack(">BBHHB", self.inbuf[:7])
            if len(self.inbuf) < 8 + clen + pad:
                break
            content = self.inbuf[8:8 + clen]
            self.inbuf = self.inbuf[8 + clen + pad:]
            if rtype == STDOUT:
                self.stdout(content)
            elif rtype == END:
                self.ended = True

    def stdout(self, data):
        if self.status is None:
            self.head += data
            i = self.head.find(b"\r\n\r\n")
            if i < 0:
                return
            self.status = 200
            for line in self.head[:i].split(b"\r\n"):
                if line.lower().startswith(b"status:"):
                    self.status = int(line.split()[1])
            data = self.head[i + 4:]
        text = self.tail + data
        self.events += text.count(b"\nid: ") + text.startswith(b"id: ")
        self.tail = text[-4:]


def connect(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host.strip("[]"), int(port)), 10)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addr")
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--path", default="/events")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    clients = []
    req = request(a.path.encode())
    for _ in range(a.n):
        c = Client(connect(a.addr))
        c.sock.sendall(req)
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, c)
        clients.append(c)

    def pump(until, done=lambda: False):
        while time.monotonic() < until and not done():
            for key, _ in sel.select(max(0.0, until - time.monotonic())):
                c = key.data
                try:
                    data = c.sock.recv(65536)
                except ConnectionError:
                    data = b""
                if data:
                    c.feed(data)
                else:
                    c.ended = True
                    sel.unregister(c.sock)

    pump(time.monotonic() + 30,
         lambda: all(c.status is not None or c.ended for c in clients))
    print("connected %d" % sum(c.status is not None for c in clients),
          flush=True)
    pump(time.monotonic() + a.seconds)
    ev = sorted(c.events for c in clients if c.status == 200)
    print("clients %d connected %d refused %d ended %d events min %d "
          "median %d max %d" % (
              a.n, len(ev), sum(c.status not in (None, 200) for c in clients),
              sum(c.ended for c in clients), ev[0] if ev else 0,
              ev[len(ev) // 2] if ev else 0, ev[-1] if ev else 0),
          flush=True)
    for c in clients:
        c.sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
