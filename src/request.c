/*
 * request.c: the request lifecycle and the public request API.  A request
 * writes its answer as STDOUT records into its connection's output buffer
 * through fcgi_out; it tells the connection when it is done, when it wants
 * its producer run, and when output failed, through the req_link's ops.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "log.h"
#include "request.h"

static int	req_decode_params(struct evfcgi_req *, const char **);
static int	req_cgi_path(struct evfcgi_req *);
static int	req_cgi_body(struct evfcgi_req *, int);
static int	req_stream_add(struct evfcgi_req *, const void *, size_t);
static void	req_engine_end(struct evfcgi_req *, int, const char *);
static void	req_body_cb(struct evbuffer *, const struct evbuffer_cb_info *,
		    void *);
static int	req_fd_produce(struct evfcgi_req *, size_t, void *);
static void	req_fd_close(struct evfcgi_req *);
static int	hdr_token(const char *);
static int	hdr_value_bad(const char *);
static int	req_can_write(struct evfcgi_req *);
static int	req_out(struct evfcgi_req *, int);
static int	req_charge(struct evfcgi_req *, size_t *, size_t);
static void	req_uncharge(struct evfcgi_req *, size_t *);
static int	req_body_writable(struct evfcgi_req *);
static void	req_drop_body(struct evfcgi_req *, int, const char *);

static const char *const req_state_names[] = {
	"params", "stdin", "handler", "drain", "done"
};

/* allowed[from] has bit (1 << to) for each step the lifecycle has. */
static const unsigned req_steps[] = {
	[REQ_PARAMS] = 1u << REQ_STDIN,
	[REQ_STDIN] = 1u << REQ_HANDLER | 1u << REQ_DRAIN,
	[REQ_HANDLER] = 1u << REQ_DONE | 1u << REQ_DRAIN,
	[REQ_DRAIN] = 0,
	[REQ_DONE] = 0
};

/* Room for n bytes in b.  Returns 0, or -1 out of memory. */
static int
buf_reserve(struct req_buf *b, size_t n)
{
	size_t	 cap = b->b_cap > 0 ? b->b_cap : 256;
	char	*p;

	if (n <= b->b_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	if ((p = realloc(b->b_p, cap)) == NULL)
		return -1;
	b->b_p = p;
	b->b_cap = cap;
	return 0;
}

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
	r->r_pv = keep.r_pv;
	r->r_pvcap = keep.r_pvcap;
	r->r_body = keep.r_body;
	return r;
}

/* Frees r and everything it holds. */
static void
req_destroy(struct evfcgi_req *r)
{
	evbuffer_free(r->r_body);
	free(r->r_raw.b_p);
	free(r->r_mem.b_p);
	free(r->r_pathbuf.b_p);
	free(r->r_hdrs.b_p);
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
	r->r_id = id;
	r->r_keep = keep != 0;
	r->r_state = REQ_PARAMS;
	r->r_head = HEAD_NONE;
	r->r_fd = -1;
	r->r_clen = -1;
	r->r_status = 0;
	r->r_sent = 0;
	event_base_gettimeofday_cached(link->rl_env->re_base, &r->r_begun);
	link->rl_env->re_st->requests_total++;
	link->rl_env->re_st->requests_active++;
	return r;
}

/*
 * Charges n more bytes of input held to the global cap, on *what.  Returns
 * 0, or -1 (nothing charged) when they do not fit.
 */
static int
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
	budget_add(r->r_link->rl_env->re_input, -(long long)*what);
	*what = 0;
}

/* Answers status while the body arrives, and lets go of what it held. */
static void
req_drop_body(struct evfcgi_req *r, int status, const char *why)
{
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	req_uncharge(r, &r->r_charged_body);
	evfcgi_respond_error(r, status, why);
}

void
req_free(struct evfcgi_req *r)
{
	struct req_pool	*pool;

	req_fd_close(r);
	r->r_stream = r->r_paused = 0;
	req_uncharge(r, &r->r_charged_params);
	req_uncharge(r, &r->r_charged_body);
	if (r->r_state != REQ_DRAIN && r->r_state != REQ_DONE)
		r->r_link->rl_env->re_st->requests_active--;
	pool = r->r_link->rl_env->re_pool;
	if (pool->rp_n >= REQ_POOL_MAX) {
		req_destroy(r);
		return;
	}
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	buf_reset(&r->r_raw, REQ_KEEP);
	buf_reset(&r->r_mem, REQ_KEEP);
	buf_reset(&r->r_pathbuf, REQ_KEEP);
	buf_reset(&r->r_hdrs, REQ_KEEP);
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
	if (r->r_state == REQ_HANDLER && r->r_abort != NULL)
		r->r_abort(r, r->r_abort_arg);
	req_free(r);
}

int
req_set_state(struct evfcgi_req *r, enum req_state s)
{
	if ((req_steps[r->r_state] & (1u << s)) == 0) {
		log_err("%s: request %u: no step from %s to %s",
		    r->r_link->rl_peer, r->r_id, req_state_names[r->r_state],
		    req_state_names[s]);
		return -1;
	}
	if (log_enabled(LOG_DEBUG))
		log_debug("%s: request %u: %s -> %s", r->r_link->rl_peer,
		    r->r_id, req_state_names[r->r_state], req_state_names[s]);
	if (s == REQ_DRAIN || s == REQ_DONE)
		r->r_link->rl_env->re_st->requests_active--;
	r->r_state = s;
	return 0;
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
	if (buf_reserve(&r->r_raw, have + len) == -1)
		return -1;
	memcpy(r->r_raw.b_p + have, p, len);
	r->r_raw.b_len += len;
	return 0;
}

int
req_params_end(struct evfcgi_req *r, const char **why)
{
	struct evfcgi_stats	*st = r->r_link->rl_env->re_st;
	const char		*m;

	if (req_set_state(r, REQ_STDIN) == -1) {
		*why = "PARAMS ended twice";
		return -1;
	}
	if (r->r_reject == 431) {
		st->rejected++;
		evfcgi_respond_error(r, 431,
		    "request parameters above the limit");
		return 0;
	}
	if (r->r_reject != 0) {
		st->overloaded++;
		evfcgi_respond_error(r, r->r_reject,
		    "input held by all requests at its limit");
		return 0;
	}
	switch (req_decode_params(r, why)) {
	case -1:
		return -1;
	case 1:
		st->overloaded++;
		evfcgi_respond_error(r, 503, "out of memory");
		return 0;
	}
	/* RFC 3875 6.3.3: no body for HEAD, whatever the handler writes. */
	m = evfcgi_param(r, "REQUEST_METHOD");
	r->r_nobody = m != NULL && strcmp(m, "HEAD") == 0;
	switch (req_cgi_path(r)) {
	case -1:
		st->overloaded++;
		evfcgi_respond_error(r, 503, "out of memory");
		break;
	case -2:
		evfcgi_respond_error(r, 400,
		    "malformed %-escape or %00 in the path");
		break;
	}
	return 0;
}

void
req_route(struct evfcgi_req *r, const struct req_route *rt, int full)
{
	if (r->r_state != REQ_STDIN)
		return;
	if (rt->rr_allow != NULL) {
		(void)evfcgi_header_add(r, "Allow", rt->rr_allow);
		evfcgi_respond_error(r, 405, NULL);
		return;
	}
	r->r_fn = rt->rr_fn;
	r->r_fn_arg = rt->rr_arg;
	if (rt->rr_fn == NULL || !(rt->rr_flags & EVFCGI_ROUTE_STREAM)) {
		(void)req_cgi_body(r, 0);
		return;
	}
	if (req_cgi_body(r, 1) == -1)
		return;
	r->r_stream = 1;
	r->r_body_open = 1;
	req_dispatch(r, full);
}

/* The value of hex digit c, or -1. */
static int
hexval(int c)
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
		if (len - i < 3 || (hi = hexval((unsigned char)src[i + 1])) ==
		    -1 || (lo = hexval((unsigned char)src[i + 2])) == -1 ||
		    (hi | lo) == 0)
			return -1;
		dst[o++] = (char)(hi << 4 | lo);
		i += 2;
	}
	dst[o] = '\0';
	return (long)o;
}

/*
 * Decodes the raw PARAMS into NUL-ended names and values, in one block.
 * Returns 0; 1 when out of memory; -1 with *why when a pair is malformed.
 */
static int
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
			return -1;
		}
		memlen += nv.name_len + nv.value_len + 2;
	}
	if (n + 1 > r->r_pvcap) {
		free(r->r_pv);
		r->r_pvcap = 0;
		if ((r->r_pv = calloc(n + 1, sizeof(*r->r_pv))) == NULL)
			return 1;
		r->r_pvcap = n + 1;
	}
	if (buf_reserve(&r->r_mem, memlen + 1) == -1)
		return 1;
	mem = r->r_mem.b_p;
	for (off = 0; off < len; off += (size_t)used) {
		used = fcgi_nv_parse(p + off, len - off, &nv);
		r->r_pv[r->r_npv].p_name = mem;
		memcpy(mem, nv.name, nv.name_len);
		mem += nv.name_len;
		*mem++ = '\0';
		r->r_pv[r->r_npv++].p_value = mem;
		memcpy(mem, nv.value, nv.value_len);
		mem += nv.value_len;
		*mem++ = '\0';
	}
	r->r_raw.b_len = 0;
	return 0;
}

/*
 * The path routes match: REQUEST_URI up to '?', percent-decoded, else
 * SCRIPT_NAME followed by PATH_INFO (decoded by the web server, RFC 3875
 * 4.1.5, 4.1.13).  Returns 0, -1 when out of memory, or -2 for a
 * malformed escape or %00.
 */
static int
req_cgi_path(struct evfcgi_req *r)
{
	const char	*uri, *q, *sn = "", *pi = "";
	size_t		 a, b = 0;

	if ((uri = evfcgi_param(r, "REQUEST_URI")) != NULL) {
		q = strchr(uri, '?');
		sn = uri;
		a = q != NULL ? (size_t)(q - uri) : strlen(uri);
		if (memchr(uri, '%', a) != NULL) {
			if (buf_reserve(&r->r_pathbuf, a + 1) == -1)
				return -1;
			if (req_pct_decode(r->r_pathbuf.b_p, uri, a) == -1)
				return -2;
			r->r_path = r->r_pathbuf.b_p;
			return 0;
		}
	} else {
		if ((sn = evfcgi_param(r, "SCRIPT_NAME")) == NULL)
			sn = "";
		if ((pi = evfcgi_param(r, "PATH_INFO")) == NULL)
			pi = "";
		a = strlen(sn);
		b = strlen(pi);
	}
	if (buf_reserve(&r->r_pathbuf, a + b + 1) == -1)
		return -1;
	memcpy(r->r_pathbuf.b_p, sn, a);
	memcpy(r->r_pathbuf.b_p + a, pi, b);
	r->r_pathbuf.b_p[a + b] = '\0';
	r->r_path = r->r_pathbuf.b_p;
	return 0;
}

/*
 * Checks CONTENT_LENGTH: not a number is answered 400, above max_body 413.
 * Absent, empty or negative (Caddy sends -1 for a chunked upload) means
 * not known: the body is read to its empty STDIN record, within max_body.
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
		r->r_link->rl_env->re_st->rejected++;
		evfcgi_respond_error(r, 413, "request body above the limit");
		return -1;
	}
	r->r_clen = (long long)clen;
	if (stream)
		return 0;
	if (clen > r->r_link->rl_env->re_lim->max_body) {
		r->r_link->rl_env->re_st->rejected++;
		evfcgi_respond_error(r, 413, "request body above the limit");
		return -1;
	}
	/* The whole body is charged now, so it never fails half-way. */
	if (req_charge(r, &r->r_charged_body, (size_t)clen) == -1) {
		r->r_link->rl_env->re_st->overloaded++;
		evfcgi_respond_error(r, 503,
		    "input held by all requests at its limit");
		return -1;
	}
	return 0;
}

int
req_body_add(struct evfcgi_req *r, const void *p, size_t len)
{
	size_t	 have = evbuffer_get_length(r->r_body);

	if (r->r_stream)
		return req_stream_add(r, p, len);
	if (have + len > r->r_link->rl_env->re_lim->max_body) {
		r->r_link->rl_env->re_st->rejected++;
		req_drop_body(r, 413, "request body above the limit");
		return 0;
	}
	/* Beyond what was charged ahead (unknown length), charge as it comes. */
	if (have + len > r->r_charged_body && req_charge(r, &r->r_charged_body,
	    have + len - r->r_charged_body) == -1) {
		r->r_link->rl_env->re_st->overloaded++;
		req_drop_body(r, 503, "input held by all requests at its limit");
		return 0;
	}
	return evbuffer_add(r->r_body, p, len);
}

/*
 * A streamed body's record: counted against the handler's cap and charged
 * to the global input cap as it is held, then handed to the body callback.
 */
static int
req_stream_add(struct evfcgi_req *r, const void *p, size_t len)
{
	struct evfcgi_stats	*st = r->r_link->rl_env->re_st;

	r->r_body_seen += len;
	if (r->r_body_max > 0 && r->r_body_seen > r->r_body_max) {
		st->rejected++;
		req_engine_end(r, 413, "request body above the limit");
		return 0;
	}
	if (req_charge(r, &r->r_charged_body, len) == -1) {
		st->overloaded++;
		req_engine_end(r, 503, "input held by all requests at its limit");
		return 0;
	}
	if (evbuffer_add(r->r_body, p, len) == -1)
		return -1;
	if (r->r_body_cb != NULL)
		r->r_body_cb(r, r->r_body, 0, r->r_body_arg);
	return 0;
}

/*
 * The engine ends a request the application holds: its abort callback runs
 * (the application lets go of it), then the error answer; the extra header
 * lines the handler added are not sent with it.
 */
static void
req_engine_end(struct evfcgi_req *r, int status, const char *why)
{
	evfcgi_abort_cb	 fn = r->r_abort;

	r->r_abort = NULL;
	r->r_body_cb = NULL;
	if (fn != NULL)
		fn(r, r->r_abort_arg);
	r->r_hdrs.b_len = 0;
	evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	evfcgi_respond_error(r, status, why);
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

	if (!r->r_stream || d == 0)
		return;
	if (d > r->r_charged_body)
		d = r->r_charged_body;
	budget_add(r->r_link->rl_env->re_input, -(long long)d);
	r->r_charged_body -= d;
	if (r->r_paused &&
	    evbuffer_get_length(buf) <= r->r_link->rl_env->re_lim->low_water) {
		r->r_paused = 0;
		r->r_link->rl_env->re_ops->ro_resume(r, r->r_link->rl_owner);
	}
}

int
req_body_full(struct evfcgi_req *r)
{
	if (!r->r_stream || r->r_state != REQ_HANDLER || !r->r_body_open ||
	    evbuffer_get_length(r->r_body) <=
	    r->r_link->rl_env->re_lim->low_water)
		return 0;
	r->r_paused = 1;
	return 1;
}

void
req_body_end(struct evfcgi_req *r)
{
	r->r_body_open = 0;
	if (r->r_body_cb == NULL)
		return;
	r->r_body_told = 1;
	r->r_body_cb(r, r->r_body, 1, r->r_body_arg);
}

void
req_body_kick(struct evfcgi_req *r)
{
	if (!r->r_kick)
		return;
	r->r_kick = 0;
	if (r->r_state != REQ_HANDLER || r->r_body_cb == NULL)
		return;
	if (r->r_body_open)
		r->r_body_cb(r, r->r_body, 0, r->r_body_arg);
	else if (!r->r_body_told) {
		r->r_body_told = 1;
		r->r_body_cb(r, r->r_body, 1, r->r_body_arg);
	}
}

void
req_dispatch(struct evfcgi_req *r, int full)
{
	if (req_set_state(r, REQ_HANDLER) == -1)
		return;
	if (full) {
		r->r_link->rl_env->re_st->overloaded++;
		evfcgi_respond_error(r, 503, "output queues are full");
	} else if (r->r_fn == NULL)
		evfcgi_respond_error(r, 404, NULL);
	else
		r->r_fn(r, r->r_fn_arg);
}

int
req_produce(struct evfcgi_req *r, size_t room)
{
	if (r->r_producer(r, room, r->r_producer_arg) != 1)
		return 0;
	evfcgi_finish(r);
	return 1;
}

const char *
req_status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 201:
		return "Created";
	case 204:
		return "No Content";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 303:
		return "See Other";
	case 304:
		return "Not Modified";
	case 307:
		return "Temporary Redirect";
	case 308:
		return "Permanent Redirect";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 413:
		return "Content Too Large";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "Unknown";
	}
}

/* Whether r may still queue output: answering, and its stream intact. */
static int
req_can_write(struct evfcgi_req *r)
{
	return (r->r_state == REQ_HANDLER || r->r_state == REQ_STDIN) &&
	    !r->r_link->rl_broken;
}

/*
 * Checks what an fcgi_out call returned: on -1 the connection's stream may
 * hold a cut record, so the connection is told to close.  Returns rc.
 */
static int
req_out(struct evfcgi_req *r, int rc)
{
	struct req_link	*l = r->r_link;

	if (rc == -1 && !l->rl_broken) {
		l->rl_broken = 1;
		l->rl_env->re_ops->ro_failed(l->rl_owner,
		    "out of memory queueing output");
	}
	return rc;
}

const char *
evfcgi_param(struct evfcgi_req *r, const char *name)
{
	size_t	 i;

	for (i = 0; i < r->r_npv; i++)
		if (strcmp(r->r_pv[i].p_name, name) == 0)
			return r->r_pv[i].p_value;
	return NULL;
}

int
evfcgi_param_next(struct evfcgi_req *r, size_t *i, const char **name,
    const char **value)
{
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
	const char	*m = evfcgi_param(r, "REQUEST_METHOD");

	return m != NULL ? m : "";
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

int
evfcgi_on_body(struct evfcgi_req *r, evfcgi_body_cb fn, void *arg)
{
	if (!r->r_stream || r->r_state != REQ_HANDLER || r->r_body_told)
		return -1;
	r->r_body_cb = fn;
	r->r_body_arg = arg;
	/* Set late: what waits is handed over on the next turn. */
	if (fn != NULL && (evbuffer_get_length(r->r_body) > 0 ||
	    !r->r_body_open)) {
		r->r_kick = 1;
		r->r_link->rl_env->re_ops->ro_resume(r, r->r_link->rl_owner);
	}
	return 0;
}

int
evfcgi_body_limit(struct evfcgi_req *r, uint64_t max)
{
	if (!r->r_stream || r->r_state != REQ_HANDLER)
		return -1;
	if (max > 0 && (r->r_body_seen > max ||
	    (r->r_clen >= 0 && (uint64_t)r->r_clen > max)))
		return -1;
	r->r_body_max = max;
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

/* Appends n bytes of s to b at *off; -1 (nothing appended) past len. */
static int
hdr_put(char *b, size_t len, size_t *off, const char *s, size_t n)
{
	if (n > len - *off)
		return -1;
	memcpy(b + *off, s, n);
	*off += n;
	return 0;
}

/* Appends v in decimal, as hdr_put. */
static int
hdr_num(char *b, size_t len, size_t *off, long long v)
{
	char			 d[24];
	size_t			 i = sizeof(d);
	unsigned long long	 u = v < 0 ? 0 - (unsigned long long)v :
	    (unsigned long long)v;

	do
		d[--i] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	if (v < 0)
		d[--i] = '-';
	return hdr_put(b, len, off, d + i, sizeof(d) - i);
}

#define HDR_PUT(s)	hdr_put(buf, sizeof(buf), &n, s, strlen(s))
#define HDR_MAX		65536	/* bytes of evfcgi_header_add() lines */

/* Whether s is an HTTP token (RFC 9110 5.6.2), not empty. */
static int
hdr_token(const char *s)
{
	static const char	 tchar[] = "!#$%&'*+-.^_`|~";

	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr(tchar, *s) != NULL))
			return 0;
	return 1;
}

/*
 * Whether s cannot be a field value (RFC 9110 5.5): a control character
 * other than tab (CR and LF would split the header block).
 */
static int
hdr_value_bad(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 1;
	return 0;
}

int
evfcgi_header_add(struct evfcgi_req *r, const char *name, const char *value)
{
	const char	*why = NULL;
	size_t		 nl, vl, have = r->r_hdrs.b_len;

	if (!req_can_write(r) || r->r_head != HEAD_NONE)
		why = "after the header block";
	else if (!hdr_token(name))
		why = "a name that is not a token";
	else if (strcasecmp(name, "Status") == 0 ||
	    strcasecmp(name, "Content-Length") == 0)
		why = "a field the engine writes";
	else if (hdr_value_bad(value))
		why = "a control character in the value";
	else if ((nl = strlen(name)) + (vl = strlen(value)) + 4 >
	    HDR_MAX - have)
		why = "past 64 KiB of header lines";
	else if (buf_reserve(&r->r_hdrs, have + nl + vl + 4) == -1)
		why = "out of memory";
	if (why != NULL) {
		log_warn("%s: request %u: header line refused: %s",
		    r->r_link->rl_peer, r->r_id, why);
		return -1;
	}
	memcpy(r->r_hdrs.b_p + have, name, nl);
	memcpy(r->r_hdrs.b_p + have + nl, ": ", 2);
	memcpy(r->r_hdrs.b_p + have + nl + 2, value, vl);
	memcpy(r->r_hdrs.b_p + have + nl + 2 + vl, "\r\n", 2);
	r->r_hdrs.b_len = have + nl + vl + 4;
	return 0;
}

int
evfcgi_header(struct evfcgi_req *r, int status, const char *ctype,
    long long content_length)
{
	char		 buf[512];
	struct req_buf	*h = &r->r_hdrs;
	size_t		 n = 0;

	if (!req_can_write(r))
		return -1;
	if (r->r_head != HEAD_NONE) {
		log_warn("%s: request %u: a second header (status %d) refused",
		    r->r_link->rl_peer, r->r_id, status);
		return -1;
	}
	if (ctype != NULL && hdr_value_bad(ctype)) {
		log_warn("%s: request %u: Content-Type with a control "
		    "character refused", r->r_link->rl_peer, r->r_id);
		return -1;
	}
	/* By hand: snprintf was a tenth of the daemon's own time a /hello. */
	if (HDR_PUT("Status: ") == -1 ||
	    hdr_num(buf, sizeof(buf), &n, status) == -1 ||
	    HDR_PUT(" ") == -1 || HDR_PUT(req_status_text(status)) == -1 ||
	    HDR_PUT("\r\n") == -1 ||
	    (ctype != NULL && (HDR_PUT("Content-Type: ") == -1 ||
	    HDR_PUT(ctype) == -1 || HDR_PUT("\r\n") == -1)) ||
	    (content_length >= 0 && (HDR_PUT("Content-Length: ") == -1 ||
	    hdr_num(buf, sizeof(buf), &n, content_length) == -1 ||
	    HDR_PUT("\r\n") == -1)))
		return -1;
	r->r_head = HEAD_SENT;
	r->r_status = status;
	if (h->b_len == 0) {
		if (HDR_PUT("\r\n") == -1)
			return -1;
		return req_out(r, fcgi_out_stdout_copy(r->r_link->rl_out,
		    r->r_id, buf, n));
	}
	/* The added lines go after the engine's, in one record. */
	if (buf_reserve(h, h->b_len + n + 2) == -1)
		return req_out(r, -1);
	memmove(h->b_p + n, h->b_p, h->b_len);
	memcpy(h->b_p, buf, n);
	memcpy(h->b_p + n + h->b_len, "\r\n", 2);
	h->b_len += n + 2;
	return req_out(r, fcgi_out_stdout_copy(r->r_link->rl_out, r->r_id,
	    h->b_p, h->b_len));
}

#undef HDR_PUT

/*
 * Whether body bytes may be queued now: -1 not (before the header, once
 * answered, or on a broken stream), 0 yes but dropped (HEAD), 1 yes.
 */
static int
req_body_writable(struct evfcgi_req *r)
{
	if (!req_can_write(r) || r->r_head != HEAD_SENT)
		return -1;
	return r->r_nobody ? 0 : 1;
}

int
evfcgi_write(struct evfcgi_req *r, const void *data, size_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r)) <= 0)
		return ok;
	r->r_sent += len;
	return req_out(r, fcgi_out_stdout_copy(r->r_link->rl_out, r->r_id,
	    data, len));
}

int
evfcgi_write_ref(struct evfcgi_req *r, const void *data, size_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r)) <= 0)
		return ok;
	r->r_sent += len;
	return req_out(r, fcgi_out_stdout_ref(r->r_link->rl_out, r->r_id,
	    data, len));
}

/* Who frees what evfcgi_write_ref_free() lent, once its last slice left. */
struct ref_hold {
	void		(*h_fn)(const void *, void *);
	void		*h_arg;
	const void	*h_data;
	size_t		 h_refs;
};

/* One slice (or the writer's own hold) is let go. */
static void
ref_release(const void *data, size_t len, void *extra)
{
	struct ref_hold	*h = extra;

	(void)data;
	(void)len;
	if (--h->h_refs > 0)
		return;
	if (h->h_fn != NULL)
		h->h_fn(h->h_data, h->h_arg);
	free(h);
}

int
evfcgi_write_ref_free(struct evfcgi_req *r, const void *data, size_t len,
    void (*freefn)(const void *, void *), void *arg)
{
	static const uint8_t	 zeros[8];
	struct evbuffer		*out = r->r_link->rl_out;
	struct ref_hold		*h;
	const uint8_t		*p = data;
	uint8_t			 hdr[FCGI_HEADER_LEN], pad;
	size_t			 n;
	int			 ok, rc = 0;

	if ((ok = req_body_writable(r)) <= 0 || len == 0 ||
	    (h = malloc(sizeof(*h))) == NULL) {
		if (freefn != NULL)
			freefn(data, arg);
		return ok == 1 && len > 0 ? -1 : (ok == -1 ? -1 : 0);
	}
	*h = (struct ref_hold){ freefn, arg, data, 1 };
	/* Framed here: each slice holds h, which frees data after the last. */
	while (len > 0 && rc == 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		fcgi_header_encode(hdr, FCGI_STDOUT, r->r_id, (uint16_t)n, pad);
		h->h_refs++;
		if (fcgi_out_small(out, hdr, sizeof(hdr)) == -1 ||
		    evbuffer_add_reference(out, p, n, ref_release, h) == -1) {
			h->h_refs--;
			rc = -1;
		} else if (pad > 0 && fcgi_out_small(out, zeros, pad) == -1)
			rc = -1;
		p += n;
		len -= n;
	}
	ref_release(data, 0, h);
	return req_out(r, rc);
}

/* Closes the descriptor evfcgi_write_fd() gave r, if any. */
static void
req_fd_close(struct evfcgi_req *r)
{
	if (r->r_fd >= 0)
		close(r->r_fd);
	r->r_fd = -1;
}

/*
 * evfcgi_write_fd()'s producer: reads at most one record's worth and room
 * bytes, so a file is held a slice at a time.
 */
static int
req_fd_produce(struct evfcgi_req *r, size_t room, void *arg)
{
	uint8_t	 buf[FCGI_MAX_ALIGNED];
	size_t	 n = sizeof(buf);
	ssize_t	 got;

	(void)arg;
	if (n > room)
		n = room;
	if (n > r->r_fd_left)
		n = (size_t)r->r_fd_left;
	got = pread(r->r_fd, buf, n, (off_t)r->r_fd_off);
	if (got == -1 && errno == EINTR)
		return 0;
	if (got <= 0) {
		log_warn("%s: request %u: reading the body's file: %s",
		    r->r_link->rl_peer, r->r_id, got == 0 ?
		    "it ended early" : strerror(errno));
		req_fd_close(r);
		evfcgi_respond_error(r, 500, NULL);
		return 0;
	}
	if (evfcgi_write(r, buf, (size_t)got) == -1) {
		req_fd_close(r);
		return 0;
	}
	r->r_fd_off += (uint64_t)got;
	r->r_fd_left -= (uint64_t)got;
	if (r->r_fd_left > 0)
		return 0;
	req_fd_close(r);
	return 1;
}

int
evfcgi_write_fd(struct evfcgi_req *r, int fd, uint64_t offset, uint64_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r)) == -1 || r->r_state != REQ_HANDLER ||
	    r->r_fd >= 0 || offset > (uint64_t)INT64_MAX - len) {
		close(fd);
		return -1;
	}
	if (ok == 0 || len == 0) {
		close(fd);
		evfcgi_finish(r);
		return 0;
	}
	r->r_fd = fd;
	r->r_fd_off = offset;
	r->r_fd_left = len;
	evfcgi_produce(r, req_fd_produce, NULL);
	return 0;
}

int
evfcgi_write_buffer(struct evfcgi_req *r, struct evbuffer *src, size_t len)
{
	int	 ok;

	if ((ok = req_body_writable(r)) == -1 || r->r_state != REQ_HANDLER ||
	    len > evbuffer_get_length(src))
		return -1;
	if (ok == 0)
		return evbuffer_drain(src, len);
	r->r_sent += len;
	return req_out(r, fcgi_out_stdout_move(r->r_link->rl_out, r->r_id,
	    src, len));
}

void
evfcgi_produce(struct evfcgi_req *r, evfcgi_producer fn, void *arg)
{
	if (r->r_state != REQ_HANDLER)
		return;
	r->r_producer = fn;
	r->r_producer_arg = arg;
	r->r_link->rl_env->re_ops->ro_produce(r, r->r_link->rl_owner);
}

void
evfcgi_on_abort(struct evfcgi_req *r, evfcgi_abort_cb fn, void *arg)
{
	r->r_abort = fn;
	r->r_abort_arg = arg;
}

void
evfcgi_finish(struct evfcgi_req *r)
{
	struct req_link	*l = r->r_link;

	if (r->r_state != REQ_HANDLER && r->r_state != REQ_STDIN)
		return;
	req_fd_close(r);
	/* A broken stream gets no more records; r is done all the same. */
	if (!l->rl_broken)
		(void)req_out(r, fcgi_out_finish(l->rl_out, r->r_id));
	/* Input still to come (a body) keeps r's slot until it ends. */
	(void)req_set_state(r, r->r_state == REQ_HANDLER && !r->r_body_open ?
	    REQ_DONE : REQ_DRAIN);
	if (r->r_body_open) {
		r->r_body_cb = NULL;
		evbuffer_drain(r->r_body, evbuffer_get_length(r->r_body));
	}
	if (l->rl_env->re_finished != NULL)
		l->rl_env->re_finished(l->rl_env->re_finished_arg, r);
	l->rl_env->re_ops->ro_done(r, l->rl_owner);
}

void
evfcgi_respond(struct evfcgi_req *r, int status, const char *ctype,
    const void *body, size_t len)
{
	if (evfcgi_header(r, status, ctype, (long long)len) == 0)
		evfcgi_write(r, body, len);
	evfcgi_finish(r);
}

void
evfcgi_respond_error(struct evfcgi_req *r, int status, const char *detail)
{
	char	 body[256];
	int	 n;

	if (r->r_head == HEAD_SENT) {
		log_warn("%s: request %u: status %d after the header was sent:"
		    " the response ends here", r->r_link->rl_peer, r->r_id,
		    status);
		evfcgi_finish(r);
		return;
	}
	n = snprintf(body, sizeof(body), "%d %s%s%s\n", status,
	    req_status_text(status), detail != NULL ? ": " : "",
	    detail != NULL ? detail : "");
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	evfcgi_respond(r, status, "text/plain", body, (size_t)n);
}
