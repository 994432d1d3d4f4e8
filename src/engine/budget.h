/*
 * budget.h: the global cap on output queued in all connections, and the
 * queue of producers waiting for room under it.  Its one owner is the
 * server; connections account their output here and wait here.
 */
#ifndef BUDGET_H
#define BUDGET_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

struct event;
struct event_base;

/* One party waiting for room: fn(arg) runs when there may be some. */
struct budget_waiter {
	void				(*bw_fn)(void *);
	void				*bw_arg;
	int				 bw_waiting;
	TAILQ_ENTRY(budget_waiter)	 bw_entry;
};

TAILQ_HEAD(budget_queue, budget_waiter);

struct budget {
	uint64_t		 b_cap;
	uint64_t		 b_queued;	/* bytes in all output buffers */
	uint64_t		 b_peak;
	struct budget_queue	 b_waiting;	/* in the order they came */
	size_t			 b_nwaiting;
	struct event		*b_wake;	/* runs the waiters next turn */
};

/* Starts b empty with cap bytes on base.  0, or -1 when out of memory. */
int	budget_init(struct budget *b, struct event_base *base, uint64_t cap);

/* Frees what budget_init made; waiters are forgotten. */
void	budget_fini(struct budget *b);

/* Accounts output queued (delta > 0) or gone (delta < 0); keeps the peak. */
void	budget_add(struct budget *b, long long delta);

/* Whether the cap stops producers now. */
int	budget_over(const struct budget *b);

/* Puts w at the end of the queue (once); it runs when output drains. */
void	budget_wait(struct budget *b, struct budget_waiter *w);

/* Takes w off the queue, if it is there. */
void	budget_cancel(struct budget *b, struct budget_waiter *w);

/* Output drained somewhere: wake the waiters on the loop's next turn. */
void	budget_kick(struct budget *b);

#endif /* BUDGET_H */
