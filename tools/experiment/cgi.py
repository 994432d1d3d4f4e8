"""The CGI side of the experiment (issue 12): the scripts the CGI cells
run, and the measurements beside them (requests/s of evfcgid --cgi
against fcgiwrap -c 4 through nginx; evfcgid's RSS beside slow CGI
downloads)."""

import os
import re
import subprocess
import time

from . import sampler, stacks

WRK_CONNS, WRK_SECONDS, WRK_SLICES, RSS_SLOW = 8, 2, 3, 100

SCRIPTS = {
    "small.sh": "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\nhello from cgi\\n'\n",
    "big.sh": """#!/bin/sh
case $QUERY_STRING in ''|*[!0-9]*) printf 'Status: 400\\r\\n\\r\\n'; exit 0 ;; esac
printf 'Content-Type: application/octet-stream\\r\\n\\r\\n'
yes 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.' | head -c "$QUERY_STRING"
""",
    # Sleeps after its header until the time QUERY_STRING (seconds since
    # the epoch), when its client gives up: fcgiwrap is free again when
    # the round ends, however many hung requests queued for it.
    "hang.sh": """#!/bin/sh
case $QUERY_STRING in ''|*[!0-9]*) printf 'Status: 400\\r\\n\\r\\n'; exit 0 ;; esac
printf 'Content-Type: text/plain\\r\\n\\r\\n'
left=$((QUERY_STRING - $(date +%s)))
[ "$left" -gt 0 ] && exec sleep "$left"
""",
}


def write_www(d):
    """d/cgi-bin with the three scripts of the CGI cells."""
    os.makedirs(os.path.join(d, "cgi-bin"), exist_ok=True)
    for name, text in SCRIPTS.items():
        p = os.path.join(d, "cgi-bin", name)
        with open(p, "w") as f:
            f.write(text)
        os.chmod(p, 0o755)


def wrk(cell, s, secs=WRK_SECONDS):
    """wrk's requests/s on stack s's trivial script and its failures."""
    out = subprocess.run(["wrk", "-t", "2", "-c", str(WRK_CONNS), "-d", "%ds" % secs,
                          "http://127.0.0.1:%d%s" % (cell.stacks[s].fe_port, stacks.CGI_FAST_PATH)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    m = re.search(r"^Requests/sec:\s+([0-9.]+)", out, re.M)
    fails = sum(int(x) for x in re.findall(r"Non-2xx or 3xx responses:\s+(\d+)", out))
    for line in re.findall(r"Socket errors:(.*)", out):
        fails += sum(int(x) for x in re.findall(r"(\d+)", line))
    return (m.group(1) if m else "0"), fails


def _median(v):
    v = sorted(v, key=float)
    return v[(len(v) + 1) // 2 - 1]


def _programs(pid):
    """The CGI programs under evfcgid pid: its descendants but its
    reapers (the programs' parents since issue 37), which are its own
    children."""
    ps = subprocess.run(["ps", "-e", "-o", "pid=,ppid="],
                        capture_output=True, text=True).stdout.split()
    parent = dict(zip(ps[0::2], ps[1::2]))
    children = {}
    for p, pp in parent.items():
        children.setdefault(pp, []).append(p)
    reapers = children.get(str(pid), [])
    return sum(len(children.get(r, [])) for r in reapers)


def measure(env, cdir, warmup, path):
    """The measurements, as "name<TAB>value" lines in path."""
    cell = stacks.Cell(env, "evfcgid-cgi", "nginx", cdir)
    try:
        # Stack 0 evfcgid --cgi, stack 1 fcgiwrap -c 4.
        cell.start(1)
        cell.backend = "fcgiwrap4"
        cell.stacks.append(cell._stack(1))
        cell.backend = "evfcgid-cgi"
        wrk(cell, 0, 1)
        wrk(cell, 1, 1)
        er, fr, ef, ff = [], [], 0, 0
        for i in range(WRK_SLICES):
            order = (1, 0) if i % 2 else (0, 1)
            for s in order:
                r, f = wrk(cell, s)
                if s == 0:
                    er.append(r)
                    ef += f
                else:
                    fr.append(r)
                    ff += f
        e, f = _median(er), _median(fr)
        pid = cell.stacks[0].backend_pid
        rss0 = sampler.rss_kib(pid)
        cell.start_slow(0, RSS_SLOW, "8388608", warmup + 8)
        time.sleep(warmup + 2)
        # The programs are counted with each sample, from the first: one
        # count after the five, on a loaded machine, came after the slow
        # clients' time was up and read 0.
        rss1 = kids = 0
        for _ in range(5):
            kids = max(kids, _programs(pid))
            rss1 = max(rss1, sampler.rss_kib(pid))
            time.sleep(1)
        cell.wait_slow()
        nbytes = cell.slow_bytes()
        cell.clear_slow()
    finally:
        cell.stop()
    ratio = "%.3f" % (float(e) / float(f)) if float(f) > 0 else "-"
    with open(path, "w") as out:
        for k, v in (("wrk_conns", WRK_CONNS), ("wrk_slices", "%d x %ds" % (WRK_SLICES, WRK_SECONDS)),
                     ("evfcgid_cgi_rps", e), ("fcgiwrap4_rps", f), ("rps_ratio", ratio),
                     ("evfcgid_cgi_failures", ef), ("fcgiwrap4_failures", ff),
                     ("evfcgid_cgi_rps_slices", " ".join(er)), ("fcgiwrap4_rps_slices", " ".join(fr)),
                     ("rss_slow_clients", RSS_SLOW), ("rss_alone_kib", rss0), ("rss_beside_kib", rss1),
                     ("programs_running", kids), ("slow_bytes", nbytes)):
            out.write("%s\t%s\n" % (k, v))


def measure_md(path):
    """The measurements of path as a paragraph of results.md."""
    v = {}
    with open(path) as f:
        for line in f:
            k, _, val = line.rstrip("\n").partition("\t")
            v[k] = val
    return ("CGI requests/s on the trivial script (wrk -c %s through nginx, median of %s slices, "
            "alternating): evfcgid --cgi **%s**, fcgiwrap -c 4 **%s** (ratio %s; failed answers %s and %s)."
            "  evfcgid --cgi RSS: %s KiB alone, at most **%s KiB** beside %s slow clients each downloading "
            "8 MiB of CGI output (%s of their programs running, waiting in write(); %s bytes reached the "
            "slow clients).\n" % (v["wrk_conns"], v["wrk_slices"], v["evfcgid_cgi_rps"], v["fcgiwrap4_rps"],
                                  v["rps_ratio"], v["evfcgid_cgi_failures"], v["fcgiwrap4_failures"],
                                  v["rss_alone_kib"], v["rss_beside_kib"], v["rss_slow_clients"],
                                  v["programs_running"], v["slow_bytes"]))
