/*
 * request.c: the request lifecycle (pool, PARAMS and their CGI meaning,
 * the body, whole or streamed) and the public functions that read a
 * request.  What a request answers is in response.c, below it; both stand
 * on req_state.c (the state's steps, the buffers) and tell the connection
 * what it must do through the req_link's ops.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "log.h"
#include "req_struct.h"

/*
 * What decoding a request's params or its path came to; each outcome but
 * PARSE_OK has its own answer in req_params_end().
 */
enum req_parse {
	PARSE_OK,
	PARSE_NOMEM,		/* out of memory: 503 */
	PARSE_MALFORMED,	/* a bad name-value pair: the connection ends */
	PARSE_BAD_ESCAPE,	/* a malformed %-escape or %00 in a path: 400 */
	PARSE_ABOVE_ROOT	/* the path climbs above the root: 400 */
};

static enum req_parse req_decode_params(struct evfcgi_req *, const char **);
static enum req_parse req_cgi_path(struct evfcgi_req *);
static int	req_cgi_body(struct evfcgi_req *, int);
static int	req_stream_add(struct evfcgi_req *, const void *, size_t);
static int	req_stream_through(struct evfcgi_req *, size_t);
static void	req_engine_end(struct evfcgi_req *, int, const char *,
		    uint64_t);
static void	req_body_cb(struct evbuffer *, const struct evbuffer_cb_info *,
		    void *);
static void	req_uncharge(struct evfcgi_req *, size_t *);
static void	req_drop_body(struct evfcgi_req *, int, const char *,
		    uint64_t);

/* Empties b; lets its memory go when it is larger than keep. */
static void
buf_reset(struct req_buf *b, size_t keep)
{
	if (b->b_cap > keep) {
		free(b->b_p);
		b->b_p = NULL;
		b->b_cap = 0;
	}
	b->b_len = 0;
}

/* A request from the pool, its buffers empty, the rest zeroed. */
static struct evfcgi_req *
req_from_pool(struct req_pool *pool)
{
	struct evfcgi_req	*r, keep;

	if ((r = pool->rp_free) == NULL) {
		if ((r = calloc(1, sizeof(*r))) == NULL)
			return NULL;
		if ((r->r_body = evbuffer_new()) == NULL) {
			free(r);
			return NULL;
		}
		/* r keeps its address, and r_body, while it is pooled. */
		if (evbuffer_add_cb(r->r_body, req_body_cb, r) == NULL) {
			evbuffer_free(r->r_body);
			free(r);
			return NULL;
		}
		return r;
	}
	pool->rp_free = r->r_next_free;
	pool->rp_n--;
	keep = *r;
	memset(r, 0, sizeof(*r));
	r->r_raw = keep.r_raw;
	r->r_mem = keep.r_mem;
	r->r_pathbuf = keep.r_pathbuf;
	r->r_hdrs = keep.r_hdrs;
	r->r_typed = keep.r_typed;
	r->r_pv = keep.r_pv;
	r->r_pvcap = keep.r_pvcap;
	r->r_body = keep.r_body;
	r->r_dat.d_buf = keep.r_dat.d_buf;
	return r;
}

/* Frees r and everything it holds. */
static void
req_destroy(struct evfcgi_req *r)
{
	evbuffer_free(r->r_body);
	if (r->r_dat.d_buf != NULL)
		evbuffer_free(r->r_dat.d_buf);
	free(r->r_raw.b_p);
	free(r->r_mem.b_p);
	free(r->r_pathbuf.b_p);
	free(r->r_hdrs.b_p);
	free(r->r_typed.b_p);
	free(r->r_pv);
	free(r);
}

void
req_pool_fini(struct req_pool *pool)
{
	struct evfcgi_req	*r;

	while ((r = pool->rp_free) != NULL) {
		pool->rp_free = r->r_next_free;
		req_destroy(r);
	}
	pool->rp_n = 0;
}

struct evfcgi_req *
req_new(struct req_link *link, uint16_t id, int keep)
{
	struct evfcgi_req	*r;

	if ((r = req_from_pool(link->rl_env->re_pool)) == NULL)
		return NULL;
	r->r_link = link;
	r->r_h.h_id = id;
	r->r_h.h_keep = keep != 0;
	r->r_h.h_role = FCGI_RESPONDER;	/* the connection says otherwise */
	r->r_h.h_in = IN_PARAMS;
	r->r_h.h_out = OUT_NONE;
	r->r_h.h_app = 0;
	link->rl_nin[IN_PARAMS]++;
	r->r_fdsrc.f_fd = -1;
	r->r_clen = -1;
	r->r_h.h_status = 0;
	r->r_h.h_sent = 0;
	event_base_gettimeofday_cached(link->rl_env->re_base, &r->r_h.h_wait_from);
	/*
	 * The loop's cached clock is the kernel tick on Linux (4 ms), fine
	 * for timeouts but not for the access log's time taken.
	 */
	clock_gettime(CLOCK_MONOTONIC, &r->r_h.h_t0);
	link->rl_env->re_st->requests_total++;
	link->rl_env->re_st->requests_active++;
	return r;
}

int
req_charge(struct evfcgi_req *r, size_t *what, size_t n)
{
	struct budget	*b = r->r_link->rl_env->re_input;

	if (n == 0)
		return 0;
	if (b->b_queued >= b->b_cap || n > b->b_cap - b->b_queued)
		return -1;
	budget_add(b, (long long)n);
	*what += n;
	return 0;
}

/* Gives back to the global cap what *what holds. */
static void
req_uncharge(struct evfcgi_req *r, size_t *what)
{
	/* Most requests hold no body or DATA: no call for nothing. */
	if (*what == 0)
		return;
	budget_add(r->r_link->rl_env->re_input, -(long long)*what);
	*what = 0;
}

/* Refuses r while the body arrives (req_refuse()), letting go of it. */
static void
req_drop_body(struct evfcgi_req *r, int status, const char *why,
    uint64_t limit)
{
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	req_uncharge(r, &r->r_charged_body);
	req_refuse(r, status, why, limit);
}

void
req_refuse(struct evfcgi_req *r, int status, const char *why, uint64_t limit)
{
	struct evfcgi_stats	*st = r->r_link->rl_env->re_st;
	char			 detail[160];

	if (status == 413 || status == 431)
		st->rejected++;
	else if (status == 503)
		st->overloaded++;
	if (limit > 0 && why != NULL) {
		(void)snprintf(detail, sizeof(detail), "%s of %llu bytes", why,
		    (unsigned long long)limit);
		why = detail;
	}
	evfcgi_respond_error(r, status, why);
}

void
req_free(struct evfcgi_req *r)
{
	struct req_pool	*pool;

	req_fd_close(r);
	/* A producer's caller learns that r is gone. */
	if (r->r_link->rl_prod == r)
		r->r_link->rl_prod = NULL;
	r->r_h.h_stream = r->r_st.s_paused = 0;
	req_uncharge(r, &r->r_charged_params);
	req_uncharge(r, &r->r_charged_body);
	req_uncharge(r, &r->r_dat.d_charged);
	if (r->r_h.h_out != OUT_ENDED)
		r->r_link->rl_env->re_st->requests_active--;
	r->r_link->rl_nin[r->r_h.h_in]--;
	pool = r->r_link->rl_env->re_pool;
	if (pool->rp_n >= REQ_POOL_MAX) {
		req_destroy(r);
		return;
	}
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	if (r->r_dat.d_buf != NULL)
		evbuffer_drain(r->r_dat.d_buf, evbuffer_get_length(r->r_dat.d_buf));
	buf_reset(&r->r_raw, REQ_KEEP);
	buf_reset(&r->r_mem, REQ_KEEP);
	buf_reset(&r->r_pathbuf, REQ_KEEP);
	buf_reset(&r->r_hdrs, REQ_KEEP);
	buf_reset(&r->r_typed, REQ_KEEP);
	if (r->r_pvcap * sizeof(*r->r_pv) > REQ_KEEP) {
		free(r->r_pv);
		r->r_pv = NULL;
		r->r_pvcap = 0;
	}
	r->r_next_free = pool->rp_free;
	pool->rp_free = r;
	pool->rp_n++;
}

void
req_kill(struct evfcgi_req *r)
{
	req_end(r, END_LOST);
	req_free(r);
}

int
req_params_add(struct evfcgi_req *r, const void *p, size_t len)
{
	size_t	 have = r->r_raw.b_len;

	if (r->r_reject != 0)
		return 0;
	if (have + len > r->r_link->rl_env->re_lim->max_params)
		r->r_reject = 431;
	else if (req_charge(r, &r->r_charged_params, len) == -1)
		r->r_reject = 503;
	if (r->r_reject != 0) {
		/* Keep reading to the end of PARAMS, then answer. */
		r->r_raw.b_len = 0;
		req_uncharge(r, &r->r_charged_params);
		return 0;
	}
	if (req_buf_reserve(&r->r_raw, have + len) == -1)
		return -1;
	memcpy(r->r_raw.b_p + have, p, len);
	r->r_raw.b_len += len;
	return 0;
}

int
req_params_end(struct evfcgi_req *r, const char **why)
{
	const char		*m;

	if (req_set_in(r, IN_BODY) == -1) {
		*why = "PARAMS ended twice";
		return -1;
	}
	if (r->r_reject == 431) {
		req_refuse(r, 431, "request parameters above the limit",
		    r->r_link->rl_env->re_lim->max_params);
		return 0;
	}
	if (r->r_reject != 0) {
		req_refuse(r, r->r_reject, "input held by all requests at its "
		    "limit", r->r_link->rl_env->re_lim->max_input);
		return 0;
	}
	switch (req_decode_params(r, why)) {
	case PARSE_MALFORMED:
		return -1;
	case PARSE_NOMEM:
		req_refuse(r, 503, "out of memory", 0);
		return 0;
	default:
		break;
	}
	/* RFC 3875 6.3.3: no body for HEAD, whatever the handler writes. */
	m = evfcgi_param(r, "REQUEST_METHOD");
	r->r_method = m != NULL ? m : "";
	r->r_nobody = r->r_is_head = strcmp(r->r_method, "HEAD") == 0;
	switch (req_cgi_path(r)) {
	case PARSE_NOMEM:
		req_refuse(r, 503, "out of memory", 0);
		break;
	case PARSE_BAD_ESCAPE:
		evfcgi_respond_error(r, 400,
		    "malformed %-escape or %00 in the path");
		break;
	case PARSE_ABOVE_ROOT:
		evfcgi_respond_error(r, 400, "the path climbs above the root");
		break;
	default:
		break;
	}
	return 0;
}

void
req_route(struct evfcgi_req *r, const struct req_route *rt, int full)
{
	if (!req_collecting(r))
		return;
	if (rt->rr_allow != NULL) {
		(void)evfcgi_header_add(r, "Allow", rt->rr_allow);
		evfcgi_respond_error(r, 405, NULL);
		return;
	}
	r->r_fn = rt->rr_fn;
	r->r_fn_arg = rt->rr_arg;
	r->r_plen = rt->rr_plen;
	r->r_route_max = rt->rr_body_max;
	if (rt->rr_fn == NULL || !(rt->rr_flags & EVFCGI_ROUTE_STREAM)) {
		/* An authorizer has no body: a CONTENT_LENGTH is the client's. */
		if (r->r_h.h_role != FCGI_AUTHORIZER)
			(void)req_cgi_body(r, 0);
		return;
	}
	if (req_cgi_body(r, 1) == -1)
		return;
	r->r_st.s_max = rt->rr_body_max;
	if (r->r_st.s_max > 0 && r->r_clen >= 0 &&
	    (uint64_t)r->r_clen > r->r_st.s_max) {
		req_refuse(r, 413, "request body above the limit",
		    r->r_st.s_max);
		return;
	}
	r->r_h.h_stream = 1;
	req_dispatch(r, full);
}

int
req_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long
req_pct_decode(char *dst, const char *src, size_t len)
{
	size_t	 i, o = 0;
	int	 hi, lo;

	for (i = 0; i < len; i++) {
		if (src[i] != '%') {
			dst[o++] = src[i];
			continue;
		}
		if (len - i < 3 || (hi = req_hexval((unsigned char)src[i + 1])) ==
		    -1 || (lo = req_hexval((unsigned char)src[i + 2])) == -1 ||
		    (hi | lo) == 0)
			return -1;
		dst[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	dst[o] = '\0';
	return (long)o;
}

long
evfcgi_pct_decode(char *dst, const char *src, size_t len)
{
	return req_pct_decode(dst, src, len);
}

/*
 * Decodes the raw PARAMS into NUL-ended names and values, in one block.
 * Returns PARSE_OK, PARSE_NOMEM, or PARSE_MALFORMED with *why.
 */
static enum req_parse
req_decode_params(struct evfcgi_req *r, const char **why)
{
	struct fcgi_nv	 nv;
	const uint8_t	*p;
	char		*mem;
	size_t		 len, off, n, memlen = 0;
	ssize_t		 used;

	len = r->r_raw.b_len;
	p = (const uint8_t *)r->r_raw.b_p;
	for (off = 0, n = 0; off < len; off += (size_t)used, n++) {
		if ((used = fcgi_nv_parse(p + off, len - off, &nv)) <= 0) {
			*why = "malformed name-value pair in PARAMS";
			return PARSE_MALFORMED;
		}
		memlen += nv.name_len + nv.value_len + 2;
	}
	if (n + 1 > r->r_pvcap) {
		free(r->r_pv);
		r->r_pvcap = 0;
		if ((r->r_pv = calloc(n + 1, sizeof(*r->r_pv))) == NULL)
			return PARSE_NOMEM;
		r->r_pvcap = n + 1;
	}
	if (req_buf_reserve(&r->r_mem, memlen + 1) == -1)
		return PARSE_NOMEM;
	mem = r->r_mem.b_p;
	for (off = 0; off < len; off += (size_t)used) {
		used = fcgi_nv_parse(p + off, len - off, &nv);
		r->r_pv[r->r_npv].p_name = mem;
		r->r_pv[r->r_npv].p_nlen = nv.name_len;
		memcpy(mem, nv.name, nv.name_len);
		mem += nv.name_len;
		*mem++ = '\0';
		r->r_pv[r->r_npv++].p_value = mem;
		memcpy(mem, nv.value, nv.value_len);
		mem += nv.value_len;
		*mem++ = '\0';
	}
	r->r_raw.b_len = 0;
	return PARSE_OK;
}

/*
 * The path routes match: REQUEST_URI up to '?', percent-decoded, else
 * SCRIPT_NAME followed by PATH_INFO (decoded by the web server, RFC 3875
 * 4.1.5, 4.1.13); then cleaned as nginx cleans it (req_path_clean()).
 * Returns PARSE_OK, PARSE_NOMEM, PARSE_BAD_ESCAPE (a malformed escape or
 * %00) or PARSE_ABOVE_ROOT.
 */
static enum req_parse
req_cgi_path(struct evfcgi_req *r)
{
	const char	*uri, *q, *sn = "", *pi = "";
	size_t		 a, b = 0;

	if ((uri = evfcgi_param(r, "REQUEST_URI")) != NULL) {
		q = strchr(uri, '?');
		sn = uri;
		a = q != NULL ? (size_t)(q - uri) : strlen(uri);
		if (memchr(uri, '%', a) != NULL) {
			if (req_buf_reserve(&r->r_pathbuf, a + 1) == -1)
				return PARSE_NOMEM;
			if (req_pct_decode(r->r_pathbuf.b_p, uri, a) == -1)
				return PARSE_BAD_ESCAPE;
			r->r_path = r->r_pathbuf.b_p;
			return req_path_clean(r->r_pathbuf.b_p) == -1 ?
			    PARSE_ABOVE_ROOT : PARSE_OK;
		}
	} else {
		if ((sn = evfcgi_param(r, "SCRIPT_NAME")) == NULL)
			sn = "";
		if ((pi = evfcgi_param(r, "PATH_INFO")) == NULL)
			pi = "";
		a = strlen(sn);
		b = strlen(pi);
	}
	if (req_buf_reserve(&r->r_pathbuf, a + b + 1) == -1)
		return PARSE_NOMEM;
	memcpy(r->r_pathbuf.b_p, sn, a);
	memcpy(r->r_pathbuf.b_p + a, pi, b);
	r->r_pathbuf.b_p[a + b] = '\0';
	r->r_path = r->r_pathbuf.b_p;
	return req_path_clean(r->r_pathbuf.b_p) == -1 ? PARSE_ABOVE_ROOT :
	    PARSE_OK;
}

int
req_path_clean(char *path)
{
	char	*o = path, *s = path;

	if (*path != '/')
		return 0;
	/* s is at a '/' each time round. */
	while (*s != '\0') {
		while (s[1] == '/')
			s++;
		if (s[1] == '.' && (s[2] == '/' || s[2] == '\0')) {
			s += 2;
		} else if (s[1] == '.' && s[2] == '.' &&
		    (s[3] == '/' || s[3] == '\0')) {
			if (o == path)
				return -1;
			while (*--o != '/')
				;
			s += 3;
		} else {
			do
				*o++ = *s++;
			while (*s != '\0' && *s != '/');
			continue;
		}
		if (*s == '\0')
			*o++ = '/';	/* "/a/." and "/a/b/.." end in '/' */
	}
	*o = '\0';
	return 0;
}

uint64_t
req_body_cap(struct evfcgi_req *r)
{
	return r->r_route_max > 0 ? r->r_route_max :
	    r->r_link->rl_env->re_lim->max_body;
}

/*
 * Checks CONTENT_LENGTH: not a number is answered 400, above its cap 413
 * (req_body_cap()).
 * Absent, empty or negative (Caddy sends -1 for a chunked upload) means
 * not known: the body is read to its empty STDIN record, within that cap.
 * A streamed body (stream) is only checked for its syntax: it is neither
 * capped by max_body nor charged ahead.  Returns 0 when the request goes
 * on, -1 when it was answered.
 */
static int
req_cgi_body(struct evfcgi_req *r, int stream)
{
	const char		*cl;
	char			*end;
	unsigned long long	 clen;

	if ((cl = evfcgi_param(r, "CONTENT_LENGTH")) == NULL || *cl == '\0')
		return 0;
	if (*cl == '-' && cl[1] >= '0' && cl[1] <= '9' &&
	    strspn(cl + 1, "0123456789") == strlen(cl + 1))
		return 0;
	errno = 0;
	clen = strtoull(cl, &end, 10);
	if (errno != 0 || *end != '\0' || *cl < '0' || *cl > '9') {
		evfcgi_respond_error(r, 400, "bad CONTENT_LENGTH");
		return -1;
	}
	if (clen > (unsigned long long)INT64_MAX) {
		req_refuse(r, 413, "request body above the limit",
		    req_body_cap(r));
		return -1;
	}
	r->r_clen = (long long)clen;
	if (stream)
		return 0;
	if (clen > req_body_cap(r)) {
		req_refuse(r, 413, "request body above the limit",
		    req_body_cap(r));
		return -1;
	}
	/* The whole body is charged now, so it never fails half-way. */
	if (req_charge(r, &r->r_charged_body, (size_t)clen) == -1) {
		req_refuse(r, 503, "input held by all requests at its limit",
		    r->r_link->rl_env->re_lim->max_input);
		return -1;
	}
	return 0;
}

int
req_body_add(struct evfcgi_req *r, const void *p, size_t len)
{
	size_t	 have = evbuffer_get_length(r->r_body);

	if (r->r_h.h_stream)
		return req_stream_add(r, p, len);
	if (have + len > req_body_cap(r)) {
		req_drop_body(r, 413, "request body above the limit",
		    req_body_cap(r));
		return 0;
	}
	/* Beyond what was charged ahead (unknown length), charge as it comes. */
	if (have + len > r->r_charged_body && req_charge(r, &r->r_charged_body,
	    have + len - r->r_charged_body) == -1) {
		req_drop_body(r, 503, "input held by all requests at its limit",
		    r->r_link->rl_env->re_lim->max_input);
		return 0;
	}
	return evbuffer_add(r->r_body, p, len);
}

/*
 * At the input cap, a streamed record may still pass to a handler that
 * keeps up: one whose body callback is set and whose body holds nothing
 * (it took all it was handed).  The record is in the connection's input,
 * counted twice there, and leaves it when this call returns: handed on,
 * the input held falls.  The handler must take it in the callback, or the
 * request ends with 503 there (req_stream_add()), so what bodies hold
 * past the cap lasts one call.  Returns 0 (charged), or -1.
 */
static int
req_stream_through(struct evfcgi_req *r, size_t len)
{
	if (r->r_st.s_cb == NULL || evbuffer_get_length(r->r_body) > 0)
		return -1;
	budget_add(r->r_link->rl_env->re_input, (long long)len);
	r->r_charged_body += len;
	return 0;
}

/*
 * A streamed body's record: counted against the handler's cap and charged
 * to the global input cap as it is held, then handed to the body callback.
 */
static int
req_stream_add(struct evfcgi_req *r, const void *p, size_t len)
{
	int	 through;

	r->r_body_seen += len;
	if (r->r_st.s_max > 0 && r->r_body_seen > r->r_st.s_max) {
		req_engine_end(r, 413, "request body above the limit",
		    r->r_st.s_max);
		return 0;
	}
	if ((through = req_charge(r, &r->r_charged_body, len) == -1) &&
	    req_stream_through(r, len) == -1) {
		req_engine_end(r, 503, "input held by all requests at its limit",
		    r->r_link->rl_env->re_lim->max_input);
		return 0;
	}
	if (evbuffer_add(r->r_body, p, len) == -1)
		return -1;
	if (r->r_st.s_cb != NULL)
		r->r_st.s_cb(r, r->r_body, 0, r->r_st.s_arg);
	/* Passed at the cap, it had to be taken in the call: else 503. */
	if (through && req_held(r) && evbuffer_get_length(r->r_body) > 0)
		req_engine_end(r, 503, "input held by all requests at its limit",
		    r->r_link->rl_env->re_lim->max_input);
	return 0;
}

/*
 * The engine ends a request the application holds: its abort callback runs
 * (the application lets go of it), then the error answer; the extra header
 * lines the handler added are not sent with it.
 */
static void
req_engine_end(struct evfcgi_req *r, int status, const char *why,
    uint64_t limit)
{
	req_release_app(r);
	r->r_hdrs.b_len = 0;
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	req_refuse(r, status, why, limit);
}

/*
 * Bytes left a streamed body: what they held of the input cap is given
 * back, and a connection held for them reads again below the low mark.
 */
static void
req_body_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct evfcgi_req	*r = arg;
	size_t			 d = info->n_deleted;

	if (!r->r_h.h_stream || d == 0)
		return;
	if (d > r->r_charged_body)
		d = r->r_charged_body;
	budget_add(r->r_link->rl_env->re_input, -(long long)d);
	r->r_charged_body -= d;
	if (r->r_st.s_paused &&
	    evbuffer_get_length(buf) <= r->r_link->rl_env->re_lim->low_water) {
		r->r_st.s_paused = 0;
		r->r_link->rl_env->re_ops->ro_resume(r, r->r_link->rl_owner);
	}
}

int
req_body_full(struct evfcgi_req *r)
{
	if (!req_body_open(r) || !req_held(r) ||
	    evbuffer_get_length(r->r_body) <=
	    r->r_link->rl_env->re_lim->low_water)
		return 0;
	r->r_st.s_paused = 1;
	return 1;
}

void
req_body_end(struct evfcgi_req *r)
{
	(void)req_set_in(r, IN_DONE);
	if (r->r_st.s_cb == NULL)
		return;
	r->r_st.s_told = 1;
	r->r_st.s_cb(r, r->r_body, 1, r->r_st.s_arg);
}

void
req_body_kick(struct evfcgi_req *r)
{
	if (!r->r_h.h_kick)
		return;
	r->r_h.h_kick = 0;
	if (!req_held(r) || r->r_st.s_cb == NULL)
		return;
	if (req_body_open(r))
		r->r_st.s_cb(r, r->r_body, 0, r->r_st.s_arg);
	else if (!r->r_st.s_told) {
		r->r_st.s_told = 1;
		r->r_st.s_cb(r, r->r_body, 1, r->r_st.s_arg);
	}
}

void
req_dispatch(struct evfcgi_req *r, int full)
{
	if (!req_collecting(r)) {
		log_err("%s: request %u: dispatched twice, or answered",
		    r->r_link->rl_peer, r->r_h.h_id);
		return;
	}
	/* A buffered body is whole now; a streamed one keeps coming. */
	if (!r->r_h.h_stream && req_set_in(r, IN_DONE) == -1)
		return;
	r->r_h.h_app = 1;
	if (log_enabled(LOG_DEBUG))
		log_debug("%s: request %u: to its handler", r->r_link->rl_peer,
		    r->r_h.h_id);
	if (full) {
		req_refuse(r, 503, "output queues are full", 0);
	} else if (r->r_fn == NULL)
		evfcgi_respond_error(r, 404, NULL);
	else
		r->r_fn(r, r->r_fn_arg);
}

int
req_produce(struct evfcgi_req *r, size_t room)
{
	struct req_link	*l = r->r_link;
	uint64_t	 sent = r->r_h.h_sent;
	int		 rc;

	r->r_h.h_prod_room = room;
	r->r_prod.p_used = 0;
	r->r_h.h_prod_idle = 0;
	l->rl_prod = r;
	rc = r->r_prod.p_fn(r, room, r->r_prod.p_arg);
	if (l->rl_prod != r)
		return 1;	/* r ended in the call (req_free() said so) */
	if (rc == 1 || !req_held(r) || r->r_prod.p_fn == NULL) {
		l->rl_prod = NULL;
		if (rc == 1)
			(void)evfcgi_finish(r);
		return rc == 1;
	}
	if (r->r_nobody) {
		/*
		 * HEAD (or 204, 304): its writes send nothing, so one call is
		 * all it gets; the application lets go of its state in the
		 * abort callback, as when the engine ends a request.
		 */
		req_release_app(r);
		l->rl_prod = NULL;
		(void)evfcgi_finish(r);
		return 1;
	}
	l->rl_prod = NULL;
	r->r_h.h_prod_idle = r->r_h.h_sent == sent;
	return 0;
}

const char *
evfcgi_param(struct evfcgi_req *r, const char *name)
{
	const struct param	*p;
	size_t			 len = strlen(name);

	/* None decoded (a request refused before, 431): r_pv may be NULL. */
	if (r->r_npv == 0)
		return NULL;
	/*
	 * The last of a name: a later fastcgi_param line means to override.
	 * Every pair is looked at, so lengths are compared first.
	 */
	for (p = r->r_pv + r->r_npv; p > r->r_pv; ) {
		p--;
		if (p->p_nlen == len && memcmp(p->p_name, name, len) == 0)
			return p->p_value;
	}
	return NULL;
}

int
evfcgi_param_next(struct evfcgi_req *r, size_t *i, const char **name,
    const char **value)
{
	/*
	 * A name with a NUL byte in it is no name a C string can say:
	 * evfcgi_param() never finds it (lengths differ), so nothing that
	 * iterates sees it either, and every reader reads the same pairs.
	 */
	while (*i < r->r_npv &&
	    strlen(r->r_pv[*i].p_name) != r->r_pv[*i].p_nlen)
		(*i)++;
	if (*i >= r->r_npv)
		return 0;
	*name = r->r_pv[*i].p_name;
	*value = r->r_pv[*i].p_value;
	(*i)++;
	return 1;
}

const char *
evfcgi_method(struct evfcgi_req *r)
{
	return r->r_method != NULL ? r->r_method : "";
}

int
evfcgi_is_head(struct evfcgi_req *r)
{
	return r->r_is_head;
}

const char *
evfcgi_path(struct evfcgi_req *r)
{
	return r->r_path != NULL ? r->r_path : "";
}

const char *
evfcgi_raw_uri(struct evfcgi_req *r)
{
	const char	*u = evfcgi_param(r, "REQUEST_URI");

	return u != NULL ? u : "";
}

const char *
evfcgi_remote_addr(struct evfcgi_req *r, int *port)
{
	const char	*p;
	char		*end;
	long		 n;

	if (port != NULL) {
		*port = 0;
		if ((p = evfcgi_param(r, "REMOTE_PORT")) != NULL &&
		    *p >= '0' && *p <= '9') {
			n = strtol(p, &end, 10);
			if (*end == '\0' && n > 0 && n <= 65535)
				*port = (int)n;
		}
	}
	return evfcgi_param(r, "REMOTE_ADDR");
}

const char *
evfcgi_query(struct evfcgi_req *r)
{
	const char	*q = evfcgi_param(r, "QUERY_STRING");

	return q != NULL ? q : "";
}

struct evbuffer *
evfcgi_body(struct evfcgi_req *r)
{
	return r->r_body;
}

const void *
evfcgi_body_bytes(struct evfcgi_req *r, size_t *len)
{
	const void	*p;

	if ((*len = evbuffer_get_length(r->r_body)) == 0)
		return "";
	if ((p = evbuffer_pullup(r->r_body, -1)) == NULL)
		*len = 0;
	return p;
}

int
evfcgi_role(struct evfcgi_req *r)
{
	return r->r_h.h_role;
}

struct evbuffer *
evfcgi_data(struct evfcgi_req *r)
{
	return r->r_h.h_role == FCGI_FILTER ? r->r_dat.d_buf : NULL;
}

int
evfcgi_on_body(struct evfcgi_req *r, evfcgi_body_cb fn, void *arg)
{
	if (!r->r_h.h_stream || !req_held(r) || r->r_st.s_told ||
	    r->r_app_locked)
		return -1;
	r->r_st.s_cb = fn;
	r->r_st.s_arg = arg;
	/* Set late: what waits is handed over on the next turn. */
	if (fn != NULL && (evbuffer_get_length(r->r_body) > 0 ||
	    !req_body_open(r))) {
		r->r_h.h_kick = 1;
		r->r_link->rl_env->re_ops->ro_resume(r, r->r_link->rl_owner);
	}
	return 0;
}

int
evfcgi_body_limit(struct evfcgi_req *r, uint64_t max)
{
	if (!r->r_h.h_stream || !req_held(r) || r->r_app_locked)
		return -1;
	if (max > 0 && (r->r_body_seen > max ||
	    (r->r_clen >= 0 && (uint64_t)r->r_clen > max)))
		return -1;
	r->r_st.s_max = max;
	return 0;
}

struct evfcgi_server *
evfcgi_req_server(struct evfcgi_req *r)
{
	return r->r_link->rl_env->re_srv;
}

struct event_base *
evfcgi_req_base(struct evfcgi_req *r)
{
	return r->r_link->rl_env->re_base;
}
