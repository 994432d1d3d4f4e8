/*
 * budget.c: the global output cap.  Waiters are woken from an event of
 * their own, never from inside the callback that drained the output, so a
 * waiter may close connections (even the one that kicked) safely.
 */
#include <sys/types.h>

#include <event2/event.h>

#include "budget.h"

static void	budget_wakecb(evutil_socket_t, short, void *);

int
budget_init(struct budget *b, struct event_base *base, uint64_t cap)
{
	b->b_cap = cap;
	b->b_queued = 0;
	b->b_peak = 0;
	b->b_nwaiting = 0;
	TAILQ_INIT(&b->b_waiting);
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
}

void
budget_add(struct budget *b, long long delta)
{
	b->b_queued += (uint64_t)delta;
	if (b->b_queued > b->b_peak)
		b->b_peak = b->b_queued;
}

int
budget_over(const struct budget *b)
{
	return b->b_queued >= b->b_cap;
}

void
budget_wait(struct budget *b, struct budget_waiter *w)
{
	if (w->bw_waiting)
		return;
	w->bw_waiting = 1;
	b->b_nwaiting++;
	TAILQ_INSERT_TAIL(&b->b_waiting, w, bw_entry);
}

void
budget_cancel(struct budget *b, struct budget_waiter *w)
{
	if (!w->bw_waiting)
		return;
	w->bw_waiting = 0;
	b->b_nwaiting--;
	TAILQ_REMOVE(&b->b_waiting, w, bw_entry);
}

void
budget_kick(struct budget *b)
{
	if (!TAILQ_EMPTY(&b->b_waiting))
		event_active(b->b_wake, EV_TIMEOUT, 0);
}

/*
 * Runs the waiters in their order while the cap allows, each at most once
 * a turn; a waiter may wait again (it goes to the end) or cancel others.
 * Those not reached keep their place.
 */
static void
budget_wakecb(evutil_socket_t fd, short what, void *arg)
{
	struct budget		*b = arg;
	struct budget_waiter	*w;
	size_t			 n = b->b_nwaiting;

	(void)fd;
	(void)what;
	while (n-- > 0 && !budget_over(b) &&
	    (w = TAILQ_FIRST(&b->b_waiting)) != NULL) {
		budget_cancel(b, w);
		w->bw_fn(w->bw_arg);
	}
}
