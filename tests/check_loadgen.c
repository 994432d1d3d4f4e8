/*
 * check_loadgen.c: the load generators' run and client slot on a real
 * event loop and real loopback sockets: counts, timers, the error cap,
 * dialling with SO_RCVBUF and from a source address, watching, pausing,
 * redialling, and dials that fail; and the pacer, a pure function of its
 * clock and now.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/loadgen.h"
#include "tools/toolutil.h"
#include "tests/suite.h"

/* What the callbacks saw. */
static int	 ticks, woke, io_events;
static short	 io_what;

/* A run ready to go, torn down by run_done(). */
static struct lg_run	run;

/* The fixture: a fresh run before each test, the callbacks' counts zero. */
static void
run_setup(void)
{
	const char	*why = NULL;

	ck_assert_int_eq(lg_init(&run, "check_loadgen", 4096, &why), 0);
	ticks = woke = io_events = 0;
	io_what = 0;
}

/* The fixture's end: the run's loop and buffer freed. */
static void
run_done(void)
{
	lg_free(&run);
}

/* A start callback that starts nothing. */
static void
start_nothing(void *arg)
{
	(void)arg;
}

/* A start callback that stops the run at once. */
static void
start_stop(void *arg)
{
	lg_stop(arg);
}

/* A tick callback that counts. */
static void
count_tick(void *arg)
{
	(void)arg;
	ticks++;
}

/* A woke callback that counts and ends the loop. */
static void
count_woke(void *arg)
{
	(void)arg;
	woke++;
	lg_stop(&run);
}

/* Records a slot event and ends the loop. */
static void
record_io(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)arg;
	io_events++;
	io_what = what;
	lg_stop(&run);
}

/* A loopback listener on a free port; its address goes to sin. */
static int
listener(struct sockaddr_in *sin)
{
	socklen_t	len = sizeof(*sin);
	int		fd;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)sin, sizeof(*sin)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)sin, &len), 0);
	return fd;
}

/* Runs the loop for at most secs, the run's stop ending it sooner. */
static void
run_for(double secs)
{
	run.lr_stopping = 0;
	run.lr_seconds = secs;
	ck_assert_int_eq(lg_run(&run, start_nothing, NULL), 0);
}

/*
 * Makes lg_verror() print n errors with stderr sent to a file; returns
 * how many lines it printed.
 */
static int
error_lines(int n)
{
	FILE	*tmp = tmpfile();
	char	 line[256];
	int	 saved, i, lines = 0;

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	for (i = 1; i <= n; i++)
		lg_error(&run, "prefix", "error %d", i);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while (fgets(line, sizeof(line), tmp) != NULL)
		lines++;
	fclose(tmp);
	return lines;
}

START_TEST(count_and_status)
{
	run.lr_count = 3;
	ck_assert(lg_more(&run));
	run.lr_started = 3;
	ck_assert(!lg_more(&run));
	lg_ended(&run);
	lg_ended(&run);
	ck_assert(!run.lr_stopping);
	lg_ended(&run);
	ck_assert(run.lr_stopping);
	lg_status(&run, 200);
	lg_status(&run, 200);
	lg_status(&run, 0);
	lg_status(&run, LG_STATUS_MAX);
	lg_status(&run, -1);
	ck_assert_int_eq(run.lr_status[200], 2);
	ck_assert_int_eq(run.lr_status[0], 0);
}
END_TEST

START_TEST(seconds_and_tick)
{
	run.lr_tick_secs = 0.01;
	run.lr_tick = count_tick;
	run_for(0.055);
	/* libevent times from its cached clock: allow a few ms early. */
	ck_assert_int_ge(run.lr_end_us - run.lr_start_us, 50000);
	ck_assert_int_lt(run.lr_end_us - run.lr_start_us, 2000000);
	ck_assert_int_ge(ticks, 1);
	ck_assert_int_le(ticks, 6);
	ck_assert(!run.lr_limit_hit);
}
END_TEST

START_TEST(errors_capped)
{
	ck_assert_int_eq(error_lines(LG_ERRORS_SHOWN), LG_ERRORS_SHOWN);
	ck_assert_int_eq(lg_errors_hidden(&run), 0);
	ck_assert_int_eq(error_lines(5), 0);
	ck_assert_int_eq(lg_errors_hidden(&run), 5);
}
END_TEST

START_TEST(errors_note_and_all)
{
	run.lr_hidden_note = "further errors not shown";
	ck_assert_int_eq(error_lines(LG_ERRORS_SHOWN + 3),
	    LG_ERRORS_SHOWN + 1);
	run.lr_show_all = 1;
	ck_assert_int_eq(error_lines(10), 10);
	ck_assert_int_eq(lg_errors_hidden(&run), 0);
}
END_TEST

START_TEST(slot_dial_watch_close)
{
	struct sockaddr_in	 sin;
	struct lg_slot		 s;
	struct timeval		 tv = { 5, 0 };
	const char		*step = NULL;
	socklen_t		 len = sizeof(int);
	int			 lfd, rcv = 0, r;

	lfd = listener(&sin);
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	r = lg_slot_dial(&s, (struct sockaddr *)&sin, sizeof(sin), 1, 4096,
	    &step);
	ck_assert_int_ge(r, 0);
	ck_assert_int_ge(s.ls_fd, 0);
	/* Set before connect(): the kernel doubles it. */
	ck_assert_int_eq(getsockopt(s.ls_fd, SOL_SOCKET, SO_RCVBUF, &rcv,
	    &len), 0);
	ck_assert_int_ge(rcv, 4096);
	lg_slot_watch(&s, EV_WRITE, &tv);
	ck_assert_int_eq(s.ls_watch, EV_WRITE);
	run_for(5);
	ck_assert_int_eq(io_events, 1);
	ck_assert(io_what & EV_WRITE);
	lg_slot_close(&s);
	ck_assert_int_eq(s.ls_fd, -1);
	ck_assert_int_eq(s.ls_watch, 0);
	errno = EINVAL;
	lg_slot_close(&s);		/* idempotent, errno kept */
	ck_assert_int_eq(errno, EINVAL);
	close(lfd);
}
END_TEST

/* sin: IPv4 address a (host order), port 0, for binding. */
static void
source(struct sockaddr_in *sin, in_addr_t a)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(a);
}

START_TEST(slot_dial_from_source)
{
	struct sockaddr_in	 sin, src, peer;
	struct lg_slot		 s;
	struct timeval		 tv = { 5, 0 };
	const char		*step = NULL;
	socklen_t		 len = sizeof(peer);
	int			 lfd, afd, i;

	lfd = listener(&sin);
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	/* 127.0.0.2 and .3 are this host's too (all of 127/8 on Linux). */
	for (i = 2; i <= 3; i++) {
		source(&src, INADDR_LOOPBACK + (in_addr_t)i - 1);
		s.ls_src = (struct sockaddr *)&src;
		s.ls_srclen = sizeof(src);
		ck_assert_int_ge(lg_slot_dial(&s, (struct sockaddr *)&sin,
		    sizeof(sin), 0, 0, &step), 0);
		lg_slot_watch(&s, EV_WRITE, &tv);
		run_for(5);
		ck_assert_int_eq(io_events, i - 1);
		ck_assert(io_what & EV_WRITE);
		len = sizeof(peer);
		afd = accept(lfd, (struct sockaddr *)&peer, &len);
		ck_assert_int_ge(afd, 0);
		ck_assert_uint_eq(ntohl(peer.sin_addr.s_addr),
		    INADDR_LOOPBACK + (in_addr_t)i - 1);
		close(afd);
		lg_slot_close(&s);
	}
	close(lfd);
}
END_TEST

START_TEST(slot_timeout_pause_redial)
{
	struct sockaddr_in	 sin;
	struct lg_slot		 s;
	struct timeval		 short_tv = { 0, 20000 };
	const char		*step = NULL;
	int			 lfd;

	lfd = listener(&sin);
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	ck_assert_int_ge(lg_slot_dial(&s, (struct sockaddr *)&sin,
	    sizeof(sin), 0, 0, &step), 0);
	/* Nothing to read: the timeout fires. */
	lg_slot_watch(&s, EV_READ, &short_tv);
	run_for(5);
	ck_assert_int_eq(io_events, 1);
	ck_assert(io_what & EV_TIMEOUT);
	lg_slot_watch(&s, 0, NULL);
	lg_slot_pause(&s, &short_tv);
	ck_assert(s.ls_paused);
	run_for(5);
	ck_assert_int_eq(woke, 1);
	ck_assert(!s.ls_paused);
	/* A socket that served nothing is not redialled. */
	ck_assert_int_eq(lg_slot_redial(&s), 0);
	ck_assert_int_ge(s.ls_fd, 0);
	s.ls_done = 2;
	ck_assert_int_eq(lg_slot_redial(&s), 1);
	ck_assert_int_eq(s.ls_fd, -1);
	ck_assert_int_eq(s.ls_done, 0);
	close(lfd);
}
END_TEST

START_TEST(run_stopped_at_start)
{
	run.lr_seconds = 5;
	ck_assert_int_eq(lg_run(&run, start_stop, &run), 0);
	ck_assert_int_lt(run.lr_end_us - run.lr_start_us, 1000000);
}
END_TEST

START_TEST(run_limit_cuts_off)
{
	run.lr_limit = 0.02;
	run.lr_seconds = 5;
	ck_assert_int_eq(lg_run(&run, start_nothing, NULL), 0);
	ck_assert(run.lr_limit_hit);
	ck_assert(run.lr_stopping);
}
END_TEST

START_TEST(dial_refused)
{
	struct sockaddr_in	 sin;
	struct lg_slot		 s;
	struct timeval		 tv = { 5, 0 };
	const char		*step = NULL;
	socklen_t		 len = sizeof(int);
	int			 lfd, r, err = 0;

	/* A port that was free a moment ago: nobody listens on it now. */
	lfd = listener(&sin);
	close(lfd);
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	r = lg_slot_dial(&s, (struct sockaddr *)&sin, sizeof(sin), 0, 0,
	    &step);
	if (r == -1) {
		ck_assert_int_eq(errno, ECONNREFUSED);
		ck_assert_str_eq(step, "connect");
	} else {
		ck_assert_int_eq(r, 0);
		lg_slot_watch(&s, EV_WRITE, &tv);
		run_for(5);
		ck_assert_int_eq(getsockopt(s.ls_fd, SOL_SOCKET, SO_ERROR,
		    &err, &len), 0);
		ck_assert_int_eq(err, ECONNREFUSED);
	}
	ck_assert(!s.ls_connected);
	lg_slot_close(&s);
}
END_TEST

START_TEST(dial_fails_early)
{
	struct sockaddr_un	 sun;
	struct lg_slot		 s;
	const char		*step = NULL;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "/nonexistent/sock");
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	ck_assert_int_eq(lg_slot_dial(&s, (struct sockaddr *)&sun,
	    sizeof(sun), 0, 0, &step), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(step, "connect");
	lg_slot_close(&s);
	/* No such family: socket() fails and there is nothing to close. */
	sun.sun_family = AF_MAX + 1;
	ck_assert_int_eq(lg_slot_dial(&s, (struct sockaddr *)&sun,
	    sizeof(sun), 0, 0, &step), -1);
	ck_assert_str_eq(step, "socket");
	ck_assert_int_eq(s.ls_fd, -1);
}
END_TEST

START_TEST(dial_source_not_ours)
{
	struct sockaddr_in	 sin, src;
	struct lg_slot		 s;
	const char		*step = NULL;
	int			 lfd;

	lfd = listener(&sin);
	/* TEST-NET-1: no interface of this host has it. */
	source(&src, 0xc0000201);
	lg_slot_init(&s, &run, record_io, count_woke, NULL);
	s.ls_src = (struct sockaddr *)&src;
	s.ls_srclen = sizeof(src);
	ck_assert_int_eq(lg_slot_dial(&s, (struct sockaddr *)&sin,
	    sizeof(sin), 0, 0, &step), -1);
	ck_assert_int_eq(errno, EADDRNOTAVAIL);
	ck_assert_str_eq(step, "bind");
	ck_assert(!s.ls_connected);
	lg_slot_close(&s);
	close(lfd);
}
END_TEST

START_TEST(pace_from_first_byte)
{
	struct lg_pace	 p;
	int64_t		 clock = 0, now, wait = -1;
	size_t		 due, n, total = 0, left = 10490;

	ck_assert_int_eq(lg_pace_init(&p, 3360, 131072), 0);
	ck_assert_uint_eq(p.lp_burst, 1680);
	ck_assert_uint_eq(p.lp_tick, 336);
	ck_assert_int_eq(p.lp_burst_us, 500000);
	/* 1 ms after the start nothing is due: wait until a tick's worth. */
	ck_assert_uint_eq(lg_pace_due(&p, clock, 1000, &wait), 0);
	ck_assert_int_eq(wait, 100000 - 1000 + 1);
	/* Whatever is due, read as soon as it is: never ahead of the rate. */
	for (now = 0; left > 0; now += wait) {
		if ((due = lg_pace_due(&p, clock, now, &wait)) == 0) {
			ck_assert_int_ge(wait, 1);
			continue;
		}
		ck_assert_int_eq(wait, 0);
		n = due < left ? due : left;
		total += n;
		left -= n;
		clock = lg_pace_spent(&p, clock, now, n);
		ck_assert_double_le((double)total, 3360.0 * (double)now / 1e6);
	}
	/* 10490 bytes at 3360 a second, the last tick read in full. */
	ck_assert_int_ge(now, 3100000);
	ck_assert_int_le(now, 3200100);
	/* After 10 s of nothing, half a second's worth, not 10 s's. */
	ck_assert_uint_eq(lg_pace_due(&p, 0, 10000000, &wait), 1680);
	ck_assert_int_eq(lg_pace_spent(&p, 0, 10000000, 1680), 10000000);
}
END_TEST

START_TEST(pace_extreme_rates)
{
	struct lg_pace	 p;
	int64_t		 wait = -1;

	/* A read cap below a tick's worth: every read is the cap. */
	ck_assert_int_eq(lg_pace_init(&p, 1e6, 4096), 0);
	ck_assert_uint_eq(p.lp_burst, 4096);
	ck_assert_uint_eq(p.lp_tick, 4096);
	ck_assert_uint_eq(lg_pace_due(&p, 0, 4095, &wait), 0);
	ck_assert_int_eq(wait, 2);
	ck_assert_uint_eq(lg_pace_due(&p, 0, 4096, &wait), 4096);
	/* Half a byte a second: one byte, every two seconds. */
	ck_assert_int_eq(lg_pace_init(&p, 0.5, 4096), 0);
	ck_assert_uint_eq(p.lp_burst, 1);
	ck_assert_uint_eq(p.lp_tick, 1);
	ck_assert_uint_eq(lg_pace_due(&p, 0, 0, &wait), 0);
	ck_assert_int_eq(wait, 2000001);
	ck_assert_uint_eq(lg_pace_due(&p, 0, 2000000, &wait), 1);
	ck_assert_int_eq(lg_pace_spent(&p, 0, 2000000, 1), 2000000);
	/* A clock ahead of now (the reader took a burst): wait it out. */
	ck_assert_uint_eq(lg_pace_due(&p, 5000000, 2000000, &wait), 0);
	ck_assert_int_eq(wait, 5000001);
}
END_TEST

START_TEST(pace_bad_rates)
{
	struct lg_pace	 p;

	memset(&p, 0x5a, sizeof(p));
	ck_assert_int_eq(lg_pace_init(&p, 0, 4096), -1);
	ck_assert_int_eq(lg_pace_init(&p, -3360, 4096), -1);
	ck_assert_int_eq(lg_pace_init(&p, NAN, 4096), -1);
	ck_assert_int_eq(lg_pace_init(&p, 3360, 0), -1);
	ck_assert_uint_eq(p.lp_tick, (size_t)0x5a5a5a5a5a5a5a5aULL);
}
END_TEST

/* The cases, every test with a fresh run. */
static Suite *
loadgen_suite(void)
{
	Suite	*s = suite_create("loadgen");

	suite_add_case(s, "core", run_setup, run_done, 0, count_and_status,
	    seconds_and_tick, errors_capped, errors_note_and_all,
	    slot_dial_watch_close, slot_timeout_pause_redial,
	    slot_dial_from_source, pace_from_first_byte, NULL);
	suite_add_case(s, "partial", run_setup, run_done, 0,
	    run_stopped_at_start, run_limit_cuts_off, pace_extreme_rates, NULL);
	suite_add_case(s, "malformed", run_setup, run_done, 0, dial_refused,
	    dial_fails_early, dial_source_not_ours, pace_bad_rates, NULL);
	return s;
}

int
main(void)
{
	return suite_run(loadgen_suite());
}
