/*
 * conn.c: the connection layer.  One struct conn per socket: it parses
 * records from the input buffer, keeps the table of requests in flight,
 * lends them its output buffer (the bufferevent's) and paces it with
 * watermarks.  Above the high mark the connection reads no new input and
 * producers wait; the write callback at the low mark resumes both.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn.h"
#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "log.h"

/* Input may hold two whole records before reading stops. */
#define CONN_INPUT_MAX		(2 * FCGI_MAX_RECORD)

static void	conn_sockopts(struct conn *, int);
static int	conn_events_new(struct conn *, int);
static void	conn_readcb(struct bufferevent *, void *);
static void	conn_writecb(struct bufferevent *, void *);
static void	conn_eventcb(struct bufferevent *, short, void *);
static void	conn_timeoutcb(evutil_socket_t, short, void *);
static void	conn_output_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	conn_waitcb(void *);
static int	conn_write_progress(struct conn *);
static void	conn_enter(struct conn *);
static void	conn_leave(struct conn *);
static void	conn_fail(void *, const char *);
static void	conn_req_done(struct evfcgi_req *, void *);
static void	conn_req_produce(struct evfcgi_req *, void *);

static const char *const conn_state_names[] = {
	"reading", "paused", "closing", "dead"
};

/* allowed[from] has bit (1 << to) for each step a connection may take. */
static const unsigned conn_steps[] = {
	[CONN_READING] = 1u << CONN_PAUSED | 1u << CONN_CLOSING |
	    1u << CONN_DEAD,
	[CONN_PAUSED] = 1u << CONN_READING | 1u << CONN_CLOSING |
	    1u << CONN_DEAD,
	[CONN_CLOSING] = 1u << CONN_DEAD,
	[CONN_DEAD] = 0
};

static const struct req_ops conn_req_ops = {
	.ro_done = conn_req_done,
	.ro_produce = conn_req_produce,
	.ro_failed = conn_fail
};

struct conn *
conn_new(const struct conn_env *env, int fd, const char *peer)
{
	struct conn	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		evutil_closesocket(fd);
		return NULL;
	}
	c->c_env = env;
	TAILQ_INIT(&c->c_reqs);
	TAILQ_INIT(&c->c_params);
	TAILQ_INIT(&c->c_producers);
	snprintf(c->c_peer, sizeof(c->c_peer), "%s", peer);
	conn_sockopts(c, fd);
	if (conn_events_new(c, fd) == -1) {
		free(c);
		return NULL;
	}
	c->c_link.rl_out = bufferevent_get_output(c->c_bev);
	c->c_link.rl_base = env->ce_base;
	c->c_link.rl_srv = env->ce_srv;
	c->c_link.rl_lim = env->ce_lim;
	c->c_link.rl_st = env->ce_st;
	c->c_link.rl_input = env->ce_input;
	c->c_link.rl_ops = &conn_req_ops;
	c->c_link.rl_owner = c;
	c->c_link.rl_peer = c->c_peer;
	c->c_wait.bw_fn = conn_waitcb;
	c->c_wait.bw_arg = c;
	env->ce_st->connections++;
	env->ce_st->connections_total++;
	c->c_state = CONN_READING;
	log_debug("%s: connected", c->c_peer);
	conn_timer_update(c);
	return c;
}

/* Socket options of an accepted connection; failures only cost speed. */
static void
conn_sockopts(struct conn *c, int fd)
{
	int	 one = 1, sb = (int)c->c_env->ce_lim->sndbuf;

	/* Answers are small writes on kept connections: never wait for Nagle. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * Without a cap the kernel grows the send buffer of a socket its
	 * reader drains slowly up to tcp_wmem's max: megabytes per slow
	 * client, beyond the watermarks that bound what evfcgid holds.
	 */
	if (sb > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb,
	    sizeof(sb)) == -1)
		log_warn("%s: SO_SNDBUF %d: %s", c->c_peer, sb,
		    strerror(errno));
	evutil_make_socket_nonblocking(fd);
}

/*
 * Makes c's bufferevent on fd (which it then owns) and its timer, with the
 * watermarks and the write timeout.  Returns 0, or -1 with fd closed.
 */
static int
conn_events_new(struct conn *c, int fd)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	struct timeval			 wt = { lim->write_timeout / 2,
	    lim->write_timeout % 2 * 500000 };

	c->c_bev = bufferevent_socket_new(c->c_env->ce_base, fd,
	    BEV_OPT_CLOSE_ON_FREE);
	c->c_timer = evtimer_new(c->c_env->ce_base, conn_timeoutcb, c);
	if (c->c_bev == NULL || c->c_timer == NULL ||
	    evbuffer_add_cb(bufferevent_get_output(c->c_bev), conn_output_cb,
	    c) == NULL) {
		if (c->c_bev != NULL)
			bufferevent_free(c->c_bev);
		else
			evutil_closesocket(fd);
		if (c->c_timer != NULL)
			event_free(c->c_timer);
		return -1;
	}
	bufferevent_setcb(c->c_bev, conn_readcb, conn_writecb, conn_eventcb, c);
	bufferevent_setwatermark(c->c_bev, EV_READ, 0, CONN_INPUT_MAX);
	bufferevent_setwatermark(c->c_bev, EV_WRITE, lim->low_water, 0);
	bufferevent_set_timeouts(c->c_bev, NULL, &wt);
	bufferevent_enable(c->c_bev, EV_READ | EV_WRITE);
	return 0;
}

/*
 * Moves c to state s; the one place where a connection changes state, so a
 * trace at debug level shows every transition.  Returns 0, or -1 (logged,
 * nothing changed) when a connection cannot take that step.
 */
int
conn_set_state(struct conn *c, enum conn_state s)
{
	if (c->c_state == s)
		return 0;
	if ((conn_steps[c->c_state] & (1u << s)) == 0) {
		log_err("%s: no step from %s to %s", c->c_peer,
		    conn_state_names[c->c_state], conn_state_names[s]);
		return -1;
	}
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
	return 0;
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
	const struct conn_env	*env = c->c_env;
	struct evbuffer		*out;
	struct evfcgi_req	*r;

	if (c->c_state == CONN_DEAD)
		return;
	if (why != NULL)
		log_info("%s: closing: %s", c->c_peer, why);
	else
		log_debug("%s: closed", c->c_peer);
	conn_set_state(c, CONN_DEAD);
	while ((r = TAILQ_FIRST(&c->c_reqs)) != NULL) {
		TAILQ_REMOVE(&c->c_reqs, r, r_entry);
		if (r->r_state == REQ_HANDLER)
			env->ce_st->aborted++;
		req_kill(r);
	}
	reqtab_free(&c->c_tab);
	out = bufferevent_get_output(c->c_bev);
	evbuffer_remove_cb(out, conn_output_cb, c);
	budget_add(env->ce_budget, -(long long)evbuffer_get_length(out));
	budget_cancel(env->ce_budget, &c->c_wait);
	budget_kick(env->ce_budget);
	bufferevent_free(c->c_bev);
	c->c_bev = NULL;
	event_free(c->c_timer);
	c->c_timer = NULL;
	env->ce_st->connections--;
	env->ce_closed(env->ce_arg, c);
	if (c->c_in_cb == 0)
		free(c);
}

/* Closes c at once for what its peer did wrong (counted, logged). */
void
conn_error(struct conn *c, const char *why)
{
	c->c_env->ce_st->closed_on_error++;
	conn_close(c, why);
}

/*
 * Output could not be queued (out of memory): the stream may hold a cut
 * record.  Reading stops and c closes on the next loop turn, so that no
 * request is freed under the application that is writing to it.
 */
static void
conn_fail(void *arg, const char *why)
{
	struct conn	*c = arg;
	struct timeval	 now = { 0, 0 };

	if (c->c_state == CONN_DEAD || c->c_fail_why != NULL)
		return;
	c->c_fail_why = why;
	c->c_link.rl_broken = 1;
	bufferevent_disable(c->c_bev, EV_READ | EV_WRITE);
	c->c_timer_kind = TIMER_FAIL;
	evtimer_add(c->c_timer, &now);
}

/* Checks an fcgi_out result of the connection's own; returns rc. */
int
conn_out(struct conn *c, int rc)
{
	if (rc == -1)
		conn_fail(c, "out of memory queueing output");
	return rc;
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
	    bufferevent_get_output(c->c_bev)) > c->c_env->ce_lim->low_water;
}

/* Keeps the count of output queued in all connections exact. */
static void
conn_output_cb(struct evbuffer *buf, const struct evbuffer_cb_info *info,
    void *arg)
{
	struct conn	*c = arg;

	(void)buf;
	budget_add(c->c_env->ce_budget,
	    (long long)info->n_added - (long long)info->n_deleted);
	/* Bytes written: the write timeout counts afresh. */
	if (info->n_deleted > 0)
		c->c_stuck = 0;
}

/*
 * The write timer (half the write timeout) ran out with output queued and
 * nothing written.  Behind a front end a slow client's progress shows only
 * in steps, as the front end takes a buffer's worth at a time, and the
 * kernel's send buffer hides it from writes: so the peer counts as reading
 * while the kernel's send queue shrinks.  Returns 1 when it did since the
 * last look (or this is the first), 0 after a whole write timeout without.
 */
static int
conn_write_progress(struct conn *c)
{
	int	 outq = -1;

	if (ioctl(bufferevent_getfd(c->c_bev), SIOCOUTQ, &outq) == -1)
		outq = -1;
	if (c->c_stuck == 0 || (outq >= 0 && outq < c->c_outq)) {
		c->c_outq = outq;
		c->c_stuck = 1;
		return 1;
	}
	return ++c->c_stuck <= 2;
}

/*
 * Closes c if it was told to close after its last request and none is left:
 * at once when its output is empty, else once the output is flushed.
 */
void
conn_maybe_close(struct conn *c)
{
	if (!c->c_close_after || c->c_tab.rt_n > 0 || c->c_state == CONN_DEAD ||
	    conn_input_pending(c))
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

int
conn_req_add(struct conn *c, struct evfcgi_req *r)
{
	if (reqtab_add(&c->c_tab, r) == -1)
		return -1;
	TAILQ_INSERT_TAIL(&c->c_reqs, r, r_entry);
	TAILQ_INSERT_TAIL(&c->c_params, r, r_params_entry);
	c->c_nparams++;
	return 0;
}

void
conn_req_unlink(struct conn *c, struct evfcgi_req *r)
{
	reqtab_del(&c->c_tab, r);
	TAILQ_REMOVE(&c->c_reqs, r, r_entry);
	if (r->r_state == REQ_PARAMS) {
		TAILQ_REMOVE(&c->c_params, r, r_params_entry);
		c->c_nparams--;
	}
	if (r->r_state == REQ_HANDLER || r->r_state == REQ_DONE)
		c->c_nhandler--;
	if (r->r_producing) {
		TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
		r->r_producing = 0;
	}
	/* A BEGIN held by max_reqs may go now: read it on the next turn. */
	if (c->c_held && c->c_state != CONN_DEAD) {
		c->c_held = 0;
		bufferevent_trigger(c->c_bev, EV_READ,
		    BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
	}
}

void
conn_req_free(struct conn *c, struct evfcgi_req *r)
{
	conn_req_unlink(c, r);
	req_free(r);
}

/*
 * A request queued its END_REQUEST: free it (or keep its slot until its
 * STDIN ends), and close the connection if this was its last request.
 */
static void
conn_req_done(struct evfcgi_req *r, void *arg)
{
	struct conn			*c = arg;
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;

	conn_enter(c);
	c->c_served++;
	if (!r->r_keep || (lim->max_conn_requests > 0 &&
	    c->c_served >= lim->max_conn_requests))
		c->c_close_after = 1;
	if (r->r_state == REQ_DONE)
		conn_req_free(c, r);
	else if (r->r_producing) {
		TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
		r->r_producing = 0;
	}
	conn_maybe_close(c);
	conn_leave(c);
}

/* A request has a producer: queue it and fill what room there is. */
static void
conn_req_produce(struct evfcgi_req *r, void *arg)
{
	struct conn	*c = arg;

	if (!r->r_producing) {
		TAILQ_INSERT_TAIL(&c->c_producers, r, r_prod_entry);
		r->r_producing = 1;
	}
	conn_pump(c);
}

/*
 * Arms the one timer a connection needs now: the deadline of the oldest
 * request whose PARAMS are incomplete (each request has its own, counted
 * from its BEGIN_REQUEST), or an idle timeout (restarted by every read)
 * while input is awaited, or none while only the application or the output
 * is pending (the bufferevent's write timeout watches the output); and,
 * before any of those, the deadline of a record begun and not finished
 * (header_timeout from its first byte, so a trickle cannot hold a slot).
 */
void
conn_timer_update(struct conn *c)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	enum conn_timer			 want = TIMER_NONE;
	struct timeval			 span = { lim->header_timeout, 0 };
	struct timeval			 now, due, rdue, tv;
	int				 awaiting, idle;

	if (c->c_timer_kind == TIMER_FAIL)
		return;
	event_base_gettimeofday_cached(c->c_env->ce_base, &now);
	/* Requests in STDIN or DRAIN wait for input. */
	awaiting = c->c_tab.rt_n > c->c_nparams + c->c_nhandler;
	idle = c->c_tab.rt_n == 0 &&
	    evbuffer_get_length(bufferevent_get_output(c->c_bev)) == 0;
	if (!TAILQ_EMPTY(&c->c_params)) {
		want = TIMER_HEADER;
		timeradd(&TAILQ_FIRST(&c->c_params)->r_begun, &span, &due);
	} else if (c->c_state == CONN_READING && (awaiting || idle)) {
		want = TIMER_IDLE;
		tv.tv_sec = lim->idle_timeout;
		tv.tv_usec = 0;
		timeradd(&now, &tv, &due);
	}
	if (c->c_partial) {
		timeradd(&c->c_partial_since, &span, &rdue);
		if (want == TIMER_NONE || timercmp(&rdue, &due, <)) {
			want = TIMER_RECORD;
			due = rdue;
		}
	}
	c->c_timer_kind = want;
	if (want == TIMER_NONE) {
		evtimer_del(c->c_timer);
		return;
	}
	if (timercmp(&due, &now, >))
		timersub(&due, &now, &tv);
	else
		timerclear(&tv);
	evtimer_add(c->c_timer, &tv);
}

static void
conn_timeoutcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	conn_enter(c);
	if (c->c_timer_kind == TIMER_FAIL)
		conn_error(c, c->c_fail_why);
	else if (c->c_timer_kind == TIMER_HEADER)
		conn_error(c, "header timeout: PARAMS incomplete");
	else if (c->c_timer_kind == TIMER_RECORD)
		conn_error(c, "record timeout: a record still incomplete");
	else if (c->c_tab.rt_n > 0)
		conn_error(c, "idle timeout: request body stalled");
	else
		conn_close(c, NULL);
	conn_leave(c);
}

/* Output fell to the low mark (or, when closing, to zero). */
static void
conn_writecb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

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
	budget_kick(c->c_env->ce_budget);
	conn_leave(c);
}

static void
conn_eventcb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;
	char		 why[128];

	(void)bev;
	conn_enter(c);
	if (what & BEV_EVENT_EOF) {
		c->c_eof = 1;
		if (c->c_state == CONN_READING || c->c_state == CONN_PAUSED)
			bufferevent_disable(c->c_bev, EV_READ);
		/* Records still unread are acted on first (then this runs). */
		if (!conn_input_pending(c))
			conn_input_ended(c);
	} else if (what & BEV_EVENT_TIMEOUT) {
		if (conn_write_progress(c)) {
			/* libevent stopped writing at the timeout: go on. */
			bufferevent_enable(c->c_bev, EV_WRITE);
			conn_leave(c);
			return;
		}
		snprintf(why, sizeof(why), "no write progress for %d s",
		    c->c_env->ce_lim->write_timeout);
		conn_error(c, why);
	} else {
		snprintf(why, sizeof(why), "socket error: %s",
		    evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
		conn_close(c, why);
	}
	conn_leave(c);
}

void
conn_input_ended(struct conn *c)
{
	struct evfcgi_req	*r, *next;

	/* What still waits for input is dead; the rest is answered. */
	for (r = TAILQ_FIRST(&c->c_reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, r_entry);
		if (r->r_state != REQ_HANDLER)
			conn_req_free(c, r);
	}
	c->c_close_after = 1;
	conn_maybe_close(c);
}

/* The global cap has room again: c's producers may go on. */
static void
conn_waitcb(void *arg)
{
	conn_pump(arg);
}

void
conn_pump(struct conn *c)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	struct evbuffer			*out;
	struct evfcgi_req		*r;
	size_t				 len;

	if (c->c_state == CONN_DEAD || c->c_state == CONN_CLOSING)
		return;
	out = bufferevent_get_output(c->c_bev);
	conn_enter(c);
	while ((r = TAILQ_FIRST(&c->c_producers)) != NULL &&
	    c->c_state != CONN_DEAD && !c->c_link.rl_broken) {
		len = evbuffer_get_length(out);
		if (len >= lim->high_water)
			break;
		if (budget_over(c->c_env->ce_budget)) {
			budget_wait(c->c_env->ce_budget, &c->c_wait);
			break;
		}
		/* Round robin between the requests multiplexed on c. */
		TAILQ_REMOVE(&c->c_producers, r, r_prod_entry);
		TAILQ_INSERT_TAIL(&c->c_producers, r, r_prod_entry);
		(void)req_produce(r, lim->high_water - len);
	}
	conn_leave(c);
}
