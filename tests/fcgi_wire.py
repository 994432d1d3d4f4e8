"""FastCGI on the wire for the raw test clients (fcgi_order.py,
fcgi_idle.py): a record with its padding, and one name-value pair with
1- or 4-byte lengths (FastCGI 1.0, 3.3 and 3.4)."""
import struct


def record(kind, rid, content=b''):
    pad = -len(content) % 8
    return struct.pack('>BBHHBx', 1, kind, rid, len(content), pad) + \
        content + bytes(pad)


def nv(name, value):
    def length(n):
        return bytes([n]) if n < 128 else struct.pack('>I', n | 0x80000000)
    return length(len(name)) + length(len(value)) + name + value
