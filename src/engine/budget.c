/*
 * budget.c: the global output cap.  Waiters are woken from an event of
 * their own, never from inside the callback that drained the output, so a
 * waiter may close connections (even the one that kicked) safely.
 */
#include <sys/types.h>

#include <stdint.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <event2/event.h>

#include "budget.h"

/* A spike that queued this much has its heap trimmed when it is over. */
#define BUDGET_TRIM_AT	(4 * 1024 * 1024)

static void	budget_wakecb(evutil_socket_t, short, void *);
static void	budget_reshare(struct budget *);
static void	budget_trim(struct budget *);
static void	budget_run(struct budget *, struct budget_queue *, size_t,
		    int);

int
budget_init(struct budget *b, struct event_base *base, uint64_t cap)
{
	b->b_cap = cap;
	b->b_queued = 0;
	b->b_peak = 0;
	b->b_trim = 0;
	b->b_trim_fall = 0;
	b->b_holders = 0;
	b->b_held = 0;
	b->b_floor = 0;
	b->b_high = cap > SIZE_MAX ? SIZE_MAX : (size_t)cap;
	budget_reshare(b);
	b->b_nwaiting = 0;
	TAILQ_INIT(&b->b_waiting);
	b->b_nwaiting_held = 0;
	TAILQ_INIT(&b->b_waiting_held);
	b->b_wake = event_new(base, -1, 0, budget_wakecb, b);
	return b->b_wake == NULL ? -1 : 0;
}

void
budget_fini(struct budget *b)
{
	if (b->b_wake != NULL)
		event_free(b->b_wake);
	b->b_wake = NULL;
	b->b_nwaiting = 0;
	TAILQ_INIT(&b->b_waiting);
	b->b_nwaiting_held = 0;
	TAILQ_INIT(&b->b_waiting_held);
}

void
budget_shares(struct budget *b, size_t floor, size_t high)
{
	b->b_high = high;
	b->b_floor = floor < high ? floor : high;
	budget_reshare(b);
}

void
budget_hold(struct budget *b, int on, size_t len)
{
	if (on) {
		b->b_holders++;
		b->b_held += len;
	} else if (b->b_holders > 0) {
		b->b_holders--;
		b->b_held -= len < b->b_held ? len : b->b_held;
		if (b->b_holders == 0)
			budget_trim(b);
	}
	budget_reshare(b);
}

/*
 * The last holder's answers are out: after a spike that queued at least
 * BUDGET_TRIM_AT, once less than half of that is still queued, the heap
 * its queues took goes back to the system.  glibc keeps freed memory for
 * the next allocations, and a spike's queues are freed piecemeal among
 * live blocks: without a trim evfcgid's RSS stayed at the spike's peak
 * for good.  Once a spike at most (the mark starts again from what is
 * queued now); never on a quiet day, nor while the queue stays high.
 */
static void
budget_trim(struct budget *b)
{
	if (b->b_trim < BUDGET_TRIM_AT || b->b_queued > b->b_trim / 2)
		return;
#ifdef __GLIBC__
	(void)malloc_trim(0);
#endif
	b->b_trim = b->b_queued;
}

/*
 * The holders' part is 7/8 of the cap; each gets an equal share of it,
 * between the floor and the high mark.  At the floor they may fill what
 * the floor needs, up to the whole cap.
 */
static void
budget_reshare(struct budget *b)
{
	uint64_t	 part = b->b_cap - b->b_cap / 8, share, need;

	share = b->b_holders > 0 ? part / b->b_holders : part;
	if (share > b->b_high)
		share = b->b_high;
	if (share < b->b_floor)
		share = b->b_floor;
	b->b_share = (size_t)share;
	need = b->b_holders * b->b_floor;
	b->b_hold_cap = need > b->b_cap ? b->b_cap : need > part ? need : part;
}

void
budget_add(struct budget *b, long long delta)
{
	b->b_queued += (uint64_t)delta;
	if (b->b_queued > b->b_peak)
		b->b_peak = b->b_queued;
	if (b->b_queued > b->b_trim)
		b->b_trim = b->b_queued;
	else if (delta < 0 && b->b_trim_fall &&
	    b->b_queued <= b->b_trim / 16)
		budget_trim(b);
	/* Those waiting for the cap (the input's readers) wake below it. */
	if (delta < 0 && b->b_nwaiting > 0 && b->b_queued < b->b_cap)
		budget_kick(b);
}

/*
 * 1000 uploads of 1 MiB at once took evfcgid's RSS from 2.2 MiB to 136
 * MiB, most of it the connections' input buffers, and it stayed at 60
 * MiB once they were gone.
 */
void
budget_trim_on_fall(struct budget *b)
{
	b->b_trim_fall = 1;
}

int
budget_full(const struct budget *b, int holding)
{
	if (holding)
		return b->b_held >= b->b_hold_cap;
	return b->b_queued >= b->b_cap &&
	    b->b_queued - b->b_held >= b->b_cap - b->b_hold_cap;
}

/*
 * Not as soon as the shares reach the floor (7/8 of cap / floor holders):
 * in a spike the queue passes the cap by what early holders keep above
 * their shrunken share, but the floors still fit, and what is left of
 * the cap beside them (cap - holders x floor) is room for connections
 * that drain.
 */
int
budget_refuse(const struct budget *b)
{
	return b->b_queued >= b->b_cap &&
	    b->b_holders * b->b_floor >= b->b_cap;
}

/*
 * The ceiling is what the shares allow at most (budget_full()): bytes a
 * connection queued while it drained become held bytes once its peer
 * stops reading, and the part kept for the rest is then free again, so
 * without it one-call answers to peers that never read would take the
 * queue past any bound, a part at a time.
 */
int
budget_admit(const struct budget *b, uint64_t len)
{
	uint64_t	 after = b->b_queued + len, rest;

	if (after <= b->b_cap)
		return 1;
	if (after > budget_bound(b))
		return 0;
	/* A small answer (within a floor) needs only the bound. */
	if (len <= b->b_floor)
		return 1;
	rest = b->b_queued > b->b_held ? b->b_queued - b->b_held : 0;
	return rest + len <= b->b_cap - b->b_hold_cap;
}

void
budget_wait(struct budget *b, struct budget_waiter *w, int holding)
{
	if (w->bw_waiting)
		return;
	if (holding) {
		w->bw_waiting = 2;
		b->b_nwaiting_held++;
		TAILQ_INSERT_TAIL(&b->b_waiting_held, w, bw_entry);
	} else {
		w->bw_waiting = 1;
		b->b_nwaiting++;
		TAILQ_INSERT_TAIL(&b->b_waiting, w, bw_entry);
	}
}

void
budget_cancel(struct budget *b, struct budget_waiter *w)
{
	if (w->bw_waiting == 2) {
		b->b_nwaiting_held--;
		TAILQ_REMOVE(&b->b_waiting_held, w, bw_entry);
	} else if (w->bw_waiting == 1) {
		b->b_nwaiting--;
		TAILQ_REMOVE(&b->b_waiting, w, bw_entry);
	}
	w->bw_waiting = 0;
}

void
budget_kick(struct budget *b)
{
	if (!TAILQ_EMPTY(&b->b_waiting) || !TAILQ_EMPTY(&b->b_waiting_held))
		event_active(b->b_wake, EV_TIMEOUT, 0);
}

/*
 * Runs the waiters of each queue in their order while there is room for
 * them: first those under the cap (connections that drain), then the
 * holders while their part has room.  Each runs at most once a turn; a
 * waiter may wait again (it goes to the end) or cancel others.  Those not
 * reached keep their place.  Running a holder only to see it wait again
 * cost every wake the whole queue: ten thousand slow readers, a wake per
 * write, took two thirds of the loop.
 */
static void
budget_wakecb(evutil_socket_t fd, short what, void *arg)
{
	struct budget	*b = arg;

	(void)fd;
	(void)what;
	budget_run(b, &b->b_waiting, b->b_nwaiting, 0);
	budget_run(b, &b->b_waiting_held, b->b_nwaiting_held, 1);
}

/* Runs at most n waiters of q, first come first, while budget_full() of
   holding (q's kind) allows. */
static void
budget_run(struct budget *b, struct budget_queue *q, size_t n, int holding)
{
	struct budget_waiter	*w;

	while (n-- > 0 && !budget_full(b, holding) &&
	    (w = TAILQ_FIRST(q)) != NULL) {
		budget_cancel(b, w);
		w->bw_fn(w->bw_arg);
	}
}
