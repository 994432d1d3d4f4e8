/*
 * query.c: what a request's URI and body say as form data: the query
 * string's pairs (evfcgi_query_*), an urlencoded body's beside them
 * (evfcgi_form_*), integers read from either, the route pattern's
 * parameters (evfcgi_path_param()) and the path below the route that took
 * the request (evfcgi_path_rest()).  Each is decoded on first use only,
 * into the request's typed data (reqdata.h), so an application that never
 * asks pays nothing.
 */
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "req_struct.h"
#include "reqdata.h"

static struct rd_part	*query_part(struct evfcgi_req *);
static struct rd_part	*form_part(struct evfcgi_req *);
static int		 part_errno(const struct rd_part *);

/* The errno a part's state stands for (0: usable). */
static int
part_errno(const struct rd_part *p)
{
	switch (p->st) {
	case RD_BAD:
		return EINVAL;
	case RD_BIG:
		return EMSGSIZE;
	case RD_STREAMED:
		return ENOTSUP;
	default:
		return 0;
	}
}

/* r's query, decoded; NULL with errno when malformed or out of memory. */
static struct rd_part *
query_part(struct evfcgi_req *r)
{
	struct reqdata	*d;
	const char	*q;

	if ((d = reqdata_get(r)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (d->d_query.st == RD_NONE) {
		q = evfcgi_query(r);
		reqdata_split(&d->d_query, q, strlen(q), '&');
	}
	if ((errno = part_errno(&d->d_query)) != 0)
		return NULL;
	return &d->d_query;
}

/*
 * r's urlencoded body, decoded (RD_ABSENT: none, no pairs); NULL with
 * errno when malformed, too large, streamed or out of memory.
 */
static struct rd_part *
form_part(struct evfcgi_req *r)
{
	struct reqdata	*d;

	if ((d = reqdata_get(r)) == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (d->d_form.st == RD_NONE)
		reqdata_split(&d->d_form, d->d_body, d->d_blen, '&');
	if (d->d_form.st == RD_OK && d->d_form.n > RD_FORM_MAX_FIELDS)
		d->d_form.st = RD_BIG;
	if ((errno = part_errno(&d->d_form)) != 0)
		return NULL;
	return &d->d_form;
}

int
evfcgi_query_next(struct evfcgi_req *r, size_t *i, const char **name,
    const char **value)
{
	const struct rd_part	*p;

	if ((p = query_part(r)) == NULL)
		return -1;
	if (*i >= p->n)
		return 0;
	*name = p->pv[*i].p_name;
	*value = p->pv[*i].p_value;
	(*i)++;
	return 1;
}

int
evfcgi_query_param(struct evfcgi_req *r, const char *name,
    const char **value)
{
	const struct rd_part	*p;

	*value = NULL;
	if ((p = query_part(r)) == NULL)
		return -1;
	*value = reqdata_find(p, name);
	return *value != NULL;
}

int
evfcgi_form_next(struct evfcgi_req *r, size_t *i, const char **name,
    const char **value)
{
	const struct rd_part	*f, *q;
	size_t			 k = *i;

	if ((f = form_part(r)) == NULL || (q = query_part(r)) == NULL)
		return -1;
	if (k < f->n) {
		*name = f->pv[k].p_name;
		*value = f->pv[k].p_value;
	} else if (k - f->n < q->n) {
		*name = q->pv[k - f->n].p_name;
		*value = q->pv[k - f->n].p_value;
	} else
		return 0;
	(*i)++;
	return 1;
}

int
evfcgi_form_value(struct evfcgi_req *r, const char *name, const char **value)
{
	const struct rd_part	*f, *q;

	*value = NULL;
	if ((f = form_part(r)) == NULL || (q = query_part(r)) == NULL)
		return -1;
	if ((*value = reqdata_find(f, name)) == NULL)
		*value = reqdata_find(q, name);
	return *value != NULL;
}

int
evfcgi_parse_int(const char *s, long long min, long long max,
    long long *out)
{
	unsigned long long	 v = 0, lim;
	long long		 x;
	int			 neg = 0;

	if (*s == '-') {
		neg = 1;
		s++;
	}
	/* One digit at least, digits only: no sign but '-', no space. */
	if (*s < '0' || *s > '9') {
		errno = EINVAL;
		return -1;
	}
	lim = neg ? (unsigned long long)LLONG_MAX + 1 :
	    (unsigned long long)LLONG_MAX;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (lim - (unsigned long long)(*s - '0')) / 10) {
			errno = ERANGE;
			return -1;
		}
		v = v * 10 + (unsigned long long)(*s - '0');
	}
	if (*s != '\0') {
		errno = EINVAL;
		return -1;
	}
	if (neg)
		x = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN :
		    -(long long)v;
	else
		x = (long long)v;
	if (x < min || x > max) {
		errno = ERANGE;
		return -1;
	}
	*out = x;
	return 0;
}

int
evfcgi_query_int(struct evfcgi_req *r, const char *name, long long min,
    long long max, long long *out)
{
	const char	*v;
	int		 rc;

	if ((rc = evfcgi_query_param(r, name, &v)) != 1)
		return rc;
	return evfcgi_parse_int(v, min, max, out) == 0 ? 1 : -1;
}

int
evfcgi_form_int(struct evfcgi_req *r, const char *name, long long min,
    long long max, long long *out)
{
	const char	*v;
	int		 rc;

	if ((rc = evfcgi_form_value(r, name, &v)) != 1)
		return rc;
	return evfcgi_parse_int(v, min, max, out) == 0 ? 1 : -1;
}

const char *
evfcgi_path_param(struct evfcgi_req *r, const char *name)
{
	struct reqdata	*d;

	/* Made by the dispatch of a pattern route: there if it matched. */
	if (r->r_typed_made != 1)
		return NULL;
	d = (struct reqdata *)(void *)r->r_typed.b_p;
	return d->d_path.st == RD_OK ? reqdata_find(&d->d_path, name) : NULL;
}

const char *
evfcgi_path_rest(struct evfcgi_req *r)
{
	const char	*p = evfcgi_path(r);

	/* r_plen never passes the path: the route matched that much of it. */
	return p + r->r_plen;
}
