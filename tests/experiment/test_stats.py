"""Unit tests of tools/experiment/stats.py."""
import math
import unittest

from experiment import stats


def row(b, f, size, slow, ratio, cut="0", **kw):
    r = {"backend": b, "frontend": f, "size": str(size), "slow": str(slow), "ratio": ratio, "slow_cut": cut}
    r.update(kw)
    return r


QUICK = [row("evfcgid", f, 8388608, 10, "1.003") for f in ("nginx", "lighttpd", "direct")] + \
    [row("blocking1", "nginx", 8388608, 10, "0.000")]


class Geomean(unittest.TestCase):
    def test_mean_of_logs(self):
        self.assertAlmostEqual(stats.geomean([0.5, 2.0]), 1.0)
        self.assertAlmostEqual(stats.geomean([0.9, 0.9, 0.9]), 0.9)

    def test_zero_and_undefined(self):
        self.assertEqual(stats.geomean([1.0, 0.0]), 0.0)
        self.assertIsNone(stats.geomean([1.0, None]))
        self.assertIsNone(stats.geomean([]))

    def test_round_ratio(self):
        self.assertAlmostEqual(stats.round_ratio(90, 100), 0.9)
        self.assertIsNone(stats.round_ratio(90, 0))
        self.assertIsNone(stats.round_ratio(90, 100, in_time=False))
        self.assertEqual(stats.fmt3(None), "-")
        self.assertEqual(stats.fmt3(0.8995), "0.899" if "%.3f" % 0.8995 == "0.899" else "0.900")


class Ambiguity(unittest.TestCase):
    def test_far_from_bound_is_decided(self):
        self.assertFalse(stats.ambiguous("evfcgid", 1.0, [1.0] * 16))
        self.assertFalse(stats.ambiguous("blocking1", 0.0, [0.0] * 16))

    def test_near_bound_needs_rounds(self):
        # 0.92 against 0.9 with 16 pairs: 2 SE = 0.05 in logs.
        self.assertTrue(stats.ambiguous("evfcgid", 0.92, [0.92] * 16))
        self.assertFalse(stats.ambiguous("evfcgid", 0.92, [0.92] * 400))

    def test_spread_floor(self):
        pairs = [0.8, 1.2] * 8
        self.assertTrue(stats.ambiguous("evfcgid", 0.95, pairs))

    def test_calibration_rule(self):
        self.assertTrue(stats.calib_ambiguous(0.99, [0.99] * 16))
        self.assertFalse(stats.calib_ambiguous(1.0, [1.0] * 64))

    def test_max_rounds(self):
        self.assertEqual(stats.max_rounds_default(8, 0.25, 2), 12)
        self.assertEqual(stats.max_rounds_default(4, 1, 2), 6)
        self.assertEqual(stats.max_rounds_default(3, 1, 2), 8)


class Verdict(unittest.TestCase):
    def test_proven(self):
        status, word, lines = stats.verdict("1.002", QUICK)
        self.assertEqual((status, word), (stats.PROVEN, "PROVEN"))
        self.assertIn("calibration: twins alike read 1.002", lines[0])

    def test_not_proven(self):
        rows = [dict(r) for r in QUICK]
        rows[1]["ratio"] = "0.850"
        status, word, lines = stats.verdict("1.000", rows)
        self.assertEqual(status, stats.NOT_PROVEN)
        self.assertTrue(any("evfcgid fell to 0.850 behind lighttpd" in x for x in lines))
        rows = [dict(r) for r in QUICK]
        rows[3]["ratio"] = "0.500"
        self.assertEqual(stats.verdict("1.000", rows)[0], stats.NOT_PROVEN)
        rows = [dict(r) for r in QUICK]
        rows[2]["slow_cut"] = "1"
        self.assertEqual(stats.verdict("1.000", rows)[0], stats.NOT_PROVEN)

    def test_not_judged_at_089(self):
        status, word, lines = stats.verdict("0.890", QUICK)
        self.assertEqual((status, word), (stats.NOT_JUDGED, "NOT JUDGED"))
        self.assertIn("0.890", lines[0])
        self.assertEqual(stats.NOT_JUDGED, 3)

    def test_not_judged_beats_not_proven(self):
        rows = [dict(r) for r in QUICK]
        rows[0]["ratio"] = "0.5"
        self.assertEqual(stats.verdict("1.060", rows)[0], stats.NOT_JUDGED)
        self.assertEqual(stats.verdict("-", QUICK)[0], stats.NOT_JUDGED)
        self.assertEqual(stats.verdict(None, QUICK)[0], stats.NOT_JUDGED)

    def test_edges(self):
        self.assertEqual(stats.verdict("0.950", QUICK)[0], stats.PROVEN)
        self.assertEqual(stats.verdict("1.050", QUICK)[0], stats.PROVEN)
        self.assertEqual(stats.verdict("0.949", QUICK)[0], stats.NOT_JUDGED)

    def test_cgi(self):
        rows = [row("evfcgid-cgi", "nginx", 8388608, 10, "0.99"), row("fcgiwrap1", "nginx", 8388608, 10, "0.01"),
                row("evfcgid-cgi", "nginx", "hang", 4, "1.0"), row("fcgiwrap1", "nginx", "hang", 4, "0.5")]
        status, _, lines = stats.verdict("1.0", rows)
        self.assertEqual(status, stats.NOT_PROVEN)
        self.assertTrue(any("fcgiwrap1 did not stall: ratio 0.5 beside 4 hung scripts" in x for x in lines))

    def test_links(self):
        rows = [row("evfcgid", "nginx", 16384, 10, "1.0", profile="modem", complete="19/20"),
                row("blocking1", "nginx", 8388608, 10, "0.0", profile="modem", complete="0/0")]
        status, _, lines = stats.verdict("1.0", rows, links=True)
        self.assertEqual(status, stats.NOT_PROVEN)
        self.assertTrue(any("only 19 of 20 slow clients that could finish" in x for x in lines))


if __name__ == "__main__":
    unittest.main()
