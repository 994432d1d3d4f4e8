"""Who is loaded when.  A round puts the slow clients on one stack (0 and
1 in turn) and then runs PAIRS pairs of slices, each slice the fast load
on one stack alone.  Within a round the pairs alternate judged/twin,
twin/judged; the next round mirrors that order, so that over two rounds
every position in the schedule is the judged stack's as often as the
twin's.  The harness samples between pairs, never inside a slice, and
the slow clients start at random offsets spread over their pause, so
that their once-a-second reads cannot lock onto the slices' phase.

Also a simulated timeline (timeline, charge) with which the unit tests
check that periodic work lands on both stacks alike."""

import random

JUDGED, TWIN, GAP = "judged", "twin", "gap"


def judged_stack(round_no):
    """The stack (0 or 1) with the slow clients in round round_no (from 1)."""
    return (round_no - 1) % 2


def pair_order(round_no, pair_no):
    """(first, second) roles of pair pair_no (from 1) of round round_no:
    alternating within a round, mirrored from one round to the next."""
    if (round_no + pair_no) % 2 == 0:
        return (JUDGED, TWIN)
    return (TWIN, JUDGED)


def round_slices(round_no, pairs):
    """The round's slices in order, as (pair_no, role)."""
    out = []
    for p in range(1, pairs + 1):
        for role in pair_order(round_no, p):
            out.append((p, role))
    return out


def slow_offsets(n, period=1.0, rng=None):
    """n start delays in [0, period): one in each of n equal strata, at a
    random point in it, the strata shuffled; their reads, once a period,
    spread evenly over any slice whatever its phase."""
    rng = rng or random.Random()
    offs = [(i + rng.random()) * period / n for i in range(n)]
    rng.shuffle(offs)
    return offs


def timeline(round_no, pairs, seconds, overhead=0.006, gap=0.0, t0=0.0, gap_first=0.0):
    """A simulated round: [(start, end, role)] for each slice (a slice
    lasts seconds + overhead) and each gap between pairs (role GAP, where
    the harness samples), starting at t0 after gap_first."""
    t = t0
    out = []
    if gap_first > 0:
        out.append((t, t + gap_first, GAP))
        t += gap_first
    for p in range(1, pairs + 1):
        for role in pair_order(round_no, p):
            out.append((t, t + seconds + overhead, role))
            t += seconds + overhead
        if gap > 0:
            out.append((t, t + gap, GAP))
            t += gap
    return out


def periodic(offsets, period, t_end, t0=0.0):
    """Event times of clients that act once a period from t0 + offset."""
    ev = []
    for o in offsets:
        t = t0 + o
        while t < t_end:
            ev.append(t)
            t += period
    return sorted(ev)


def charge(slices, events):
    """How many events fall in the slices of each role: {role: count}."""
    c = {JUDGED: 0, TWIN: 0, GAP: 0}
    for t in events:
        for s, e, role in slices:
            if s <= t < e:
                c[role] += 1
                break
    return c
