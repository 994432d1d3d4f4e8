/*
 * reqdata.h: what a request says as typed data, decoded on first use into
 * one block the request keeps (its r_typed buffer, back in the pool with
 * it): the query's pairs, the route pattern's parameters, the cookies and
 * an urlencoded body.  The block is sized once, when it is made, for all
 * of them, so a string handed out never moves until the request ends;
 * each part is decoded only when first asked for.
 */
#ifndef REQDATA_H
#define REQDATA_H

#include <stddef.h>

#include "request.h"

/* A part's state: not decoded yet, decoded, or what was wrong with it. */
enum rd_state {
	RD_NONE = 0,
	RD_OK,
	RD_BAD,		/* malformed: 400 */
	RD_BIG,		/* past a cap: 413 */
	RD_ABSENT,	/* no such part (a body that is no form) */
	RD_STREAMED	/* a streamed body: not read as a form */
};

/* One part: its pairs, and the room made for them. */
struct rd_part {
	enum rd_state	 st;
	struct param	*pv;
	size_t		 n;
	size_t		 cap;	/* pairs pv has room for */
	char		*mem;	/* room for the strings */
	size_t		 memlen;
};

struct reqdata {
	struct rd_part	 d_query;
	struct rd_part	 d_path;	/* set by the route's dispatch */
	struct rd_part	 d_cookie;
	struct rd_part	 d_form;	/* the body, when it is a form */
	const void	*d_body;	/* the form's bytes (d_form RD_NONE) */
	size_t		 d_blen;
};

/*
 * r's typed data, made at the first call (every part RD_NONE, the form
 * RD_ABSENT, RD_STREAMED, RD_BIG or RD_NONE as its body is then).  Returns
 * NULL when out of memory (a later call tries again).
 */
struct reqdata *reqdata_get(struct evfcgi_req *r);

/*
 * Splits len bytes of src ("a=1&b=2") into part's pairs: split at sep
 * ('&', or ';' for cookies: then spaces around a pair are dropped and a
 * value's double quotes taken off), each decoded as form data ('+' a
 * space, %XX) unless sep is ';'; empty pairs skipped.  part must have room
 * (reqdata_get() made it).  Sets part->st to RD_OK, or RD_BAD (a bad
 * escape, %00); for cookies a pair without '=' or a name is skipped.
 */
void	reqdata_split(struct rd_part *part, const char *src, size_t len,
	    int sep);

/* The value of the first pair named name in part, or NULL. */
const char *reqdata_find(const struct rd_part *part, const char *name);

/* Fields and bytes an urlencoded body may have (413 beyond). */
#define RD_FORM_MAX_FIELDS	EVFCGI_FORM_MAX_FIELDS
#define RD_FORM_MAX_BYTES	EVFCGI_FORM_MAX_BYTES


struct rpat;
struct rseg;

/*
 * Splits r's path into segments for pattern routes, in d's room for them:
 * REQUEST_URI's path split then decoded (rseg_split_raw()), else the
 * routed path.  Returns the count, or -1 (no pattern can match it).
 */
int	reqdata_path_segs(struct evfcgi_req *r, struct reqdata *d,
	    struct rseg *segs, size_t max);

/*
 * Records the values a match of pat gave (vals, pointing into d's room)
 * as the path parameters, each NUL-ended in place.
 */
void	reqdata_path_set(struct reqdata *d, const struct rpat *pat,
	    const struct rseg *vals);

#endif /* REQDATA_H */
