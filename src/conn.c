/*
 * conn.c: the connection layer.  One struct conn per socket: it parses
 * records from the input buffer, keeps the table of requests in flight,
 * queues every answer in the bufferevent's output buffer and paces it with
 * watermarks.  Above the high mark the connection reads no new input and
 * producers wait; the write callback at the low mark resumes both.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn.h"
#include "fcgi_proto.h"
#include "log.h"

/* Input may hold two whole records before reading stops. */
#define CONN_INPUT_MAX		(2 * FCGI_MAX_RECORD)

static void	conn_readcb(struct bufferevent *, void *);
static void	conn_writecb(struct bufferevent *, void *);
static void	conn_eventcb(struct bufferevent *, short, void *);
static void	conn_timeoutcb(evutil_socket_t, short, void *);
static void	conn_output_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	conn_enter(struct conn *);
static void	conn_leave(struct conn *);
static void	conn_set_state(struct conn *, enum conn_state);
static void	conn_process_input(struct conn *);
static int	conn_record(struct conn *, const struct fcgi_record *);
static int	conn_begin(struct conn *, const struct fcgi_record *);
static int	conn_params(struct conn *, struct evfcgi_req *,
		    const struct fcgi_record *);
static void	conn_stdin(struct conn *, struct evfcgi_req *,
		    const struct fcgi_record *);
static int	conn_get_values(struct conn *, const struct fcgi_record *);
static void	out_add_small(struct evbuffer *, const void *, size_t);
static void	conn_write_record(struct conn *, uint8_t, uint16_t,
		    const void *, size_t);
static void	conn_end_request(struct conn *, uint16_t, uint8_t);
static void	conn_timer_update(struct conn *);
static void	conn_maybe_close(struct conn *);
static struct evfcgi_req *conn_find(struct conn *, uint16_t);
static int	req_params_done(struct evfcgi_req *);
static void	req_dispatch(struct evfcgi_req *);
static void	req_free(struct evfcgi_req *);
static void	req_kill(struct evfcgi_req *);
static void	req_done(struct evfcgi_req *);
static int	req_stdout(struct evfcgi_req *, const void *, size_t, int);

static const char *const conn_state_names[] = {
	"reading", "paused", "closing", "dead"
};

struct conn *
conn_new(struct evfcgi_server *srv, int fd, const char *peer)
{
	const struct evfcgi_limits	*lim = &srv->srv_lim;
	struct conn			*c;
	struct timeval			 wt;
	int				 one = 1;

	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->c_reqs = calloc(lim->max_reqs, sizeof(*c->c_reqs))) == NULL) {
		free(c);
		evutil_closesocket(fd);
		return NULL;
	}
	c->c_srv = srv;
	TAILQ_INIT(&c->c_producers);
	snprintf(c->c_peer, sizeof(c->c_peer), "%s", peer);
	/* Answers are small writes on kept connections: never wait for Nagle. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * Without a cap the kernel grows the send buffer of a socket its
	 * reader drains slowly up to tcp_wmem's max: megabytes per slow
	 * client, beyond the watermarks that bound what evfcgid holds.
	 */
	if (lim->sndbuf > 0) {
		int	 sb = (int)lim->sndbuf;

		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb,
		    sizeof(sb)) == -1)
			log_warn("%s: SO_SNDBUF %d: %s", peer, sb,
			    strerror(errno));
	}
	evutil_make_socket_nonblocking(fd);
	c->c_bev = bufferevent_socket_new(srv->srv_base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->c_timer = evtimer_new(srv->srv_base, conn_timeoutcb, c);
	if (c->c_bev == NULL || c->c_timer == NULL) {
		if (c->c_bev != NULL)
			bufferevent_free(c->c_bev);
		else
			evutil_closesocket(fd);
		if (c->c_timer != NULL)
			event_free(c->c_timer);
		free(c->c_reqs);
		free(c);
		return NULL;
	}
	bufferevent_setcb(c->c_bev, conn_readcb, conn_writecb, conn_eventcb, c);
	bufferevent_setwatermark(c->c_bev, EV_READ, 0, CONN_INPUT_MAX);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, lim->low_water, 0);
	wt.tv_sec = lim->write_timeout;
	wt.tv_usec = 0;
	bufferevent_set_timeouts(c->c_bev, NULL, &wt);
	evbuffer_add_cb(bufferevent_get_output(c->c_bev), conn_output_cb, c);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);

	TAILQ_INSERT_TAIL(&srv->srv_conns, c, c_entry);
	srv->srv_st.connections++;
	srv->srv_st.connections_total++;
	c->c_state = CONN_READING;
	log_debug("%s: connected", c->c_peer);
	conn_timer_update(c);
	return c;
}

/*
 * Moves c to state s; the one place where a connection changes state, so a
 * trace at debug level shows every transition.
 */
static void
conn_set_state(struct conn *c, enum conn_state s)
{
	if (c->c_state == s)
		return;
	if (log_enabled(LOG_DEBUG))
		log_debug("%s: %s -> %s", c->c_peer,
		    conn_state_names[c->c_state], conn_state_names[s]);
	switch (s) {
	case CONN_READING:
		bufferevent_enable(c->c_bev, EV_READ);
		break;
	case CONN_PAUSED:
		bufferevent_disable(c->c_bev, EV_READ);
		break;
	case CONN_CLOSING:
		bufferevent_disable(c->c_bev, EV_READ);
		/* The write callback must fire when the last byte is out. */
		bufferevent_setwatermark(c->c_bev, EV_WRITE, 0, 0);
		break;
	case CONN_DEAD:
		break;
	}
	c->c_state = s;
}

/* Marks c busy so that a close inside a callback defers the free. */
static void
conn_enter(struct conn *c)
{
	c->c_in_cb++;
}

/* Leaves a callback; frees c if it died meanwhile. */
static void
conn_leave(struct conn *c)
{
	if (--c->c_in_cb == 0 && c->c_state == CONN_DEAD)
		free(c);
}

void
conn_close(struct conn *c, const char *why)
{
	struct evfcgi_server	*srv = c->c_srv;
	struct evbuffer		*out;
	size_t			 i;

	if (c->c_state == CONN_DEAD)
		return;
	if (why != NULL)
		log_info("%s: closing: %s", c->c_peer, why);
	else
		log_debug("%s: closed", c->c_peer);
	conn_set_state(c, CONN_DEAD);
	for (i = 0; i < srv->srv_lim.max_reqs; i++) {
		if (c->c_reqs[i] == NULL)
			continue;
		if (c->c_reqs[i]->r_state == REQ_HANDLER)
			srv->srv_st.aborted++;
		req_kill(c->c_reqs[i]);
	}
	out = bufferevent_get_output(c->c_bev);
	evbuffer_remove_cb(out, conn_output_cb, c);
	server_queued(srv, -(long long)evbuffer_get_length(out));
	bufferevent_free(c->c_bev);
	c->c_bev = NULL;
	event_free(c->c_timer);
	c->c_timer = NULL;
	free(c->c_reqs);
	c->c_reqs = NULL;
	if (c->c_starved)
		TAILQ_REMOVE(&srv->srv_starved, c, c_starve_entry);
	TAILQ_REMOVE(&srv->srv_conns, c, c_entry);
	srv->srv_st.connections--;
	server_conn_closed(srv, c);
	if (c->c_in_cb == 0)
		free(c);
}

void
conn_drain(struct conn *c)
{
	c->c_close_after = 1;
	conn_enter(c);
	conn_maybe_close(c);
	conn_leave(c);
}

int
conn_stalled(const struct conn *c)
{
	return c->c_bev != NULL && evbuffer_get_length(
	    bufferevent_get_output(c->c_bev)) > c->c_srv->srv_lim.low_water;
}

/* Keeps the server's count of queued output exact as buffers change. */
static void
conn_output_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	(void)buf;
	server_queued(c->c_srv,
	    (long long)info->n_added - (long long)info->n_deleted);
}

/*
 * Closes c if it was told to close after its last request and none is left:
 * at once when its output is empty, else once the output is flushed.
 */
static void
conn_maybe_close(struct conn *c)
{
	if (!c->c_close_after || c->c_nreqs > 0 || c->c_state == CONN_DEAD)
		return;
	if (evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0)
		conn_close(c, NULL);
	else
		conn_set_state(c, CONN_CLOSING);
}

static void
conn_readcb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	(void)bev;
	conn_enter(c);
	conn_process_input(c);
	conn_leave(c);
}

/*
 * Parses and handles the whole records in the input buffer until it runs
 * out, the output passes its high mark (then reading pauses) or c dies.
 * Work per call is bounded: the input holds at most CONN_INPUT_MAX bytes.
 */
static void
conn_process_input(struct conn *c)
{
	const struct evfcgi_limits	*lim = &c->c_srv->srv_lim;
	struct evbuffer			*in, *out;
	struct fcgi_record		 rec;
	struct fcgi_header		 h;
	uint8_t				 hb[FCGI_HEADER_LEN];
	const uint8_t			*p;
	size_t				 len, total;

	in = bufferevent_get_input(c->c_bev);
	out = bufferevent_get_output(c->c_bev);
	while (c->c_state == CONN_READING) {
		if (evbuffer_get_length(out) >= lim->high_water) {
			conn_set_state(c, CONN_PAUSED);
			break;
		}
		len = evbuffer_get_length(in);
		if (len < FCGI_HEADER_LEN)
			break;
		evbuffer_copyout(in, hb, sizeof(hb));
		if (fcgi_header_decode(hb, sizeof(hb), &h) < 0) {
			c->c_srv->srv_st.closed_on_error++;
			conn_close(c, "malformed record: bad version");
			return;
		}
		total = FCGI_HEADER_LEN + (size_t)h.content_length +
		    h.padding_length;
		if (len < total)
			break;
		if ((p = evbuffer_pullup(in, (ssize_t)total)) == NULL ||
		    fcgi_parse(p, total, &rec) != (ssize_t)total) {
			c->c_srv->srv_st.closed_on_error++;
			conn_close(c, "malformed record");
			return;
		}
		if (conn_record(c, &rec) == -1 || c->c_state == CONN_DEAD)
			return;
		evbuffer_drain(in, total);
	}
	if (c->c_state != CONN_DEAD)
		conn_timer_update(c);
}

/* Handles one record.  Returns 0, or -1 when it closed the connection. */
static int
conn_record(struct conn *c, const struct fcgi_record *rec)
{
	struct evfcgi_req	*r;
	uint8_t			 unk[16];
	unsigned		 type = rec->hdr.type;

	if (log_enabled(LOG_DEBUG))
		log_debug("%s: record %s id %u len %u", c->c_peer,
		    fcgi_type_name(type), rec->hdr.request_id,
		    rec->hdr.content_length);
	if (rec->hdr.request_id == 0) {
		if (type == FCGI_GET_VALUES)
			return conn_get_values(c, rec);
		fcgi_unknown_type_encode(unk, (uint8_t)type);
		out_add_small(bufferevent_get_output(c->c_bev), unk, sizeof(unk));
		return 0;
	}
	if (type == FCGI_BEGIN_REQUEST)
		return conn_begin(c, rec);
	r = conn_find(c, rec->hdr.request_id);
	switch (type) {
	case FCGI_ABORT_REQUEST:
		if (r == NULL)
			return 0;
		c->c_srv->srv_st.aborted++;
		log_debug("%s: request %u aborted by peer", c->c_peer, r->r_id);
		if (r->r_state != REQ_DRAIN)
			conn_end_request(c, r->r_id, FCGI_REQUEST_COMPLETE);
		c->c_served++;
		if (!r->r_keep)
			c->c_close_after = 1;
		req_kill(r);
		conn_maybe_close(c);
		return 0;
	case FCGI_PARAMS:
		/* Records for ids not in flight are ignored, as the spec says. */
		if (r != NULL && r->r_state == REQ_PARAMS)
			return conn_params(c, r, rec);
		return 0;
	case FCGI_STDIN:
		if (r != NULL)
			conn_stdin(c, r, rec);
		return 0;
	case FCGI_DATA:
		return 0;
	case FCGI_END_REQUEST:
	case FCGI_STDOUT:
	case FCGI_STDERR:
	case FCGI_GET_VALUES:
	case FCGI_GET_VALUES_RESULT:
	case FCGI_UNKNOWN_TYPE:
		c->c_srv->srv_st.closed_on_error++;
		conn_close(c, "malformed record: a type only applications send");
		return -1;
	default:
		fcgi_unknown_type_encode(unk, (uint8_t)type);
		out_add_small(bufferevent_get_output(c->c_bev), unk, sizeof(unk));
		return 0;
	}
}

/* Starts a request, or refuses it with an END_REQUEST status. */
static int
conn_begin(struct conn *c, const struct fcgi_record *rec)
{
	struct evfcgi_server	*srv = c->c_srv;
	struct evfcgi_req	*r;
	uint16_t		 id = rec->hdr.request_id, role;
	uint8_t			 flags;
	size_t			 i;

	if (fcgi_begin_decode(rec->content, rec->hdr.content_length, &role,
	    &flags) == -1) {
		srv->srv_st.closed_on_error++;
		conn_close(c, "malformed BEGIN_REQUEST");
		return -1;
	}
	if ((r = conn_find(c, id)) != NULL) {
		if (r->r_state != REQ_DRAIN) {
			srv->srv_st.closed_on_error++;
			conn_close(c, "BEGIN_REQUEST for a request id in flight");
			return -1;
		}
		/* The peer reused the id: the old body is no longer coming. */
		req_free(r);
	}
	if (role != FCGI_RESPONDER) {
		conn_end_request(c, id, FCGI_UNKNOWN_ROLE);
		return 0;
	}
	if (c->c_nreqs >= srv->srv_lim.max_reqs) {
		srv->srv_st.overloaded++;
		conn_end_request(c, id, FCGI_OVERLOADED);
		return 0;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->r_params = evbuffer_new()) == NULL ||
	    (r->r_body = evbuffer_new()) == NULL) {
		if (r != NULL && r->r_params != NULL)
			evbuffer_free(r->r_params);
		free(r);
		srv->srv_st.overloaded++;
		conn_end_request(c, id, FCGI_OVERLOADED);
		return 0;
	}
	r->r_conn = c;
	r->r_id = id;
	r->r_keep = flags & FCGI_KEEP_CONN;
	r->r_state = REQ_PARAMS;
	event_base_gettimeofday_cached(srv->srv_base, &r->r_begun);
	for (i = 0; c->c_reqs[i] != NULL; i++)
		;
	c->c_reqs[i] = r;
	c->c_nreqs++;
	srv->srv_st.requests_total++;
	srv->srv_st.requests_active++;
	return 0;
}

/* Collects PARAMS; the empty record ends them.  -1 when c was closed. */
static int
conn_params(struct conn *c, struct evfcgi_req *r, const struct fcgi_record *rec)
{
	size_t	 have = evbuffer_get_length(r->r_params);

	if (rec->hdr.content_length == 0)
		return req_params_done(r);
	if (r->r_reject != 0)
		return 0;
	if (have + rec->hdr.content_length > c->c_srv->srv_lim.max_params) {
		/* Keep reading to the end of PARAMS, then answer 431. */
		r->r_reject = 431;
		evbuffer_drain(r->r_params, have);
		return 0;
	}
	evbuffer_add(r->r_params, rec->content, rec->hdr.content_length);
	return 0;
}

/* Collects STDIN; the empty record ends it and runs the handler. */
static void
conn_stdin(struct conn *c, struct evfcgi_req *r, const struct fcgi_record *rec)
{
	size_t	 clen = rec->hdr.content_length;

	if (r->r_state == REQ_DRAIN) {
		if (clen == 0) {
			req_free(r);
			conn_maybe_close(c);
		}
		return;
	}
	if (r->r_state != REQ_STDIN)
		return;
	if (clen == 0) {
		req_dispatch(r);
		return;
	}
	if (evbuffer_get_length(r->r_body) + clen > c->c_srv->srv_lim.max_body) {
		c->c_srv->srv_st.rejected++;
		evfcgi_respond_error(r, 413, "request body above the limit");
		return;
	}
	evbuffer_add(r->r_body, rec->content, clen);
}

/*
 * Answers GET_VALUES with true values for the names asked that it knows.
 * Returns 0, or -1 when the pairs were malformed and c was closed.
 */
static int
conn_get_values(struct conn *c, const struct fcgi_record *rec)
{
	const struct evfcgi_limits	*lim = &c->c_srv->srv_lim;
	uint8_t				 res[512];
	char				 val[32];
	struct fcgi_nv			 nv;
	size_t				 off = 0, rlen = 0, n;
	ssize_t				 used;

	while (off < rec->hdr.content_length) {
		used = fcgi_nv_parse(rec->content + off,
		    rec->hdr.content_length - off, &nv);
		if (used <= 0) {
			c->c_srv->srv_st.closed_on_error++;
			conn_close(c, "malformed GET_VALUES");
			return -1;
		}
		off += (size_t)used;
		val[0] = '\0';
#define NAME_IS(s) (nv.name_len == sizeof(s) - 1 && \
	memcmp(nv.name, s, sizeof(s) - 1) == 0)
		if (NAME_IS("FCGI_MAX_CONNS"))
			snprintf(val, sizeof(val), "%zu", lim->max_conns);
		else if (NAME_IS("FCGI_MAX_REQS"))
			snprintf(val, sizeof(val), "%zu",
			    lim->max_conns * lim->max_reqs);
		else if (NAME_IS("FCGI_MPXS_CONNS"))
			snprintf(val, sizeof(val), "%d", lim->max_reqs > 1);
		else
			continue;
#undef NAME_IS
		n = fcgi_nv_encode(res + rlen, sizeof(res) - rlen, nv.name,
		    nv.name_len, val, strlen(val));
		if (n <= sizeof(res) - rlen)
			rlen += n;
	}
	conn_write_record(c, FCGI_GET_VALUES_RESULT, 0, res, rlen);
	return 0;
}

/*
 * Appends a few bytes (a record header, padding, END_REQUEST) to out.
 * evbuffer_add sizes a new chain after the last chain holding data, so
 * behind a 64 KiB slice added by reference it would allocate 64 KiB to hold
 * 8 bytes: about 8 MiB of malloc churn for one 8 MiB response, which glibc
 * trims and takes back by brk at every request.  evbuffer_reserve_space
 * makes a chain only as large as what is asked (libevent's minimum, 1 KiB).
 */
static void
out_add_small(struct evbuffer *out, const void *p, size_t len)
{
	struct evbuffer_iovec	 v;

	if (evbuffer_reserve_space(out, (ev_ssize_t)len, &v, 1) < 1) {
		evbuffer_add(out, p, len);
		return;
	}
	memcpy(v.iov_base, p, len);
	v.iov_len = len;
	evbuffer_commit_space(out, &v, 1);
}

/* Queues one record (a copy of len bytes, len <= FCGI_MAX_CONTENT). */
static void
conn_write_record(struct conn *c, uint8_t type, uint16_t id, const void *data,
    size_t len)
{
	static const uint8_t	 zeros[8];
	struct evbuffer		*out = bufferevent_get_output(c->c_bev);
	uint8_t			 hdr[FCGI_HEADER_LEN];
	uint8_t			 pad = fcgi_padding(len);

	fcgi_header_encode(hdr, type, id, (uint16_t)len, pad);
	out_add_small(out, hdr, sizeof(hdr));
	if (len > 0)
		evbuffer_add(out, data, len);
	if (pad > 0)
		out_add_small(out, zeros, pad);
}

static void
conn_end_request(struct conn *c, uint16_t id, uint8_t protocol_status)
{
	uint8_t	 rec[16];

	fcgi_end_encode(rec, id, 0, protocol_status);
	out_add_small(bufferevent_get_output(c->c_bev), rec, sizeof(rec));
}

/* The request in flight with id, or NULL. */
static struct evfcgi_req *
conn_find(struct conn *c, uint16_t id)
{
	size_t	 i;

	for (i = 0; i < c->c_srv->srv_lim.max_reqs; i++)
		if (c->c_reqs[i] != NULL && c->c_reqs[i]->r_id == id)
			return c->c_reqs[i];
	return NULL;
}

/*
 * Arms the one timer a connection needs now: the deadline of the oldest
 * request whose PARAMS are incomplete (each request has its own, counted
 * from its BEGIN_REQUEST), an idle timeout (restarted by every read) while
 * input is awaited, none while only the application or the output is
 * pending (the bufferevent's write timeout watches the output).
 */
static void
conn_timer_update(struct conn *c)
{
	const struct evfcgi_limits	*lim = &c->c_srv->srv_lim;
	enum conn_timer			 want = TIMER_NONE;
	struct timeval			 tv = { 0, 0 }, now, due;
	const struct timeval		*oldest = NULL;
	size_t				 i;
	int				 awaiting = 0;

	for (i = 0; i < lim->max_reqs; i++) {
		if (c->c_reqs[i] == NULL)
			continue;
		if (c->c_reqs[i]->r_state == REQ_PARAMS) {
			if (oldest == NULL ||
			    timercmp(&c->c_reqs[i]->r_begun, oldest, <))
				oldest = &c->c_reqs[i]->r_begun;
		} else if (c->c_reqs[i]->r_state != REQ_HANDLER)
			awaiting = 1;
	}
	if (oldest != NULL)
		want = TIMER_HEADER;
	else if (c->c_state == CONN_READING &&
	    (awaiting || (c->c_nreqs == 0 &&
	    evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0)))
		want = TIMER_IDLE;
	c->c_timer_kind = want;
	if (want == TIMER_NONE) {
		evtimer_del(c->c_timer);
		return;
	}
	if (want == TIMER_HEADER) {
		tv.tv_sec = lim->header_timeout;
		timeradd(oldest, &tv, &due);
		event_base_gettimeofday_cached(c->c_srv->srv_base, &now);
		if (timercmp(&due, &now, >))
			timersub(&due, &now, &tv);
		else
			timerclear(&tv);
	} else
		tv.tv_sec = lim->idle_timeout;
	evtimer_add(c->c_timer, &tv);
}

static void
conn_timeoutcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	conn_enter(c);
	if (c->c_timer_kind == TIMER_HEADER) {
		c->c_srv->srv_st.closed_on_error++;
		conn_close(c, "header timeout: PARAMS incomplete");
	} else if (c->c_nreqs > 0) {
		c->c_srv->srv_st.closed_on_error++;
		conn_close(c, "idle timeout: request body stalled");
	} else
		conn_close(c, NULL);
	conn_leave(c);
}

/* Output fell to the low mark (or, when closing, to zero). */
static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn		*c = arg;
	struct evfcgi_server	*srv = c->c_srv;

	conn_enter(c);
	if (c->c_state == CONN_CLOSING) {
		if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
			conn_close(c, NULL);
	} else {
		/* New requests first (they are small), then the producers. */
		if (c->c_state == CONN_PAUSED) {
			conn_set_state(c, CONN_READING);
			conn_process_input(c);
		}
		conn_pump(c);
		if (c->c_state != CONN_DEAD)
			conn_timer_update(c);
	}
	if (!TAILQ_EMPTY(&srv->srv_starved))
		event_active(srv->srv_wake_ev, EV_TIMEOUT, 0);
	conn_leave(c);
}

static void
conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	size_t		 i;
	char		 why[128];

	(void)bev;
	conn_enter(c);
	if (what & BEV_EVENT_EOF) {
		/* The peer sends no more: what still waits for input is dead. */
		for (i = 0; i < c->c_srv->srv_lim.max_reqs; i++)
			if (c->c_reqs[i] != NULL &&
			    c->c_reqs[i]->r_state != REQ_HANDLER)
				req_kill(c->c_reqs[i]);
		c->c_close_after = 1;
		if (c->c_state == CONN_READING || c->c_state == CONN_PAUSED)
			bufferevent_disable(c->c_bev, EV_READ);
		conn_maybe_close(c);
	} else if (what & BEV_EVENT_TIMEOUT) {
		c->c_srv->srv_st.closed_on_error++;
		snprintf(why, sizeof(why), "no write progress for %d s",
		    c->c_srv->srv_lim.write_timeout);
		conn_close(c, why);
	} else {
		snprintf(why, sizeof(why), "socket error: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		conn_close(c, why);
	}
	conn_leave(c);
}

void
conn_pump(struct conn *c)
{
	struct evfcgi_server	*srv = c->c_srv;
	struct evbuffer		*out;
	struct evfcgi_req	*r;
	size_t			 len;

	if (c->c_state == CONN_DEAD || c->c_state == CONN_CLOSING)
		return;
	out = bufferevent_get_output(c->c_bev);
	conn_enter(c);
	while ((r = TAILQ_FIRST(&c->c_producers)) != NULL &&
	    c->c_state != CONN_DEAD) {
		len = evbuffer_get_length(out);
		if (len >= srv->srv_lim.high_water)
			break;
		if (server_over_cap(srv)) {
			server_starve(srv, c);
			break;
		}
		/* Round robin between the requests multiplexed on c. */
		TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
		TAILQ_INSERT_TAIL(&c->c_producers, r, r_prod_entry);
		if (r->r_producer(r, srv->srv_lim.high_water - len,
		    r->r_producer_arg) == 1 && c->c_state != CONN_DEAD)
			evfcgi_finish(r);
	}
	conn_leave(c);
}

/*
 * PARAMS ended: decode the pairs into NUL-ended strings, check the body's
 * announced length, then wait for STDIN.  -1 when c was closed.
 */
static int
req_params_done(struct evfcgi_req *r)
{
	struct conn	*c = r->r_conn;
	struct fcgi_nv	 nv;
	const uint8_t	*p;
	const char	*cl, *uri, *q, *sn, *pi;
	char		*mem, *end;
	size_t		 len, off, n, memlen = 0;
	ssize_t		 used;
	unsigned long long clen;

	r->r_state = REQ_STDIN;
	if (r->r_reject != 0) {
		c->c_srv->srv_st.rejected++;
		evfcgi_respond_error(r, r->r_reject, "request parameters above the limit");
		return 0;
	}
	len = evbuffer_get_length(r->r_params);
	p = evbuffer_pullup(r->r_params, -1);
	for (off = 0, n = 0; off < len; off += (size_t)used, n++) {
		used = fcgi_nv_parse(p + off, len - off, &nv);
		if (used <= 0) {
			c->c_srv->srv_st.closed_on_error++;
			conn_close(c, "malformed name-value pair in PARAMS");
			return -1;
		}
		memlen += nv.name_len + nv.value_len + 2;
	}
	if ((r->r_pv = calloc(n + 1, sizeof(*r->r_pv))) == NULL ||
	    (r->r_pvmem = mem = malloc(memlen + 1)) == NULL) {
		c->c_srv->srv_st.overloaded++;
		evfcgi_respond_error(r, 503, "out of memory");
		return 0;
	}
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
	evbuffer_free(r->r_params);
	r->r_params = NULL;

	if ((uri = evfcgi_param(r, "REQUEST_URI")) != NULL) {
		q = strchr(uri, '?');
		r->r_path = strndup(uri, q != NULL ? (size_t)(q - uri) :
		    strlen(uri));
	} else {
		sn = evfcgi_param(r, "SCRIPT_NAME");
		pi = evfcgi_param(r, "PATH_INFO");
		if (asprintf(&r->r_path, "%s%s", sn != NULL ? sn : "",
		    pi != NULL ? pi : "") == -1)
			r->r_path = NULL;
	}
	if (r->r_path == NULL) {
		c->c_srv->srv_st.overloaded++;
		evfcgi_respond_error(r, 503, "out of memory");
		return 0;
	}
	if ((cl = evfcgi_param(r, "CONTENT_LENGTH")) != NULL && *cl != '\0') {
		errno = 0;
		clen = strtoull(cl, &end, 10);
		if (errno != 0 || *end != '\0' || *cl == '-') {
			evfcgi_respond_error(r, 400, "bad CONTENT_LENGTH");
			return 0;
		}
		if (clen > c->c_srv->srv_lim.max_body) {
			c->c_srv->srv_st.rejected++;
			evfcgi_respond_error(r, 413,
			    "request body above the limit");
			return 0;
		}
	}
	return 0;
}

/* Input is complete: hand the request to its route. */
static void
req_dispatch(struct evfcgi_req *r)
{
	struct evfcgi_server	*srv = r->r_conn->c_srv;
	const struct route	*rt;

	r->r_state = REQ_HANDLER;
	r->r_body_len = evbuffer_get_length(r->r_body);
	if (server_over_cap(srv)) {
		srv->srv_st.overloaded++;
		evfcgi_respond_error(r, 503, "output queues are full");
		return;
	}
	if ((rt = server_route(srv, r->r_path)) == NULL) {
		evfcgi_respond_error(r, 404, NULL);
		return;
	}
	rt->rt_fn(r, rt->rt_arg);
}

/* Frees r and its slot; says nothing on the wire. */
static void
req_free(struct evfcgi_req *r)
{
	struct conn	*c = r->r_conn;
	size_t		 i;

	for (i = 0; i < c->c_srv->srv_lim.max_reqs; i++)
		if (c->c_reqs[i] == r)
			c->c_reqs[i] = NULL;
	c->c_nreqs--;
	if (r->r_state != REQ_DRAIN)
		c->c_srv->srv_st.requests_active--;
	if (r->r_producing)
		TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
	if (r->r_params != NULL)
		evbuffer_free(r->r_params);
	evbuffer_free(r->r_body);
	free(r->r_pv);
	free(r->r_pvmem);
	free(r->r_path);
	free(r);
}

/* The request dies unfinished: tell its owner, then free it. */
static void
req_kill(struct evfcgi_req *r)
{
	if (r->r_state == REQ_HANDLER && r->r_abort != NULL)
		r->r_abort(r, r->r_abort_arg);
	req_free(r);
}

/*
 * The response is complete: free r, or keep its slot until its STDIN ends,
 * and close the connection if this was its last request.
 */
static void
req_done(struct evfcgi_req *r)
{
	struct conn		*c = r->r_conn;
	const struct evfcgi_limits *lim = &c->c_srv->srv_lim;

	c->c_served++;
	if (!r->r_keep || c->c_srv->srv_draining ||
	    (lim->max_conn_requests > 0 && c->c_served >= lim->max_conn_requests))
		c->c_close_after = 1;
	if (r->r_state == REQ_HANDLER)
		req_free(r);
	else {
		c->c_srv->srv_st.requests_active--;
		if (r->r_producing) {
			TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
			r->r_producing = 0;
		}
		r->r_state = REQ_DRAIN;
	}
	conn_maybe_close(c);
}

/*
 * Queues len bytes as STDOUT records, copied or by reference.  Returns 0,
 * or -1 when r has already finished.
 */
static int
req_stdout(struct evfcgi_req *r, const void *data, size_t len, int by_ref)
{
	static const uint8_t	 zeros[8];
	struct conn		*c = r->r_conn;
	struct evbuffer		*out;
	const uint8_t		*p = data;
	uint8_t			 hdr[FCGI_HEADER_LEN], pad;
	size_t			 n;

	if (r->r_state != REQ_HANDLER && r->r_state != REQ_STDIN)
		return -1;
	out = bufferevent_get_output(c->c_bev);
	while (len > 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		fcgi_header_encode(hdr, FCGI_STDOUT, r->r_id, (uint16_t)n, pad);
		out_add_small(out, hdr, sizeof(hdr));
		if (by_ref)
			evbuffer_add_reference(out, p, n, NULL, NULL);
		else
			evbuffer_add(out, p, n);
		if (pad > 0)
			out_add_small(out, zeros, pad);
		p += n;
		len -= n;
	}
	return 0;
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

const char *
evfcgi_path(struct evfcgi_req *r)
{
	return r->r_path != NULL ? r->r_path : "";
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

struct evfcgi_server *
evfcgi_req_server(struct evfcgi_req *r)
{
	return r->r_conn->c_srv;
}

struct event_base *
evfcgi_req_base(struct evfcgi_req *r)
{
	return r->r_conn->c_srv->srv_base;
}

static const char *
status_text(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
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

int
evfcgi_header(struct evfcgi_req *r, int status, const char *ctype,
    long long content_length)
{
	char	 buf[512];
	int	 n;

	if (content_length >= 0)
		n = snprintf(buf, sizeof(buf), "Status: %d %s\r\n"
		    "Content-Type: %s\r\nContent-Length: %lld\r\n\r\n",
		    status, status_text(status), ctype, content_length);
	else
		n = snprintf(buf, sizeof(buf), "Status: %d %s\r\n"
		    "Content-Type: %s\r\n\r\n", status, status_text(status),
		    ctype);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	r->r_headers_sent = 1;
	return req_stdout(r, buf, (size_t)n, 0);
}

int
evfcgi_write(struct evfcgi_req *r, const void *data, size_t len)
{
	return req_stdout(r, data, len, 0);
}

int
evfcgi_write_ref(struct evfcgi_req *r, const void *data, size_t len)
{
	return req_stdout(r, data, len, 1);
}

int
evfcgi_write_buffer(struct evfcgi_req *r, struct evbuffer *src, size_t len)
{
	static const uint8_t	 zeros[8];
	struct evbuffer		*out;
	uint8_t			 hdr[FCGI_HEADER_LEN], pad;
	size_t			 n;

	if (r->r_state != REQ_HANDLER || len > evbuffer_get_length(src))
		return -1;
	out = bufferevent_get_output(r->r_conn->c_bev);
	while (len > 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		fcgi_header_encode(hdr, FCGI_STDOUT, r->r_id, (uint16_t)n, pad);
		out_add_small(out, hdr, sizeof(hdr));
		evbuffer_remove_buffer(src, out, n);
		if (pad > 0)
			out_add_small(out, zeros, pad);
		len -= n;
	}
	return 0;
}

void
evfcgi_produce(struct evfcgi_req *r, evfcgi_producer fn, void *arg)
{
	struct conn	*c = r->r_conn;

	if (r->r_state != REQ_HANDLER)
		return;
	r->r_producer = fn;
	r->r_producer_arg = arg;
	if (!r->r_producing) {
		TAILQ_INSERT_TAIL(&c->c_producers, r, r_prod_entry);
		r->r_producing = 1;
	}
	conn_pump(c);
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
	struct conn	*c = r->r_conn;
	uint8_t		 hdr[FCGI_HEADER_LEN];

	if (r->r_state != REQ_HANDLER && r->r_state != REQ_STDIN)
		return;
	conn_enter(c);
	/* An empty STDOUT record ends the stream, then END_REQUEST. */
	fcgi_header_encode(hdr, FCGI_STDOUT, r->r_id, 0, 0);
	out_add_small(bufferevent_get_output(c->c_bev), hdr, sizeof(hdr));
	conn_end_request(c, r->r_id, FCGI_REQUEST_COMPLETE);
	req_done(r);
	conn_leave(c);
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

	n = snprintf(body, sizeof(body), "%d %s%s%s\n", status,
	    status_text(status), detail != NULL ? ": " : "",
	    detail != NULL ? detail : "");
	if (n < 0 || (size_t)n >= sizeof(body))
		n = (int)strlen(body);
	evfcgi_respond(r, status, "text/plain", body, (size_t)n);
}
