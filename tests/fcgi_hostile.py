#!/usr/bin/env python3
"""fcgi_hostile.py: FastCGI peers that hold a connection without finishing
what they began, to see when the server closes it.

  fcgi_hostile.py PORT abandon SECONDS
  fcgi_hostile.py PORT dribble SECONDS GAP

abandon: begins request 1 (FCGI_KEEP_CONN), sends part of its PARAMS and
never more; meanwhile asks /hello as request 2 again and again (its
answer read each time), so the connection never stops making progress.
dribble: sends one byte of a record every GAP seconds, never a whole one.

Either stops at the server's close or after SECONDS, and prints one line:

  closed after S.S s served N        (or: open after S.S s served N)

served: whole /hello answers (abandon).
"""
import socket
import struct
import sys
import time


def record(kind, rid, content=b''):
    pad = -len(content) % 8
    return struct.pack('>BBHHBx', 1, kind, rid, len(content), pad) + \
        content + bytes(pad)


def nv(name, value):
    return bytes([len(name), len(value)]) + name + value


def begin(rid):
    return record(1, rid, struct.pack('>HB5x', 1, 1))


def hello(rid):
    p = nv(b'REQUEST_METHOD', b'GET') + nv(b'REQUEST_URI', b'/hello') + \
        nv(b'SCRIPT_NAME', b'/hello')
    return begin(rid) + record(4, rid, p) + record(4, rid) + record(5, rid)


def read_end(s, rid, buf):
    """Reads until request rid's END_REQUEST; returns (ok, rest) or
    (False, None) when the server closed."""
    while True:
        while len(buf) >= 8:
            _, kind, r, clen, pad = struct.unpack('>BBHHBx', buf[:8])
            if len(buf) < 8 + clen + pad:
                break
            buf = buf[8 + clen + pad:]
            if kind == 3 and r == rid:
                return True, buf
        try:
            b = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return False, None
        if not b:
            return False, None
        buf += b


def main():
    port, mode, limit = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    s = socket.create_connection(('127.0.0.1', port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    start = time.monotonic()
    served = 0
    closed = False
    if mode == 'abandon':
        s.sendall(begin(1) + record(4, 1, nv(b'REQUEST_METHOD', b'GET')))
        buf = b''
        while time.monotonic() - start < limit:
            try:
                s.sendall(hello(2))
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
            ok, buf = read_end(s, 2, buf)
            if not ok:
                closed = True
                break
            served += 1
            time.sleep(0.1)
    else:
        gap = float(sys.argv[4])
        whole = hello(1)
        i = 0
        s.settimeout(gap)
        while time.monotonic() - start < limit and i < len(whole) - 1:
            try:
                s.sendall(whole[i:i + 1])
                i += 1
                if s.recv(1) == b'':
                    closed = True
                    break
            except socket.timeout:
                continue
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
    print('%s after %.1f s served %d' % ('closed' if closed else 'open',
                                         time.monotonic() - start, served))


if __name__ == '__main__':
    main()
