"""Unit tests of tools/experiment/schedule.py and of the round loop
(cells.run_rounds) with a fake clock, fake loads, a fake sampler and fake
slow clients: periodic harness work lands on both stacks alike."""
import random
import unittest

from experiment import cells, schedule
from experiment.schedule import GAP, JUDGED, TWIN


class Order(unittest.TestCase):
    def test_pairs_alternate_and_rounds_mirror(self):
        self.assertEqual(schedule.pair_order(1, 1), (JUDGED, TWIN))
        self.assertEqual(schedule.pair_order(1, 2), (TWIN, JUDGED))
        self.assertEqual(schedule.pair_order(2, 1), (TWIN, JUDGED))
        r1 = schedule.round_slices(1, 8)
        r2 = schedule.round_slices(2, 8)
        for (p1, a), (p2, b) in zip(r1, r2):
            self.assertEqual(p1, p2)
            self.assertNotEqual(a, b)

    def test_every_position_both_roles_over_two_rounds(self):
        for pairs in (1, 2, 4, 8):
            pos = {}
            for r in (1, 2):
                for i, (_, role) in enumerate(schedule.round_slices(r, pairs)):
                    pos.setdefault(i, set()).add(role)
            self.assertTrue(all(v == {JUDGED, TWIN} for v in pos.values()))

    def test_judged_stack_alternates(self):
        self.assertEqual([schedule.judged_stack(r) for r in (1, 2, 3, 4)], [0, 1, 0, 1])

    def test_offsets_stratified(self):
        offs = sorted(schedule.slow_offsets(10, 1.0, random.Random(1)))
        for i, o in enumerate(offs):
            self.assertTrue(i / 10 <= o < (i + 1) / 10)


class FakeOps:
    """run_rounds' operations on a simulated clock: a slice lasts its
    seconds plus 6 ms; sampling takes 20 ms.  Slow clients and a
    the sampler runs between pairs, where no slice is."""

    def __init__(self, phase_locked=False):
        self.t = 0.0
        self.busy = []          # (start, end, stack)
        self.samples = []
        self.clients = []       # event times of slow clients' reads
        self.locked = phase_locked
        self.round_start = 0.0
        self.judged = []

    def now(self):
        return self.t

    def sleep(self, s):
        self.t += s

    def load(self, s, secs):
        self.busy.append((self.t, self.t + secs + 0.006, s))
        self.t += secs + 0.006
        return 100.0

    def sample(self, s):
        self.samples.append(self.t)
        self.t += 0.02

    def start_slow(self, s, offsets):
        self.round_start = self.t
        self.judged.append(s)
        if self.locked:
            offsets = [0.0] * len(offsets)
        self.offsets = offsets

    def end_round(self, s):
        end = self.t
        for o in self.offsets:
            t = self.round_start + o
            while t < end:
                self.clients.append((t, s))
                t += 1.0

    def charge(self, times):
        """{JUDGED, TWIN, GAP}: where each (time, judged stack) fell."""
        c = {JUDGED: 0, TWIN: 0, GAP: 0}
        for t, judged in times:
            for s, e, st in self.busy:
                if s <= t < e:
                    c[JUDGED if st == judged else TWIN] += 1
                    break
            else:
                c[GAP] += 1
        return c


def quick_run(ops, rounds=8):
    # The quick schedule: 8 pairs of 0.25 s slices, 1 s warm-up, 10 slow clients.
    return cells.run_rounds(ops, "evfcgid", 10, 8, 0.25, rounds, rounds, 1, 7, rng=random.Random(7))


class Charges(unittest.TestCase):
    def test_sampler_never_in_a_slice(self):
        ops = FakeOps()
        quick_run(ops)
        c = ops.charge([(t, 0) for t in ops.samples])
        self.assertEqual(c[JUDGED] + c[TWIN], 0)
        self.assertEqual(c[GAP], len(ops.samples))
        self.assertEqual(len(ops.samples), 8 * 9)

    def test_old_schedule_charged_the_judged_stack(self):
        # The old design: every round in the same order, no gap between
        # pairs, a sampler (and slow clients) firing once a second from
        # the judged stack's first slice: nearly all of it in its slices.
        sl = schedule.timeline(1, 8, 0.25)
        c = schedule.charge(sl, schedule.periodic([0.0], 1.0, sl[-1][1]))
        self.assertGreaterEqual(c[JUDGED], 4)
        self.assertEqual(c[TWIN], 0)

    def test_slow_clients_charge_both_alike(self):
        ops = FakeOps()
        quick_run(ops, rounds=8)
        c = ops.charge(ops.clients)
        n = c[JUDGED] + c[TWIN]
        self.assertGreater(n, 200)
        self.assertLess(abs(c[JUDGED] - c[TWIN]) / n, 0.10, c)

    def test_even_phase_locked_clients_cancel_over_mirrored_rounds(self):
        ops = FakeOps(phase_locked=True)
        quick_run(ops, rounds=8)
        c = ops.charge(ops.clients)
        n = c[JUDGED] + c[TWIN]
        self.assertLess(abs(c[JUDGED] - c[TWIN]) / n, 0.10, c)

    def test_round_loop_stops_when_decided(self):
        ops = FakeOps()
        res = cells.run_rounds(ops, "evfcgid", 0, 8, 0.25, 2, 12, 1, 7, calib=True)
        # 16 pairs cannot tell 1.0 from 1.05 (2 SE = 0.05 in logs); 32 can.
        self.assertEqual(res["rounds"], 4)
        self.assertAlmostEqual(res["ratio"], 1.0)


if __name__ == "__main__":
    unittest.main()
