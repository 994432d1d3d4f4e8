"""The cells of a run and how one is measured.  run_rounds is the round
loop over abstract operations (load a stack, sample, start and end the
slow clients), so that the unit tests can drive it with fakes and a
simulated clock; Runner binds it to real processes (stacks.Cell)."""

import math
import os
import random
import time

from . import sampler, schedule, stats, stacks

# Columns of results.tsv; --links adds profile and complete.
HEAD = ["backend", "frontend", "size", "slow", "alone_per_s", "beside_per_s", "twin_per_s", "ratio",
        "slow_bytes_per_s", "rss_kib", "queued_bytes", "tcp_mem_kib", "round_ratios", "slow_cut"]
LINKS_HEAD = HEAD + ["profile", "complete"]
CALIB = "calibration"


def cell_list(o):
    """The cells of options o: (backend, frontend, size, slow, profile)."""
    if o.cells:
        return [tuple(c.split(":")) + (() if o.links else ("",)) for c in o.cells]
    out = []
    if o.links:
        for p in o.profiles:
            for b in o.backends:
                for f in o.frontends:
                    for s in o.sizes:
                        for n in o.slow:
                            out.append((b, f, s, n, p))
        return out
    if o.mode == "quick":
        # Decisive: the 8 MiB stall of the blocking loop behind nginx,
        # and evfcgid holding behind every front end with backpressure.
        out = [("evfcgid", f, "8388608", "10", "") for f in ("nginx", "lighttpd", "direct")]
        return out + [("blocking1", "nginx", "8388608", "10", "")]
    for b in o.backends:
        if stacks.is_cgi(b):
            if "nginx" not in o.frontends:
                continue
            out += [(b, "nginx", s, n, "") for s in o.sizes for n in o.slow]
            out += [(b, "nginx", "hang", n, "") for n in o.hang]
            continue
        if o.mode == "cgi":
            continue
        for f in o.frontends:
            for s in o.sizes:
                out += [(b, f, s, n, "") for n in o.slow]
                if o.mode == "full" and f == "nginx":
                    out.append((b, f, s, "1000", ""))
                    out.append((b, "nginx-nosndbuf", s, "1000", ""))
                    if b == "evfcgid":
                        out.append(("evfcgid-sndbuf", "nginx", s, "1000", ""))
    return out


def calibration_cell(cells):
    """The calibration cell: the first cell's backend and front end (the
    first evfcgid one's if any), twins alike: no slow clients."""
    pick = next((c for c in cells if c[0].startswith("evfcgid")), cells[0])
    return (pick[0], pick[1], pick[2] if pick[2] != "hang" else "8388608", "0", pick[4])


def slow_for(warm, pairs, seconds):
    """How long the slow clients read: the warm-up, the slices (each 60 ms
    over its length allowed) and a second; whole seconds."""
    return math.ceil(warm + 2 * pairs * (seconds + 0.06) + 1 - 1e-9)


def run_rounds(ops, backend, nslow, pairs, seconds, rounds, max_rounds, warm, slow_secs,
               calib=False, rng=None):
    """The rounds of one cell over ops (load, sample, start_slow,
    end_round, now, sleep); returns a dict of its sums, ratios and pairs.
    Round r puts the slow clients on stack schedule.judged_stack(r), at
    offsets spread over their 1 s pause, waits warm seconds, then runs
    the round's pairs in schedule.pair_order, sampling before the first
    and after each pair, never inside a slice.  Stops after rounds (an
    even count) unless the cell's ratio cannot be told from its bound
    (the calibration cell: from 1 +- CALIB_TOL), up to max_rounds."""
    rng = rng or random.Random()
    ratios, pair_ratios = [], []
    sum_b = sum_t = 0.0
    late = r = 0
    while True:
        r += 1
        st = schedule.judged_stack(r)
        tw = 1 - st
        t0 = ops.now()
        ops.start_slow(st, schedule.slow_offsets(nslow, 1.0, rng) if nslow else [])
        ops.sleep(max(0.0, warm - (ops.now() - t0)))
        ops.sample(st)
        rb = rt = 0.0
        for p in range(1, pairs + 1):
            got = {}
            for role in schedule.pair_order(r, p):
                got[role] = ops.load(st if role == schedule.JUDGED else tw, seconds)
            pair_ratios.append(stats.pair_ratio(got[schedule.JUDGED], got[schedule.TWIN]))
            rb += got[schedule.JUDGED]
            rt += got[schedule.TWIN]
            ops.sample(st)
        in_time = calib or nslow == 0 or ops.now() - t0 < slow_secs
        ops.end_round(st)
        sum_b += rb
        sum_t += rt
        ratios.append(stats.round_ratio(rb, rt, in_time))
        late += 0 if in_time else 1
        if r < rounds or r % 2:
            continue
        if r >= max_rounds:
            break
        g = stats.geomean(ratios)
        if not (stats.calib_ambiguous(g, pair_ratios) if calib
                else stats.ambiguous(backend, g, pair_ratios)):
            break
    return {"rounds": r, "ratios": ratios, "pairs": pair_ratios, "beside": sum_b, "twin": sum_t,
            "late": late, "ratio": stats.geomean(ratios)}


class RealOps:
    """run_rounds' operations on a started stacks.Cell."""

    def __init__(self, cell, smp, size, nslow, slow_secs, links, on_round_end=None):
        self.cell, self.smp = cell, smp
        self.twin_smp = sampler.Sampler(queued=smp.queued)
        self.size, self.nslow, self.slow_secs, self.links = size, nslow, slow_secs, links
        self.on_round_end = on_round_end
        self.slow_total = self.slow_cut = self.slow_time = 0

    def now(self):
        return time.monotonic()

    def sleep(self, s):
        time.sleep(s)

    def load(self, s, secs):
        return self.cell.fast_load(s, secs)

    def sample(self, s):
        # Both stacks alike, the twin's readings thrown away: the same
        # work (a /status request, /proc reads) reaches either backend.
        tw = self.cell.stacks[1 - s]
        self.twin_smp.sample(tw.backend_pid, tw.addr)
        st = self.cell.stacks[s]
        self.smp.sample(st.backend_pid, st.addr)

    def start_slow(self, s, offsets):
        if self.nslow:
            self.cell.start_slow(s, self.nslow, self.size, self.slow_secs, offsets, self.links)

    def end_round(self, s):
        if not self.nslow:
            return
        self.cell.wait_slow()
        if self.on_round_end:
            self.on_round_end(self.cell)
        self.slow_total += self.cell.slow_bytes()
        self.slow_cut += self.cell.slow_cut()
        self.slow_time += self.slow_secs
        self.cell.clear_slow()


def measure_cell(env, o, cell_dir, b, f, size, slow, profile, calib=False, links=None):
    """Runs one cell; returns (row dict, note for the progress line)."""
    nslow = int(slow)
    t_ticks = sampler.cpu_ticks()
    cell = stacks.Cell(env, b, f, cell_dir)
    comp = [0, 0]
    try:
        cell.start(2)
        if links is not None:
            links.shape(profile, nslow)
        # Not counted, in every cell alike: fresh processes and sockets
        # are slower in their first second.
        cell.both_load(1)
        a0 = cell.fast_load(0, o.seconds)
        a1 = cell.fast_load(1, o.seconds)
        warm = o.warmup + nslow // 250
        secs = slow_for(warm, o.pairs, o.seconds)
        smp = sampler.Sampler(queued=b in ("evfcgid", "evfcgid-sndbuf"))

        def round_end(c):
            if links is not None:
                ok_, exp_ = links.complete(c, size, profile, secs, nslow)
                comp[0] += ok_
                comp[1] += exp_
        ops = RealOps(cell, smp, size, nslow, secs, links is not None, round_end)
        maxr = min(o.max_rounds, o.calib_max_rounds) if calib else o.max_rounds
        res = run_rounds(ops, b, nslow, o.pairs, o.seconds, o.rounds, maxr, warm, secs, calib)
    finally:
        cell.stop()
    n = res["rounds"] * o.pairs
    row = {
        "backend": CALIB if calib else b, "frontend": f, "size": size, "slow": str(nslow),
        "alone_per_s": "%.2f" % ((a0 + a1) / 2), "beside_per_s": "%.2f" % (res["beside"] / n),
        "twin_per_s": "%.2f" % (res["twin"] / n), "ratio": stats.fmt3(res["ratio"]),
        "slow_bytes_per_s": str(ops.slow_total // (ops.slow_time * nslow) if nslow and ops.slow_time else 0),
        "rss_kib": str(smp.rss), "queued_bytes": smp.queued_text(), "tcp_mem_kib": str(smp.tcp * 4),
        "round_ratios": ",".join(stats.fmt3(x) for x in res["ratios"]), "slow_cut": str(ops.slow_cut),
    }
    if links is not None:
        row["profile"] = profile
        row["complete"] = "%d/%d" % tuple(comp)
    note = "%s beside them, twin %s: ratio %s (rounds %s; alone before: %s; slow clients cut: %d" % (
        row["beside_per_s"], row["twin_per_s"], row["ratio"], " ".join(row["round_ratios"].split(",")),
        row["alone_per_s"], ops.slow_cut)
    if links is not None:
        note += "; whole answers of those that could finish: " + row["complete"]
    note += "; processor stolen by the host: %.1f%%" % sampler.stolen_since(t_ticks, sampler.cpu_ticks())
    note += "; samples taken between pairs: %d" % smp.count
    if res["late"]:
        note += "; rounds whose slices outlasted the slow clients: %d" % res["late"]
    return row, note + ")"


def run_timeline(env, tmp, backend, length, join, out):
    """Fast fetches/s second by second behind nginx as 10 slow clients of
    8 MiB join at second join; appends "backend second rate slow" rows."""
    cell = stacks.Cell(env, backend, "nginx", tmp)
    try:
        cell.start(1)
        for s in range(length):
            if s == join:
                cell.start_slow(0, 10, "8388608", length - join + 2)
            out.write("%s\t%d\t%s\t%d\n" % (backend, s, _num(cell.fast_load(0, 1)), 10 if s >= join else 0))
            out.flush()
    finally:
        cell.stop()


def _num(x):
    """A rate as the load tools print it."""
    return ("%.2f" % x).rstrip("0").rstrip(".") if x != int(x) else "%d" % x
