/*
 * query.c: what a request's URI says beyond its routed path: the query
 * string read as form data (evfcgi_query_param(), evfcgi_query_next()) and
 * the path below the route that took it (evfcgi_path_rest()).  The query
 * is decoded on first use only, into a buffer the request keeps in the
 * pool, so an application that never asks pays nothing.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"

static int	query_decode(struct evfcgi_req *);
static long	form_decode(char *, const char *, size_t);

/*
 * Decodes len bytes of form data at src into dst (room for len + 1,
 * NUL-ended): '+' a space, %XX a byte.  Returns the decoded length, or -1
 * for '%' not followed by two hex digits or for %00.
 */
static long
form_decode(char *dst, const char *src, size_t len)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (src[i] == '+')
			dst[o++] = ' ';
		else if (src[i] != '%')
			dst[o++] = src[i];
		else if (len - i < 3 ||
		    (hi = req_hexval((unsigned char)src[i + 1])) == -1 ||
		    (lo = req_hexval((unsigned char)src[i + 2])) == -1 ||
		    (hi | lo) == 0)
			return -1;
		else {
			dst[o++] = (char)(hi << 4 | lo);
			i += 2;
		}
	}
	dst[o] = '\0';
	return (long)o;
}

/*
 * Splits and decodes QUERY_STRING into r_query: the pairs' array first,
 * then their strings.  Returns 0, or -1 with errno (EINVAL malformed,
 * ENOMEM); the outcome is kept in r_qstate for the later calls.
 */
static int
query_decode(struct evfcgi_req *r)
{
	const char	*q = evfcgi_query(r), *amp, *eq;
	struct param	*pv;
	char		*mem;
	size_t		 len = strlen(q), npairs = 1, i, room;
	long		 n;

	for (i = 0; i < len; i++)
		npairs += q[i] == '&';
	/* Each pair "n=v" of k bytes decodes to at most k + 2 with NULs. */
	room = npairs * sizeof(*pv) + len + 2 * npairs;
	if (req_buf_reserve(&r->r_query, room) == -1) {
		errno = ENOMEM;
		return -1;	/* not kept: a later call may have memory */
	}
	pv = (struct param *)(void *)r->r_query.b_p;
	mem = r->r_query.b_p + npairs * sizeof(*pv);
	r->r_nq = 0;
	r->r_qstate = -1;
	for (; *q != '\0'; q = *amp == '&' ? amp + 1 : amp) {
		amp = q + strcspn(q, "&");
		if (amp == q)
			continue;
		eq = memchr(q, '=', (size_t)(amp - q));
		if (eq == NULL)
			eq = amp;
		pv[r->r_nq].p_name = mem;
		if ((n = form_decode(mem, q, (size_t)(eq - q))) == -1)
			goto bad;
		pv[r->r_nq].p_nlen = (size_t)n;
		mem += n + 1;
		pv[r->r_nq].p_value = mem;
		if ((n = form_decode(mem, eq == amp ? eq : eq + 1,
		    (size_t)(amp - (eq == amp ? eq : eq + 1)))) == -1)
			goto bad;
		mem += n + 1;
		r->r_nq++;
	}
	r->r_qstate = 1;
	return 0;
bad:
	r->r_nq = 0;
	errno = EINVAL;
	return -1;
}

int
evfcgi_query_next(struct evfcgi_req *r, size_t *i, const char **name,
    const char **value)
{
	const struct param	*pv;

	if (r->r_qstate == 0 && query_decode(r) == -1)
		return -1;
	if (r->r_qstate == -1) {
		errno = EINVAL;
		return -1;
	}
	if (*i >= r->r_nq)
		return 0;
	pv = (const struct param *)(const void *)r->r_query.b_p;
	*name = pv[*i].p_name;
	*value = pv[*i].p_value;
	(*i)++;
	return 1;
}

int
evfcgi_query_param(struct evfcgi_req *r, const char *name,
    const char **value)
{
	const char	*n, *v;
	size_t		 i = 0;
	int		 rc;

	*value = NULL;
	while ((rc = evfcgi_query_next(r, &i, &n, &v)) == 1)
		if (strcmp(n, name) == 0) {
			*value = v;
			return 1;
		}
	return rc;
}

const char *
evfcgi_path_rest(struct evfcgi_req *r)
{
	const char	*p = evfcgi_path(r);

	/* r_plen never passes the path: the route matched that much of it. */
	return p + r->r_plen;
}
