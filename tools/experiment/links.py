"""--links: the cells over kernel-shaped links (tools/netlab.sh through
lab.sh).  The outer run builds the lab and runs the driver again inside
the server namespace (EVF_LINKS_LAB set); there Lab gives the client
namespaces' addresses and shapes each slow client's link."""

import os
import subprocess

PROFILE_KBIT = {"modem": 33.6, "gprs": 50, "3g": 384, "dsl": 2000}
PATTERN_LINE = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n"


def pattern(size):
    """The demo body of size bytes (what /size?SIZE sends)."""
    n = size // len(PATTERN_LINE) + 1
    return (PATTERN_LINE * n)[:size]


def inside():
    return bool(os.environ.get("EVF_LINKS_LAB"))


def run_outer(top, argv, maxslow):
    """Replaces this process by lab.sh, which builds the lab, runs argv
    inside it and removes it (also when this pid gets SIGTERM)."""
    lab = os.path.join(top, "tools/experiment/lab.sh")
    tag = os.environ.get("EVF_LINKS_TAG", "exp")
    os.execv(lab, [lab, "up", tag, str(max(maxslow, 1))] + argv)


def could_finish(size, kbit, secs):
    """True if size bytes can arrive in secs at kbit (a fifth to spare for
    the headers, half a second to connect)."""
    return size * 8 / (kbit * 1000) * 1.2 + 0.5 <= secs


class Lab:
    """The lab seen from inside the server namespace."""

    def __init__(self, top, env):
        self.top = top
        self.state = os.environ["EVF_LINKS_LAB"]
        self.sh = os.path.join(top, "tools/experiment/lab.sh")
        with open(os.environ["EVF_LINKS_ADDRS"]) as f:
            self.addrs = f.read().split()
        out = subprocess.run([self.sh, "info", self.state], capture_output=True, text=True).stdout.split()
        fe_host, fast_ns, slow_host, slow_ns = out
        env.fe_host = fe_host
        env.cli_exec = ["ip", "netns", "exec", fast_ns]
        env.slow_host = slow_host
        env.slow_exec = ["ip", "netns", "exec", slow_ns]
        env.fe_extra = ["bind=0.0.0.0"]
        env.link_addrs = self.addrs

    def shape(self, profile, n):
        """The first n slow clients' addresses, each on its own link of
        profile's rate; the others unshaped."""
        argv = [self.sh, "shape", self.state]
        if n > 0:
            argv += ["%g" % PROFILE_KBIT[profile]] + self.addrs[:n]
        if subprocess.run(argv).returncode != 0:
            from .stacks import Fatal
            raise Fatal("--links: cannot shape the %s links" % profile)

    def complete(self, cell, size, profile, secs, n):
        """(checked, expected) over this round's n slow clients: expected,
        those whose size bytes could arrive in time; checked, those whose
        body is the demo body, byte for byte."""
        size = int(size)
        if not could_finish(size, PROFILE_KBIT[profile], secs):
            return 0, 0
        want = pattern(size)
        ok = 0
        for i in range(n):
            try:
                with open(os.path.join(cell.dir, "body.%d" % i), "rb") as f:
                    ok += f.read() == want
            except OSError:
                pass
        return ok, n
