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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http_parse.h"
#include "toolutil.h"

#define HEAD_MAX	65536		/* largest response head accepted */
#define READ_SIZE_MAX	(16 * 1024 * 1024)

/* Exit statuses, documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_FETCH = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3
};

enum body_mode {
	BODY_NONE,		/* still reading the head */
	BODY_LENGTH,		/* Content-Length */
	BODY_CHUNKED,
	BODY_CLOSE,		/* delimited by the server closing */
	BODY_DONE
};

/* Everything one fetch knows; a single instance lives in main(). */
struct fetch {
	int		 f_fd;
	enum body_mode	 f_mode;
	char		*f_head;	/* head bytes gathered so far */
	size_t		 f_headlen;
	int		 f_status;
	uint64_t	 f_clen;
	uint64_t	 f_bytes;	/* bytes read from the socket */
	uint64_t	 f_body;	/* decoded body bytes */
	struct chunk	 f_chunk;
	FILE		*f_out;
	int		 f_outerr;
};

static void	 usage(FILE *, int);
static int	 fetch_feed(struct fetch *, const char *, size_t);
static int	 body_feed(struct fetch *, const char *, size_t);
static void	 body_out(struct fetch *, const char *, size_t);
static int	 connect_url(const struct http_url *, int, int *, const char **);
static int	 send_all(int, const char *, size_t);
static double	 now_ms(void);
static void	 on_alarm(int);
static int	 start_timer(double);
static void	 pause_ms(long);

static const char *progname = "http_get";
static volatile sig_atomic_t timed_out;
static volatile sig_atomic_t alarm_fd = -1;

/* Why a URL was refused, by enum http_url_err. */
static const char *const url_errs[] = {
	[URL_OK] = "no error",
	[URL_TOO_LONG] = "URL too long",
	[URL_SPACE] = "URL contains white space or control characters",
	[URL_SCHEME] = "only http:// URLs are supported",
	[URL_BRACKET] = "unterminated [IPv6] host",
	[URL_HOST] = "empty or too long host",
	[URL_USERINFO] = "user information in URLs is not supported",
	[URL_PORT] = "bad port",
	[URL_JUNK] = "junk after host"
};

static const struct option longopts[] = {
	{ "rcvbuf",	required_argument,	NULL, 'b' },
	{ "read-size",	required_argument,	NULL, 'r' },
	{ "pause",	required_argument,	NULL, 'p' },
	{ "time-limit",	required_argument,	NULL, 't' },
	{ "output",	required_argument,	NULL, 'o' },
	{ "quiet",	no_argument,		NULL, 'q' },
	{ "help",	no_argument,		NULL, 'h' },
	{ NULL,		0,			NULL, 0 }
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

/* body_out: hands decoded body bytes to the output file, if any. */
static void
body_out(struct fetch *f, const char *buf, size_t len)
{
	f->f_body += len;
	if (f->f_out != NULL && !f->f_outerr &&
	    fwrite(buf, 1, len, f->f_out) != len)
		f->f_outerr = 1;
}

/*
 * body_feed: consumes body bytes in the current framing mode.  Returns 0,
 * or -1 on bad chunked framing.  Bytes past the end of the body are ignored.
 */
static int
body_feed(struct fetch *f, const char *buf, size_t len)
{
	size_t	n, data;
	int	r;

	switch (f->f_mode) {
	case BODY_LENGTH:
		n = f->f_clen - f->f_body < len ?
		    (size_t)(f->f_clen - f->f_body) : len;
		body_out(f, buf, n);
		if (f->f_body == f->f_clen)
			f->f_mode = BODY_DONE;
		break;
	case BODY_CHUNKED:
		while (len > 0 && f->f_chunk.ch_state != CH_DONE) {
			if ((r = chunk_step(&f->f_chunk, buf, len, &data)) == -1)
				return -1;
			if (data > 0)
				body_out(f, buf, data);
			buf += r;
			len -= (size_t)r;
		}
		if (f->f_chunk.ch_state == CH_DONE)
			f->f_mode = BODY_DONE;
		break;
	case BODY_CLOSE:
		body_out(f, buf, len);
		break;
	case BODY_NONE:
	case BODY_DONE:
		break;
	}
	return 0;
}

/*
 * fetch_feed: consumes len bytes read from the socket: head first, then
 * body.  Returns 0, or -1 on a malformed response (reason on stderr).
 */
static int
fetch_feed(struct fetch *f, const char *buf, size_t len)
{
	struct http_head h;
	size_t		 end, old, rest;

	while (f->f_mode == BODY_NONE && len > 0) {
		old = f->f_headlen;
		rest = HEAD_MAX - old < len ? HEAD_MAX - old : len;
		memcpy(f->f_head + old, buf, rest);
		f->f_headlen += rest;
		end = head_end(f->f_head, f->f_headlen);
		if (end == 0) {
			if (f->f_headlen == HEAD_MAX) {
				fprintf(stderr, "%s: response head larger "
				    "than %d bytes\n", progname, HEAD_MAX);
				return -1;
			}
			return 0;
		}
		if (head_parse(f->f_head, end, &h) == -1) {
			fprintf(stderr, "%s: malformed response head\n",
			    progname);
			return -1;
		}
		buf += end - old;
		len -= end - old;
		f->f_headlen = 0;
		if (h.h_status >= 100 && h.h_status < 200)
			continue;	/* interim response: the real one follows */
		f->f_status = h.h_status;
		if (h.h_status == 204 || h.h_status == 304)
			f->f_mode = BODY_DONE;
		else if (h.h_chunked)
			f->f_mode = BODY_CHUNKED;
		else if (h.h_clen >= 0) {
			f->f_clen = (uint64_t)h.h_clen;
			f->f_mode = h.h_clen == 0 ? BODY_DONE : BODY_LENGTH;
		} else
			f->f_mode = BODY_CLOSE;
	}
	if (len > 0 && body_feed(f, buf, len) == -1) {
		fprintf(stderr, "%s: malformed chunked body\n", progname);
		return -1;
	}
	return 0;
}

/*
 * connect_url: resolves u and connects a TCP socket to the first address
 * that answers, with SO_RCVBUF set to rcvbuf first (unless 0).  Returns the
 * socket and the effective buffer size in *eff, or -1 with *why set.
 */
static int
connect_url(const struct http_url *u, int rcvbuf, int *eff, const char **why)
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
	struct http_url	 u;
	struct fetch	 f;
	const char	*why, *result = "ok", *outpath = NULL;
	char		*rbuf, req[HTTP_URL_MAX + 1024], hosthdr[300];
	long long	 v, rcvbuf = 512, rsize = 512, pause = 1000;
	double		 limit = 0, t0, tconn = -1, treq = -1, tfirst = -1, tend;
	ssize_t		 n;
	size_t		 reqlen;
	enum http_url_err uerr;
	int		 ch, quiet = 0, eff = -1, status = EXIT_OK, rc;

	while ((ch = getopt_long(argc, argv, "b:r:p:t:o:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (parse_int(optarg, 0, INT_MAX / 2, &v) == -1) {
				fprintf(stderr, "%s: --rcvbuf: not a byte "
				    "count: %s\n", progname, optarg);
				return EXIT_USAGE;
			}
			rcvbuf = v;
			break;
		case 'r':
			if (parse_int(optarg, 1, READ_SIZE_MAX, &v) == -1) {
				fprintf(stderr, "%s: --read-size: not a byte "
				    "count in 1..%d: %s\n", progname,
				    READ_SIZE_MAX, optarg);
				return EXIT_USAGE;
			}
			rsize = v;
			break;
		case 'p':
			if (parse_int(optarg, 0, 3600000, &v) == -1) {
				fprintf(stderr, "%s: --pause: not a number of "
				    "milliseconds: %s\n", progname, optarg);
				return EXIT_USAGE;
			}
			pause = v;
			break;
		case 't':
			if (parse_secs(optarg, 1e6, &limit) == -1) {
				fprintf(stderr, "%s: --time-limit: not a "
				    "positive number of seconds: %s\n",
				    progname, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout, EXIT_OK);
			break;
		default:
			usage(stderr, EXIT_USAGE);
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s: exactly one URL expected\n", progname);
		usage(stderr, EXIT_USAGE);
	}
	if ((uerr = http_url_parse(argv[optind], &u)) != URL_OK) {
		fprintf(stderr, "%s: bad URL %s: %s\n", progname, argv[optind],
		    url_errs[uerr]);
		return EXIT_USAGE;
	}

	memset(&f, 0, sizeof(f));
	f.f_fd = -1;
	f.f_mode = BODY_NONE;
	if ((rbuf = malloc((size_t)rsize)) == NULL ||
	    (f.f_head = malloc(HEAD_MAX)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_FETCH;
	}
	if (outpath != NULL && (f.f_out = fopen(outpath, "wb")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", progname, outpath,
		    strerror(errno));
		return EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);

	http_host_header(&u, hosthdr, sizeof(hosthdr));
	rc = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: evfcgid-http_get\r\nAccept: */*\r\n"
	    "Connection: close\r\n\r\n", u.u_path, hosthdr);
	reqlen = (size_t)rc;

	t0 = now_ms();
	if (limit > 0 && start_timer(limit) == -1) {
		fprintf(stderr, "%s: setitimer: %s\n", progname,
		    strerror(errno));
		return EXIT_FETCH;
	}
	f.f_fd = connect_url(&u, (int)rcvbuf, &eff, &why);
	if (f.f_fd == -1) {
		if (timed_out) {
			result = "timeout";
			status = EXIT_TIMEOUT;
		} else {
			result = "connect_error";
			status = EXIT_FETCH;
		}
		fprintf(stderr, "%s: connect to %s port %d: %s\n", progname,
		    u.u_host, u.u_port, why);
		goto done;
	}
	tconn = treq = now_ms();
	if (send_all(f.f_fd, req, reqlen) == -1) {
		result = timed_out ? "timeout" : "io_error";
		status = timed_out ? EXIT_TIMEOUT : EXIT_FETCH;
		fprintf(stderr, "%s: send: %s\n", progname,
		    strerror(errno));
		goto done;
	}

	for (;;) {
		if (timed_out) {
			result = "timeout";
			status = EXIT_TIMEOUT;
			break;
		}
		n = read(f.f_fd, rbuf, (size_t)rsize);
		if (n == -1 && errno == EINTR)
			continue;
		if (timed_out) {
			result = "timeout";
			status = EXIT_TIMEOUT;
			break;
		}
		if (n == -1) {
			fprintf(stderr, "%s: read: %s\n", progname,
			    strerror(errno));
			result = "io_error";
			status = EXIT_FETCH;
			break;
		}
		if (n == 0) {
			if (f.f_mode == BODY_CLOSE)
				f.f_mode = BODY_DONE;
			else if (f.f_mode == BODY_NONE) {
				fprintf(stderr, "%s: connection closed "
				    "before a complete response head\n",
				    progname);
				result = "protocol_error";
				status = EXIT_FETCH;
			} else {
				fprintf(stderr, "%s: connection closed after "
				    "%llu body bytes of %s\n", progname,
				    (unsigned long long)f.f_body,
				    f.f_mode == BODY_LENGTH ?
				    "Content-Length" : "a chunked body");
				result = "short_body";
				status = EXIT_FETCH;
			}
			break;
		}
		if (tfirst < 0)
			tfirst = now_ms();
		f.f_bytes += (uint64_t)n;
		if (fetch_feed(&f, rbuf, (size_t)n) == -1) {
			result = "protocol_error";
			status = EXIT_FETCH;
			break;
		}
		if (f.f_mode == BODY_DONE)
			break;
		if (pause > 0)
			pause_ms((long)pause);
	}
	if (status == EXIT_OK && f.f_status >= 400) {
		fprintf(stderr, "%s: HTTP status %d\n", progname, f.f_status);
		result = "http_error";
		status = EXIT_FETCH;
	}

done:
	tend = now_ms();
	if (limit > 0) {
		struct itimerval off;

		memset(&off, 0, sizeof(off));
		setitimer(ITIMER_REAL, &off, NULL);
	}
	alarm_fd = -1;
	if (f.f_fd != -1)
		close(f.f_fd);
	if (f.f_out != NULL && (fclose(f.f_out) != 0 || f.f_outerr)) {
		fprintf(stderr, "%s: %s: write error\n", progname, outpath);
		if (status == EXIT_OK) {
			result = "io_error";
			status = EXIT_FETCH;
		}
	}
	if (!quiet) {
		printf("bytes=%llu body=%llu status=%d connect_ms=%.3f "
		    "ttfb_ms=%.3f duration_ms=%.3f rcvbuf=%d result=%s\n",
		    (unsigned long long)f.f_bytes,
		    (unsigned long long)f.f_body, f.f_status,
		    tconn >= 0 ? tconn - t0 : -1.0,
		    tfirst >= 0 ? tfirst - treq : -1.0, tend - t0, eff,
		    result);
		fflush(stdout);
	}
	free(rbuf);
	free(f.f_head);
	return status;
}
