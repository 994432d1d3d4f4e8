/*
 * loadgen.c: the run and the client slot of the load generators.  Nothing
 * here exits: failures come back as return values, and the only output is
 * the per-request errors a tool hands to lg_error().
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "loadgen.h"
#include "toolutil.h"

static void	 end_cb(evutil_socket_t, short, void *);
static void	 limit_cb(evutil_socket_t, short, void *);
static void	 tick_cb(evutil_socket_t, short, void *);
static void	 wake_cb(evutil_socket_t, short, void *);
static struct event *timer_at(struct lg_run *, double, short,
		    event_callback_fn);
static struct event *sig_limit(struct lg_run *, int);
static int64_t	 pace_base(const struct lg_pace *, int64_t, int64_t);
static int	 slot_bind(struct lg_slot *);

/*
 * lg_fd_budget: raises the open file limit as far as it goes and returns
 * how many connections a run may hold at once (LG_RESERVED_FDS are kept
 * for everything else).  Call it before options are checked against it.
 */
long long
lg_fd_budget(void)
{
	return fd_budget(LG_RESERVED_FDS);
}

/*
 * lg_init: makes r ready for a run of progname: SIGPIPE ignored, random()
 * seeded, a read buffer of rbuf_size bytes, an event base without locks
 * (one thread).  Returns 0, or -1 with *why set to a static reason.
 */
int
lg_init(struct lg_run *r, const char *progname, size_t rbuf_size,
    const char **why)
{
	struct event_config	*cfg;

	memset(r, 0, sizeof(*r));
	r->lr_progname = progname;
	signal(SIGPIPE, SIG_IGN);
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	if ((r->lr_rbuf = malloc(rbuf_size)) == NULL ||
	    (cfg = event_config_new()) == NULL) {
		*why = "out of memory";
		return -1;
	}
	event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
	r->lr_base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (r->lr_base == NULL) {
		*why = "cannot create the event loop";
		return -1;
	}
	return 0;
}

/*
 * lg_run: runs the event loop from now until lg_stop(), the count, the
 * seconds or the limit (with lr_sig_limit, also SIGTERM or SIGINT), after
 * start(arg) has started the first requests; lr_start_us and lr_end_us say
 * when.  Returns 0, or -1 (nothing run) without memory for the timers.
 */
int
lg_run(struct lg_run *r, void (*start)(void *), void *arg)
{
	struct event	*end_ev = NULL, *limit_ev = NULL, *tick_ev = NULL;
	struct event	*term_ev = NULL, *int_ev = NULL;
	int		 rc = -1;

	r->lr_start_us = now_us();
	if ((r->lr_sig_limit &&
	    ((term_ev = sig_limit(r, SIGTERM)) == NULL ||
	    (int_ev = sig_limit(r, SIGINT)) == NULL)) ||
	    (r->lr_seconds > 0 &&
	    (end_ev = timer_at(r, r->lr_seconds, 0, end_cb)) == NULL) ||
	    (r->lr_limit > 0 &&
	    (limit_ev = timer_at(r, r->lr_limit, 0, limit_cb)) == NULL) ||
	    (r->lr_tick_secs > 0 &&
	    (tick_ev = timer_at(r, r->lr_tick_secs, EV_PERSIST,
	    tick_cb)) == NULL))
		goto out;
	start(arg);
	if (!r->lr_stopping)
		event_base_dispatch(r->lr_base);
	rc = 0;
out:
	r->lr_end_us = now_us();
	if (end_ev != NULL)
		event_free(end_ev);
	if (limit_ev != NULL)
		event_free(limit_ev);
	if (tick_ev != NULL)
		event_free(tick_ev);
	if (term_ev != NULL)
		event_free(term_ev);
	if (int_ev != NULL)
		event_free(int_ev);
	return rc;
}

/* sig_limit: a new signal event for sig that ends the run as the limit. */
static struct event *
sig_limit(struct lg_run *r, int sig)
{
	struct event	*ev;

	if ((ev = evsignal_new(r->lr_base, sig, limit_cb, r)) != NULL &&
	    evsignal_add(ev, NULL) == -1) {
		event_free(ev);
		ev = NULL;
	}
	return ev;
}

/* timer_at: a new timer (flags: EV_PERSIST or 0) added secs from now. */
static struct event *
timer_at(struct lg_run *r, double secs, short flags, event_callback_fn cb)
{
	struct event	*ev;
	struct timeval	 tv = secs_tv(secs);

	if ((ev = event_new(r->lr_base, -1, flags, cb, r)) != NULL)
		event_add(ev, &tv);
	return ev;
}

/* lg_free: frees what lg_init() made; the slots must be closed first. */
void
lg_free(struct lg_run *r)
{
	if (r->lr_base != NULL)
		event_base_free(r->lr_base);
	free(r->lr_rbuf);
	r->lr_base = NULL;
	r->lr_rbuf = NULL;
}

/* end_cb: the run's seconds are up; requests in flight are dropped. */
static void
end_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lg_stop(arg);
}

/* limit_cb: the time limit is up; whatever is unfinished is cut off. */
static void
limit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lg_run	*r = arg;

	(void)fd;
	(void)what;
	r->lr_limit_hit = 1;
	lg_stop(r);
}

/* tick_cb: the tool's periodic callback (a progress report). */
static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lg_run	*r = arg;

	(void)fd;
	(void)what;
	r->lr_tick(r->lr_arg);
}

/* lg_stop: ends the run after the current callback.  Idempotent. */
void
lg_stop(struct lg_run *r)
{
	if (r->lr_stopping)
		return;
	r->lr_stopping = 1;
	event_base_loopbreak(r->lr_base);
}

/* lg_more: whether another request may start now. */
int
lg_more(const struct lg_run *r)
{
	return !r->lr_stopping && (r->lr_count == 0 ||
	    r->lr_started < r->lr_count);
}

/* lg_ended: one more request ended, well or not; the count may stop r. */
void
lg_ended(struct lg_run *r)
{
	r->lr_ended++;
	if (r->lr_count > 0 && r->lr_ended >= r->lr_count)
		lg_stop(r);
}

/* lg_status: counts one answer with status code (1..999; others not). */
void
lg_status(struct lg_run *r, int code)
{
	if (code > 0 && code < LG_STATUS_MAX)
		r->lr_status[code]++;
}

/* lg_error: lg_verror() with its arguments inline. */
void
lg_error(struct lg_run *r, const char *prefix, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	lg_verror(r, prefix, fmt, ap);
	va_end(ap);
}

/*
 * lg_verror: prints one failed request as "prefix: message" on stderr:
 * every one with lr_show_all, else the first LG_ERRORS_SHOWN, and then
 * lr_hidden_note (if set) once, when they start to be hidden.
 */
void
lg_verror(struct lg_run *r, const char *prefix, const char *fmt,
    va_list ap)
{
	r->lr_errors++;
	if (!r->lr_show_all && r->lr_errors > LG_ERRORS_SHOWN) {
		if (r->lr_errors == LG_ERRORS_SHOWN + 1 &&
		    r->lr_hidden_note != NULL)
			fprintf(stderr, "%s: %s\n", r->lr_progname,
			    r->lr_hidden_note);
		return;
	}
	fprintf(stderr, "%s: ", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* lg_errors_hidden: how many errors lg_verror() did not print. */
long long
lg_errors_hidden(const struct lg_run *r)
{
	if (r->lr_show_all || r->lr_errors <= LG_ERRORS_SHOWN)
		return 0;
	return r->lr_errors - LG_ERRORS_SHOWN;
}

/*
 * lg_slot_init: makes s an empty slot of run r.  io(fd, what, arg) gets
 * s's socket events and timeouts; woke(arg) is called when a pause or a
 * timer set on ls_wake is over.
 */
void
lg_slot_init(struct lg_slot *s, struct lg_run *r, event_callback_fn io,
    void (*woke)(void *), void *arg)
{
	memset(s, 0, sizeof(*s));
	s->ls_run = r;
	s->ls_fd = -1;
	s->ls_io = io;
	s->ls_woke = woke;
	s->ls_arg = arg;
	evtimer_assign(&s->ls_wake, r->lr_base, wake_cb, s);
}

/* wake_cb: ls_wake fired: a pause (or whatever the tool set) is over. */
static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lg_slot	*s = arg;

	(void)fd;
	(void)what;
	s->ls_paused = 0;
	s->ls_woke(s->ls_arg);
}

/*
 * lg_slot_dial: opens a non-blocking socket in s for sa and starts
 * connecting, with TCP_NODELAY if nodelay, and SO_RCVBUF set to rcvbuf
 * (if > 0) before connect(), since the window scale is fixed at SYN
 * time; bound to ls_src first if the tool set it.  Returns 1 if connected
 * at once (ls_connected set), 0 if under way, or -1 with errno and *step
 * ("socket", "SO_RCVBUF", "bind" or "connect"); the socket, if any, stays
 * in s for lg_slot_close().
 */
int
lg_slot_dial(struct lg_slot *s, const struct sockaddr *sa, socklen_t len,
    int nodelay, int rcvbuf, const char **step)
{
	int	one = 1;

	s->ls_connected = 0;
	s->ls_done = 0;
	s->ls_fd = socket(sa->sa_family,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->ls_fd == -1) {
		*step = "socket";
		return -1;
	}
	if (nodelay)
		(void)setsockopt(s->ls_fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
	if (rcvbuf > 0 && setsockopt(s->ls_fd, SOL_SOCKET, SO_RCVBUF,
	    &rcvbuf, sizeof(rcvbuf)) == -1) {
		*step = "SO_RCVBUF";
		return -1;
	}
	if (s->ls_src != NULL && slot_bind(s) == -1) {
		*step = "bind";
		return -1;
	}
	if (connect(s->ls_fd, sa, len) == 0) {
		s->ls_connected = 1;
		return 1;
	}
	if (errno == EINPROGRESS || errno == EINTR)
		return 0;
	*step = "connect";
	return -1;
}

/*
 * slot_bind: binds s's new socket to ls_src, leaving the port to
 * connect(), which may share one among destinations (bind() alone would
 * spend a port per socket).  Returns 0, or -1 with errno.
 */
static int
slot_bind(struct lg_slot *s)
{
#ifdef IP_BIND_ADDRESS_NO_PORT
	int	one = 1;

	/* Linux's, for IPv6 sockets too. */
	(void)setsockopt(s->ls_fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
	    sizeof(one));
#endif
	return bind(s->ls_fd, s->ls_src, s->ls_srclen);
}

/*
 * lg_slot_watch: makes s wait for what (EV_READ, EV_WRITE, both, or 0 for
 * nothing) with timeout tv, restarted by every event (EV_PERSIST).  A
 * no-op when it already does, so the timeout runs on.
 */
void
lg_slot_watch(struct lg_slot *s, short what, const struct timeval *tv)
{
	if (what == s->ls_watch && (what == 0 || tv == s->ls_tv))
		return;
	if (s->ls_watch != 0)
		event_del(&s->ls_ev);
	s->ls_watch = what;
	s->ls_tv = tv;
	if (what == 0)
		return;
	event_assign(&s->ls_ev, s->ls_run->lr_base, s->ls_fd,
	    what | EV_PERSIST, s->ls_io, s->ls_arg);
	event_add(&s->ls_ev, tv);
}

/*
 * lg_slot_pause: marks s paused (ls_paused) until tv from now, when the
 * slot's woke callback runs.  What s watches meanwhile is the caller's.
 */
void
lg_slot_pause(struct lg_slot *s, const struct timeval *tv)
{
	s->ls_paused = 1;
	evtimer_add(&s->ls_wake, tv);
}

/*
 * lg_slot_redial: s's socket died before answering.  If it is a kept
 * socket that has already served (ls_done > 0), the server let it go:
 * closes it and returns 1, and the caller dials again and resends, once,
 * since a new socket has served nothing.  Else returns 0, s untouched.
 */
int
lg_slot_redial(struct lg_slot *s)
{
	if (s->ls_done == 0)
		return 0;
	lg_slot_close(s);
	return 1;
}

/*
 * lg_slot_close: closes s's socket and stops its events and its pause;
 * s is empty again.  Idempotent; errno is kept.
 */
void
lg_slot_close(struct lg_slot *s)
{
	int	saved = errno;

	lg_slot_watch(s, 0, NULL);
	evtimer_del(&s->ls_wake);
	if (s->ls_fd != -1)
		close(s->ls_fd);
	s->ls_fd = -1;
	s->ls_tv = NULL;
	s->ls_paused = 0;
	s->ls_connected = 0;
	s->ls_done = 0;
	errno = saved;
}

/*
 * lg_pace_init: makes p pace readers at rate bytes a second, no read
 * larger than max_read.  Returns 0, or -1 (p untouched) for a rate that
 * is not positive or a max_read of 0.
 */
int
lg_pace_init(struct lg_pace *p, double rate, size_t max_read)
{
	double	burst = rate * LG_PACE_BURST, tick = rate * LG_PACE_TICK;

	if (!(rate > 0) || max_read == 0)
		return -1;
	p->lp_rate = rate;
	p->lp_burst = burst < 1 ? 1 :
	    burst < (double)max_read ? (size_t)burst : max_read;
	p->lp_tick = tick < 1 ? 1 :
	    tick < (double)p->lp_burst ? (size_t)tick : p->lp_burst;
	p->lp_burst_us = (int64_t)((double)p->lp_burst * 1e6 / rate);
	return 0;
}

/* pace_base: clock, or now less a burst if the clock lags further. */
static int64_t
pace_base(const struct lg_pace *p, int64_t clock, int64_t now)
{
	return clock > now - p->lp_burst_us ? clock : now - p->lp_burst_us;
}

/*
 * lg_pace_due: how many bytes a reader whose clock (lg_pace_spent()'s, or
 * its start) says clock may read at now: at least lp_tick and at most
 * lp_burst, with *wait_us 0; or 0, with *wait_us set to the microseconds
 * (at least 1) until lp_tick will be due.
 */
size_t
lg_pace_due(const struct lg_pace *p, int64_t clock, int64_t now,
    int64_t *wait_us)
{
	int64_t	base = pace_base(p, clock, now);
	double	avail = (double)(now - base) * p->lp_rate / 1e6;

	if (avail >= (double)p->lp_tick) {
		*wait_us = 0;
		return avail < (double)p->lp_burst ? (size_t)avail :
		    p->lp_burst;
	}
	/* Rounded up, so that the tick is due when the wait is over. */
	*wait_us = base + (int64_t)((double)p->lp_tick * 1e6 / p->lp_rate) +
	    1 - now;
	return 0;
}

/*
 * lg_pace_spent: the reader's clock after it read n bytes at now, its
 * clock having been clock.
 */
int64_t
lg_pace_spent(const struct lg_pace *p, int64_t clock, int64_t now, size_t n)
{
	return pace_base(p, clock, now) +
	    (int64_t)((double)n * 1e6 / p->lp_rate);
}
