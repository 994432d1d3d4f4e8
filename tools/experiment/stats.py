"""The experiment's statistics: a round's ratio, the cell's geometric
mean, the ambiguity rule that asks for more rounds, the calibration
bounds and the verdict.  Pure functions over numbers and rows; no I/O."""

import math

# A pair's spread (of log ratios) with twins alike is taken as at least
# this much, so that a few lucky pairs do not make a cell look decided.
SIGMA_MIN = 0.10
# The calibration cell (twins alike) must read within 1 +- CALIB_TOL for
# the other cells to be judged at all.
CALIB_TOL = 0.05

PROVEN, NOT_PROVEN, USAGE, NOT_JUDGED = 0, 1, 2, 3

CGI_BACKENDS = ("evfcgid-cgi", "fcgiwrap1", "fcgiwrap4")
PROFILES = ("modem", "gprs", "3g", "dsl")


def fmt3(x):
    """x as the tables print a ratio: "-" for None, else 3 decimals."""
    return "-" if x is None else "%.3f" % x


def parse_ratio(s):
    """A ratio column's text as a number, None for "-" or garbage."""
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def round_ratio(beside, twin, in_time=True):
    """A round's ratio: fetches beside the slow clients over the twin's;
    None when the twin got nothing done or the slices outlasted the slow
    clients (in_time false)."""
    if twin <= 0 or not in_time:
        return None
    return beside / twin


def pair_ratio(beside, twin):
    """One pair's ratio, None when the twin's slice got nothing done."""
    return beside / twin if twin > 0 else None


def geomean(ratios):
    """The geometric mean of the rounds' ratios: None if one is None
    (undefined), 0.0 if one is 0, else exp(mean(log))."""
    if not ratios or any(r is None for r in ratios):
        return None
    if any(r <= 0 for r in ratios):
        return 0.0
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def bound_of(backend):
    """The bound a cell is judged by: 0.9 for evfcgid (all variants), 0.2
    for the control groups."""
    return 0.9 if backend.startswith("evfcgid") else 0.2


def near(g, bound, pairs, sigma_min=SIGMA_MIN):
    """True if g is closer to bound, in logs, than two standard errors of
    the mean of the pairs' log ratios (their spread at least sigma_min).
    A stall (0), an undefined g or fewer than 2 pairs is never near."""
    logs = [math.log(p) for p in pairs if p is not None and p > 0]
    n = len(logs)
    if g is None or g <= 0 or n < 2:
        return False
    mean = sum(logs) / n
    sd = math.sqrt(max(0.0, sum((x - mean) ** 2 for x in logs) / (n - 1)))
    sd = max(sd, sigma_min)
    return abs(math.log(g / bound)) < 2 * sd / math.sqrt(n)


def ambiguous(backend, g, pairs, sigma_min=SIGMA_MIN):
    """True if the cell's ratio g so far cannot be told from its bound
    (bound_of) by its pairs: it needs more rounds."""
    return near(g, bound_of(backend), pairs, sigma_min)


def calib_ambiguous(g, pairs, tol=CALIB_TOL, sigma_min=SIGMA_MIN):
    """The calibration cell's rule: more rounds while g cannot be told
    from either edge of 1 +- tol."""
    return near(g, 1 - tol, pairs, sigma_min) or near(g, 1 + tol, pairs, sigma_min)


def calib_ok(g, tol=CALIB_TOL):
    """True if the calibration ratio g lies within 1 +- tol."""
    return g is not None and 1 - tol <= g <= 1 + tol


def max_rounds_default(pairs, seconds, rounds, load_s=24.0):
    """Rounds a cell near its bound may take: as many as make load_s of
    fast load on a stack, even, and at least 3 x rounds."""
    r = math.ceil(load_s / (pairs * seconds) - 1e-9)
    r += r % 2
    return max(r, 3 * rounds)


def _cgi(b):
    return b in CGI_BACKENDS


def judge(rows, links=False):
    """The verdict's lines over results rows (dicts of results.tsv's
    columns, the calibration row left out) and the count of failures.
    The rules: every evfcgid cell with slow clients and backpressure keeps
    0.9, none of its slow clients is cut, the blocking control group
    falls below 0.2 in the 8 MiB nginx cell (per profile with links), and
    with CGI cells evfcgid --cgi keeps 0.9 while fcgiwrap -c 1 stalls
    beside 8 MiB downloads and beside hung scripts."""
    lines, bad = [], 0
    held = cheld = cells = ccells = cut = classic = cgirows = 0
    lok = lexp = 0
    maxslow, stall, prof = {}, {}, set()
    cmax = hmax = 0
    cstall = hstall = None
    for r in rows:
        b, f, size, slow = r["backend"], r["frontend"], r["size"], int(r["slow"])
        ratio = parse_ratio(r["ratio"])
        p = r.get("profile", "") if links else ""
        if links and b.startswith("evfcgid"):
            ok_, exp_ = (int(x) for x in r["complete"].split("/"))
            lok += ok_
            lexp += exp_
            if ok_ < exp_:
                bad += 1
                lines.append("%s behind %s on the %s links: only %d of %d slow clients that could "
                             "finish got their whole answer (%s bytes)" % (b, f, p, ok_, exp_, size))
        if _cgi(b):
            cgirows += 1
        else:
            classic += 1
        if b.startswith("evfcgid") and f in ("nginx", "nginx-notemp", "lighttpd", "direct") and slow > 0:
            if b == "evfcgid-cgi":
                cheld += 1
            else:
                held += 1
            if ratio is None or ratio < 0.9:
                bad += 1
                what = ("has no ratio (a round whose twin got nothing done or whose slices "
                        "outlasted the slow clients)" if ratio is None else "fell to " + r["ratio"])
                lines.append("%s %s behind %s (%s bytes, %d slow%s)" % (
                    b, what, f, size, slow, ", %s links" % p if links else ""))
        if b.startswith("evfcgid"):
            if b == "evfcgid-cgi":
                ccells += 1
            else:
                cells += 1
            n = int(r["slow_cut"])
            cut += n
            if n > 0:
                bad += 1
                lines.append("%s behind %s cut %d slow client(s) before their time (%s bytes, %d slow)"
                             % (b, f, n, size, slow))
        if not _cgi(b):
            prof.add(p)
        if b == "blocking1" and f == "nginx" and size == "8388608" and slow > 0:
            if slow > maxslow.get(p, 0):
                maxslow[p], stall[p] = slow, r["ratio"]
        if b == "fcgiwrap1" and f == "nginx" and size == "8388608" and slow > cmax:
            cmax, cstall = slow, r["ratio"]
        if b == "fcgiwrap1" and f == "nginx" and size == "hang" and slow > hmax:
            hmax, hstall = slow, r["ratio"]

    def stalled(s):
        v = parse_ratio(s)
        return v is not None and v < 0.2

    if classic + cgirows == 0:
        lines.append("no cell was run")
        bad += 1
    if classic > 0:
        if held == 0:
            lines.append("no evfcgid cell with slow clients and backpressure was run")
            bad += 1
        for p in (PROFILES if links else ("",)):
            if p not in prof:
                continue
            on = " on the %s links" % p if p else ""
            if maxslow.get(p, 0) == 0:
                lines.append("the blocking control group was not run in the 8 MiB nginx cell" + on)
                bad += 1
            elif not stalled(stall[p]):
                lines.append("the blocking control group did not stall: ratio %s with %d slow clients%s"
                             % (stall[p], maxslow[p], on))
                bad += 1
            else:
                lines.append("control group stalled: blocking 1 thread kept %s of its baseline with %d "
                             "slow clients (8 MiB, nginx buffering off)%s" % (stall[p], maxslow[p], on))
    if links and held > 0:
        if lexp == 0:
            lines.append("no slow client of evfcgid could finish within its round: no answer was "
                         "checked byte for byte")
            bad += 1
        elif lok == lexp:
            lines.append("all %d slow clients of evfcgid that could finish within their round got "
                         "their whole answer, byte for byte" % lexp)
    if cgirows > 0:
        if cheld == 0:
            lines.append("no evfcgid-cgi cell with slow clients was run")
            bad += 1
        if cmax == 0:
            lines.append("fcgiwrap1 was not run in the 8 MiB CGI cell")
            bad += 1
        elif not stalled(cstall):
            lines.append("fcgiwrap1 did not stall: ratio %s beside %d slow 8 MiB CGI downloads" % (cstall, cmax))
            bad += 1
        else:
            lines.append("CGI control group stalled: fcgiwrap -c 1 kept %s of its baseline beside %d "
                         "slow 8 MiB CGI downloads (nginx buffering off)" % (cstall, cmax))
        if hmax == 0:
            lines.append("fcgiwrap1 was not run in a cell of hung scripts")
            bad += 1
        elif not stalled(hstall):
            lines.append("fcgiwrap1 did not stall: ratio %s beside %d hung scripts" % (hstall, hmax))
            bad += 1
        else:
            lines.append("CGI control group stalled: fcgiwrap -c 1 kept %s of its baseline beside %d "
                         "hung scripts" % (hstall, hmax))
    if bad == 0 and held > 0:
        lines.append("evfcgid kept at least 0.9 of its baseline in all %d cells with backpressure" % held)
    if bad == 0 and cheld > 0:
        lines.append("evfcgid --cgi kept at least 0.9 of its baseline in all %d CGI cells with slow "
                     "clients or hung scripts" % cheld)
    if cut == 0 and cells + ccells > 0:
        lines.append("no slow client of evfcgid was cut: each read until its own time limit, in all "
                     "%d cells" % (cells + ccells))
    return bad, lines


def verdict(calib, rows, links=False, tol=CALIB_TOL):
    """The run's verdict: (status, word, lines).  calib is the calibration
    cell's ratio text ("-" or a number; None when the run has none).
    Outside 1 +- tol (or missing) the run is NOT JUDGED whatever the
    cells say: the method itself is biased by more than it may be."""
    bad, lines = judge(rows, links)
    g = parse_ratio(calib)
    if not calib_ok(g, tol):
        figure = "none" if calib is None else calib
        head = ("the calibration cell (twins alike, no slow clients) read %s, outside 1 +- %.2f: "
                "the method's own bias is larger than what it judges" % (figure, tol))
        return NOT_JUDGED, "NOT JUDGED", [head] + lines
    lines.insert(0, "calibration: twins alike read %s (within 1 +- %.2f)" % (calib, tol))
    return (PROVEN, "PROVEN", lines) if bad == 0 else (NOT_PROVEN, "NOT PROVEN", lines)
