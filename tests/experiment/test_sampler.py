"""Unit tests of tools/experiment/sampler.py: its /proc readers on fake
files, the /status reader against a fake FastCGI peer, the peaks."""
import os
import socket
import struct
import tempfile
import threading
import unittest

from experiment import sampler


class Proc(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()

    def tearDown(self):
        import shutil
        shutil.rmtree(self.d)

    def put(self, name, text):
        p = os.path.join(self.d, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
        return p

    def test_rss(self):
        self.put("42/status", "Name:\tx\nVmRSS:\t  1234 kB\n")
        self.assertEqual(sampler.rss_kib(42, self.d), 1234)
        self.assertEqual(sampler.rss_kib(43, self.d), 0)

    def test_tcp_mem(self):
        p = self.put("sockstat", "sockets: used 5\nTCP: inuse 3 orphan 0 tw 0 alloc 4 mem 17\n")
        self.assertEqual(sampler.tcp_mem_pages(p), 17)

    def test_cpu_ticks_and_steal(self):
        p = self.put("stat", "cpu  10 0 10 70 0 0 0 10 0 0\ncpu0 1 1 1 1\n")
        self.assertEqual(sampler.cpu_ticks(p), (100, 10))
        self.assertAlmostEqual(sampler.stolen_since((100, 10), (200, 15)), 5.0)
        self.assertEqual(sampler.stolen_since((100, 10), (100, 10)), 0.0)

    def test_cpu_sums_for_the_shell_tools(self):
        p = self.put("stat", "cpu  1 2 3 40 5 6 7 8 0 0\n")
        self.assertEqual(sampler.cpu_sums(["idle+iowait", "steal", "total"], p),
                         [45, 8, 72])
        self.assertEqual(sampler.cpu_sums(["user+nice", "system+irq", "softirq"], p),
                         [3, 9, 7])
        self.assertEqual(sampler.main(["sampler.py", "cpu", "bogus"]), 2)
        self.assertEqual(sampler.main(["sampler.py"]), 2)


def fake_status(body):
    """A one-shot FastCGI peer answering body; returns its address."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)

    def serve():
        c, _ = ls.accept()
        got = b""
        while b"\x01\x05\x00\x01\x00\x00" not in got:   # the empty STDIN
            got += c.recv(4096)
        rec = struct.pack(">BBHHBx", 1, 6, 1, len(body), 0) + body
        end = struct.pack(">BBHHBx", 1, 3, 1, 8, 0) + bytes(8)
        c.sendall(rec + end)
        c.close()
        ls.close()
    threading.Thread(target=serve, daemon=True).start()
    return "127.0.0.1:%d" % ls.getsockname()[1]


class Status(unittest.TestCase):
    def test_status_number(self):
        addr = fake_status(b'Content-Type: application/json\r\n\r\n{"bytes_queued":4096,"active":2}')
        self.assertEqual(sampler.status_number(addr, "bytes_queued"), 4096)

    def test_unreachable(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        self.assertIsNone(sampler.status_number("127.0.0.1:%d" % port, "bytes_queued"))


class Peaks(unittest.TestCase):
    def test_peaks(self):
        smp = sampler.Sampler(queued=True)
        vals = iter([(10, 5, 1), (30, None, 2), (20, 7, 9)])

        def nxt():
            return next(vals)
        cur = {}

        def rss(pid):
            cur["v"] = nxt()
            return cur["v"][0]
        smp.read_rss = rss
        smp.read_queued = lambda addr: cur["v"][1]
        smp.read_tcp = lambda: cur["v"][2]
        for _ in range(3):
            smp.sample(1, "x")
        self.assertEqual((smp.rss, smp.queued_text(), smp.tcp, smp.count), (30, "7", 9, 3))

    def test_no_status(self):
        smp = sampler.Sampler(queued=False)
        smp.read_rss = lambda pid: 1
        smp.read_tcp = lambda: 1
        smp.sample(1, "x")
        self.assertEqual(smp.queued_text(), "-")


if __name__ == "__main__":
    unittest.main()
