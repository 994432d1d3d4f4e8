/*
 * check_budget.c: the global output cap and its shares: what a connection
 * holding output may hold as more of them do, the room kept for those
 * that drain, and when a new request is refused (cap / floor holders).
 */
#include <check.h>
#include <stdint.h>

#include <event2/event.h>

#include "budget.h"
#include "tests/suite.h"

#define KIB	1024ULL
#define MIB	(1024 * KIB)

static struct event_base	*base;
static struct budget		 b;

/* The daemon's defaults: --max-queued 128m, --share-floor 8k,
   --high-water 256k.  PART: the holders' 7/8 of the cap. */
#define CAP	(128 * MIB)
#define FLOOR	(8 * KIB)
#define HIGH	(256 * KIB)
#define PART	(CAP - CAP / 8)
static void
setup(void)
{
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_int_eq(budget_init(&b, base, CAP), 0);
	budget_shares(&b, FLOOR, HIGH);
}

static void
teardown(void)
{
	budget_fini(&b);
	event_base_free(base);
}

/* n bytes more held by the holders. */
static void
held(unsigned long long n)
{
	budget_add(&b, (long long)n);
	budget_held(&b, (long long)n);
}

static void
holders(uint64_t n)
{
	while (b.b_holders < n)
		budget_hold(&b, 1, 0);
	while (b.b_holders > n)
		budget_hold(&b, 0, 0);
}

/* 7/8 of the cap divided among the holders, between floor and high. */
START_TEST(share_shrinks)
{
	ck_assert_uint_eq(budget_share(&b), HIGH);
	holders(1);
	ck_assert_uint_eq(budget_share(&b), HIGH);
	holders(448);
	ck_assert_uint_eq(budget_share(&b), HIGH);
	holders(449);
	ck_assert_uint_lt(budget_share(&b), HIGH);
	holders(1000);
	ck_assert_uint_eq(budget_share(&b), PART / 1000);
	holders(3000);
	ck_assert_uint_eq(budget_share(&b), PART / 3000);
	holders(10000);
	ck_assert_uint_eq(budget_share(&b), PART / 10000);
	holders(14336);
	ck_assert_uint_eq(budget_share(&b), FLOOR);
	holders(20000);
	ck_assert_uint_eq(budget_share(&b), FLOOR);
	holders(0);
	ck_assert_uint_eq(budget_share(&b), HIGH);
}
END_TEST

/* Holders full at their 7/8: a connection that drains still has room. */
START_TEST(room_kept_for_the_rest)
{
	holders(1000);
	held(PART);
	ck_assert(budget_full(&b, 1));
	ck_assert(!budget_full(&b, 0));
	ck_assert(!budget_over(&b));
	ck_assert(!budget_refuse(&b));
	/* The rest filled too: producers wait, but no 503 above the floor. */
	budget_add(&b, (long long)(CAP / 8));
	ck_assert(budget_full(&b, 0));
	ck_assert(!budget_refuse(&b));
}
END_TEST

/*
 * Holders that came early kept the larger share they had then: they fill
 * the whole cap.  A connection that drains still gets the 1/8 kept.
 */
START_TEST(early_holders_leave_the_rest_its_part)
{
	holders(3000);
	held(CAP);
	ck_assert(budget_over(&b));
	ck_assert(budget_full(&b, 1));
	ck_assert(!budget_full(&b, 0));
	budget_add(&b, (long long)(CAP / 8 - 1));
	ck_assert(!budget_full(&b, 0));
	budget_add(&b, 1);
	ck_assert(budget_full(&b, 0));
	ck_assert(!budget_refuse(&b));
}
END_TEST

/*
 * The first 503 with the defaults: 128m / 8k = 16384 holders at the
 * floor, each holding it.  One fewer: each holder is full, and the room
 * left is one more floor, for a new one.
 */
START_TEST(first_refusal_at_cap_over_floor)
{
	holders(16383);
	held(16383 * FLOOR);
	ck_assert(budget_full(&b, 1));
	ck_assert(!budget_full(&b, 0));
	ck_assert(!budget_refuse(&b));
	holders(16384);
	held(FLOOR);
	ck_assert(budget_refuse(&b));
	ck_assert(budget_full(&b, 1));
	ck_assert(budget_full(&b, 0));
}
END_TEST

/*
 * In a spike the queue passes the cap by what early holders keep above
 * the share that shrank under them: the shares at the floor (14,336
 * holders) with a full queue refused new requests, though the floors fit
 * and the rest of the cap is room for those that drain.  Not now: only
 * when the floors alone fill the cap.
 */
START_TEST(full_queue_refuses_only_when_floors_fill_it)
{
	holders(15000);
	held(CAP);			/* early holders above their share */
	ck_assert_uint_eq(budget_share(&b), FLOOR);
	ck_assert(!budget_refuse(&b));
	ck_assert(!budget_full(&b, 0));	/* a drainer's room is there */
	holders(16384);
	ck_assert(budget_refuse(&b));
}
END_TEST

/*
 * Writes made in one call (a whole answer) are queued only while the
 * total stays under the cap, or past it in the part kept for connections
 * that drain, never past 9/8 of the cap.
 */
START_TEST(one_call_writes_under_the_cap)
{
	ck_assert(budget_admit(&b, CAP));
	ck_assert(!budget_admit(&b, CAP + CAP / 8 + 1));
	ck_assert(!budget_admit(&b, CAP + 1));	/* no holder: 1/8 is theirs */
	holders(1000);
	held(PART);
	ck_assert(budget_admit(&b, CAP / 8));
	ck_assert(!budget_admit(&b, CAP / 8 + 1));
	budget_add(&b, (long long)(CAP / 8));	/* the rest filled */
	ck_assert(!budget_admit(&b, FLOOR + 1));
	/* A small answer needs only the bound: 9/8 cap + 2 floors a holder. */
	ck_assert(budget_admit(&b, FLOOR));
	budget_add(&b, (long long)(budget_bound(&b) - b.b_queued));
	ck_assert(!budget_admit(&b, 1));
}
END_TEST

/*
 * In a spike, holders pass 9/8 of the cap by two floors each at most: a
 * small answer still fits in the part kept for the rest.
 */
START_TEST(one_call_writes_beside_a_spike)
{
	holders(3000);
	held(CAP + CAP / 8 + 1000 * FLOOR);
	ck_assert_uint_eq(budget_bound(&b), CAP + CAP / 8 + 6000 * FLOOR);
	ck_assert(budget_admit(&b, 4096));
	ck_assert(!budget_admit(&b, 5000 * FLOOR + 1));
}
END_TEST

/*
 * Peers that never read: each connection's one-call answer is queued
 * while it drains, then its bytes are held, and the part kept for the
 * rest is free again.  Round after round, the total stays within 9/8 of
 * the cap (it grew by the kept part each round: 57 times the cap).
 */
START_TEST(one_call_writes_to_peers_that_never_read)
{
	const uint64_t	 len = 3 * MIB;
	int		 i, refused = 0;

	for (i = 0; i < 1000; i++) {
		if (!budget_admit(&b, len)) {
			refused++;
			continue;
		}
		budget_add(&b, (long long)len);
		budget_hold(&b, 1, len);
	}
	ck_assert_uint_le(b.b_queued, budget_bound(&b));
	ck_assert_uint_le(b.b_queued, CAP + CAP / 8 + MIB);
	ck_assert_uint_ge(b.b_queued, CAP);
	ck_assert_int_gt(refused, 900);
	/* Their answers read, the room is back. */
	while (b.b_holders > 0) {
		budget_add(&b, -(long long)len);
		budget_hold(&b, 0, len);
	}
	ck_assert(budget_admit(&b, len));
}
END_TEST

/*
 * The input's budget (no holders) trims the heap once what it counts falls
 * to a sixteenth of a peak of 4 MiB or more: once, the mark then starts
 * from what is left.
 */
START_TEST(trim_when_input_falls)
{
	budget_trim_on_fall(&b);
	budget_add(&b, (long long)(8 * MIB));
	budget_add(&b, -(long long)(7 * MIB));
	ck_assert_uint_eq(b.b_trim, 8 * MIB);	/* 1 MiB left: not yet */
	budget_add(&b, -(long long)(MIB - 256 * KIB));
	ck_assert_uint_eq(b.b_trim, 256 * KIB);
	budget_add(&b, (long long)(2 * MIB));
	budget_add(&b, -(long long)(2 * MIB));
	ck_assert_uint_eq(b.b_trim, 2 * MIB + 256 * KIB);	/* small */
}
END_TEST

/* At the floor, holders may fill what the floor needs, not more. */
START_TEST(hold_cap_follows_the_floor)
{
	holders(15000);
	ck_assert_uint_eq(b.b_hold_cap, 15000 * FLOOR);
	holders(100);
	ck_assert_uint_eq(b.b_hold_cap, PART);
	holders(100000);
	ck_assert_uint_eq(b.b_hold_cap, CAP);
}
END_TEST

/*
 * The heap is trimmed when the last holder is done after a spike of 4
 * MiB or more, once most of it is gone: the mark then starts again from
 * what is queued.  Not while the queue stays high, nor after small ones.
 */
START_TEST(trim_once_a_spike_is_over)
{
	holders(3);
	budget_add(&b, (long long)(32 * MIB));
	ck_assert_uint_eq(b.b_trim, 32 * MIB);
	budget_add(&b, -(long long)(32 * MIB - KIB));
	holders(0);
	ck_assert_uint_eq(b.b_trim, KIB);		/* trimmed */
	/* A queue that stays high: no trim at each last holder. */
	budget_add(&b, (long long)(20 * MIB));
	holders(1);
	holders(0);
	ck_assert_uint_eq(b.b_trim, 20 * MIB + KIB);
	/* A small spike: none. */
	budget_add(&b, -(long long)(20 * MIB));
	b.b_trim = b.b_queued;
	budget_add(&b, (long long)(3 * MIB));
	budget_add(&b, -(long long)(3 * MIB));
	holders(1);
	holders(0);
	ck_assert_uint_eq(b.b_trim, 3 * MIB + KIB);
}
END_TEST

/* Accounting that comes and goes leaves the shares where they began. */
START_TEST(hold_release_balance)
{
	uint64_t	 i;

	for (i = 0; i < 5000; i++)
		budget_hold(&b, 1, 1000);
	for (i = 0; i < 5000; i++)
		budget_hold(&b, 0, 1000);
	ck_assert_uint_eq(b.b_holders, 0);
	ck_assert_uint_eq(b.b_held, 0);
	ck_assert_uint_eq(budget_share(&b), HIGH);
}
END_TEST

/* More releases than holds stay at 0; a floor above high is high. */
START_TEST(release_below_zero_and_floor_above_high)
{
	budget_hold(&b, 0, 100);
	ck_assert_uint_eq(b.b_holders, 0);
	ck_assert_uint_eq(b.b_held, 0);
	budget_shares(&b, 1 * MIB, HIGH);
	holders(100000);
	ck_assert_uint_eq(budget_share(&b), HIGH);
	/* Shares off (floor = high): refused once full, at cap / high
	   holders, as without them. */
	holders(CAP / HIGH - 1);
	held(CAP);
	ck_assert(!budget_refuse(&b));
	holders(CAP / HIGH);
	ck_assert(budget_refuse(&b));
}
END_TEST

/*
 * Waiters as connections wait: a holder runs when its part has room and
 * waits again, at the end, when it does not.  runs counts the calls.
 */
#define NWAIT	10000
static struct budget_waiter	 waiters[NWAIT + 1];
static unsigned			 runs, first_run;

static void
waiter_cb(void *arg)
{
	struct budget_waiter	*w = arg;
	int			 holder = w != &waiters[NWAIT];

	if (runs++ == 0)
		first_run = (unsigned)(w - waiters);
	if (budget_full(&b, holder))
		budget_wait(&b, w, holder);
	else if (holder)
		held(16 * KIB);		/* it produces a chunk */
}

static void
wake(void)
{
	runs = 0;
	budget_kick(&b);
	ck_assert_int_eq(event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK), 0);
}

/*
 * Ten thousand slow readers wait on a full holders' part: a wake (one a
 * write) ran every one of them to see it wait again, two thirds of the
 * loop's time at 10,000.  Now none runs until their part has room; then
 * the first in line does, until the part is full again; a connection that
 * drains runs whenever the cap has room for it.
 */
START_TEST(full_part_wakes_no_holder)
{
	unsigned	 i;

	holders(NWAIT);
	held(b.b_hold_cap);
	for (i = 0; i <= NWAIT; i++) {
		waiters[i].bw_fn = waiter_cb;
		waiters[i].bw_arg = &waiters[i];
		waiters[i].bw_waiting = 0;
		budget_wait(&b, &waiters[i], i < NWAIT);
	}
	wake();
	ck_assert_uint_eq(runs, 1);		/* the one that drains */
	ck_assert_uint_eq(first_run, NWAIT);
	wake();
	ck_assert_uint_eq(runs, 0);
	ck_assert_uint_eq(b.b_nwaiting_held, NWAIT);
	/* A reader took 40 KiB: room for three holders' chunks, in order. */
	budget_add(&b, -40 * (long long)KIB);
	budget_held(&b, -40 * (long long)KIB);
	wake();
	ck_assert_uint_eq(runs, 3);
	ck_assert_uint_eq(first_run, 0);
	ck_assert_uint_eq(b.b_nwaiting_held, NWAIT - 3);
	for (i = 0; i < NWAIT; i++)
		budget_cancel(&b, &waiters[i]);
	ck_assert_uint_eq(b.b_nwaiting_held, 0);
}
END_TEST

static Suite *
budget_suite(void)
{
	Suite	*s = suite_create("budget");

	suite_add_case(s, "core", setup, teardown, 0, share_shrinks,
	    room_kept_for_the_rest, early_holders_leave_the_rest_its_part,
	    first_refusal_at_cap_over_floor, full_part_wakes_no_holder,
	    full_queue_refuses_only_when_floors_fill_it,
	    one_call_writes_under_the_cap,
	    one_call_writes_to_peers_that_never_read,
	    one_call_writes_beside_a_spike, NULL);
	suite_add_case(s, "partial", setup, teardown, 0,
	    hold_cap_follows_the_floor, trim_once_a_spike_is_over,
	    trim_when_input_falls,
	    hold_release_balance, NULL);
	suite_add_case(s, "malformed", setup, teardown, 0,
	    release_below_zero_and_floor_above_high, NULL);
	return s;
}

int
main(void)
{
	return suite_run(budget_suite());
}
