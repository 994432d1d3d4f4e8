/*
 * reqtab.c: linear probing keyed by the 16-bit request id, at most half
 * full; deletion shifts the entries after the hole back, so no tombstones
 * build up on a connection that reuses ids for hours.  The hash's
 * multiplier is drawn once per process: with a fixed one a peer could
 * choose ids that share a home and make every lookup walk them all.
 */
#include <sys/types.h>
#include <sys/random.h>

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "reqtab.h"
#include "request.h"

#define REQTAB_MIN	8

static size_t	reqtab_home(const struct reqtab *, uint16_t);
static int	reqtab_grow(struct reqtab *);
static void	reqtab_seed(void);

/* Odd, random, set before the first table is made; 0 until then. */
static uint32_t	reqtab_mult;

/*
 * The slot where a search for id starts: the top bits of id times the
 * multiplier (multiply-shift: ids a peer picks spread like any others).
 */
static size_t
reqtab_home(const struct reqtab *t, uint16_t id)
{
	return (uint32_t)(id * reqtab_mult) >>
	    (32 - __builtin_ctzl((unsigned long)t->rt_cap));
}

/* Draws the multiplier (from the clock and pid if getrandom fails). */
static void
reqtab_seed(void)
{
	struct timespec	 ts;
	uint32_t	 m;

	if (getrandom(&m, sizeof(m), GRND_NONBLOCK) != (ssize_t)sizeof(m)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		m = (uint32_t)ts.tv_nsec * 2654435761u ^ (uint32_t)getpid();
	}
	reqtab_mult = m | 1;
}

struct evfcgi_req *
reqtab_find(const struct reqtab *t, uint16_t id)
{
	size_t	 i;

	if (t->rt_cap == 0)
		return t->rt_one != NULL && req_h(t->rt_one)->h_id == id ?
		    t->rt_one : NULL;
	for (i = reqtab_home(t, id); t->rt_slot[i] != NULL;
	    i = (i + 1) & (t->rt_cap - 1))
		if (req_h(t->rt_slot[i])->h_id == id)
			return t->rt_slot[i];
	return NULL;
}

/* Doubles the table (or makes the first), placing every entry again. */
static int
reqtab_grow(struct reqtab *t)
{
	struct reqtab	 n;
	size_t		 i, j;

	if (reqtab_mult == 0)
		reqtab_seed();
	n.rt_cap = t->rt_cap == 0 ? REQTAB_MIN : t->rt_cap * 2;
	n.rt_n = t->rt_n;
	n.rt_one = NULL;
	if ((n.rt_slot = calloc(n.rt_cap, sizeof(*n.rt_slot))) == NULL)
		return -1;
	if (t->rt_one != NULL)
		n.rt_slot[reqtab_home(&n, req_h(t->rt_one)->h_id)] = t->rt_one;
	for (i = 0; i < t->rt_cap; i++) {
		if (t->rt_slot[i] == NULL)
			continue;
		for (j = reqtab_home(&n, req_h(t->rt_slot[i])->h_id);
		    n.rt_slot[j] != NULL; j = (j + 1) & (n.rt_cap - 1))
			;
		n.rt_slot[j] = t->rt_slot[i];
	}
	free(t->rt_slot);
	*t = n;
	return 0;
}

int
reqtab_add(struct reqtab *t, struct evfcgi_req *r)
{
	size_t	 i;

	/* One request in flight, the common case, needs no table. */
	if (t->rt_cap == 0 && t->rt_n == 0) {
		t->rt_one = r;
		t->rt_n = 1;
		return 0;
	}
	if ((t->rt_n + 1) * 2 > t->rt_cap && reqtab_grow(t) == -1)
		return -1;
	for (i = reqtab_home(t, req_h(r)->h_id); t->rt_slot[i] != NULL;
	    i = (i + 1) & (t->rt_cap - 1))
		;
	t->rt_slot[i] = r;
	t->rt_n++;
	return 0;
}

void
reqtab_del(struct reqtab *t, struct evfcgi_req *r)
{
	size_t	 mask = t->rt_cap - 1, i, j, home;

	if (t->rt_cap == 0) {
		if (t->rt_one == r) {
			t->rt_one = NULL;
			t->rt_n = 0;
		}
		return;
	}
	for (i = reqtab_home(t, req_h(r)->h_id); t->rt_slot[i] != r;
	    i = (i + 1) & mask)
		if (t->rt_slot[i] == NULL)
			return;
	t->rt_slot[i] = NULL;
	t->rt_n--;
	/* Move back each later entry whose home lies at or before the hole. */
	for (j = (i + 1) & mask; t->rt_slot[j] != NULL; j = (j + 1) & mask) {
		home = reqtab_home(t, req_h(t->rt_slot[j])->h_id);
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->rt_slot[i] = t->rt_slot[j];
			t->rt_slot[j] = NULL;
			i = j;
		}
	}
}

void
reqtab_free(struct reqtab *t)
{
	free(t->rt_slot);
	t->rt_slot = NULL;
	t->rt_cap = 0;
	t->rt_n = 0;
	t->rt_one = NULL;
}
