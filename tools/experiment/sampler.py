"""What the harness reads beside the fast load: a backend's RSS
(/proc/PID/status), evfcgid's queued bytes (its /status over FastCGI),
the kernel's TCP memory (/proc/net/sockstat), and the processor's ticks
(/proc/stat: the one reader of it in the tools).  The cell calls
Sampler.sample between pairs of slices, never inside one: what it costs
falls on neither stack's timed load."""

import re
import socket
import struct
import sys

FCGI_VERSION, BEGIN, PARAMS, STDIN, STDOUT, END = 1, 1, 4, 5, 6, 3


def rss_kib(pid, proc="/proc"):
    """pid's resident set in KiB, 0 if it is gone."""
    try:
        with open("%s/%d/status" % (proc, pid)) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def tcp_mem_pages(path="/proc/net/sockstat"):
    """The kernel's TCP memory in pages, 0 if unreadable."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("TCP:"):
                    w = line.split()
                    for i in range(len(w) - 1):
                        if w[i] == "mem":
                            return int(w[i + 1])
    except (OSError, ValueError):
        pass
    return 0


CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq",
              "steal")


def cpu_fields(path="/proc/stat"):
    """The machine's processor ticks so far by kind (CPU_FIELDS), and
    "total", all of them (user to steal): /proc/stat's first line."""
    with open(path) as f:
        for line in f:
            if line.startswith("cpu "):
                v = [int(x) for x in line.split()[1:9]]
                v += [0] * (len(CPU_FIELDS) - len(v))
                d = dict(zip(CPU_FIELDS, v))
                d["total"] = sum(v)
                return d
    return dict.fromkeys(CPU_FIELDS + ("total",), 0)


def cpu_ticks(path="/proc/stat"):
    """(total, steal): all the processor ticks so far and those stolen
    by the host it runs on."""
    d = cpu_fields(path)
    return d["total"], d["steal"]


def cpu_sums(sums, path="/proc/stat"):
    """Each of sums ("idle+iowait", "steal", "total" ...) added up from
    one reading of cpu_fields."""
    d = cpu_fields(path)
    return [sum(d[k] for k in s.split("+")) for s in sums]


def stolen_since(t0, t1):
    """The share in percent of the ticks between two cpu_ticks readings
    that the host took."""
    dt = t1[0] - t0[0]
    return 100.0 * (t1[1] - t0[1]) / dt if dt > 0 else 0.0


def _record(rtype, content, req=1):
    return struct.pack(">BBHHBx", FCGI_VERSION, rtype, req, len(content), 0) + content


def _nv(name, value):
    def ln(n):
        return bytes([n]) if n < 128 else struct.pack(">I", n | 0x80000000)
    n, v = name.encode(), value.encode()
    return ln(len(n)) + ln(len(v)) + n + v


def fcgi_get(addr, uri, timeout=2.0):
    """The STDOUT of one FastCGI GET of uri from addr (HOST:PORT), or None."""
    host, port = addr.rsplit(":", 1)
    path, _, q = uri.partition("?")
    params = b"".join(_nv(k, v) for k, v in (
        ("REQUEST_METHOD", "GET"), ("REQUEST_URI", uri), ("SCRIPT_NAME", path),
        ("QUERY_STRING", q), ("SERVER_PROTOCOL", "HTTP/1.1")))
    msg = (_record(BEGIN, struct.pack(">HB5x", 1, 0)) + _record(PARAMS, params)
           + _record(PARAMS, b"") + _record(STDIN, b""))
    out = b""
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as s:
            s.sendall(msg)
            buf = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
                while len(buf) >= 8:
                    _, rtype, _, clen, plen = struct.unpack(">BBHHB", buf[:7])
                    if len(buf) < 8 + clen + plen:
                        break
                    if rtype == STDOUT:
                        out += buf[8:8 + clen]
                    buf = buf[8 + clen + plen:]
                    if rtype == END:
                        return out
    except (OSError, ValueError, struct.error):
        return None
    return out


def status_number(addr, key):
    """One number of evfcgid's /status at addr, None if not had."""
    body = fcgi_get(addr, "/status")
    if body is None:
        return None
    m = re.search(rb'"%s":(\d+)' % re.escape(key.encode()), body)
    return int(m.group(1)) if m else None


class Sampler:
    """The peaks of a cell: RSS of the judged stack's backend, its queued
    bytes (when it serves /status: queued true), the machine's TCP
    memory.  read_* are replaceable for the tests."""

    def __init__(self, queued=True):
        self.queued = queued
        self.rss = 0
        self.q = None
        self.tcp = 0
        self.count = 0
        self.read_rss = rss_kib
        self.read_queued = lambda addr: status_number(addr, "bytes_queued")
        self.read_tcp = tcp_mem_pages

    def sample(self, pid, addr):
        """Reads once; call it between slices only."""
        self.count += 1
        self.rss = max(self.rss, self.read_rss(pid))
        if self.queued:
            v = self.read_queued(addr)
            if v is not None:
                self.q = v if self.q is None else max(self.q, v)
        self.tcp = max(self.tcp, self.read_tcp())

    def queued_text(self):
        return "-" if not self.queued or self.q is None else str(self.q)


def main(argv):
    """sampler.py cpu SUM...: one line of processor ticks for the shell
    tools (tests/run-tests, tools/many-slow-clients), each SUM a "+" of
    CPU_FIELDS or "total", so that /proc/stat has one reader."""
    kinds = CPU_FIELDS + ("total",)
    if len(argv) < 3 or argv[1] != "cpu" or any(
            k not in kinds for s in argv[2:] for k in s.split("+")):
        sys.stderr.write("usage: sampler.py cpu SUM... (SUM: fields of %s joined by +)\n"
                         % " ".join(kinds))
        return 2
    print(" ".join(str(n) for n in cpu_sums(argv[2:])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
