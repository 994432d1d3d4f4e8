/*
 * reqtab.h: a connection's requests by id, found in constant time.  An
 * open-addressed table that starts empty and doubles as it fills, so an
 * idle connection costs nothing and one with 65535 requests in flight
 * still finds each record's request in a probe or two.
 */
#ifndef REQTAB_H
#define REQTAB_H

#include <stddef.h>
#include <stdint.h>

struct evfcgi_req;

struct reqtab {
	struct evfcgi_req	**rt_slot;	/* rt_cap entries, or NULL */
	size_t			  rt_cap;	/* 0 or a power of two */
	size_t			  rt_n;
	struct evfcgi_req	 *rt_one;	/* the one request while
						   rt_cap is 0 */
};

/* The request whose r_id is id, or NULL. */
struct evfcgi_req *reqtab_find(const struct reqtab *t, uint16_t id);

/* Adds r (its id not in t yet).  Returns 0, or -1 when out of memory. */
int	reqtab_add(struct reqtab *t, struct evfcgi_req *r);

/* Takes r out of t, if it is there. */
void	reqtab_del(struct reqtab *t, struct evfcgi_req *r);

/* Frees the table (not the requests); t is empty after. */
void	reqtab_free(struct reqtab *t);

#endif /* REQTAB_H */
