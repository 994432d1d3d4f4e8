/*
 * http_get: one deliberately slow HTTP/1.1 GET, the experiment's slow client.
 *
 * The receive buffer is shrunk with SO_RCVBUF before connect() (so the
 * advertised window stays small), the socket is read a few bytes at a time
 * and the process sleeps between reads.  Many of these run at once for
 * minutes, so the tool is plain blocking I/O with nanosleep: one socket,
 * one read buffer, no event loop.  A time limit is an interval timer whose
 * handler shuts the socket down, so no blocking call can outlive it.
 *
 * At the end one key=value line goes to stdout (see usage()).
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http_parse.h"
#include "toolutil.h"

/* How the fetch ended, as the summary's result says. */
enum result {
	RES_OK,
	RES_CONNECT,		/* connect_error */
	RES_HTTP,			/* http_error: status >= 400 */
	RES_SHORT,		/* short_body */
	RES_PROTOCOL,		/* protocol_error: a malformed response */
	RES_IO,			/* io_error */
	RES_TIMEOUT		/* timeout */
};

static const char *const result_names[] = {
	"ok", "connect_error", "http_error", "short_body", "protocol_error",
	"io_error", "timeout"
};

/* Exit statuses, documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_FETCH = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3
};

/* The command line. */
struct opts {
	struct http_url	 o_url;
	long long	 o_rcvbuf, o_rsize, o_pause;
	double		 o_limit;	/* 0: none */
	const char	*o_outpath;
	int		 o_quiet;
	struct addrinfo	*o_source;	/* --source, or NULL */
};

/* Everything one fetch knows; a single instance lives in main(). */
struct fetch {
	int		 f_fd;
	char		*f_rbuf;	/* o_rsize bytes */
	struct http_frame f_frame;
	uint64_t	 f_bytes;	/* bytes read from the socket */
	FILE		*f_out;
	int		 f_outerr;
	int		 f_eff;		/* effective SO_RCVBUF */
	enum result	 f_result;
	double		 f_t0, f_tconn, f_treq, f_tfirst, f_tend;
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static void	 parse_args(int, char **, struct opts *);
static void	 bad_value(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static void	 fetch_setup(struct fetch *, const struct opts *);
static int	 fetch_run(struct fetch *, const struct opts *);
static int	 fetch_connect(struct fetch *, const struct opts *);
static void	 fetch_read(struct fetch *, const struct opts *);
static int	 fetch_feed(struct fetch *, size_t);
static void	 fetch_eof(struct fetch *);
static int	 fetch_finish(struct fetch *, const struct opts *);
static void	 body_out(void *, const char *, size_t);
static int	 connect_url(const struct http_url *, int,
		    const struct addrinfo *, int *, const char **);
static struct addrinfo *source_parse(const char *);
static int	 send_all(int, const char *, size_t);
static double	 now_ms(void);
static void	 on_alarm(int);
static int	 start_timer(double);
static void	 stop_timer(void);
static void	 pause_ms(long);

static const char *progname = "http_get";
static volatile sig_atomic_t timed_out;
static volatile sig_atomic_t alarm_fd = -1;

static const struct option longopts[] = {
	{ "source",	required_argument,	NULL, 's' },
	SLOW_READER_LONGOPTS('b', 'r', 'p')
};

/* usage: prints the help text to fp and exits with status. */
static void
usage(FILE *fp, int status)
{
	fprintf(fp,
"usage: %s [options] http://HOST[:PORT][/PATH]\n"
"One throttled HTTP/1.1 GET (Connection: close).  HOST may be a name, an\n"
"IPv4 address or [IPv6]; PORT defaults to 80.\n"
"\n"
"  -b, --rcvbuf N       SO_RCVBUF set before connect() (default 512; 0 keeps\n"
"                       the kernel default).  The kernel doubles the value\n"
"                       and has a floor of 2304; the effective size is reported.\n"
"  -r, --read-size N    bytes asked for by each read() (default 512)\n"
"  -p, --pause MS       milliseconds to sleep between reads (default 1000)\n"
"  -t, --time-limit S   give up after S seconds (fractions allowed; default none)\n"
"  -o, --output FILE    write the decoded body to FILE (default: discard)\n"
"  -s, --source ADDR    connect from this local IPv4 or IPv6 address (bind()\n"
"                       before connect(); default: the kernel's choice)\n"
"  -q, --quiet          no summary line\n"
"  -h, --help           this text\n"
"\n"
"Summary, one line on stdout at the end:\n"
"  bytes=N body=N status=N connect_ms=X ttfb_ms=X duration_ms=X rcvbuf=N result=R\n"
"  bytes: read from the socket (head, framing and body); body: decoded body\n"
"  bytes; status: HTTP status (0 if none); connect_ms: connect() time;\n"
"  ttfb_ms: request start to first response byte; duration_ms: start to end;\n"
"  rcvbuf: effective SO_RCVBUF; result: ok, connect_error, http_error,\n"
"  short_body, protocol_error, io_error or timeout.\n"
"\n"
"Exit status: 0 complete body with status < 400; 1 connect error, status\n"
">= 400, short body, malformed response or I/O error; 2 bad usage or URL;\n"
"3 time limit exceeded.\n", progname);
	exit(status);
}

/*
 * parse_args: reads the command line into *o, or says what is wrong on
 * stderr and exits with EXIT_USAGE.
 */
static void
parse_args(int argc, char **argv, struct opts *o)
{
	enum http_url_err	 uerr;
	int			 ch;

	memset(o, 0, sizeof(*o));
	o->o_rcvbuf = o->o_rsize = 512;
	o->o_pause = 1000;
	while ((ch = getopt_long(argc, argv, "b:r:p:t:o:s:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (parse_int(optarg, 0, SLOW_RCVBUF_MAX, &o->o_rcvbuf)
			    == -1)
				bad_value("--rcvbuf: not a byte count");
			break;
		case 'r':
			if (parse_int(optarg, 1, SLOW_READ_SIZE_MAX,
			    &o->o_rsize) == -1)
				bad_value("--read-size: not a byte count in "
				    "1..%d", SLOW_READ_SIZE_MAX);
			break;
		case 'p':
			if (parse_int(optarg, 0, SLOW_PAUSE_MAX_MS,
			    &o->o_pause) == -1)
				bad_value("--pause: not a number of "
				    "milliseconds");
			break;
		case 't':
			if (parse_secs(optarg, 1e6, &o->o_limit) == -1)
				bad_value("--time-limit: not a positive number "
				    "of seconds");
			break;
		case 'o':
			o->o_outpath = optarg;
			break;
		case 'q':
			o->o_quiet = 1;
			break;
		case 's':
			if ((o->o_source = source_parse(optarg)) == NULL)
				bad_value("--source: not a numeric IP address");
			break;
		case 'h':
			usage(stdout, EXIT_OK);
		default:
			usage(stderr, EXIT_USAGE);
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s: exactly one URL expected\n", progname);
		usage(stderr, EXIT_USAGE);
	}
	if ((uerr = http_url_parse(argv[optind], &o->o_url)) != URL_OK) {
		fprintf(stderr, "%s: bad URL %s: %s\n", progname, argv[optind],
		    http_url_why(uerr));
		exit(EXIT_USAGE);
	}
}

/*
 * bad_value: says that the value of the option being parsed (optarg) is
 * not what fmt describes, and exits with EXIT_USAGE.
 */
static void
bad_value(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, ": %s\n", optarg);
	exit(EXIT_USAGE);
}

/*
 * fetch_setup: makes f ready for o's fetch: the read buffer, the output
 * file.  Says what failed on stderr and exits (EXIT_FETCH without memory,
 * EXIT_USAGE for the output file).
 */
static void
fetch_setup(struct fetch *f, const struct opts *o)
{
	memset(f, 0, sizeof(*f));
	f->f_fd = -1;
	f->f_eff = -1;
	f->f_tconn = f->f_treq = f->f_tfirst = -1;
	http_frame_init(&f->f_frame, 0);
	if ((f->f_rbuf = malloc((size_t)o->o_rsize)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		exit(EXIT_FETCH);
	}
	if (o->o_outpath != NULL &&
	    (f->f_out = fopen(o->o_outpath, "wb")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, o->o_outpath,
		    strerror(errno));
		exit(EXIT_USAGE);
	}
	signal(SIGPIPE, SIG_IGN);
}

/*
 * fetch_run: the fetch itself, under the time limit: connect, send the
 * request, read the response.  How it went is in f.  Returns 0, or -1 if
 * the time limit could not be armed (said on stderr).
 */
static int
fetch_run(struct fetch *f, const struct opts *o)
{
	char	 req[HTTP_URL_MAX + 1024], hosthdr[300];
	int	 reqlen;

	http_host_header(&o->o_url, hosthdr, sizeof(hosthdr));
	reqlen = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: evfcgid-http_get\r\nAccept: */*\r\n"
	    "Connection: close\r\n\r\n", o->o_url.u_path, hosthdr);
	f->f_t0 = now_ms();
	if (o->o_limit > 0 && start_timer(o->o_limit) == -1) {
		fprintf(stderr, "%s: setitimer: %s\n", progname,
		    strerror(errno));
		return -1;
	}
	if (fetch_connect(f, o) == -1)
		return 0;
	if (send_all(f->f_fd, req, (size_t)reqlen) == -1) {
		f->f_result = timed_out ? RES_TIMEOUT : RES_IO;
		fprintf(stderr, "%s: send: %s\n", progname, strerror(errno));
		return 0;
	}
	fetch_read(f, o);
	if (f->f_result == RES_OK && f->f_frame.hf_status >= 400) {
		fprintf(stderr, "%s: HTTP status %d\n", progname,
		    f->f_frame.hf_status);
		f->f_result = RES_HTTP;
	}
	return 0;
}

/*
 * fetch_connect: connects f's socket to o's URL.  Returns 0, or -1 with the
 * reason on stderr and f_result set.
 */
static int
fetch_connect(struct fetch *f, const struct opts *o)
{
	const char	*why;

	f->f_fd = connect_url(&o->o_url, (int)o->o_rcvbuf, o->o_source,
	    &f->f_eff, &why);
	if (f->f_fd == -1) {
		f->f_result = timed_out ? RES_TIMEOUT : RES_CONNECT;
		fprintf(stderr, "%s: connect to %s port %d: %s\n", progname,
		    o->o_url.u_host, o->o_url.u_port, why);
		return -1;
	}
	f->f_tconn = f->f_treq = now_ms();
	return 0;
}

/*
 * fetch_read: reads the response o->o_rsize bytes at a time, pausing
 * between reads, until it is complete, broken or out of time; f_result
 * says which.
 */
static void
fetch_read(struct fetch *f, const struct opts *o)
{
	ssize_t	n;

	for (;;) {
		if (timed_out) {
			f->f_result = RES_TIMEOUT;
			return;
		}
		n = read(f->f_fd, f->f_rbuf, (size_t)o->o_rsize);
		if (n == -1 && errno == EINTR)
			continue;
		if (timed_out) {
			f->f_result = RES_TIMEOUT;
			return;
		}
		if (n == -1) {
			fprintf(stderr, "%s: read: %s\n", progname,
			    strerror(errno));
			f->f_result = RES_IO;
			return;
		}
		if (n == 0) {
			fetch_eof(f);
			return;
		}
		if (f->f_tfirst < 0)
			f->f_tfirst = now_ms();
		f->f_bytes += (uint64_t)n;
		if (fetch_feed(f, (size_t)n) == -1 ||
		    f->f_frame.hf_state == HF_DONE)
			return;
		if (o->o_pause > 0)
			pause_ms((long)o->o_pause);
	}
}

/*
 * fetch_feed: runs len bytes just read through the response framer, the
 * body to the output file.  Returns 0, or -1 on a malformed response
 * (reason on stderr, f_result set).
 */
static int
fetch_feed(struct fetch *f, size_t len)
{
	(void)http_frame_feed(&f->f_frame, f->f_rbuf, len, body_out, f);
	if (f->f_frame.hf_state != HF_ERROR)
		return 0;
	if (f->f_frame.hf_err == HF_BIG_HEAD)
		fprintf(stderr, "%s: response head larger than %d bytes\n",
		    progname, HTTP_HEAD_MAX);
	else if (f->f_frame.hf_err == HF_BAD_HEAD)
		fprintf(stderr, "%s: malformed response head\n", progname);
	else
		fprintf(stderr, "%s: malformed chunked body\n", progname);
	f->f_result = RES_PROTOCOL;
	return -1;
}

/* fetch_eof: the server closed; the response is complete or it is not. */
static void
fetch_eof(struct fetch *f)
{
	if (http_frame_eof(&f->f_frame))
		return;
	if (f->f_frame.hf_state == HF_HEAD) {
		fprintf(stderr, "%s: connection closed before a complete "
		    "response head\n", progname);
		f->f_result = RES_PROTOCOL;
		return;
	}
	fprintf(stderr, "%s: connection closed after %llu body bytes of %s\n",
	    progname, (unsigned long long)f->f_frame.hf_body,
	    f->f_frame.hf_state == HF_LENGTH ? "Content-Length" :
	    "a chunked body");
	f->f_result = RES_SHORT;
}

/*
 * fetch_finish: ends the fetch (timer, socket, output file) and prints the
 * summary line unless quiet.  Returns the exit status.
 */
static int
fetch_finish(struct fetch *f, const struct opts *o)
{
	f->f_tend = now_ms();
	if (o->o_limit > 0)
		stop_timer();
	alarm_fd = -1;
	if (f->f_fd != -1)
		close(f->f_fd);
	if (f->f_out != NULL && (fclose(f->f_out) != 0 || f->f_outerr)) {
		fprintf(stderr, "%s: %s: write error\n", progname,
		    o->o_outpath);
		if (f->f_result == RES_OK)
			f->f_result = RES_IO;
	}
	if (!o->o_quiet) {
		printf("bytes=%llu body=%llu status=%d connect_ms=%.3f "
		    "ttfb_ms=%.3f duration_ms=%.3f rcvbuf=%d result=%s\n",
		    (unsigned long long)f->f_bytes,
		    (unsigned long long)f->f_frame.hf_body,
		    f->f_frame.hf_status,
		    f->f_tconn >= 0 ? f->f_tconn - f->f_t0 : -1.0,
		    f->f_tfirst >= 0 ? f->f_tfirst - f->f_treq : -1.0,
		    f->f_tend - f->f_t0, f->f_eff, result_names[f->f_result]);
		fflush(stdout);
	}
	free(f->f_rbuf);
	return f->f_result == RES_OK ? EXIT_OK : f->f_result == RES_TIMEOUT ?
	    EXIT_TIMEOUT : EXIT_FETCH;
}

/* body_out: hands decoded body bytes to the output file of fetch arg. */
static void
body_out(void *arg, const char *buf, size_t len)
{
	struct fetch	*f = arg;

	if (f->f_out != NULL && !f->f_outerr &&
	    fwrite(buf, 1, len, f->f_out) != len)
		f->f_outerr = 1;
}

/*
 * source_parse: the numeric address s as a local address to bind (port 0),
 * or NULL if s is not one.  The result lives until the process ends.
 */
static struct addrinfo *
source_parse(const char *s)
{
	struct addrinfo	 hints, *res;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
	if (getaddrinfo(s, "0", &hints, &res) != 0)
		return NULL;
	return res;
}

/*
 * connect_url: resolves u and connects a TCP socket to the first address
 * that answers, with SO_RCVBUF set to rcvbuf first (unless 0) and, given
 * src, bound to it (addresses of another family are skipped).  Returns the
 * socket and the effective buffer size in *eff, or -1 with *why set.
 */
static int
connect_url(const struct http_url *u, int rcvbuf, const struct addrinfo *src,
    int *eff, const char **why)
{
	struct addrinfo	 hints, *res, *ai;
	socklen_t	 sl;
	char		 port[8];
	int		 fd = -1, gai, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* No AI_ADDRCONFIG: a host with only loopback must still resolve. */
	if (u->u_v6)
		hints.ai_flags = AI_NUMERICHOST;
	snprintf(port, sizeof(port), "%d", u->u_port);
	if ((gai = getaddrinfo(u->u_host, port, &hints, &res)) != 0) {
		*why = gai_strerror(gai);
		return -1;
	}
	for (ai = res; ai != NULL && !timed_out; ai = ai->ai_next) {
		if (src != NULL && src->ai_family != ai->ai_family) {
			err = EAFNOSUPPORT;
			continue;
		}
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
		if (fd == -1) {
			err = errno;
			continue;
		}
		/* Before connect(): the window scale is fixed at SYN time. */
		if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF,
		    &rcvbuf, sizeof(rcvbuf)) == -1) {
			err = errno;
			close(fd);
			fd = -1;
			continue;
		}
		if (src != NULL &&
		    bind(fd, src->ai_addr, src->ai_addrlen) == -1) {
			err = errno;
			close(fd);
			fd = -1;
			continue;
		}
		sl = sizeof(*eff);
		if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, eff, &sl) == -1)
			*eff = -1;
		alarm_fd = fd;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		err = timed_out ? ETIMEDOUT : errno;
		alarm_fd = -1;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd == -1)
		*why = strerror(err != 0 ? err : ETIMEDOUT);
	return fd;
}

/* send_all: writes all of buf to fd.  Returns 0, or -1 with errno set. */
static int
send_all(int fd, const char *buf, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n == -1) {
			if (errno == EINTR && !timed_out)
				continue;
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* now_ms: the monotonic clock in milliseconds. */
static double
now_ms(void)
{
	return (double)now_us() / 1e3;
}

/*
 * on_alarm: the time limit.  Shutting the socket down wakes a blocked
 * connect() or read() even if the signal lands just before the call.
 */
static void
on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	if (alarm_fd >= 0)
		shutdown(alarm_fd, SHUT_RDWR);
}

/* start_timer: arms the time limit of secs seconds.  Returns 0 or -1. */
static int
start_timer(double secs)
{
	struct sigaction	sa;
	struct itimerval	it;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;		/* no SA_RESTART: interrupt blocking calls */
	if (sigaction(SIGALRM, &sa, NULL) == -1)
		return -1;
	memset(&it, 0, sizeof(it));
	it.it_value = secs_tv(secs);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	return setitimer(ITIMER_REAL, &it, NULL);
}

/* stop_timer: disarms the time limit. */
static void
stop_timer(void)
{
	struct itimerval	off;

	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
}

/* pause_ms: sleeps ms milliseconds, or less if the time limit strikes. */
static void
pause_ms(long ms)
{
	struct timespec	ts;

	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (!timed_out && nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

int
main(int argc, char **argv)
{
	struct opts	 o;
	struct fetch	 f;

	parse_args(argc, argv, &o);
	fetch_setup(&f, &o);
	if (fetch_run(&f, &o) == -1)
		return EXIT_FETCH;
	return fetch_finish(&f, &o);
}
