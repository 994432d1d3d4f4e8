/*
 * conn.c: the connection layer.  One struct conn per socket: it reads into
 * its input buffer, keeps the table of requests in flight, lends them its
 * output buffer and paces it with watermarks.  Above the high mark the
 * connection reads no new input and producers wait; a write that brings
 * the output to the low mark resumes both.
 *
 * Writes go first.  The answers to what one read brought are gathered in
 * the stage (fcgi_out.h) while the output buffer is empty, and leave in
 * one writev() at the end of the read callback; only what the kernel does
 * not take is queued.  Output queued in other callbacks leaves in one write
 * as soon as that callback is done (the write event is made active, which
 * costs no system call).  The write event waits on the kernel only while
 * the kernel refuses bytes.  Reads go straight into the input buffer, one
 * read() per readable event.  So a request on a kept connection costs one
 * read() and one writev(), nothing is asked of epoll and nothing is
 * allocated for it.
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "conn.h"
#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "linger.h"
#include "log.h"

/* Input may hold two whole records before reading stops. */
#define CONN_INPUT_MAX		(2 * FCGI_MAX_RECORD)

/* One read() takes at most this much (the loop is single-threaded). */
#define CONN_READ_MAX		65536
/* A cut answer's connection is reset this long after its output is out:
   time for the front end to read it (Linux drops what it has not read). */
#define CONN_CUT_DELAY_MS	100
/* A holder is judged each this long by what its peer drained: less than
   its high mark in this time, a slow reader, kept thin in a spike. */
#define CONN_THIN_MS		100
static unsigned char	conn_scratch[CONN_READ_MAX];

/* The stage, lent to one connection at a time during its read callback. */
static struct fcgi_stage	conn_stage;

static void	conn_sockopts(struct conn *, int);
static int	conn_events_new(struct conn *, int);
static void	conn_readcb(evutil_socket_t, short, void *);
static void	conn_read(struct conn *);
static void	conn_read_ended(struct conn *);
static int	conn_io_error(struct conn *);
static void	conn_writecb(evutil_socket_t, short, void *);
static void	conn_flush(struct conn *);
static void	conn_written(struct conn *);
static void	conn_stage_lend(struct conn *);
static void	conn_stage_flush(struct conn *);
static void	conn_low_mark(struct conn *);
static void	conn_write_timeout(struct conn *);
static int	conn_idle_due(struct conn *);
static void	conn_close_flushed(struct conn *);
static void	conn_timeoutcb(evutil_socket_t, short, void *);
static void	conn_holding(struct conn *, int);
static void	conn_thin(struct conn *, int);
static uint32_t	conn_now_ms(const struct conn *);
static void	conn_fed(struct conn *);
static void	conn_sent(struct conn *, size_t);
static void	conn_output_cb(struct evbuffer *,
		    const struct evbuffer_cb_info *, void *);
static void	conn_waitcb(void *);
static void	conn_pwakecb(evutil_socket_t, short, void *);
static void	conn_pump_room(struct conn *, int);
static int	conn_cuts_answer(const struct conn *);
static void	conn_fail_in(struct conn *, const char *, int);
static void	conn_close_now(struct conn *, const char *);
static int	conn_cut_all(struct conn *);
static void	conn_reset(int);
static struct evfcgi_req *conn_producer_next(struct conn *, size_t, int);
static void	conn_producers_wake(struct conn *);
static void	conn_producers_later(struct conn *);
static int	conn_write_progress(struct conn *);
static void	conn_enter(struct conn *);
static void	conn_leave(struct conn *);
static void	conn_req_done(struct evfcgi_req *, void *);
static void	conn_req_produce(struct evfcgi_req *, int, void *);
static void	conn_req_resume(struct evfcgi_req *, void *);
static void	conn_req_failed(void *, const char *);
static void	conn_kick_bodies(struct conn *);
static void	conn_kick_forget(struct conn *, struct evfcgi_req *);

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

const struct req_ops conn_req_ops = {
	.ro_done = conn_req_done,
	.ro_produce = conn_req_produce,
	.ro_failed = conn_req_failed,
	.ro_resume = conn_req_resume
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
	/* While shares are below the high mark (many hold output), a new
	   connection starts at the floor: see conn_high(). */
	c->c_allow = budget_share(env->ce_budget) < env->ce_lim->high_water ?
	    env->ce_budget->b_floor : env->ce_lim->high_water;
	TAILQ_INIT(&c->c_reqs);
	TAILQ_INIT(&c->c_params);
	TAILQ_INIT(&c->c_producers);
	snprintf(c->c_peer, sizeof(c->c_peer), "%s", peer);
	conn_sockopts(c, fd);
	if (conn_events_new(c, fd) == -1) {
		free(c);
		return NULL;
	}
	c->c_link.rl_out.fo_queue = c->c_out;
	c->c_link.rl_env = &env->ce_req;
	c->c_link.rl_owner = c;
	c->c_link.rl_peer = c->c_peer;
	c->c_wait.bw_fn = conn_waitcb;
	c->c_wait.bw_arg = c;
	env->ce_st->connections++;
	env->ce_st->connections_total++;
	log_debug("%s: connected", c->c_peer);
	conn_timer_update(c);
	return c;
}

/* Socket options of an accepted connection; failures only cost speed. */
static void
conn_sockopts(struct conn *c, int fd)
{
	int	 one = 1, sb = (int)c->c_env->ce_lim->sndbuf;

	/*
	 * Answers are small writes on kept connections: never wait for
	 * Nagle.  It fails on a unix socket (EOPNOTSUPP), which has no
	 * acknowledgements to wait for: there the bytes the peer has not
	 * read yet are all the send buffer holds, and a quarter of the TCP
	 * size (16 KiB by default) feeds a reader of 32 KiB at a time
	 * (nginx's fastcgi_buffer_size in the example) while a slow
	 * client's bytes wait in the daemon's share, not the kernel.
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1) {
		c->c_unix = 1;
		sb /= 4;
	}
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
 * Makes c's buffers and events on fd (which c then owns) and starts
 * reading.  Returns 0, or -1 with fd closed and nothing left allocated.
 */
static int
conn_events_new(struct conn *c, int fd)
{
	struct event_base	*base = c->c_env->ce_base;

	c->c_fd = fd;
	c->c_out = evbuffer_new();
	if (c->c_out == NULL ||
	    evbuffer_add_cb(c->c_out, conn_output_cb, c) == NULL) {
		if (c->c_out != NULL)
			evbuffer_free(c->c_out);
		evutil_closesocket(fd);
		return -1;
	}
	evtimer_assign(&c->c_timer, base, conn_timeoutcb, c);
	event_assign(&c->c_rev, base, fd, EV_READ | EV_PERSIST, conn_readcb,
	    c);
	event_assign(&c->c_wev, base, fd, EV_WRITE | EV_PERSIST, conn_writecb,
	    c);
	c->c_state = CONN_READING;
	conn_read_update(c);
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
	c->c_state = s;
	if (s == CONN_READING && !c->c_stream_held)
		conn_params_resume(c);
	else if (s == CONN_PAUSED)
		conn_params_hold(c);
	if (s != CONN_DEAD)
		conn_read_update(c);
	return 0;
}

void
conn_read_update(struct conn *c)
{
	int	 want;

	want = c->c_state == CONN_READING && !c->c_eof &&
	    c->c_fail_why == NULL &&
	    conn_input_len(c) < CONN_INPUT_MAX && !conn_input_paused(c);
	if (want == c->c_reading)
		return;
	if (want)
		event_add(&c->c_rev, NULL);
	else
		event_del(&c->c_rev);
	c->c_reading = want;
}

size_t
conn_input_len(const struct conn *c)
{
	return c->c_in != NULL ? evbuffer_get_length(c->c_in) : 0;
}

int
conn_input_pending(struct conn *c)
{
	struct evbuffer		*in = c->c_in;
	struct fcgi_header	 h;
	uint8_t			 hb[FCGI_HEADER_LEN];

	if (in == NULL ||
	    evbuffer_copyout(in, hb, sizeof(hb)) < (ev_ssize_t)sizeof(hb) ||
	    fcgi_header_decode(hb, sizeof(hb), &h) < 0)
		return 0;
	return evbuffer_get_length(in) >= fcgi_record_len(&h);
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

/*
 * Whether closing c now cuts an answer: one was cut already, one begun is
 * unfinished, or output is still queued.  Such a close must reach the
 * front end as an error: a plain close at a FastCGI record boundary let
 * nginx end a chunked answer cleanly, and its client took the cut answer
 * for a whole one (issue 27).
 */
static int
conn_cuts_answer(const struct conn *c)
{
	const struct req_head	*h;

	if (c->c_link.rl_cut ||
	    (c->c_out != NULL && evbuffer_get_length(c->c_out) > 0))
		return 1;
	TAILQ_FOREACH(h, &c->c_reqs, h_entry)
		if (h->h_out == OUT_HEADER)
			return 1;
	return 0;
}

/* The close of fd resets the connection (SO_LINGER 0): an RST, no FIN. */
static void
conn_reset(int fd)
{
	struct linger	 l = { 1, 0 };

	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
}

/*
 * Tears c down at once, aborting its requests (abort callbacks run); a
 * close that cuts an answer goes out as the cut mark and a reset.  env's
 * closed callback runs; c is freed unless one of its callbacks runs.
 */
static void
conn_close_now(struct conn *c, const char *why)
{
	const struct conn_env	*env = c->c_env;
	struct evbuffer		*out;
	struct req_head		*h;
	struct evfcgi_req	*r;
	int			 reset;

	if (c->c_state == CONN_DEAD)
		return;
	/* The peer gets what it can take of a cut answer before the reset
	   (a front end that has its header reports the cut to its client). */
	if ((reset = conn_cuts_answer(c)) && c->c_fd != -1 && c->c_out != NULL &&
	    !c->c_staging) {
		/* The mark after it, so that a unix socket's EOF is no end. */
		if (!c->c_link.rl_cut && !c->c_link.rl_broken)
			(void)fcgi_out_cut(&c->c_link.rl_out);
		(void)evbuffer_write(c->c_out, c->c_fd);
	}
	if (why != NULL)
		log_info("%s: closing: %s", c->c_peer, why);
	else
		log_debug("%s: closed", c->c_peer);
	conn_set_state(c, CONN_DEAD);
	/*
	 * Abort callbacks run below: one that answers another request of c
	 * queues nothing (the stream is broken), and whatever it ends, c
	 * is freed only once this close is done (conn_leave()).
	 */
	c->c_link.rl_broken = 1;
	conn_enter(c);
	while ((h = TAILQ_FIRST(&c->c_reqs)) != NULL) {
		TAILQ_REMOVE(&c->c_reqs, h, h_entry);
		r = req_of(h);
		if (req_held(r))
			env->ce_st->aborted++;
		req_kill(r);
	}
	reqtab_free(&c->c_tab);
	if (c->c_staging) {
		/* Skipping all of it queues nothing: the stage comes back. */
		(void)fcgi_out_spill(&c->c_link.rl_out, SIZE_MAX);
		c->c_staging = 0;
	}
	out = c->c_out;
	evbuffer_remove_cb(out, conn_output_cb, c);
	c->c_thin = 0;		/* closing: its send buffer stays as it is */
	conn_holding(c, 0);
	budget_add(env->ce_budget, -(long long)evbuffer_get_length(out));
	budget_cancel(env->ce_budget, &c->c_wait);
	budget_kick(env->ce_budget);
	event_del(&c->c_rev);
	event_del(&c->c_wev);
	c->c_reading = c->c_writing = 0;
	conn_input_free(c);
	evbuffer_free(c->c_out);
	c->c_in = c->c_out = NULL;
	if (c->c_fd != -1) {
		if (reset)
			conn_reset(c->c_fd);
		evutil_closesocket(c->c_fd);
	}
	c->c_fd = -1;
	evtimer_del(&c->c_timer);
	if (c->c_pwake != NULL)
		event_free(c->c_pwake);
	c->c_pwake = NULL;
	env->ce_st->connections--;
	env->ce_closed(env->ce_arg, c);
	conn_leave(c);
}

/*
 * Closes c, done with nothing left in its output buffer.  When the kernel
 * still holds bytes of the answer (a peer that reads slowly, as a front
 * end does with a slow client behind it), the socket goes to the server's
 * linger set instead of being closed: an orphaned socket behind a zero
 * window is reset by the kernel within minutes, cutting the answer.  A
 * connection that cut an answer is reset instead, CONN_CUT_DELAY_MS on.
 */
static void
conn_close_flushed(struct conn *c)
{
	int	 outq = 0;

	/* A cut answer: the peer reads what was queued before the reset
	   drops what it has not read. */
	if (c->c_link.rl_cut) {
		conn_fail_in(c, "an answer was cut", CONN_CUT_DELAY_MS);
		return;
	}
	if (c->c_env->ce_linger != NULL &&
	    ioctl(c->c_fd, SIOCOUTQ, &outq) == 0 && outq > 0 &&
	    linger_start(c->c_env->ce_linger, c->c_fd, outq, c->c_peer) == 1)
		c->c_fd = -1;
	conn_close_now(c, NULL);
}

/*
 * c closes ms milliseconds from now (0: on the next loop turn), for why,
 * as a failure (counted): reading and writing stop at once, so that no
 * request is freed under the application that is writing to it.
 */
static void
conn_fail_in(struct conn *c, const char *why, int ms)
{
	struct timeval	 now = { ms / 1000, ms % 1000 * 1000 };

	if (c->c_state == CONN_DEAD || c->c_fail_why != NULL)
		return;
	c->c_fail_why = why;
	c->c_link.rl_broken = 1;
	conn_read_update(c);
	event_del(&c->c_wev);
	c->c_writing = 0;
	c->c_thin = 0;
	conn_holding(c, 0);
	c->c_timer_kind = TIMER_FAIL;
	c->c_idle_lazy = 0;
	evtimer_add(&c->c_timer, &now);
}

/* The request layer's ro_failed: its owner is the connection. */
static void
conn_req_failed(void *owner, const char *why)
{
	conn_end(owner, CONN_NEXT_TURN, CONN_ERROR, why);
}

/* Checks an fcgi_out result of the connection's own; returns rc. */
int
conn_out(struct conn *c, int rc)
{
	if (rc == -1)
		conn_end(c, CONN_NEXT_TURN, CONN_ERROR, "out of memory queueing output");
	return rc;
}

void
conn_end(struct conn *c, enum conn_when when, enum conn_how how,
    const char *why)
{
	if (c->c_state == CONN_DEAD)
		return;
	if (how == CONN_RESET && conn_cut_all(c) == -1)
		return;
	switch (when) {
	case CONN_NOW:
		if (how == CONN_ERROR)
			c->c_env->ce_st->closed_on_error++;
		conn_close_now(c, why);
		break;
	case CONN_NEXT_TURN:
		conn_fail_in(c, why, 0);
		break;
	case CONN_FLUSHED:
		c->c_close_after = 1;
		conn_enter(c);
		conn_maybe_close(c);
		conn_leave(c);
		break;
	}
}

/*
 * conn_end()'s CONN_RESET: every request of c ends now (abort callbacks
 * run), an answer begun or any request in flight is cut (the cut mark
 * queued, req_link_cut()), and c takes nothing more.  Returns 0, or -1
 * when c was cut already (once is all it takes).
 */
static int
conn_cut_all(struct conn *c)
{
	struct req_head		*h;
	struct evfcgi_req	*r;
	int			 dead;

	if (c->c_cut)
		return -1;
	c->c_cut = 1;
	conn_enter(c);
	if (conn_cuts_answer(c) || c->c_tab.rt_n > 0)
		req_link_cut(&c->c_link);
	c->c_close_after = 1;
	c->c_first_due = 0;
	/* Abort callbacks may end other requests: take the first each time. */
	while ((h = TAILQ_FIRST(&c->c_reqs)) != NULL) {
		r = req_of(h);
		conn_req_unlink(c, r);
		if (req_answerable(r))
			c->c_env->ce_st->aborted++;
		req_kill(r);
	}
	dead = c->c_state == CONN_DEAD;
	conn_leave(c);		/* may free c, if it died */
	return dead ? -1 : 0;
}

int
conn_stalled(const struct conn *c)
{
	return c->c_out != NULL && conn_out_len(c) > c->c_env->ce_lim->low_water;
}

void
conn_drain_fresh(struct conn *c)
{
	c->c_first_due = 1;
	conn_end(c, CONN_FLUSHED, CONN_CLOSE, NULL);
}

/* c begins or ends holding output the kernel refused: shares change. */
static void
conn_holding(struct conn *c, int on)
{
	if (c->c_holding == (unsigned)on)
		return;
	c->c_holding = on;
	if (on) {
		c->c_fed_ms = conn_now_ms(c);
		c->c_fed_bytes = 0;
	}
	budget_hold(c->c_env->ce_budget, on, evbuffer_get_length(c->c_out));
	if (!on)
		conn_thin(c, 0);	/* conn_written() cuts it */
}

/* The loop's time (cached), in milliseconds, modulo 2^32. */
static uint32_t
conn_now_ms(const struct conn *c)
{
	struct timeval	 now;

	event_base_gettimeofday_cached(c->c_env->ce_base, &now);
	return (uint32_t)((uint64_t)now.tv_sec * 1000 +
	    (uint64_t)now.tv_usec / 1000);
}

/*
 * In a spike (so many holders that the shares are below --high-water) a
 * slow holder, one whose peer drains less than its high mark in
 * CONN_THIN_MS (conn_fed), keeps little besides its share until it holds
 * no more: its queue's copies go in 4 KiB chains (fcgi_out's fo_small),
 * and on a unix socket its send buffer is cut to half --share-floor
 * (doubled by the kernel: 8 KiB by default), then given back.  Its bytes
 * wait in its share instead, and nothing on a unix socket waits for an
 * acknowledgement, so a reader of any speed is fed 8 KiB at a time.  (At
 * the kernel's least, about 4.5 KiB, the front end reads twice as often:
 * beside 10,000 slow clients the fast ones kept about a tenth less.)  Over TCP a small
 * buffer would wait on delayed acknowledgements: TCP_NOTSENT_LOWAT caps
 * instead what the kernel holds unsent, at --share-floor, and leaves what
 * is in flight to the window.  300 slow readers on loopback at
 * --max-queued 16m: 100 KiB each in evfcgid's send queues before, 9 to
 * 13.5 KiB with it, their queues in evfcgid at their share (48 KiB), a
 * fast /big beside them at 1.01 of its rate without (three pairs).  With
 * --sndbuf 0 the kernel's own tuning is kept.  Two system calls per slow
 * answer, in a spike only.  A fast reader's answer is refused in part too
 * (a 96 KiB /big does not fit a unix buffer) but drains in milliseconds:
 * thinned as well, as it was before CONN_THIN_MS, each /big took 12
 * front-end reads instead of 3, and beside 3000 throttled readers on
 * loopback the fast load kept 0.668 of its twin (0.953 to 0.978 judged).
 */
static void
conn_thin(struct conn *c, int on)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	int				 sb;

	if (c->c_thin == (unsigned)on ||
	    (on && budget_share(c->c_env->ce_budget) >= lim->high_water))
		return;
	c->c_thin = on;
	c->c_link.rl_out.fo_small = on;
	if (!c->c_unix && lim->sndbuf > 0) {
		/* 0 gives back the host's (net.ipv4.tcp_notsent_lowat). */
		sb = !on ? 0 : lim->share_floor < INT_MAX ?
		    (int)lim->share_floor : INT_MAX;
		(void)setsockopt(c->c_fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &sb,
		    sizeof(sb));
		return;
	}
	/* Half the floor cuts nothing when it is not below the usual. */
	if (!c->c_unix || lim->sndbuf == 0 ||
	    lim->share_floor / 2 >= lim->sndbuf / 4)
		return;
	sb = (int)(on ? lim->share_floor / 2 : lim->sndbuf / 4);
	(void)setsockopt(c->c_fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
}

/*
 * c holds output after a write.  Once a window of CONN_THIN_MS is over it
 * is judged by what its peer drained in it: less than its high mark in
 * CONN_THIN_MS, a slow reader, kept thin (now, or when a spike begins);
 * more, a fast one, given its buffer back (one the loaded machine kept
 * waiting once).  A new window begins.
 */
static void
conn_fed(struct conn *c)
{
	uint32_t	 now = conn_now_ms(c), ms = now - c->c_fed_ms;

	if (ms < CONN_THIN_MS)
		return;
	conn_thin(c, (uint64_t)c->c_fed_bytes * CONN_THIN_MS <
	    (uint64_t)conn_high(c) * ms);
	c->c_fed_ms = now;
	c->c_fed_bytes = 0;
}

/*
 * n bytes of c's output went to the kernel, from its queue or straight
 * from the stage: the write timeout counts afresh, and a holder's window
 * (conn_fed) counts them.
 */
static void
conn_sent(struct conn *c, size_t n)
{
	c->c_stuck = 0;
	c->c_env->ce_st->bytes_written += n;
	if (c->c_holding)
		c->c_fed_bytes = n < UINT32_MAX - c->c_fed_bytes ?
		    c->c_fed_bytes + (uint32_t)n : UINT32_MAX;
}

/*
 * The share, but no more than c has shown it drains: c_allow starts at the
 * floor when c comes while shares are below the high mark, and doubles
 * each time c's peer reads its output down to its low mark after the
 * kernel refused some (a fast peer at once, a modem in seconds).
 * Thousands of slow readers arriving together queue a floor each, not the
 * larger share the first of them would see, which they would keep until
 * read (a minute at 4 KB/s); in quiet times a new connection pays no
 * steps.
 */
size_t
conn_high(const struct conn *c)
{
	size_t	 share = budget_share(c->c_env->ce_budget);

	return c->c_allow < share ? c->c_allow : share;
}

size_t
conn_low(const struct conn *c)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	size_t				 share = conn_high(c);

	if (share >= lim->high_water)
		return lim->low_water;
	return (size_t)((uint64_t)lim->low_water * share / lim->high_water);
}

size_t
conn_out_len(const struct conn *c)
{
	return fcgi_out_len(&c->c_link.rl_out);
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
	if (c->c_holding)
		budget_held(c->c_env->ce_budget,
		    (long long)info->n_added - (long long)info->n_deleted);
	if (info->n_deleted > 0)
		conn_sent(c, info->n_deleted);
	/* New output leaves once the running callback is done (staging, at
	   its end anyway). */
	if (info->n_added > 0 && !c->c_flush_due && !c->c_writing &&
	    !c->c_staging && c->c_fail_why == NULL) {
		c->c_flush_due = 1;
		event_active(&c->c_wev, EV_WRITE, 1);
	}
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

	if (ioctl(c->c_fd, SIOCOUTQ, &outq) == -1)
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
	    c->c_in_records || conn_input_pending(c) || c->c_first_due)
		return;
	if (conn_out_len(c) == 0)
		conn_close_flushed(c);
	else
		conn_set_state(c, CONN_CLOSING);
}

/*
 * Readable: one read() into the input, then the records in it.  Made
 * active with EV_TIMEOUT instead, c only looks at what it holds (a
 * streamed body's handler took what it had: held input may go on).  The
 * bodies kicked are handed over first, either way: both can come at once.
 */
static void
conn_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	conn_enter(c);
	conn_stage_lend(c);
	conn_kick_bodies(c);
	if (c->c_state == CONN_DEAD)
		;
	else if (what & EV_READ)
		conn_read(c);
	else
		conn_process_input(c);
	conn_stage_flush(c);
	conn_leave(c);
}

/* Lends c the stage if its output is empty: its answers gather there. */
static void
conn_stage_lend(struct conn *c)
{
	if (c->c_state == CONN_DEAD || c->c_fail_why != NULL ||
	    evbuffer_get_length(c->c_out) > 0)
		return;
	fcgi_out_stage(&c->c_link.rl_out, &conn_stage,
	    c->c_env->ce_lim->high_water);
	c->c_staging = 1;
}

/*
 * The end of c's read callback: what c staged leaves in one writev(), the
 * rest is queued, then c goes on as after any write.  Staging stopped
 * early (the stage spilled), the queue is written as usual.
 */
static void
conn_stage_flush(struct conn *c)
{
	struct fcgi_out		*o = &c->c_link.rl_out;
	struct fcgi_stage	*st = o->fo_stage;
	ssize_t			 n = 0;

	if (!c->c_staging)
		return;
	if (c->c_fail_why != NULL) {
		(void)fcgi_out_spill(o, SIZE_MAX);
		c->c_staging = 0;
		return;
	}
	if (st != NULL && st->fs_len > 0 &&
	    (n = writev(c->c_fd, st->fs_iov, st->fs_niov)) == -1) {
		if (conn_io_error(c))
			return;
		n = 0;
	}
	if (n > 0)
		conn_sent(c, (size_t)n);	/* straight from the stage */
	/* The rest is queued without a flush made due: conn_written arms
	   the write event itself. */
	if (fcgi_out_spill(o, (size_t)n) == -1) {
		c->c_staging = 0;
		conn_end(c, CONN_NEXT_TURN, CONN_ERROR, "out of memory queueing output");
		return;
	}
	c->c_staging = 0;
	if (st != NULL)
		conn_written(c);
	else
		conn_flush(c);
}

/*
 * One read() and the records in it; the end of input and errors are acted
 * on.
 */
static void
conn_read(struct conn *c)
{
	size_t	 room = CONN_INPUT_MAX - conn_input_len(c);
	ssize_t	 n;

	/* --max-input was reached since c's read was due: not now. */
	if (conn_input_paused(c)) {
		conn_read_update(c);
		conn_timer_update(c);
		return;
	}
	if (room > sizeof(conn_scratch))
		room = sizeof(conn_scratch);
	n = read(c->c_fd, conn_scratch, room);
	if (n > 0) {
		conn_process_read(c, conn_scratch, (size_t)n);
		return;
	}
	if (n == 0)
		conn_read_ended(c);
	else
		(void)conn_io_error(c);
}

/*
 * A read or write of c's socket returned -1: for a socket error c is
 * closed and 1 returned; 0 when errno only says "not now".
 */
static int
conn_io_error(struct conn *c)
{
	char	 why[128];

	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return 0;
	if (errno == EPIPE || errno == ECONNRESET) {
		/* A front end drops a connection when its client left: routine. */
		log_debug("%s: the peer closed the connection (%s)", c->c_peer,
		    strerror(errno));
		conn_close_now(c, NULL);
		return 1;
	}
	snprintf(why, sizeof(why), "socket error: %s", strerror(errno));
	conn_close_now(c, why);
	return 1;
}

/* The peer sends no more: what it sent is still acted on, then c ends. */
static void
conn_read_ended(struct conn *c)
{
	c->c_eof = 1;
	conn_read_update(c);
	if (!conn_input_pending(c))
		conn_input_ended(c);
}

int
conn_req_add(struct conn *c, struct evfcgi_req *r)
{
	if (reqtab_add(&c->c_tab, r) == -1)
		return -1;
	TAILQ_INSERT_TAIL(&c->c_reqs, req_h(r), h_entry);
	TAILQ_INSERT_TAIL(&c->c_params, req_h(r), h_params_entry);
	return 0;
}

void
conn_req_unlink(struct conn *c, struct evfcgi_req *r)
{
	reqtab_del(&c->c_tab, r);
	TAILQ_REMOVE(&c->c_reqs, req_h(r), h_entry);
	if (req_h(r)->h_in == IN_PARAMS)
		TAILQ_REMOVE(&c->c_params, req_h(r), h_params_entry);
	if (req_h(r)->h_prod_listed) {
		TAILQ_REMOVE(&c->c_producers, req_h(r), h_prod_entry);
		req_h(r)->h_prod_listed = 0;
	}
	if (req_h(r)->h_kick_listed)
		conn_kick_forget(c, r);
}

/* Takes r off c's kicked list (short: what was kicked this turn). */
static void
conn_kick_forget(struct conn *c, struct evfcgi_req *r)
{
	struct req_head	**pp;

	for (pp = &c->c_kicked; *pp != NULL; pp = &(*pp)->h_kick_next)
		if (*pp == req_h(r)) {
			*pp = req_h(r)->h_kick_next;
			break;
		}
	req_h(r)->h_kick_next = NULL;
	req_h(r)->h_kick_listed = 0;
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
	struct conn	*c = arg;

	conn_enter(c);
	if (!req_h(r)->h_keep)
		c->c_close_after = 1;
	if (req_over(r))
		conn_req_free(c, r);
	else if (req_h(r)->h_prod_listed) {
		TAILQ_REMOVE(&c->c_producers, req_h(r), h_prod_entry);
		req_h(r)->h_prod_listed = 0;
	}
	conn_maybe_close(c);
	conn_leave(c);
}

/*
 * A streamed body can take input again, or has bytes to hand over: both
 * on the next loop turn, outside the application's call.  One kicked is
 * listed, so that the turn looks at it alone, not at every request.
 */
static void
conn_req_resume(struct evfcgi_req *r, void *arg)
{
	struct conn	*c = arg;

	if (c->c_state == CONN_DEAD)
		return;
	if (req_h(r)->h_kick && !req_h(r)->h_kick_listed) {
		req_h(r)->h_kick_next = c->c_kicked;
		c->c_kicked = req_h(r);
		req_h(r)->h_kick_listed = 1;
	}
	event_active(&c->c_rev, EV_TIMEOUT, 1);
}

/* Hands the streamed bodies that were kicked what waits for them. */
static void
conn_kick_bodies(struct conn *c)
{
	struct req_head	*h;

	while (c->c_state != CONN_DEAD && (h = c->c_kicked) != NULL) {
		c->c_kicked = h->h_kick_next;
		h->h_kick_next = NULL;
		h->h_kick_listed = 0;
		req_body_kick(req_of(h));
	}
}

/*
 * A request has a producer: queue it and fill what room there is.  Its
 * producer cleared (NULL): it waits for data of its own, off the queue.
 */
static void
conn_req_produce(struct evfcgi_req *r, int on, void *arg)
{
	struct conn	*c = arg;

	if (!on) {
		if (req_h(r)->h_prod_listed) {
			TAILQ_REMOVE(&c->c_producers, req_h(r), h_prod_entry);
			req_h(r)->h_prod_listed = 0;
		}
		return;
	}
	if (!req_h(r)->h_prod_listed) {
		TAILQ_INSERT_TAIL(&c->c_producers, req_h(r), h_prod_entry);
		req_h(r)->h_prod_listed = 1;
	}
	/* Set from a running producer: the pump running it goes on. */
	if (c->c_link.rl_prod == NULL)
		conn_pump(c);
}

/*
 * Arms the one timer a connection needs now: the deadline of the oldest
 * request whose PARAMS are incomplete, while c reads (counted from its
 * BEGIN_REQUEST or the end of the PARAMS before it, the time c held
 * itself not counted: conn_params_clock), or
 * an idle timeout (restarted by input that serves a request in flight:
 * c_idle_keep) while input is awaited, or
 * none while only the application or the output is pending (the write
 * event's timeout watches the output); and, before any of those, the
 * deadline of a record begun and not finished (header_timeout from its
 * first byte, so a trickle cannot hold a slot).
 */
void
conn_timer_update(struct conn *c)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	enum conn_timer			 want = TIMER_NONE;
	struct timeval			 span = { lim->header_timeout, 0 };
	struct timeval			 now, due, rdue, tv;
	int				 awaiting, idle;
	int				 keep = c->c_idle_keep &&
					    c->c_timer_kind == TIMER_IDLE;

	if (c->c_timer_kind == TIMER_FAIL)
		return;
	event_base_gettimeofday_cached(c->c_env->ce_base, &now);
	/* Requests in their body (answered or not) wait for input. */
	awaiting = c->c_link.rl_nin[IN_BODY] > 0;
	idle = c->c_tab.rt_n == 0 && conn_out_len(c) == 0;
	if (!TAILQ_EMPTY(&c->c_params)) {
		/* Not reading (paused, held), c waits on itself: no deadline. */
		if (c->c_state == CONN_READING && !c->c_stream_held) {
			want = TIMER_HEADER;
			timeradd(&TAILQ_FIRST(&c->c_params)->h_wait_from, &span,
			    &due);
		}
	} else if (c->c_state == CONN_READING && !c->c_stream_held &&
	    !c->c_in_paused && (awaiting || idle)) {
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
	/*
	 * The idle timer is lazy: a kept connection goes idle and busy once a
	 * request, and re-arming the timer each time cost more than the rest of
	 * its bookkeeping.  It stays pending at the first deadline and is
	 * checked against c_idle_from when it fires.
	 */
	if (want == TIMER_IDLE) {
		/* Bytes of no record, records of no request: no progress. */
		if (!keep)
			c->c_idle_from = now;
		if (c->c_idle_lazy)
			return;
		c->c_idle_lazy = 1;
		timerclear(&tv);
		tv.tv_sec = lim->idle_timeout;
		evtimer_add(&c->c_timer, &tv);
		return;
	}
	if (want == TIMER_NONE) {
		if (!c->c_idle_lazy)
			evtimer_del(&c->c_timer);
		return;
	}
	c->c_idle_lazy = 0;
	if (timercmp(&due, &now, >))
		timersub(&due, &now, &tv);
	else
		timerclear(&tv);
	evtimer_add(&c->c_timer, &tv);
}

/*
 * A peer that begins many requests and then sends their PARAMS one after
 * another makes progress with each, oldest first, and none of them is
 * timed out meanwhile; one that abandons a request is closed
 * header_timeout after the request before it ended its PARAMS (or its own
 * BEGIN_REQUEST, if later), whatever it does with other requests.
 */
void
conn_params_clock(struct conn *c)
{
	struct req_head	*h;

	if ((h = TAILQ_FIRST(&c->c_params)) != NULL)
		event_base_gettimeofday_cached(c->c_env->ce_base,
		    &h->h_wait_from);
}

void
conn_params_hold(struct conn *c)
{
	if (c->c_held)
		return;
	c->c_held = 1;
	event_base_gettimeofday_cached(c->c_env->ce_base, &c->c_held_since);
}

void
conn_params_resume(struct conn *c)
{
	struct req_head		*h;
	struct timeval		 now, held;

	if (!c->c_held)
		return;
	c->c_held = 0;
	if ((h = TAILQ_FIRST(&c->c_params)) == NULL)
		return;
	event_base_gettimeofday_cached(c->c_env->ce_base, &now);
	if (!timercmp(&now, &c->c_held_since, >))
		return;
	timersub(&now, &c->c_held_since, &held);
	timeradd(&h->h_wait_from, &held, &h->h_wait_from);
}

/*
 * A lazy idle timer fired: returns 1 when the idle timeout is really due,
 * 0 when it was re-armed for the rest or the connection is no longer idle.
 */
static int
conn_idle_due(struct conn *c)
{
	struct timeval	 now, due, tv = { c->c_env->ce_lim->idle_timeout, 0 };

	c->c_idle_lazy = 0;
	if (c->c_timer_kind != TIMER_IDLE)
		return 0;
	event_base_gettimeofday_cached(c->c_env->ce_base, &now);
	timeradd(&c->c_idle_from, &tv, &due);
	if (!timercmp(&due, &now, >))
		return 1;
	timersub(&due, &now, &tv);
	c->c_idle_lazy = 1;
	evtimer_add(&c->c_timer, &tv);
	return 0;
}

static void
conn_timeoutcb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	if (c->c_idle_lazy && !conn_idle_due(c))
		return;
	conn_enter(c);
	if (c->c_timer_kind == TIMER_FAIL)
		conn_end(c, CONN_NOW, CONN_ERROR, c->c_fail_why);
	else if (c->c_timer_kind == TIMER_HEADER) {
		c->c_env->ce_st->timeouts_header++;
		conn_end(c, CONN_NOW, CONN_ERROR, "header timeout: PARAMS incomplete");
	} else if (c->c_timer_kind == TIMER_RECORD) {
		c->c_env->ce_st->timeouts_record++;
		conn_end(c, CONN_NOW, CONN_ERROR, "record timeout: a record still incomplete");
	} else if (c->c_tab.rt_n > 0) {
		c->c_env->ce_st->timeouts_idle++;
		conn_end(c, CONN_NOW, CONN_ERROR, "idle timeout: request body stalled");
	} else
		conn_close_flushed(c);
	conn_leave(c);
}

/*
 * Flush time (made active when output was queued), room in the kernel, or
 * the write timeout's half while the kernel has refused bytes.
 */
static void
conn_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	conn_enter(c);
	c->c_flush_due = 0;
	if (c->c_fail_why != NULL)
		;
	else if ((what & (EV_WRITE | EV_TIMEOUT)) == EV_TIMEOUT)
		conn_write_timeout(c);
	else
		conn_flush(c);
	conn_leave(c);
}

/* Hands the kernel what it takes of c's output, then conn_written(). */
static void
conn_flush(struct conn *c)
{
	if (evbuffer_get_length(c->c_out) > 0 &&
	    evbuffer_write(c->c_out, c->c_fd) == -1 && conn_io_error(c))
		return;
	conn_written(c);
}

/*
 * After a write: waits for room (with the write timeout) while output is
 * left; at the low mark, c reads and produces again; closing, c closes
 * once all is out.
 */
static void
conn_written(struct conn *c)
{
	const struct evfcgi_limits	*lim = c->c_env->ce_lim;
	struct timeval			 wt = { lim->write_timeout / 2,
	    lim->write_timeout % 2 * 500000 };
	size_t				 left;
	int				 grow;

	left = evbuffer_get_length(c->c_out);
	/* Drained to the low mark after the kernel refused bytes: the peer
	   read them (an empty kernel buffer taking a new connection's first
	   bytes shows nothing), so c may hold more. */
	grow = c->c_holding && left <= conn_low(c);
	/* A holder stays one until its answers are out: a slow reader whose
	   buffer the kernel took whole for a moment is no fast one. */
	if (left > 0) {
		conn_holding(c, 1);
		conn_fed(c);
	} else if (TAILQ_EMPTY(&c->c_producers))
		conn_holding(c, 0);
	/* Bytes left: producers waiting on the global cap may go on. */
	budget_kick(c->c_env->ce_budget);
	if (left > 0 && !c->c_writing) {
		c->c_writing = 1;
		event_add(&c->c_wev, &wt);
	} else if (left == 0 && c->c_writing) {
		/* Assigned afresh, not only deleted: event_active() on this
		   persistent event (conn_output_cb) would re-add it with the
		   timeout of its last event_add(), and with nothing to write
		   the loop would spin on a writable socket. */
		c->c_writing = 0;
		event_del(&c->c_wev);
		event_assign(&c->c_wev, c->c_env->ce_base, c->c_fd,
		    EV_WRITE | EV_PERSIST, conn_writecb, c);
	}
	if (grow && c->c_allow < lim->high_water)
		c->c_allow *= 2;
	if (left <= conn_low(c))
		conn_low_mark(c);
	else if (left < conn_high(c) && !TAILQ_EMPTY(&c->c_producers))
		conn_pump_room(c, 1);	/* those that said what they need */
}

/* Output is at the low mark (or, when closing, maybe at zero). */
static void
conn_low_mark(struct conn *c)
{
	if (c->c_state == CONN_CLOSING) {
		if (conn_out_len(c) == 0)
			conn_close_flushed(c);
		budget_kick(c->c_env->ce_budget);
		return;
	}
	/* New requests first (they are small), then the producers. */
	if (c->c_state == CONN_PAUSED) {
		conn_set_state(c, CONN_READING);
		conn_process_input(c);
	}
	if (c->c_state != CONN_DEAD && !TAILQ_EMPTY(&c->c_producers)) {
		conn_producers_wake(c);
		conn_pump(c);
	}
	if (c->c_state != CONN_DEAD)
		conn_timer_update(c);
	budget_kick(c->c_env->ce_budget);
}

/*
 * Half the write timeout passed with output queued and no write: go on if
 * the peer took bytes from the kernel's queue meanwhile, else close.
 */
static void
conn_write_timeout(struct conn *c)
{
	char	 why[128];

	if (conn_write_progress(c))
		return;
	snprintf(why, sizeof(why), "no write progress for %d s",
	    c->c_env->ce_lim->write_timeout);
	c->c_env->ce_st->timeouts_write++;
	conn_end(c, CONN_NOW, CONN_ERROR, why);
}

void
conn_input_ended(struct conn *c)
{
	struct req_head		*h, *next;
	struct evfcgi_req	*r;

	/* What still waits for input is dead; the rest is answered. */
	for (h = TAILQ_FIRST(&c->c_reqs); h != NULL; h = next) {
		next = TAILQ_NEXT(h, h_entry);
		r = req_of(h);
		if (!req_held(r))
			conn_req_free(c, r);
		else if (req_body_open(r)) {
			/* A streamed body that will never end. */
			c->c_env->ce_st->aborted++;
			conn_req_unlink(c, r);
			req_kill(r);
		}
	}
	c->c_close_after = 1;
	c->c_first_due = 0;
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
	conn_pump_room(c, 0);
}

/* Producers that wrote nothing may be called again: the low mark. */
static void
conn_producers_wake(struct conn *c)
{
	struct req_head	*h;

	TAILQ_FOREACH(h, &c->c_producers, h_prod_entry)
		h->h_prod_idle = 0;
}

/*
 * The next producer to call with room bytes: the first (round robin) that
 * did not go idle and whose need fits; with needy, only those that said
 * what they need and now have it, more room than their last call had.
 * A need above what the low mark leaves is met there.
 */
static struct evfcgi_req *
conn_producer_next(struct conn *c, size_t room, int needy)
{
	struct req_head			*h;
	size_t				 need, most = conn_high(c) - conn_low(c);

	TAILQ_FOREACH(h, &c->c_producers, h_prod_entry) {
		need = h->h_prod_need;
		if (need > most)
			need = most;
		if (room < need || (needy && need == 0))
			continue;
		if (!h->h_prod_idle && !needy)
			return req_of(h);
		if (need > 0 && room > h->h_prod_room)
			return req_of(h);
	}
	return NULL;
}

/*
 * Runs the producers while output is below the high mark and one of them
 * is due (conn_producer_next()).  A producer that writes nothing is not
 * called again before the low mark: when the output is there already, on
 * the next loop turn (c_pwake), so a producer waiting on nothing costs a
 * call a turn, never the loop.
 */
static void
conn_pump_room(struct conn *c, int needy)
{
	struct evfcgi_req		*r;
	size_t				 len, high = conn_high(c);
	int				 idle = 0;

	if (c->c_state == CONN_DEAD || c->c_state == CONN_CLOSING ||
	    c->c_link.rl_prod != NULL)
		return;
	conn_enter(c);
	while (c->c_state != CONN_DEAD && !c->c_link.rl_broken) {
		len = conn_out_len(c);
		if (len >= high ||
		    (r = conn_producer_next(c, high - len, needy)) == NULL)
			break;
		/* A holder the kernel emptied keeps up with its peer for now:
		   it refills (at most its share) from the room of the rest,
		   or fast answers behind small send buffers would wait on the
		   slow readers' part. */
		if (budget_full(c->c_env->ce_budget, c->c_holding && len > 0)) {
			budget_wait(c->c_env->ce_budget, &c->c_wait,
			    c->c_holding && len > 0);
			break;
		}
		/* Round robin between the requests multiplexed on c. */
		TAILQ_REMOVE(&c->c_producers, req_h(r), h_prod_entry);
		TAILQ_INSERT_TAIL(&c->c_producers, req_h(r), h_prod_entry);
		if (req_produce(r, high - len) == 0 &&
		    req_h(r)->h_prod_idle)
			idle = 1;
	}
	if (idle && c->c_state != CONN_DEAD && c->c_state != CONN_CLOSING &&
	    conn_out_len(c) <= conn_low(c))
		conn_producers_later(c);
	conn_leave(c);
}

/*
 * Calls the idle producers again on the next loop turn, after the loop
 * polled: a timer (an event made active now would run in this turn).  Its
 * event is made the first time: a connection whose producers behave never
 * pays for it.
 */
static void
conn_producers_later(struct conn *c)
{
	struct timeval	 now = { 0, 0 };

	if (c->c_pwake == NULL && (c->c_pwake = evtimer_new(c->c_env->ce_base,
	    conn_pwakecb, c)) == NULL) {
		conn_end(c, CONN_NEXT_TURN, CONN_ERROR, "out of memory for a producer's timer");
		return;
	}
	evtimer_add(c->c_pwake, &now);
}

/* Producers went idle at the low mark: they are called again now. */
static void
conn_pwakecb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	(void)fd;
	(void)what;
	conn_enter(c);
	conn_producers_wake(c);
	conn_pump(c);
	conn_leave(c);
}
