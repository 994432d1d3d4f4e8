/*
 * conn_input.c: the input side of a connection.  Whole records are taken
 * from the connection's input and acted on: requests begun, fed their
 * PARAMS and STDIN, dispatched, aborted; management records answered.
 * With conn.c it is one module, split for length: the two share struct
 * conn and call each other's functions that conn.h lists
 * (scripts/layers takes them as one node); both use the request layer
 * below.
 */
#include <sys/types.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "conn.h"
#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "log.h"

struct conn_src;

static int	conn_records_run(struct conn *, struct conn_src *);
static int	conn_record(struct conn *, const struct fcgi_record *);
static int	conn_management(struct conn *, const struct fcgi_record *);
static void	conn_abort_req(struct conn *, struct evfcgi_req *);
static int	conn_begin(struct conn *, const struct fcgi_record *);
static int	conn_params(struct conn *, struct evfcgi_req *,
		    const struct fcgi_record *);
static int	conn_stdin(struct conn *, struct evfcgi_req *,
		    const struct fcgi_record *);
static int	conn_data(struct conn *, struct evfcgi_req *,
		    const struct fcgi_record *);
static void	conn_drained(struct conn *, struct evfcgi_req *);
static void	conn_dispatch(struct conn *, struct evfcgi_req *);
static void	conn_route(struct conn *, struct evfcgi_req *);
static void	conn_authorizer(struct conn *, struct evfcgi_req *);
static int	conn_get_values(struct conn *, const struct fcgi_record *);
static size_t	conn_get_value(struct conn *, const struct fcgi_nv *,
		    uint8_t *, size_t);
static size_t	conn_max_reqs(const struct evfcgi_limits *);
static struct evfcgi_req *conn_find(struct conn *, uint16_t);
static int	conn_hold(struct conn *, const struct fcgi_header *);
static void	conn_partial_update(struct conn *, int);
static void	conn_input_done(struct conn *, int);
static int	conn_input_new(struct conn *);
static void	conn_input_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	conn_input_woke(void *);
static void	conn_input_unwait(struct conn *);

/*
 * Where records are taken from: c's input buffer, or the bytes of one read
 * not stored anywhere yet (the common case: whole records in one read are
 * acted on where they lie, and only what is left is copied).
 */
struct conn_src {
	struct evbuffer	*s_buf;		/* NULL: the bytes at s_p */
	const uint8_t	*s_p;
	size_t		 s_len;
};

static size_t
src_len(const struct conn_src *s)
{
	return s->s_buf != NULL ? evbuffer_get_length(s->s_buf) : s->s_len;
}

/* The first n bytes, contiguous (n <= src_len), or NULL out of memory. */
static const uint8_t *
src_peek(const struct conn_src *s, size_t n)
{
	return s->s_buf != NULL ?
	    evbuffer_pullup(s->s_buf, (ev_ssize_t)n) : s->s_p;
}

static void
src_drain(struct conn_src *s, size_t n)
{
	if (s->s_buf != NULL)
		evbuffer_drain(s->s_buf, n);
	else {
		s->s_p += n;
		s->s_len -= n;
	}
}

/*
 * Parses and handles the whole records in s until it runs out, the output
 * passes its high mark (then reading pauses) or c dies.  Returns whether a
 * record was consumed, or -1 when c was closed.  c does not close for its
 * last request meanwhile: the records after it are acted on first (a
 * BEGIN_REQUEST past max_conn_requests gets its END_REQUEST).
 */
static int
conn_records(struct conn *c, struct conn_src *s)
{
	int	 rc;

	if (c->c_stream_held) {
		c->c_stream_held = 0;
		if (c->c_state == CONN_READING)
			conn_params_resume(c);
	}
	c->c_in_records = 1;
	c->c_idle_keep = 1;	/* until a record serves a request */
	rc = conn_records_run(c, s);
	c->c_in_records = 0;
	return rc;
}

/* conn_records' loop. */
static int
conn_records_run(struct conn *c, struct conn_src *s)
{
	struct fcgi_record	 rec;
	struct fcgi_header	 h;
	const uint8_t		*p;
	size_t			 total;
	int			 consumed = 0;

	while (c->c_state == CONN_READING && c->c_fail_why == NULL) {
		if (conn_out_len(c) >= conn_high(c)) {
			conn_set_state(c, CONN_PAUSED);
			break;
		}
		if (src_len(s) < FCGI_HEADER_LEN)
			break;
		if ((p = src_peek(s, FCGI_HEADER_LEN)) == NULL ||
		    fcgi_header_decode(p, FCGI_HEADER_LEN, &h) < 0) {
			conn_end(c, CONN_NOW, CONN_ERROR, "malformed record: bad version");
			return -1;
		}
		if (src_len(s) < (total = fcgi_record_len(&h)))
			break;
		if (conn_hold(c, &h))
			break;
		if ((p = src_peek(s, total)) == NULL ||
		    fcgi_parse(p, total, &rec) != (ssize_t)total) {
			conn_end(c, CONN_NOW, CONN_ERROR, "malformed record");
			return -1;
		}
		if (conn_record(c, &rec) == -1 || c->c_state == CONN_DEAD)
			return -1;
		src_drain(s, total);
		consumed = 1;
	}
	return c->c_state == CONN_DEAD ? -1 : consumed;
}

/*
 * Parses and handles the whole records in c's input buffer.  Work per call
 * is bounded: the input holds at most two whole records (conn.c reads no
 * more).
 */
void
conn_process_input(struct conn *c)
{
	struct conn_src	 s = { c->c_in, NULL, 0 };
	int		 consumed = 0;

	if (c->c_in != NULL && (consumed = conn_records(c, &s)) == -1)
		return;
	conn_input_done(c, consumed);
}

/*
 * Handles the n bytes just read at p: where they lie when c's input buffer
 * is empty, with only what is left copied into it.
 */
void
conn_process_read(struct conn *c, const uint8_t *p, size_t n)
{
	struct conn_src	 s = { NULL, p, n };
	int		 consumed;

	if (conn_input_len(c) > 0) {
		if (evbuffer_add(c->c_in, p, n) == -1)
			conn_end(c, CONN_NEXT_TURN, CONN_ERROR, "out of memory reading input");
		else
			conn_process_input(c);
		return;
	}
	if ((consumed = conn_records(c, &s)) == -1)
		return;
	if (s.s_len > 0 && ((c->c_in == NULL && conn_input_new(c) == -1) ||
	    evbuffer_add(c->c_in, s.s_p, s.s_len) == -1)) {
		conn_end(c, CONN_NEXT_TURN, CONN_ERROR, "out of memory reading input");
		return;
	}
	conn_input_done(c, consumed);
}

/*
 * The bytes c's input buffer holds count against --max-input twice:
 * libevent sizes a chain to the power of two above what it is given, so
 * a partial record of 40 KiB kept between two reads takes a chain of 64
 * KiB.  1000 uploads at once held 118 KiB each there, uncounted (the
 * requests' own charges saw 248 KB in all).
 */
static void
conn_input_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	(void)buf;
	budget_add(c->c_env->ce_input,
	    2 * ((long long)info->n_added - (long long)info->n_deleted));
}

/* Makes c's input buffer, counted (conn_input_cb).  0, or -1. */
static int
conn_input_new(struct conn *c)
{
	if ((c->c_in = evbuffer_new()) == NULL)
		return -1;
	if (evbuffer_add_cb(c->c_in, conn_input_cb, c) == NULL) {
		evbuffer_free(c->c_in);
		c->c_in = NULL;
		return -1;
	}
	return 0;
}

/* conn_input_paused()'s answer at or past the cap, or to a waiting c. */
int
conn_input_wait(struct conn *c)
{
	struct budget		*in = c->c_env->ce_input;
	struct req_head		*h;

	c->c_in_paused = 0;
	if (budget_over(in) && conn_input_len(c) == 0) {
		c->c_in_paused = 1;
		/* Its PARAMS, a body the engine collects, or one it drops
		   (answered early) still come: reading them lets input go. */
		TAILQ_FOREACH(h, &c->c_reqs, h_entry)
			if (h->h_in == IN_PARAMS ||
			    (req_collecting(req_of(h)) && (!h->h_stdin_done ||
			    h->h_data_open)) ||
			    (h->h_out == OUT_ENDED && h->h_in == IN_BODY &&
			    !h->h_stdin_done)) {
				c->c_in_paused = 0;
				break;
			}
	}
	if (!c->c_in_paused) {
		conn_input_unwait(c);
		return 0;
	}
	/* Out of memory to wait with: c reads on (the caps still refuse). */
	if (c->c_in_wait == NULL &&
	    (c->c_in_wait = calloc(1, sizeof(*c->c_in_wait))) == NULL) {
		c->c_in_paused = 0;
		return 0;
	}
	c->c_in_wait->bw_fn = conn_input_woke;
	c->c_in_wait->bw_arg = c;
	budget_wait(in, c->c_in_wait, 0);
	return 1;
}

/* c waits on the input's cap no more: its waiter goes (an idle c's size). */
static void
conn_input_unwait(struct conn *c)
{
	if (c->c_in_wait == NULL)
		return;
	budget_cancel(c->c_env->ce_input, c->c_in_wait);
	free(c->c_in_wait);
	c->c_in_wait = NULL;
}

/* The input fell below --max-input: c may read again. */
static void
conn_input_woke(void *arg)
{
	struct conn	*c = arg;

	conn_input_unwait(c);
	conn_read_update(c);
	conn_timer_update(c);
}

void
conn_input_free(struct conn *c)
{
	conn_input_unwait(c);
	c->c_in_paused = 0;
	if (c->c_in == NULL)
		return;
	evbuffer_remove_cb(c->c_in, conn_input_cb, c);
	budget_add(c->c_env->ce_input,
	    -2 * (long long)evbuffer_get_length(c->c_in));
	evbuffer_free(c->c_in);
	c->c_in = NULL;
}

/* After records were taken: deadlines, the end of input, reading. */
static void
conn_input_done(struct conn *c, int consumed)
{
	conn_partial_update(c, consumed);
	if (c->c_eof && !conn_input_pending(c))
		conn_input_ended(c);
	else
		conn_maybe_close(c);
	if (c->c_state != CONN_DEAD) {
		conn_read_update(c);
		conn_timer_update(c);
	}
}

/*
 * Notes when the input began to end inside a record: at the first byte of
 * that record (a new one when records were consumed since), or when c
 * began reading again.
 */
static void
conn_partial_update(struct conn *c, int consumed)
{
	size_t	 len = conn_input_len(c);

	/* While c does not read (paused), the peer cannot finish it. */
	if (len == 0 || conn_input_pending(c) || c->c_state != CONN_READING) {
		c->c_partial = 0;
		return;
	}
	if (!c->c_partial || consumed)
		event_base_gettimeofday_cached(c->c_env->ce_base,
		    &c->c_partial_since);
	c->c_partial = 1;
}

/*
 * Whether the record with header h must wait: body for a streamed request
 * whose handler has not taken what it was given (c is woken when it has).
 * Held input fills c's input buffer, which then stops reading: a bounded
 * cost, whatever the body's size.  Nothing else waits unread: a record
 * behind a held one may be what the request ahead needs to end.
 */
static int
conn_hold(struct conn *c, const struct fcgi_header *h)
{
	struct evfcgi_req	*r;

	if (h->type == FCGI_STDIN && h->content_length > 0 &&
	    h->request_id != 0 &&
	    (r = reqtab_find(&c->c_tab, h->request_id)) != NULL &&
	    req_body_full(r)) {
		c->c_stream_held = 1;
		conn_params_hold(c);
		return 1;
	}
	return 0;
}

/* Handles one record.  Returns 0, or -1 when it closed the connection. */
static int
conn_record(struct conn *c, const struct fcgi_record *rec)
{
	struct evfcgi_req	*r;
	unsigned		 type = rec->hdr.type;

	if (log_enabled(LOG_DEBUG))
		log_debug("%s: record %s id %u len %u", c->c_peer,
		    fcgi_type_name(type), rec->hdr.request_id,
		    rec->hdr.content_length);
	/* GET_VALUES is the web server's, with whatever id it gave it. */
	if (rec->hdr.request_id == 0 || type == FCGI_GET_VALUES)
		return conn_management(c, rec);
	if (type == FCGI_BEGIN_REQUEST || (r = conn_find(c,
	    rec->hdr.request_id)) != NULL)
		c->c_idle_keep = 0;
	if (type == FCGI_BEGIN_REQUEST)
		return conn_begin(c, rec);
	switch (type) {
	case FCGI_ABORT_REQUEST:
		if (r != NULL)
			conn_abort_req(c, r);
		return 0;
	case FCGI_PARAMS:
		/* Records for ids not in flight are ignored, as the spec says. */
		if (r != NULL && req_h(r)->h_in == IN_PARAMS)
			return conn_params(c, r, rec);
		return 0;
	case FCGI_STDIN:
		return r != NULL ? conn_stdin(c, r, rec) : 0;
	case FCGI_DATA:
		return r != NULL ? conn_data(c, r, rec) : 0;
	case FCGI_END_REQUEST:
	case FCGI_STDOUT:
	case FCGI_STDERR:
	case FCGI_GET_VALUES_RESULT:
	case FCGI_UNKNOWN_TYPE:
		conn_end(c, CONN_NOW, CONN_ERROR, "malformed record: a type only applications send");
		return -1;
	default:
		return conn_out(c, fcgi_out_unknown_type(&c->c_link.rl_out,
		    (uint8_t)type)) == -1 ? -1 : 0;
	}
}

/* A management record (id 0).  Returns 0, or -1 when c was closed. */
static int
conn_management(struct conn *c, const struct fcgi_record *rec)
{
	if (rec->hdr.type == FCGI_GET_VALUES)
		return conn_get_values(c, rec);
	return conn_out(c, fcgi_out_unknown_type(&c->c_link.rl_out,
	    rec->hdr.type)) == -1 ? -1 : 0;
}

/* The peer aborts r: END_REQUEST (unless already answered), then gone. */
static void
conn_abort_req(struct conn *c, struct evfcgi_req *r)
{
	c->c_env->ce_st->aborted++;
	log_debug("%s: request %u aborted by peer", c->c_peer, req_h(r)->h_id);
	if (!req_h(r)->h_keep)
		c->c_close_after = 1;
	conn_req_unlink(c, r);
	req_end(r, END_ABORTED);
	req_free(r);
	conn_maybe_close(c);
}

/*
 * Starts a request, or refuses it at once with an END_REQUEST status:
 * FCGI_UNKNOWN_ROLE, or FCGI_OVERLOADED beyond max_reqs in flight or
 * max_conn_requests begun on c (or out of memory).  A refused id is not
 * in flight: its PARAMS and STDIN are read and dropped as they come.
 */
static int
conn_begin(struct conn *c, const struct fcgi_record *rec)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	struct evfcgi_req		*r;
	uint16_t			 id = rec->hdr.request_id, role;
	uint8_t				 flags, refuse = 0;

	if (fcgi_begin_decode(rec->content, rec->hdr.content_length, &role,
	    &flags) == -1) {
		conn_end(c, CONN_NOW, CONN_ERROR, "malformed BEGIN_REQUEST");
		return -1;
	}
	/* Accepted in a drain for this request: c may close after it. */
	c->c_first_due = 0;
	if ((r = conn_find(c, id)) != NULL) {
		if (req_h(r)->h_out != OUT_ENDED) {
			conn_end(c, CONN_NOW, CONN_ERROR, "BEGIN_REQUEST for a request id in flight");
			return -1;
		}
		/* The peer reused the id: the old body is no longer coming. */
		conn_req_free(c, r);
	}
	if (role > FCGI_FILTER || !(c->c_env->ce_roles & 1u << role))
		refuse = FCGI_UNKNOWN_ROLE;
	else if (c->c_tab.rt_n >= lim->max_reqs || (lim->max_conn_requests >
	    0 && c->c_begun >= lim->max_conn_requests) ||
	    (r = req_new(&c->c_link, id, flags & FCGI_KEEP_CONN)) == NULL)
		refuse = FCGI_OVERLOADED;
	else if (conn_req_add(c, r) == -1) {
		/* Refused after all: not one of the requests accepted. */
		c->c_env->ce_st->requests_total--;
		req_free(r);
		refuse = FCGI_OVERLOADED;
	}
	if (refuse == 0) {
		req_h(r)->h_role = (uint8_t)role;
		/* The last one max_conn_requests lets in: c ends after it. */
		if (++c->c_begun == lim->max_conn_requests)
			c->c_close_after = 1;
		return 0;
	}
	if (refuse == FCGI_OVERLOADED) {
		c->c_env->ce_st->overloaded++;
		log_debug("%s: request %u refused (overloaded): %zu in flight, "
		    "%llu begun", c->c_peer, id, c->c_tab.rt_n,
		    (unsigned long long)c->c_begun);
	}
	/* A refusal answers the request: without KEEP_CONN, c ends too. */
	if (!(flags & FCGI_KEEP_CONN))
		c->c_close_after = 1;
	return conn_out(c, fcgi_out_end_request(&c->c_link.rl_out, id,
	    refuse)) == -1 ? -1 : 0;
}

/* Collects PARAMS; the empty record ends them.  -1 when c was closed. */
static int
conn_params(struct conn *c, struct evfcgi_req *r, const struct fcgi_record *rec)
{
	const char	*why;
	int		 first;

	if (rec->hdr.content_length > 0) {
		if (req_params_add(r, rec->content,
		    rec->hdr.content_length) == -1) {
			conn_end(c, CONN_NOW, CONN_CLOSE, "out of memory reading PARAMS");
			return -1;
		}
		return 0;
	}
	/* r leaves PARAMS, whatever comes of it: if it was the oldest, the
	   next one's turn. */
	first = TAILQ_FIRST(&c->c_params) == req_h(r);
	TAILQ_REMOVE(&c->c_params, req_h(r), h_params_entry);
	if (first)
		conn_params_clock(c);
	if (req_params_end(r, &why) == -1) {
		conn_end(c, CONN_NOW, CONN_ERROR, why);
		return -1;
	}
	if (req_h(r)->h_role == FCGI_AUTHORIZER)
		conn_authorizer(c, r);
	else if (req_collecting(r))
		conn_route(c, r);
	return 0;
}

/*
 * An authorizer has no body (FastCGI 1.0 6.3): routed and run at the end
 * of its PARAMS; STDIN records for it are ignored.  (No authorizer route
 * is streamed, so r outlives conn_route().)
 */
static void
conn_authorizer(struct conn *c, struct evfcgi_req *r)
{
	req_h(r)->h_stdin_done = 1;
	if (req_collecting(r))
		conn_route(c, r);
	if (req_collecting(r))
		conn_dispatch(c, r);
	else
		conn_drained(c, r);
}

/*
 * Routes r as soon as its params are in: a wrong method or a bad body
 * length is answered before the body comes, and a streamed request's
 * handler runs now.
 */
static void
conn_route(struct conn *c, struct evfcgi_req *r)
{
	const struct conn_env	*env = c->c_env;
	struct req_route	 rt = { .rr_fn = NULL };

	env->ce_route(env->ce_arg, r, &rt);
	req_route(r, &rt, budget_refuse(env->ce_budget));
	if (req_h(r)->h_role == FCGI_FILTER && req_collecting(r) &&
	    req_data_begin(r) == -1)
		conn_end(c, CONN_NOW, CONN_CLOSE, "out of memory reading DATA");
}

/*
 * Collects STDIN; the empty record ends it and runs the handler, or frees a
 * request answered early.  Returns 0, or -1 when c was closed.
 */
static int
conn_stdin(struct conn *c, struct evfcgi_req *r, const struct fcgi_record *rec)
{
	size_t	 clen = rec->hdr.content_length;

	if (req_h(r)->h_out == OUT_ENDED) {
		if (clen == 0) {
			conn_req_free(c, r);
			conn_maybe_close(c);
		}
		return 0;
	}
	if (req_h(r)->h_in == IN_PARAMS) {
		conn_end(c, CONN_NOW, CONN_ERROR, "STDIN before the end of PARAMS");
		return -1;
	}
	if (req_body_open(r)) {
		if (clen == 0) {
			/* The application has it, and waits for no input. */
			req_body_end(r);
		} else if (req_body_add(r, rec->content, clen) == -1) {
			conn_end(c, CONN_NOW, CONN_CLOSE, "out of memory reading STDIN");
			return -1;
		}
		return 0;
	}
	if (!req_collecting(r) || req_h(r)->h_stdin_done)
		return 0;
	if (clen == 0) {
		/* A filter runs once its DATA has ended too. */
		req_h(r)->h_stdin_done = 1;
		if (!req_h(r)->h_data_open)
			conn_dispatch(c, r);
		return 0;
	}
	if (req_body_add(r, rec->content, clen) == -1) {
		conn_end(c, CONN_NOW, CONN_CLOSE, "out of memory reading STDIN");
		return -1;
	}
	return 0;
}

/*
 * Collects a filter's DATA; its empty record ends it, and runs the handler
 * if STDIN has ended too.  DATA for the other roles is ignored (FastCGI
 * 1.0 sends it to filters alone).  Returns 0, or -1 when c was closed.
 */
static int
conn_data(struct conn *c, struct evfcgi_req *r, const struct fcgi_record *rec)
{
	if (req_h(r)->h_role != FCGI_FILTER)
		return 0;
	if (req_h(r)->h_in == IN_PARAMS) {
		conn_end(c, CONN_NOW, CONN_ERROR, "DATA before the end of PARAMS");
		return -1;
	}
	if (!req_collecting(r) || !req_h(r)->h_data_open)
		return 0;
	if (rec->hdr.content_length == 0)
		req_data_end(r);
	else if (req_data_add(r, rec->content, rec->hdr.content_length) == -1) {
		conn_end(c, CONN_NOW, CONN_CLOSE, "out of memory reading DATA");
		return -1;
	}
	if (req_h(r)->h_out == OUT_ENDED)
		conn_drained(c, r);
	else if (!req_h(r)->h_data_open && req_h(r)->h_stdin_done)
		conn_dispatch(c, r);
	return 0;
}

/*
 * r was answered before its input ended (DRAIN): freed once its STDIN
 * has ended too, else when the empty STDIN comes (conn_stdin()).
 */
static void
conn_drained(struct conn *c, struct evfcgi_req *r)
{
	if (req_h(r)->h_out != OUT_ENDED || !req_h(r)->h_stdin_done)
		return;
	conn_req_free(c, r);
	conn_maybe_close(c);
}

/* Input is complete: hand the request to its route. */
static void
conn_dispatch(struct conn *c, struct evfcgi_req *r)
{
	req_dispatch(r, budget_refuse(c->c_env->ce_budget));
}

/*
 * Answers GET_VALUES with true values for the names asked that it knows.
 * Returns 0, or -1 when the pairs were malformed and c was closed.
 */
static int
conn_get_values(struct conn *c, const struct fcgi_record *rec)
{
	uint8_t		 res[512];
	struct fcgi_nv	 nv;
	size_t		 off = 0, rlen = 0;
	ssize_t		 used;

	while (off < rec->hdr.content_length) {
		used = fcgi_nv_parse(rec->content + off,
		    rec->hdr.content_length - off, &nv);
		if (used <= 0) {
			conn_end(c, CONN_NOW, CONN_ERROR, "malformed GET_VALUES");
			return -1;
		}
		off += (size_t)used;
		rlen += conn_get_value(c, &nv, res + rlen, sizeof(res) - rlen);
	}
	return conn_out(c, fcgi_out_record(&c->c_link.rl_out,
	    FCGI_GET_VALUES_RESULT, 0, res, rlen)) == -1 ? -1 : 0;
}

/*
 * The requests one connection takes at once, as FCGI_MAX_REQS says it: a
 * client multiplexes that many on each connection it opens (the npm
 * fastcgi-client does), and one that keeps within it is never refused.
 */
static size_t
conn_max_reqs(const struct evfcgi_limits *lim)
{
	if (lim->max_conn_requests > 0 && lim->max_conn_requests < lim->max_reqs)
		return lim->max_conn_requests;
	return lim->max_reqs;
}

/*
 * Encodes the pair answering nv into out when the name is known and it
 * fits in outlen.  Returns the bytes written.
 */
static size_t
conn_get_value(struct conn *c, const struct fcgi_nv *nv, uint8_t *out,
    size_t outlen)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	char				 val[32];
	size_t				 n;

#define NAME_IS(s) (nv->name_len == sizeof(s) - 1 && \
	memcmp(nv->name, s, sizeof(s) - 1) == 0)
	if (NAME_IS("FCGI_MAX_CONNS"))
		snprintf(val, sizeof(val), "%zu", lim->max_conns);
	else if (NAME_IS("FCGI_MAX_REQS"))
		snprintf(val, sizeof(val), "%zu", conn_max_reqs(lim));
	else if (NAME_IS("FCGI_MPXS_CONNS"))
		snprintf(val, sizeof(val), "%d", conn_max_reqs(lim) > 1);
	else
		return 0;
#undef NAME_IS
	n = fcgi_nv_encode(out, outlen, nv->name, nv->name_len, val,
	    strlen(val));
	return n <= outlen ? n : 0;
}

/* The request in flight with id, or NULL. */
static struct evfcgi_req *
conn_find(struct conn *c, uint16_t id)
{
	return reqtab_find(&c->c_tab, id);
}
