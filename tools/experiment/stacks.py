"""The processes of a cell: two identical stacks (backend and front end)
side by side, the slow clients and the fast load.  Every process started
here is recorded in a Procs and ended by it (CGI backends with their
process group: fcgiwrap's scripts share it)."""

import os
import re
import signal
import socket
import subprocess
import time

CGI_FAST_PATH = "/cgi-bin/small.sh"
FAST_PATH = "/big"
FAST_PARALLEL = 10
# evfcgid's --cgi-max: above a cell's slow clients plus the fast load.
CGI_EXP_MAX = 512
CGI_BACKENDS = ("evfcgid-cgi", "fcgiwrap1", "fcgiwrap4")


class Fatal(Exception):
    """A set-up failure: the run cannot go on (exit 2)."""


def is_cgi(backend):
    return backend in CGI_BACKENDS


class Env:
    """Where things are: the tree, the binaries, the scratch directory;
    with --links the client namespaces' command prefixes and addresses."""

    def __init__(self, top, tmp):
        self.top = top
        self.tmp = tmp
        self.evfcgid = os.path.join(top, "src/evfcgid")
        self.bfcgid = os.environ.get("BFCGID") or os.path.join(top, "tools/blocking_fcgid")
        self.fcgiwrap = os.environ.get("FCGIWRAP") or _which("fcgiwrap", "/usr/sbin/fcgiwrap")
        self.tool = lambda n: os.path.join(top, "tools", n)
        self.fe_host = "127.0.0.1"
        self.cli_exec = []
        self.slow_exec = []
        self.slow_host = None
        self.fe_extra = []
        self.link_addrs = []
        self.cgi_www = os.path.join(tmp, "www")


def _which(name, default):
    for d in os.environ.get("PATH", "").split(":") + ["/usr/sbin", "/sbin"]:
        p = os.path.join(d, name)
        if d and os.access(p, os.X_OK):
            return p
    return default


def freeport(env):
    """A free loopback port (tests/bin/freeport, as the tests pick theirs)."""
    out = subprocess.run([os.path.join(env.top, "tests/bin/freeport")], capture_output=True, text=True)
    if out.returncode != 0:
        raise Fatal("tests/bin/freeport failed: run make first")
    return int(out.stdout.split()[0])


def port_accepts(host, port):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_port(host, port, secs=10.0, proc=None):
    """True once host:port accepts, false after secs or when proc ends."""
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if port_accepts(host, port):
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


class Procs:
    """The processes of a cell, ended together."""

    def __init__(self):
        self.procs = []
        self.groups = []

    def start(self, argv, log=None, out=None, group=False):
        stderr = open(log, "ab") if log else subprocess.DEVNULL
        stdout = open(out, "wb") if out else subprocess.DEVNULL
        try:
            p = subprocess.Popen(argv, stdout=stdout, stderr=stderr if not out else subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=group)
        finally:
            if log:
                stderr.close()
            if out:
                stdout.close()
        self.procs.append(p)
        if group:
            self.groups.append(p.pid)
        return p

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.terminate()
                except OSError:
                    pass
        if self.groups:
            for g in self.groups:
                _killpg(g, signal.SIGTERM)
            time.sleep(0.2)
            for g in self.groups:
                _killpg(g, signal.SIGKILL)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs, self.groups = [], []


def _killpg(g, sig):
    try:
        os.killpg(g, sig)
    except OSError:
        pass


class Stack:
    """One stack: its backend (pid, address) and its front end's port
    (None direct)."""

    def __init__(self, index):
        self.index = index
        self.backend_pid = None
        self.addr = None
        self.fe_port = None
        self.urls = None


class Cell:
    """A cell's stacks and processes: backend behind frontend, in dir."""

    def __init__(self, env, backend, frontend, cdir):
        self.env = env
        self.backend = backend
        self.frontend = frontend
        self.dir = cdir
        os.makedirs(cdir, exist_ok=True)
        self.procs = Procs()
        self.stacks = []
        self.slow = []

    # --- start ----------------------------------------------------------

    def start(self, n=2):
        for s in range(n):
            self.stacks.append(self._stack(s))

    def _stack(self, s):
        env, st = self.env, Stack(s)
        st.addr = "127.0.0.1:%d" % freeport(env)
        self._backend(st)
        if self.frontend == "direct":
            return st
        st.fe_port = freeport(env)
        fdir = os.path.join(self.dir, "fe.%d" % s)
        if is_cgi(self.backend):
            args = ["nginx-cgi", fdir, str(st.fe_port), st.addr, env.cgi_www]
        else:
            # A blocking thread serves one connection until it closes:
            # behind nginx's upstream keepalive it would wait on an idle
            # kept connection while requests queue on others, so the
            # control group gets one connection per request.
            fe = self.frontend
            if self.backend.startswith("blocking") and fe.startswith("nginx"):
                fe += "-keepalive=0"
            args = [fe, fdir, str(st.fe_port), st.addr] + env.fe_extra
        r = subprocess.run([os.path.join(env.top, "tools/experiment/fe.sh")] + args,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise Fatal("front end %s: no configuration (%s)" % (self.frontend, r.stderr.strip()))
        argv = r.stdout.splitlines()
        p = self.procs.start(argv, log=os.path.join(fdir, "stderr"))
        if not wait_port("127.0.0.1", st.fe_port, 10, p):
            raise Fatal("front end %s did not start (see %s)" % (self.frontend, fdir))
        with open(os.path.join(self.dir, "urls.%d" % s), "w") as f:
            f.write("http://%s:%d%s\n" % (env.fe_host, st.fe_port,
                                          CGI_FAST_PATH if is_cgi(self.backend) else FAST_PATH))
        st.urls = os.path.join(self.dir, "urls.%d" % s)
        return st

    def _backend(self, st):
        env, b, log = self.env, self.backend, os.path.join(self.dir, "backend.%d.log" % st.index)
        group = False
        if b == "evfcgid":
            argv = [env.evfcgid, "--listen", st.addr, "-q"]
        elif b == "evfcgid-sndbuf":
            argv = [env.evfcgid, "--listen", st.addr, "-q", "--sndbuf", "64k"]
        elif b in ("blocking1", "blocking4"):
            argv = [env.bfcgid, "-t", b[-1], "--listen", st.addr]
        elif b == "evfcgid-cgi":
            argv = [env.evfcgid, "--cgi", "--cgi-root", env.cgi_www, "--cgi-max", str(CGI_EXP_MAX),
                    "--cgi-queue", str(CGI_EXP_MAX), "--listen", st.addr, "--allow", "127.0.0.1", "-q"]
            group = True
        elif b in ("fcgiwrap1", "fcgiwrap4"):
            argv = [env.fcgiwrap, "-c", b[-1], "-s", "tcp:" + st.addr]
            group = True
        else:
            raise Fatal("unknown backend " + b)
        p = self.procs.start(argv, log=log, group=group)
        st.backend_pid = p.pid
        host, port = st.addr.rsplit(":", 1)
        if not wait_port(host, int(port), 10, p):
            raise Fatal("backend %s did not start (see %s)" % (b, log))

    def stop(self):
        self.procs.stop()
        self.slow = []

    # --- clients ----------------------------------------------------------

    def slow_path(self, size, secs):
        """What a slow client requests (see tools/slow-client-experiment)."""
        if not is_cgi(self.backend):
            return "/size?%s" % size
        if size == "hang":
            return "/cgi-bin/hang.sh?%d" % (int(time.time()) + secs)
        return "/cgi-bin/big.sh?%s" % size

    def start_slow(self, s, n, size, secs, offsets=None, links=False):
        """n slow readers of size bytes from stack s, each giving up after
        secs; reader i starts offsets[i] seconds after the first (their
        pauses then fall at every phase of the slices)."""
        env, st = self.env, self.stacks[s]
        path = self.slow_path(size, secs)
        t0 = time.monotonic()
        for i in range(n):
            if offsets:
                d = t0 + offsets[i] - time.monotonic()
                if d > 0:
                    time.sleep(d)
            out = os.path.join(self.dir, "slow.%d" % i)
            if links:
                argv = env.slow_exec + [env.tool("http_get"), "--rcvbuf", "0", "--read-size", "16384",
                                        "--pause", "0", "--source", env.link_addrs[i], "--time-limit",
                                        str(secs), "-o", os.path.join(self.dir, "body.%d" % i),
                                        "http://%s:%d%s" % (env.slow_host, st.fe_port, path)]
            elif self.frontend == "direct":
                argv = [env.tool("fcgi_load"), "-c", "1", "-n", "1", "--rcvbuf", "512", "--read-size",
                        "512", "--pause", "1000", "-t", str(secs), st.addr, "/size?%s" % size]
            else:
                argv = [env.tool("http_get"), "--rcvbuf", "512", "--read-size", "512", "--pause", "1000",
                        "--time-limit", str(secs), "http://127.0.0.1:%d%s" % (st.fe_port, path)]
            self.slow.append(self.procs.start(argv, out=out))

    def wait_slow(self):
        for p in self.slow:
            p.wait()
        self.slow = []

    def _slow_outputs(self):
        for name in os.listdir(self.dir):
            if name.startswith("slow."):
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    yield f.read()

    def slow_bytes(self):
        """Body bytes the slow clients got, summed."""
        n = 0
        for text in self._slow_outputs():
            for line in text.splitlines():
                m = re.search(r"\bbody=(\d+)", line) or re.match(r"^bytes: (\d+)$", line)
                if m:
                    n += int(m.group(1))
        return n

    def slow_cut(self):
        """Slow clients that ended without their whole answer before their
        own time limit (http_get's result other than ok and timeout;
        fcgi_load's failed requests)."""
        n = 0
        for text in self._slow_outputs():
            for line in text.splitlines():
                m = re.search(r" result=([a-z_]+)$", line)
                if m and m.group(1) not in ("ok", "timeout"):
                    n += 1
                m = re.match(r"^errors: (\d+)", line)
                if m:
                    n += int(m.group(1))
        return n

    def clear_slow(self):
        for name in os.listdir(self.dir):
            if name.startswith("slow.") or name.startswith("body."):
                os.unlink(os.path.join(self.dir, name))

    def fast_load(self, s, secs):
        """Fast fetches per second of /big (CGI: the trivial script) from
        stack s over secs seconds, 0 if the load got nothing done."""
        env, st = self.env, self.stacks[s]
        if self.frontend == "direct":
            argv = [env.tool("fcgi_load"), "-c", str(FAST_PARALLEL), "-d", str(secs), st.addr, FAST_PATH]
            pat = r"^rps: ([0-9.]+)"
        else:
            argv = env.cli_exec + [env.tool("http_load"), "-parallel", str(FAST_PARALLEL),
                                   "-seconds", str(secs), st.urls]
            pat = r"^([0-9.]+) fetches/sec"
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True, errors="replace").stdout
        with open(os.path.join(self.dir, "fast.%d.out" % s), "w") as f:
            f.write(out)
        m = re.search(pat, out, re.M)
        return float(m.group(1)) if m else 0.0

    def both_load(self, secs):
        """The fast load on both stacks at once (not counted: warming)."""
        import threading
        rates = [0.0, 0.0]

        def one(s):
            rates[s] = self.fast_load(s, secs)
        t = threading.Thread(target=one, args=(0,))
        t.start()
        one(1)
        t.join()
        return rates
