"""What a run writes: results.md (the table, the calibration figure and
the verdict) and the gnuplot plots."""

import os
import shutil
import subprocess
import time

from . import stacks

CELL_COLS = ["backend", "frontend", "size", "slow", "alone_per_s", "beside_per_s", "twin_per_s", "ratio",
             "slow_bytes_per_s", "slow_cut", "rss_kib", "queued_bytes", "tcp_mem_kib"]


def _row_md(r, links):
    cols = ["profile"] if links else []
    cols += CELL_COLS[:8]
    if links:
        cols += ["complete"]
    cols += CELL_COLS[8:]
    out = []
    for c in cols:
        v = r.get(c, "")
        out.append("**%s**" % v if c == "ratio" else v)
    return "| " + " | ".join(out) + " |"


def results_md(o, rows, calib, word, lines, cgi_md=None):
    """results.md's text."""
    when = time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime())
    t = []
    if o.links:
        t += ["# Slow-client experiment over shaped links", "",
              "%s, --links, %d rounds (up to %d near a bound) of %d pairs per cell, as the loopback cells "
              "(two twin stacks, the slow clients on each in turn, fast load on one at a time; ratio: the "
              "geometric mean of the rounds' beside/twin), but over kernel-shaped links (tools/netlab.sh): "
              "backends and front ends in one network namespace, the slow clients in a second and the fast "
              "ones in a third, each joined to the first by a veth pair.  Each slow client reads from its own "
              "address with its own HTB class of the profile's rate (modem 33.6 kbit/s, gprs 50, 3g 384, dsl "
              "2000) as fast as that link allows (http_get --rcvbuf 0 --read-size 16384 --pause 0, until the "
              "round's end); the fast load (http_load -parallel %d -seconds %s on %s) comes over the unshaped "
              "link.  Whole: of the slow clients whose answer could arrive within their round at the "
              "profile's rate, those whose body was the demo body, byte for byte.  RSS, queued (evfcgid's "
              "/status) and TCP memory are peaks, sampled between pairs of slices."
              % (when, o.rounds, o.max_rounds, o.pairs, stacks.FAST_PARALLEL, o.seconds_text, stacks.FAST_PATH),
              "", "| profile | backend | front end | size | slow | alone/s | beside/s | twin/s | ratio | whole "
              "| slow B/s each | slow cut | RSS KiB | queued B | TCP mem KiB |",
              "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    else:
        t += ["# Slow-client experiment", "",
              "%s, mode %s, %d rounds (up to %d near a bound) of %d pairs per cell.  Each cell runs two "
              "identical stacks (backend and front end) side by side; alone/s is their fast load before any "
              "slow client.  A round puts the slow clients on one stack, in turn, and after %ds loads that "
              "stack (beside/s) and its twin (twin/s) one at a time, %d pairs: judged/twin, twin/judged, "
              "alternating, and the next round in the mirrored order.  The slow clients start at random "
              "offsets spread over their 1 s pause, so that their reads fall at every phase of the slices; "
              "the harness samples only between pairs.  A round's ratio is its fetches beside the slow "
              "clients over the twin's; the cell's ratio is the geometric mean over the rounds.  The first "
              "row, calibration, is the same schedule and harness work with no slow client (twins alike): "
              "outside 1 +- 0.05 the run is NOT JUDGED.  Fast load: http_load -parallel %d -seconds %s on %s "
              "(fcgi_load -c %d -d %s direct); slow clients: http_get --rcvbuf 512 --read-size 512 --pause "
              "1000 (fcgi_load alike direct).  RSS, queued (evfcgid's /status) and TCP memory "
              "(/proc/net/sockstat, the whole machine) are peaks sampled between pairs.  Slow cut: slow "
              "clients that ended before their own time limit without their whole answer.  Front ends from "
              "nginx.conf.example (fastcgi_buffering off unless -buffered; listen sndbuf=16k unless "
              "-nosndbuf) and lighttpd.conf.example (stream-response-body 2); evfcgid-sndbuf is evfcgid "
              "--sndbuf 64k.  The blocking backends sit behind nginx without upstream keepalive.  CGI "
              "backends (evfcgid-cgi: evfcgid --cgi --cgi-max %d; fcgiwrap1 and fcgiwrap4: fcgiwrap -c 1 "
              "and -c 4) sit behind nginx with the CGI location of tests/cgi.sh: the fast load fetches %s, "
              "slow clients big.sh?SIZE; in the rows of size \"hang\" the slow column counts clients of "
              "hang.sh, which sleeps after its header until they give up."
              % (when, o.mode, o.rounds, o.max_rounds, o.pairs, o.warmup, o.pairs, stacks.FAST_PARALLEL,
                 o.seconds_text, stacks.FAST_PATH, stacks.FAST_PARALLEL, o.seconds_text, stacks.CGI_EXP_MAX,
                 stacks.CGI_FAST_PATH),
              "", "| backend | front end | size | slow | alone/s | beside/s | twin/s | ratio | slow B/s each "
              "| slow cut | RSS KiB | queued B | TCP mem KiB |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in ([calib] if calib else []) + rows:
        t.append(_row_md(r, o.links))
    t += ["", "Verdict: %s." % word] + ["- " + x for x in lines]
    if cgi_md:
        t += ["", cgi_md.rstrip("\n")]
    return "\n".join(t) + "\n"


def _gnuplot(script, tmp, name):
    p = os.path.join(tmp, name + ".gp")
    with open(p, "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", p], capture_output=True, text=True)
    if r.returncode != 0:
        print("gnuplot failed: " + r.stderr.strip(), flush=True)


def have_gnuplot():
    return shutil.which("gnuplot") is not None


PANEL_ORDER = ["nginx", "nginx-nosndbuf", "nginx-buffered", "lighttpd", "direct"]
LT_ORDER = ["evfcgid", "evfcgid-sndbuf", "blocking1", "blocking4", "evfcgid-cgi", "fcgiwrap1", "fcgiwrap4"]


def plots(out, tmp, rows):
    """fast_vs_slow.png and ratio_vs_slow.png: a panel per front end (the
    CGI cells: downloads and hung scripts), a line per backend at the
    panel's largest size."""
    big, data = {}, {}
    for r in rows:
        cgi = stacks.is_cgi(r["backend"])
        p = ("nginx CGI, hung scripts" if r["size"] == "hang" else "nginx CGI") if cgi else r["frontend"]
        if r["size"] != "hang":
            q = "nginx CGI" if cgi else p
            big[q] = max(big.get(q, 0), int(r["size"]))
        data.setdefault(p, []).append(r)
    panels = []
    for p, rs in data.items():
        sel = [r for r in rs if r["size"] == "hang" or int(r["size"]) == big.get(p)]
        if sel:
            panels.append((p, sel))

    def rank(p):
        if "CGI" in p:
            return 11 if "hung" in p else 10
        return PANEL_ORDER.index(p) + 1 if p in PANEL_ORDER else 9
    panels.sort(key=lambda x: (rank(x[0]), x[0]))
    if not panels:
        return
    np_ = len(panels)
    cols = 2 if np_ > 1 else 1
    nrows = (np_ + cols - 1) // cols
    for kind, fname, title in (("fast", "fast_vs_slow.png", "fast fetches/s beside slow clients (x = 0: the twin)"),
                               ("ratio", "ratio_vs_slow.png",
                                "fast fetches/s beside slow clients / twin, with the bounds")):
        g = ["set terminal pngcairo size %d,%d noenhanced" % (cols * 620, nrows * 400 + 40),
             "set output '%s'" % os.path.join(out, fname),
             "set multiplot layout %d,%d title '%s'" % (nrows, cols, title),
             "set logscale x; set key top right samplen 2"]
        for i, (p, rs) in enumerate(panels):
            size = big.get(p, "?")
            xlab = "hung scripts" if "hung" in p else "slow clients reading %s bytes" % size
            g += ["set title '%s'; set xlabel '%s'" % (p, xlab), "unset arrow; unset label"]
            if kind == "ratio":
                g += ["set ylabel 'ratio to twin'; set yrange [-0.05:1.4]",
                      "set xrange [0.7:1400]; set xtics ('1' 1, '10' 10, '100' 100, '1000' 1000)",
                      "set arrow from 0.7, 0.9 to 1400, 0.9 nohead dashtype 2",
                      "set label 'evfcgid bound 0.9' at 0.8, 0.84 font ',8'",
                      "set arrow from 0.7, 0.2 to 1400, 0.2 nohead dashtype 2",
                      "set label 'control bound 0.2' at 0.8, 0.14 font ',8'"]
            else:
                g += ["set ylabel 'fast fetches/s'; set yrange [0:*]",
                      "set xrange [0.4:1400]; set xtics ('0' 0.5, '1' 1, '10' 10, '100' 100, '1000' 1000)"]
            parts = []
            for b in sorted(set(r["backend"] for r in rs)):
                f = os.path.join(tmp, "plot.%s.%d.%s" % (kind, i, b))
                br = sorted((r for r in rs if r["backend"] == b), key=lambda r: int(r["slow"]))
                with open(f, "w") as fh:
                    if kind == "ratio":
                        for r in br:
                            if r["ratio"] != "-":
                                fh.write("%s\t%s\n" % (r["slow"], r["ratio"]))
                    else:
                        tw = sum(float(r["twin_per_s"]) for r in br) / len(br)
                        fh.write("0.5\t%s\n" % tw)
                        for r in br:
                            fh.write("%s\t%s\n" % (r["slow"], r["beside_per_s"]))
                lt = (LT_ORDER.index(b) if b in LT_ORDER else len(LT_ORDER)) + 1
                parts.append("'%s' using 1:2 with linespoints lt %d pt %d lw 1.5 title '%s'" % (f, lt, lt, b))
            g.append("plot " + ", ".join(parts))
        g.append("unset multiplot")
        _gnuplot("\n".join(g) + "\n", tmp, kind)


def timeline_plot(out, tmp, tl_rows):
    """timeline.png: a line per backend that has a timeline."""
    lines, join = [], None
    for b, title in (("evfcgid", "evfcgid"), ("blocking1", "blocking libfcgi, 1 thread")):
        rs = [r for r in tl_rows if r[0] == b]
        if not rs:
            continue
        f = os.path.join(tmp, "tl." + b)
        with open(f, "w") as fh:
            for r in rs:
                fh.write("%s\t%s\n" % (r[1], r[2]))
        lines.append("'%s' using 1:2 with linespoints title '%s'" % (f, title))
        if join is None:
            join = next((r[1] for r in rs if int(r[3]) > 0), None)
    if not lines:
        return
    g = ["set terminal pngcairo size 900,480 noenhanced", "set output '%s'" % os.path.join(out, "timeline.png"),
         "set title 'fast fetches/s behind nginx (buffering off); 10 slow clients of 8 MiB join at the dashed line'",
         "set key outside bottom center horizontal", "set xlabel 'second'; set ylabel 'fast fetches/s'; set yrange [0:*]"]
    if join is not None:
        g.append("set arrow from %s, graph 0 to %s, graph 1 nohead dashtype 2" % (join, join))
    g.append("plot " + ", ".join(lines))
    _gnuplot("\n".join(g) + "\n", tmp, "timeline")


def links_plot(out, tmp, rows):
    """ratio_by_profile.png: a line per backend, front end and size, the
    profiles from slowest to fastest."""
    x = {"modem": 1, "gprs": 2, "3g": 3, "dsl": 4}
    series = {}
    for r in rows:
        if r["ratio"] != "-":
            series.setdefault("%s %s %s" % (r["backend"], r["frontend"], r["size"]), []).append(
                (x.get(r["profile"], 4), r["ratio"]))
    if not series:
        return
    parts = []
    for i, (k, pts) in enumerate(sorted(series.items())):
        f = os.path.join(tmp, "links.%d" % i)
        with open(f, "w") as fh:
            for a, b in sorted(pts):
                fh.write("%s\t%s\n" % (a, b))
        parts.append("'%s' using 1:2 with linespoints lw 1.5 title '%s'" % (f, k))
    g = ["set terminal pngcairo size 900,520 noenhanced", "set output '%s'" % os.path.join(out, "ratio_by_profile.png"),
         "set title 'fast fetches/s beside slow clients on shaped links / twin, with the bounds'",
         "set key outside right; set ylabel 'ratio to twin'; set yrange [-0.05:1.4]",
         "set xrange [0.5:4.5]; set xtics ('modem' 1, 'gprs' 2, '3g' 3, 'dsl' 4)",
         "set arrow from 0.5, 0.9 to 4.5, 0.9 nohead dashtype 2",
         "set arrow from 0.5, 0.2 to 4.5, 0.2 nohead dashtype 2", "plot " + ", ".join(parts)]
    _gnuplot("\n".join(g) + "\n", tmp, "links")
