"""Unit tests of tools/experiment/cells.py's cell lists and main.py's
options: the calibration cell, the quick cells, the errors of a bad
command line."""
import unittest

from experiment import cells, main


class CellList(unittest.TestCase):
    def checked(self, *argv):
        o = main.parse(list(argv) + ["--verdict", "x"])
        main.check(o, "/nonexistent")
        return o

    def test_quick_cells_and_calibration(self):
        o = self.checked("--quick")
        c = cells.cell_list(o)
        self.assertEqual([x[:2] for x in c], [("evfcgid", "nginx"), ("evfcgid", "lighttpd"),
                                             ("evfcgid", "direct"), ("blocking1", "nginx")])
        self.assertEqual(cells.calibration_cell(c), ("evfcgid", "nginx", "8388608", "0", ""))
        self.assertEqual((o.pairs, o.seconds, o.warmup, o.max_rounds, o.calib_max_rounds), (8, 0.25, 1, 12, 6))

    def test_cgi_calibration_is_evfcgid_cgi(self):
        o = self.checked("--cgi", "--sizes", "8388608", "--slow", "10", "--hang", "4")
        c = cells.cell_list(o)
        self.assertEqual(len(c), 6)
        self.assertEqual(cells.calibration_cell(c)[:4], ("evfcgid-cgi", "nginx", "8388608", "0"))
        hang_first = [("fcgiwrap1", "nginx", "hang", "4", "")]
        self.assertEqual(cells.calibration_cell(hang_first)[2], "8388608")

    def test_explicit_cells(self):
        o = self.checked("--cells", "evfcgid:direct:8388608:0,blocking1:nginx:8388608:10")
        self.assertEqual(cells.cell_list(o)[1], ("blocking1", "nginx", "8388608", "10", ""))

    def test_slow_for(self):
        self.assertEqual(cells.slow_for(1, 8, 0.25), 7)
        self.assertEqual(cells.slow_for(2, 4, 1), 12)


class Options(unittest.TestCase):
    def bad(self, *argv):
        with self.assertRaises(main.Usage) as cm:
            o = main.parse(list(argv))
            main.check(o, "/nonexistent")
        return str(cm.exception)

    def test_errors(self):
        self.assertIn("--slow", self.bad("--slow", "ten"))
        self.assertIn("unknown front end", self.bad("--frontends", "apache"))
        self.assertIn("--pairs", self.bad("--pairs", "0"))
        self.assertIn("at least --rounds", self.bad("--rounds", "4", "--max-rounds", "2"))
        self.assertIn("not a CGI backend", self.bad("--cgi", "--backends", "evfcgid"))
        self.assertIn("--seconds", self.bad("--seconds", "0.05"))
        self.assertIn("no direct front end", self.bad("--links", "--frontends", "direct"))
        self.assertIn("measure-only", self.bad("--quick", "--measure-only"))

    def test_help(self):
        self.assertTrue(main.parse(["--help"]).help)


if __name__ == "__main__":
    unittest.main()
