/*
 * budget.h: the global cap on output queued in all connections, and the
 * queue of producers waiting for room under it.  Its one owner is the
 * server; connections account their output here and wait here.
 *
 * Shares: a connection whose peer does not take its output as fast as it
 * comes (it holds output the kernel refused) may hold its share, 7/8 of
 * the cap divided among all such holders, between a floor and the high
 * mark; the 1/8 left is kept for connections that drain, so a fast request
 * finds room however many slow ones wait.  Holders may pass their 7/8
 * only as far as the floor needs, and new requests are refused only when
 * the cap is full with the shares at the floor: cap / floor holders.
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
	int				 bw_waiting;	/* 0, or the
							   queue: 1 the
							   cap's, 2 the
							   holders' */
	TAILQ_ENTRY(budget_waiter)	 bw_entry;
};

TAILQ_HEAD(budget_queue, budget_waiter);

struct budget {
	uint64_t		 b_cap;
	uint64_t		 b_queued;	/* bytes in all output buffers */
	uint64_t		 b_peak;
	uint64_t		 b_trim;	/* the most queued since the
						   heap was last trimmed */
	uint64_t		 b_holders;	/* connections holding output */
	uint64_t		 b_held;	/* the bytes those hold */
	uint64_t		 b_hold_cap;	/* what holders may fill */
	size_t			 b_floor;	/* a holder's share: at least */
	size_t			 b_high;	/* ... and at most */
	size_t			 b_share;	/* a holder's share now */
	struct budget_queue	 b_waiting;	/* for the cap, in the order
						   they came */
	size_t			 b_nwaiting;
	struct budget_queue	 b_waiting_held; /* holders, for their part */
	size_t			 b_nwaiting_held;
	struct event		*b_wake;	/* runs the waiters next turn */
	int			 b_trim_fall;	/* trim when nearly empty
						   (budget_trim_on_fall) */
};

/* Starts b empty with cap bytes on base.  0, or -1 when out of memory. */
int	budget_init(struct budget *b, struct event_base *base, uint64_t cap);

/*
 * Shares between floor and high bytes per holder (budget_init: every
 * connection may hold the whole cap, as without shares).
 */
void	budget_shares(struct budget *b, size_t floor, size_t high);

/*
 * A connection begins (on 1) or ends (on 0) holding output, with len bytes
 * queued; while it holds, its budget_add()s go with budget_held()s.
 */
void	budget_hold(struct budget *b, int on, size_t len);

/* Accounts delta bytes of a holding connection's output (besides
   budget_add()). */
static inline void
budget_held(struct budget *b, long long delta)
{
	b->b_held += (uint64_t)delta;
}

/* What one connection may hold now (its high mark). */
static inline size_t
budget_share(const struct budget *b)
{
	return b->b_share;
}

/*
 * For a budget with no holders (the input's): once what it counts falls
 * to a sixteenth of a peak of 4 MiB or more, the heap is trimmed, as the
 * output's is when its last holder is done.
 */
void	budget_trim_on_fall(struct budget *b);

/* Frees what budget_init made; waiters are forgotten. */
void	budget_fini(struct budget *b);

/* Accounts output queued (delta > 0) or gone (delta < 0); keeps the peak. */
void	budget_add(struct budget *b, long long delta);

/* Whether the cap stops producers now (of a connection that drains). */
static inline int
budget_over(const struct budget *b)
{
	return b->b_queued >= b->b_cap;
}

/*
 * The same for a connection that is holding output or not: holders stop
 * when their bytes fill their part (7/8, or what the floor needs); the
 * rest only when the cap is full and they fill the part kept for them,
 * whatever the holders took while they were new.  Holders grow past their
 * part only by connections that begin holding, each with what it was let
 * queue: together at most the cap, plus that part, plus about the floor
 * for each connection that came during a spike.
 */
int	budget_full(const struct budget *b, int holding);

/*
 * Whether a new request is refused (503): the cap is full and the holders
 * at the floor fill it (cap / floor of them: 16,384 on the defaults).
 */
int	budget_refuse(const struct budget *b);

/*
 * The bound on what is queued in all: 9/8 of the cap (the holders' part
 * and the part kept for the rest) plus two floors for each holder: a
 * connection that begins to hold during a spike brings its first share,
 * the floor, past the holders' part, and its producer one call past its
 * room (the demo's /stream: up to 16 KiB, two floors on the defaults).
 * Measured: 300 slow readers at --max-queued 16m peaked at 22.9 MB, 1.7
 * floors a holder past 9/8 of the cap.
 */
static inline uint64_t
budget_bound(const struct budget *b)
{
	return b->b_cap + b->b_cap / 8 + b->b_holders * 2 * b->b_floor;
}

/*
 * Whether len more bytes, written in one call outside a producer (a whole
 * answer, a buffer moved across), may be queued now: if the total stays
 * under the cap, or else within budget_bound() and either len is at most
 * the floor (a small answer: /status in a spike) or it fits in the part
 * kept for connections that drain (cap - what the holders may fill).
 * Past that they are refused before they are queued (503, or the answer
 * cut): such writes never take the total past the bound, however many
 * come.
 */
int	budget_admit(const struct budget *b, uint64_t len);

/*
 * Puts w at the end of its queue (once); it runs when output drains and
 * there is room for it: for a holder (holding 1) in the holders' part,
 * else under the cap (budget_full()).  While the holders' part is full no
 * holder runs, however many wait: a wake costs what it lets produce.
 */
void	budget_wait(struct budget *b, struct budget_waiter *w, int holding);

/* Takes w off the queue, if it is there. */
void	budget_cancel(struct budget *b, struct budget_waiter *w);

/* Output drained somewhere: wake the waiters on the loop's next turn. */
void	budget_kick(struct budget *b);

#endif /* BUDGET_H */
