/*
 * reqdata.c: the block of a request's typed data (reqdata.h): sized once
 * from what the params and the body say, then filled part by part as the
 * application asks.  Splitting is one pass over the bytes.
 */
#include <sys/types.h>

#include <stdalign.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "req_struct.h"
#include "reqdata.h"
#include "router.h"

static size_t	rd_count(const char *, size_t, int);
static void	rd_room(struct rd_part *, char *, size_t *, size_t, size_t);
static size_t	rd_raw_path_len(struct evfcgi_req *, const char **);
static int	rd_is_form(struct evfcgi_req *);
static long	rd_decode(char *, const char *, size_t, int);

/* Pairs that len bytes at s may hold: one more than its separators. */
static size_t
rd_count(const char *s, size_t len, int sep)
{
	const char	*e = s + len;
	size_t		 n = 1;

	while (s < e && (s = memchr(s, sep, (size_t)(e - s))) != NULL) {
		n++;
		s++;
	}
	return n;
}

/*
 * Places part's room (npairs, memlen bytes) at base + *off, advancing
 * *off; base NULL only counts.
 */
static void
rd_room(struct rd_part *part, char *base, size_t *off, size_t npairs,
    size_t memlen)
{
	if (base != NULL)
		part->pv = (struct param *)(void *)(base + *off);
	part->cap = npairs;
	*off += npairs * sizeof(struct param);
	if (base != NULL)
		part->mem = base + *off;
	part->memlen = memlen;
	*off += memlen;
	*off = (*off + alignof(struct param) - 1) &
	    ~(alignof(struct param) - 1);
}

/* REQUEST_URI's length up to '?' (*raw set), else 0 (*raw NULL). */
static size_t
rd_raw_path_len(struct evfcgi_req *r, const char **raw)
{
	const char	*uri = evfcgi_param(r, "REQUEST_URI");

	*raw = uri;
	return uri != NULL ? strcspn(uri, "?") : 0;
}

/* Whether CONTENT_TYPE says application/x-www-form-urlencoded. */
static int
rd_is_form(struct evfcgi_req *r)
{
	static const char	 t[] = "application/x-www-form-urlencoded";
	const char		*ct = evfcgi_param(r, "CONTENT_TYPE");

	return ct != NULL && strncasecmp(ct, t, sizeof(t) - 1) == 0 &&
	    (ct[sizeof(t) - 1] == '\0' || ct[sizeof(t) - 1] == ';' ||
	    ct[sizeof(t) - 1] == ' ');
}

struct reqdata *
reqdata_get(struct evfcgi_req *r)
{
	struct reqdata	*d, tmp;
	const char	*q = evfcgi_query(r), *raw, *ck, *body = NULL;
	size_t		 qlen = strlen(q), plen, clen, blen = 0, nq, np, nc;
	size_t		 nf = 0, off;

	if (r->r_typed_made == 1)
		return (struct reqdata *)(void *)r->r_typed.b_p;
	memset(&tmp, 0, sizeof(tmp));
	if ((plen = rd_raw_path_len(r, &raw)) == 0)
		plen = strlen(evfcgi_path(r));
	if ((ck = evfcgi_param(r, "HTTP_COOKIE")) == NULL)
		ck = "";
	clen = strlen(ck);
	nq = rd_count(q, qlen, '&');
	np = rd_count(raw != NULL ? raw : evfcgi_path(r), plen, '/');
	nc = rd_count(ck, clen, ';');
	tmp.d_form.st = RD_ABSENT;
	if (r->r_h.h_stream)
		tmp.d_form.st = rd_is_form(r) ? RD_STREAMED : RD_ABSENT;
	else if (rd_is_form(r)) {
		blen = evbuffer_get_length(r->r_body);
		if (blen > RD_FORM_MAX_BYTES)
			tmp.d_form.st = RD_BIG;
		else if ((body = evfcgi_body_bytes(r, &blen)) == NULL)
			return NULL;
		else if ((nf = rd_count(body, blen, '&')) >
		    RD_FORM_MAX_FIELDS + 1)
			tmp.d_form.st = RD_BIG;
		else
			tmp.d_form.st = RD_NONE;
	}
	if (tmp.d_form.st != RD_NONE)
		nf = blen = 0;
	off = (sizeof(tmp) + alignof(struct param) - 1) &
	    ~(alignof(struct param) - 1);
	/* The sizes first, on a NULL base; then the same on the block. */
	rd_room(&tmp.d_query, NULL, &off, nq, qlen + 2 * nq);
	rd_room(&tmp.d_path, NULL, &off, np, plen + 1);
	rd_room(&tmp.d_cookie, NULL, &off, nc, clen + 2 * nc);
	rd_room(&tmp.d_form, NULL, &off, nf, blen + 2 * nf);
	if (req_buf_reserve(&r->r_typed, off) == -1)
		return NULL;
	d = (struct reqdata *)(void *)r->r_typed.b_p;
	*d = tmp;
	off = (sizeof(tmp) + alignof(struct param) - 1) &
	    ~(alignof(struct param) - 1);
	rd_room(&d->d_query, r->r_typed.b_p, &off, nq, qlen + 2 * nq);
	rd_room(&d->d_path, r->r_typed.b_p, &off, np, plen + 1);
	rd_room(&d->d_cookie, r->r_typed.b_p, &off, nc, clen + 2 * nc);
	rd_room(&d->d_form, r->r_typed.b_p, &off, nf, blen + 2 * nf);
	d->d_body = body;
	d->d_blen = blen;
	r->r_typed.b_len = off;
	r->r_typed_made = 1;
	return d;
}

/*
 * Decodes len bytes at src into dst (room for len + 1, NUL-ended): with
 * form set, '+' a space and %XX a byte; else copied.  Returns the length,
 * or -1 for '%' not followed by two hex digits or for %00.
 */
static long
rd_decode(char *dst, const char *src, size_t len, int form)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	if (!form) {
		memcpy(dst, src, len);
		dst[len] = '\0';
		return (long)len;
	}
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

void
reqdata_split(struct rd_part *part, const char *src, size_t len, int sep)
{
	const char	*s = src, *e = src + len, *end, *eq, *ne, *v, *ve;
	char		*mem = part->mem;
	int		 form = sep != ';';
	long		 n;

	part->n = 0;
	for (; s < e; s = end + 1) {
		if ((end = memchr(s, sep, (size_t)(e - s))) == NULL)
			end = e;
		if (!form) {
			while (s < end && (*s == ' ' || *s == '\t'))
				s++;
			while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
		}
		if (s == end)
			goto next;
		if ((eq = memchr(s, '=', (size_t)(end - s))) == NULL) {
			if (!form)
				goto next;
			eq = end;
		}
		if (!form && eq == s)
			goto next;
		v = eq < end ? eq + 1 : end;
		ve = end;
		ne = eq;
		if (!form) {
			/* RFC 6265 5.2: spaces around '=' are no part. */
			while (ne > s && (ne[-1] == ' ' || ne[-1] == '\t'))
				ne--;
			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			if (ne == s)
				goto next;
		}
		if (!form && ve - v >= 2 && *v == '"' && ve[-1] == '"') {
			v++;
			ve--;
		}
		part->pv[part->n].p_name = mem;
		if ((n = rd_decode(mem, s, (size_t)(ne - s), form)) == -1)
			goto bad;
		part->pv[part->n].p_nlen = (size_t)n;
		mem += n + 1;
		part->pv[part->n].p_value = mem;
		if ((n = rd_decode(mem, v, (size_t)(ve - v), form)) == -1)
			goto bad;
		mem += n + 1;
		part->n++;
next:
		/* end may have moved back over spaces: on to the separator. */
		if ((end = memchr(end, sep, (size_t)(e - end))) == NULL)
			break;
	}
	part->st = RD_OK;
	return;
bad:
	part->n = 0;
	part->st = RD_BAD;
}

const char *
reqdata_find(const struct rd_part *part, const char *name)
{
	size_t	 i, len = strlen(name);

	for (i = 0; i < part->n; i++)
		if (part->pv[i].p_nlen == len &&
		    memcmp(part->pv[i].p_name, name, len) == 0)
			return part->pv[i].p_value;
	return NULL;
}

int
reqdata_path_segs(struct evfcgi_req *r, struct reqdata *d, struct rseg *segs,
    size_t max)
{
	const char	*raw;
	size_t		 len = rd_raw_path_len(r, &raw);

	if (raw != NULL)
		return rseg_split_raw(raw, len, d->d_path.mem, segs, max);
	/* No REQUEST_URI: the web server decoded the path already. */
	memcpy(d->d_path.mem, evfcgi_path(r), d->d_path.memlen);
	return rseg_split(d->d_path.mem, segs, max);
}

void
reqdata_path_set(struct reqdata *d, const struct rpat *pat,
    const struct rseg *vals)
{
	size_t	 i;
	char	*v;

	d->d_path.n = 0;
	for (i = 0; i < pat->p_nparams && i < d->d_path.cap; i++) {
		v = d->d_path.mem + (vals[i].s - d->d_path.mem);
		v[vals[i].len] = '\0';
		d->d_path.pv[i].p_name = rpat_param_name(pat, i);
		d->d_path.pv[i].p_nlen = strlen(d->d_path.pv[i].p_name);
		d->d_path.pv[i].p_value = v;
		d->d_path.n++;
	}
	d->d_path.st = RD_OK;
}
