"""tools/slow-client-experiment: options, the run, the verdict.  Exit
status: 0 PROVEN, 1 NOT PROVEN, 2 a usage or set-up error, 3 NOT JUDGED
(the calibration cell, twins alike, read outside 1 +- 0.05)."""

import math
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time

from . import cells, cgi, links, report, stats, stacks

USAGE = """usage: tools/slow-client-experiment [--quick | --full | --cgi] [options]

  --quick          the decisive cells only, rounds of 8 pairs of 0.25 s
                   slices (about 2 minutes; run by make check)
  --cgi            the CGI cells only: backends evfcgid-cgi, fcgiwrap1 and
                   fcgiwrap4 behind nginx, then the CGI measurements
  --full           adds 1000 slow clients, and at that count nginx with and
                   without "listen ... sndbuf=16k" and evfcgid with
                   --sndbuf 64k (backend evfcgid-sndbuf)
  --out DIR        where the table, TSV and plots go (default experiment-out)
  --seconds S      each slice of fast load, at least 0.1 (default 1; 0.25
                   with --quick)
  --warmup S       slow clients read this long before the fast load (default 2;
                   1 with --quick)
  --rounds N       rounds per cell, the slow clients on stack 0 and 1 in
                   turn (default 2; odd counts round up: an even count
                   cancels any difference between the stacks)
  --max-rounds N   a cell whose ratio is too close to the bound it is
                   judged by (0.9 evfcgid, 0.2 blocking; the calibration
                   cell: 0.95 and 1.05) to tell from the noise (within two
                   standard errors of its pairs) gets two more rounds at a
                   time, up to N (default: as many as make 24 s of fast
                   load on a stack, at least 3 x --rounds: 6 by default,
                   12 with --quick; the calibration cell at most 6)
  --pairs K        pairs of slices per round: the stack with slow clients
                   and its twin, one at a time, judged/twin then
                   twin/judged, the next round mirrored; a round's ratio
                   is its fetches beside the slow clients over the twin's,
                   the cell's the geometric mean over the rounds (default
                   4; 8 with --quick)
  --backends LIST  comma-separated: evfcgid,blocking1,blocking4 and the
                   CGI ones, evfcgid-cgi,fcgiwrap1,fcgiwrap4 (all six by
                   default; --cgi: the CGI ones); and evfcgid-sndbuf:
                   evfcgid --sndbuf 64k.  A CGI backend runs behind nginx
                   only: fast clients fetch a trivial script, slow ones
                   download SIZE bytes of a script's output
  --hang LIST      comma-separated counts of hung scripts (default 1,4):
                   a CGI cell of each count whose slow clients request a
                   script that sleeps after its header (size "hang")
  --no-measure     skip the CGI measurements (requests/s of evfcgid --cgi
                   against fcgiwrap -c 4; evfcgid's RSS beside 100 slow
                   CGI downloads)
  --measure-only   with --cgi: the CGI measurements alone: no cell, no
                   timeline, no verdict (make check runs them beside other
                   tests, the cells alone)
  --frontends LIST comma-separated: nginx,nginx-buffered,lighttpd,direct
  --sizes LIST     comma-separated byte counts (default 96256,1048576,8388608)
  --slow LIST      comma-separated slow-client counts (default 1,10,100;
                   0 measures the method's own noise: twins alike)
  --no-timeline    skip the timeline runs
  --links          over shaped links: backends and front ends in a server
                   network namespace, the clients in two others
                   (tools/netlab.sh; root); each slow client an ordinary
                   reader (http_get --rcvbuf 0 --pause 0) from its own
                   address on its own HTB link of the cell's profile, whose
                   whole answer, when it can arrive within the round, is
                   compared byte for byte; fast clients on a link of
                   their own, unshaped.  Defaults: --backends evfcgid,blocking1
                   --frontends nginx,lighttpd --sizes 32768,8388608
                   --slow 10, no timeline; no direct front end and no CGI
                   backend.  The lab's namespaces are evfexp-srv,
                   evfexp-slow and evfexp-fast (EVF_LINKS_TAG=TAG:
                   evfTAG-*), removed on exit
  --profiles LIST  with --links, comma-separated: modem (33.6 kbit/s), gprs
                   (50), 3g (384), dsl (2000); all four by default
  --cells LIST     run exactly these cells, comma-separated, each
                   BACKEND:FRONTEND:SIZE:SLOW (with --links
                   BACKEND:FRONTEND:SIZE:SLOW:PROFILE)
  --verdict TSV    run nothing: judge and tabulate an earlier results.tsv
  -h, --help       this text

Every run begins with a calibration cell: the first cell's backend and
front end with no slow client (twins alike), the same schedule and the
same harness work.  Its ratio is printed and is the first row of
results.tsv (backend "calibration"); outside 1 +- 0.05 the verdict is NOT
JUDGED (exit 3), whatever the other cells read.

Writes DIR/results.md (the table and the verdict), DIR/results.tsv,
(--links: DIR/results.md, DIR/results.tsv and DIR/ratio_by_profile.png),
DIR/timeline.tsv, DIR/fast_vs_slow.png, DIR/ratio_vs_slow.png (a panel
per front end, a line per backend) and DIR/timeline.png; with CGI
backends also DIR/cgi_measure.tsv.  Exit status: 0 PROVEN, 1 NOT PROVEN,
2 a usage or set-up error, 3 NOT JUDGED.
"""

ALL_BACKENDS = ("evfcgid", "evfcgid-sndbuf", "blocking1", "blocking4") + stacks.CGI_BACKENDS


class Usage(Exception):
    pass


class Opts:
    pass


def die(msg):
    raise Usage(msg)


def parse(argv):
    """The options of argv (see USAGE); raises Usage on a bad one."""
    o = Opts()
    o.mode, o.out, o.seconds_text, o.warmup, o.rounds, o.max_rounds = "default", None, None, None, "2", None
    o.pairs, o.backends, o.hang, o.measure, o.measure_only = None, None, "1,4", True, False
    o.frontends, o.sizes, o.slow, o.timeline, o.links = None, None, None, True, False
    o.profiles, o.cells, o.verdict, o.help = "modem,gprs,3g,dsl", None, None, False
    takes = {"--out": "out", "--seconds": "seconds_text", "--warmup": "warmup", "--rounds": "rounds",
             "--pairs": "pairs", "--max-rounds": "max_rounds", "--backends": "backends",
             "--frontends": "frontends", "--sizes": "sizes", "--slow": "slow", "--hang": "hang",
             "--profiles": "profiles", "--cells": "cells", "--verdict": "verdict"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--quick", "--cgi", "--full"):
            o.mode = a[2:]
        elif a == "--no-measure":
            o.measure = False
        elif a == "--measure-only":
            o.measure_only = True
        elif a == "--no-timeline":
            o.timeline = False
        elif a == "--links":
            o.links = True
        elif a in ("-h", "--help"):
            o.help = True
            return o
        elif a in takes:
            if i + 1 >= len(argv) or argv[i + 1] == "":
                die("%s needs a value" % a)
            setattr(o, takes[a], argv[i + 1])
            i += 1
        else:
            sys.stderr.write(USAGE)
            die("unknown argument: " + a)
        i += 1
    return o


def check(o, top):
    """Defaults and validation, as the bash driver did them."""
    if o.links:
        o.frontends = o.frontends or "nginx,lighttpd"
        o.sizes = o.sizes or "32768,8388608"
        o.slow = o.slow or "10"
        o.backends = o.backends or "evfcgid,blocking1"
        o.timeline = False
        if o.mode != "default":
            die("--links: not with --quick, --full or --cgi")
    else:
        o.frontends = o.frontends or "nginx,nginx-buffered,lighttpd,direct"
        o.sizes = o.sizes or "96256,1048576,8388608"
        o.slow = o.slow or "1,10,100"
    quick = o.mode == "quick"
    if not re.fullmatch(r"[1-9][0-9]*", o.rounds):
        die("--rounds: expected a count, at least 1")
    o.rounds = int(o.rounds)
    o.pairs = o.pairs or ("8" if quick else "4")
    o.seconds_text = o.seconds_text or ("0.25" if quick else "1")
    o.warmup = o.warmup or ("1" if quick else "2")
    if not re.fullmatch(r"[1-9][0-9]*", o.pairs):
        die("--pairs: expected a count, at least 1")
    o.pairs = int(o.pairs)
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", o.seconds_text) or float(o.seconds_text) < 0.1:
        die("--seconds: expected seconds, at least 0.1")
    o.seconds = float(o.seconds_text)
    if o.max_rounds is None:
        o.max_rounds = str(stats.max_rounds_default(o.pairs, o.seconds, o.rounds))
    if not re.fullmatch(r"[1-9][0-9]*", o.max_rounds) or int(o.max_rounds) < o.rounds:
        die("--max-rounds: expected a count, at least --rounds")
    o.max_rounds = int(o.max_rounds)
    o.calib_max_rounds = max(6, o.rounds + o.rounds % 2)
    if not re.fullmatch(r"[0-9]+(,[0-9]+)*", o.slow):
        die("--slow: expected comma-separated counts")
    if not re.fullmatch(r"[1-9][0-9]*(,[1-9][0-9]*)*", o.sizes):
        die("--sizes: expected comma-separated byte counts")
    if not re.fullmatch(r"[1-9][0-9]*(,[1-9][0-9]*)*", o.hang):
        die("--hang: expected comma-separated counts, at least 1")
    if o.backends is None:
        o.backends = ",".join(stacks.CGI_BACKENDS) if o.mode == "cgi" else ",".join(ALL_BACKENDS[:1] + ALL_BACKENDS[2:])
    if o.measure_only and o.mode != "cgi":
        die("--measure-only: the measurements are --cgi's (give --cgi)")
    o.cgi_run = False
    for b in o.backends.split(","):
        if b not in ALL_BACKENDS:
            die("--backends: unknown backend '%s'" % b)
        if stacks.is_cgi(b):
            o.cgi_run = True
        elif o.mode == "cgi":
            die("--backends: %s is not a CGI backend (--cgi)" % b)
    if quick:
        o.cgi_run = False
    for f in o.frontends.split(","):
        if not (f == "direct" or f.startswith("nginx") or f.startswith("lighttpd")):
            die("--frontends: unknown front end '%s'" % f)
    if not re.fullmatch(r"[1-9][0-9]*", o.warmup):
        die("--warmup: expected whole seconds, at least 1")
    o.warmup = int(o.warmup)
    o.backends, o.frontends = o.backends.split(","), o.frontends.split(",")
    o.sizes, o.slow, o.hang = o.sizes.split(","), o.slow.split(","), o.hang.split(",")
    o.profiles = o.profiles.split(",")
    if o.links:
        for p in o.profiles:
            if p not in links.PROFILE_KBIT:
                die("--profiles: unknown profile '%s'" % p)
        for b in o.backends:
            if stacks.is_cgi(b):
                die("--links: no CGI backend (%s)" % b)
        if "direct" in o.frontends:
            die("--links: no direct front end (its slow clients cannot have links of their own)")
    if o.cells:
        o.cells = o.cells.split(",")
        for c in o.cells:
            if o.links:
                if not (re.fullmatch(r"[a-z0-9-]+:[a-z0-9=-]+:[1-9][0-9]*:[0-9]+:[a-z0-9]+", c)
                        and c.rsplit(":", 1)[1] in links.PROFILE_KBIT):
                    die("--cells: expected BACKEND:FRONTEND:SIZE:SLOW:PROFILE, got '%s'" % c)
            elif not re.fullmatch(r"[a-z0-9-]+:[a-z0-9=-]+:([1-9][0-9]*|hang):[0-9]+", c):
                die("--cells: expected BACKEND:FRONTEND:SIZE:SLOW, got '%s'" % c)
    o.out = o.out or os.path.join(top, "experiment-out")
    if o.verdict is None:
        for b in ("src/evfcgid", "tools/blocking_fcgid", "tools/http_get", "tools/http_load", "tools/fcgi_load"):
            if not os.access(os.path.join(top, b), os.X_OK):
                die("%s is missing: run make first" % os.path.join(top, b))
        if o.cgi_run:
            fw = os.environ.get("FCGIWRAP") or stacks._which("fcgiwrap", "/usr/sbin/fcgiwrap")
            if not os.access(fw, os.X_OK):
                die("fcgiwrap is missing (%s): scripts/install-deps, or leave out the CGI backends" % fw)
            if o.measure and not shutil.which("wrk"):
                die("wrk is missing: scripts/install-deps, or --no-measure")


def read_tsv(path):
    with open(path) as f:
        lines = f.read().splitlines()
    head = lines[0].split("\t") if lines else []
    return head, [dict(zip(head, ln.split("\t"))) for ln in lines[1:] if ln]


def write_row(f, head, row):
    f.write("\t".join(str(row.get(c, "")) for c in head) + "\n")
    f.flush()


def say(msg="", end="\n"):
    sys.stdout.write(msg + end)
    sys.stdout.flush()


def run(o, top, tmp, argv):
    env = stacks.Env(top, tmp)
    os.makedirs(o.out, exist_ok=True)
    cgi.write_www(env.cgi_www)
    if o.measure_only:
        if not o.measure:
            die("--measure-only and --no-measure: nothing to do")
        if o.verdict:
            die("--measure-only runs nothing to judge (--verdict)")
        mt = os.path.join(o.out, "cgi_measure.tsv")
        say("measuring: CGI requests/s (evfcgid-cgi, fcgiwrap4) and evfcgid's RSS beside %d slow CGI downloads"
            % cgi.RSS_SLOW)
        cgi.measure(env, os.path.join(tmp, "measure"), o.warmup, mt)
        with open(os.path.join(o.out, "results.md"), "w") as f:
            f.write("# Slow-client experiment: the CGI measurements\n\n%s, --measure-only.\n\n%s"
                    % (time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), cgi.measure_md(mt)))
        say("wrote %s/results.md and %s" % (o.out, mt))
        return 0
    tsv = os.path.join(o.out, "results.tsv")
    lab = None
    if o.verdict:
        head, rows = read_tsv(o.verdict)
        if head == cells.HEAD:
            o.links = False
        elif head == cells.LINKS_HEAD:
            o.links = True
        else:
            die("%s is not a results.tsv of this version" % o.verdict)
        if not (os.path.exists(tsv) and os.path.samefile(o.verdict, tsv)):
            shutil.copyfile(o.verdict, tsv)
        o.timeline = False
        todo = []
    else:
        todo = cells.cell_list(o)
        if o.links:
            if not links.inside():
                links.run_outer(top, [sys.executable, os.path.join(top, "tools/slow-client-experiment")] + argv,
                                max([int(c[3]) for c in todo] + [1]))
            lab = links.Lab(top, env)
        head = cells.LINKS_HEAD if o.links else cells.HEAD
        rows = []
    calib_row = next((r for r in rows if r["backend"] == cells.CALIB), None)
    rows = [r for r in rows if r["backend"] != cells.CALIB]
    calib_of = None
    if todo:
        calib_of = cells.calibration_cell(todo)
        todo = [calib_of + (True,)] + [c + (False,) for c in todo]
        n = len(todo)
        say("slow-client-experiment: %d cells (the first the calibration: twins alike), %d to %d rounds each "
            "of %d pairs of %ss fast load, beside slow clients that started %ds before, at offsets spread "
            "over their 1 s pause" % (n, o.rounds, o.max_rounds, o.pairs, o.seconds_text, o.warmup))
        tcp_mem = _read("/proc/sys/net/ipv4/tcp_mem") or os.environ.get("EVF_LINKS_TCP_MEM", "?")
        say("kernel: tcp_wmem %s, tcp_rmem %s, tcp_mem %s pages" % (
            _read("/proc/sys/net/ipv4/tcp_wmem"), _read("/proc/sys/net/ipv4/tcp_rmem"), tcp_mem))
        start = time.monotonic()
        with open(tsv, "w") as f:
            f.write("\t".join(head) + "\n")
            for k, (b, fe, size, slow, prof, is_calib) in enumerate(todo, 1):
                el = int(time.monotonic() - start)
                if k > 1:
                    eta = el * (n - k + 1) // (k - 1)
                else:
                    per = o.rounds * (2 * o.pairs * o.seconds + o.warmup + 2) + 2 * o.seconds + 4
                    eta = int(n * per)
                label = "calibration: " if is_calib else ""
                say("[%d/%d] %4ds elapsed, ~%ds left: %s%s%-9s %-15s %8s bytes, %4s slow ... " % (
                    k, n, el, eta, label, "%s links: " % prof if prof else "", b, fe, size, slow), end="")
                row, note = cells.measure_cell(env, o, os.path.join(tmp, "cell.%d" % k), b, fe, size, slow,
                                               prof, is_calib, lab)
                say(note)
                write_row(f, head, row)
                if is_calib:
                    calib_row = row
                else:
                    rows.append(row)
    calib = calib_row["ratio"] if calib_row else None
    if calib_row:
        say("calibration (twins alike, %s behind %s, no slow client): ratio %s" % (
            calib_of[0] if calib_of else "the first backend", calib_row["frontend"], calib))
    # The timeline: fast fetches/s second by second as slow clients join.
    tl = os.path.join(o.out, "timeline.tsv")
    tl_rows = []
    if not (o.verdict and os.path.exists(tl) and os.path.getsize(tl)):
        with open(tl, "w") as f:
            f.write("backend\tsecond\tfast_per_s\tslow_clients\n")
    if o.timeline and o.mode != "cgi":
        length, join, bs = (8, 3, ["blocking1"]) if o.mode == "quick" else (15, 5, ["evfcgid", "blocking1"])
        with open(tl, "a") as f:
            for k, b in enumerate(bs):
                say("timeline: %s behind nginx, 10 slow clients of 8 MiB join at second %d" % (b, join))
                cells.run_timeline(env, os.path.join(tmp, "tl.%d" % k), b, length, join, f)
    if os.path.exists(tl):
        _, trs = read_tsv(tl)
        tl_rows = [(r["backend"], r["second"], r["fast_per_s"], r["slow_clients"]) for r in trs]
    mt = os.path.join(o.out, "cgi_measure.tsv")
    cgi_md = None
    if not o.verdict:
        if os.path.exists(mt):
            os.unlink(mt)
        if o.cgi_run and o.measure:
            say("measuring: CGI requests/s (evfcgid-cgi, fcgiwrap4) and evfcgid's RSS beside %d slow CGI "
                "downloads" % cgi.RSS_SLOW)
            cgi.measure(env, os.path.join(tmp, "measure"), o.warmup, mt)
    if os.path.exists(mt) and os.path.getsize(mt):
        cgi_md = cgi.measure_md(mt)
    status, word, lines = stats.verdict(calib, rows, o.links)
    md = report.results_md(o, rows, calib_row, word, lines, cgi_md)
    with open(os.path.join(o.out, "results.md"), "w") as f:
        f.write(md)
    if report.have_gnuplot():
        if o.links:
            report.links_plot(o.out, tmp, rows)
        else:
            report.plots(o.out, tmp, rows)
            if len(tl_rows) > 0:
                report.timeline_plot(o.out, tmp, tl_rows)
    say(md)
    if o.links:
        say("wrote %s/results.md, %s/results.tsv and %s/ratio_by_profile.png" % (o.out, o.out, o.out))
    else:
        say("wrote %s/results.md, %s/results.tsv, %s/timeline.tsv%s and the plots" % (
            o.out, o.out, o.out, ", " + mt if cgi_md else ""))
    if status == stats.NOT_JUDGED:
        sys.stderr.write("slow-client-experiment: NOT JUDGED: calibration ratio %s, outside 1 +- %.2f\n"
                         % (calib if calib else "none", stats.CALIB_TOL))
    return status


def _read(p):
    try:
        with open(p) as f:
            return " ".join(f.read().split())
    except OSError:
        return ""


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    os.environ["EVFCGID_ALLOW_ROOT"] = "1"
    # A SIGTERM ends the run through its clean-up (every cell's processes).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        o = parse(argv)
        if o.help:
            sys.stdout.write(USAGE)
            return 0
        check(o, top)
    except Usage as e:
        sys.stderr.write("slow-client-experiment: %s\n" % e)
        return 2
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError):
        pass
    tmp = tempfile.mkdtemp(prefix="evfcgid-exp.")
    try:
        return run(o, top, tmp, argv)
    except (Usage, stacks.Fatal) as e:
        sys.stderr.write("slow-client-experiment: %s\n" % e)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
