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

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define URL_MAX		4096
#define HEAD_MAX	65536		/* largest response head accepted */
#define READ_SIZE_MAX	(16 * 1024 * 1024)

/* Exit statuses, documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_FETCH = 1,
	EXIT_USAGE = 2,
	EXIT_TIMEOUT = 3
};

struct url {
	char	 u_host[256];		/* without the brackets of an IPv6 literal */
	char	 u_port[8];
	char	 u_path[URL_MAX];	/* origin-form request target */
	int	 u_v6;
};

/* Incremental chunked transfer-coding decoder. */
enum chunk_state {
	CH_SIZE,		/* hex digits of a chunk size */
	CH_EXT,			/* chunk extension, skipped to LF */
	CH_DATA,		/* ch_left data bytes to go */
	CH_DATA_END,		/* CRLF after data */
	CH_TRAILER_BOL,		/* start of a trailer line (empty: done) */
	CH_TRAILER,		/* inside a trailer line */
	CH_DONE
};

struct chunk {
	enum chunk_state	 ch_state;
	uint64_t		 ch_left;
	int			 ch_digits;
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

struct head {
	int		 h_status;
	int64_t		 h_clen;	/* -1: absent */
	int		 h_chunked;
};

static void	 usage(FILE *, int);
static int	 parse_num(const char *, long long, long long, long long *);
static int	 parse_secs(const char *, double *);
static int	 url_parse(const char *, struct url *, const char **);
static size_t	 head_end(const char *, size_t);
static int	 head_parse(const char *, size_t, struct head *);
static int	 chunk_step(struct chunk *, const char *, size_t, size_t *);
static int	 fetch_feed(struct fetch *, const char *, size_t);
static int	 body_feed(struct fetch *, const char *, size_t);
static void	 body_out(struct fetch *, const char *, size_t);
static int	 connect_url(const struct url *, int, int *, const char **);
static int	 send_all(int, const char *, size_t);
static double	 now_ms(void);
static void	 on_alarm(int);
static int	 start_timer(double);
static void	 pause_ms(long);

static const char *progname = "http_get";
static volatile sig_atomic_t timed_out;
static volatile sig_atomic_t alarm_fd = -1;

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

/*
 * parse_num: parses a whole decimal integer in [min, max] into *out.
 * Returns 0, or -1 if s is not such a number.
 */
static int
parse_num(const char *s, long long min, long long max, long long *out)
{
	char		*end;
	long long	 v;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* parse_secs: a positive number of seconds, fractions allowed; 0 or -1. */
static int
parse_secs(const char *s, double *out)
{
	char	*end;
	double	 v;

	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !(v > 0) || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

/*
 * url_parse: splits "http://HOST[:PORT][/PATH]" into u.  Returns 0, or -1
 * with *why naming the problem (a static string).
 */
static int
url_parse(const char *s, struct url *u, const char **why)
{
	const char	*p, *h, *he;
	size_t		 hl;
	long long	 port;

	memset(u, 0, sizeof(*u));
	if (strlen(s) >= URL_MAX) {
		*why = "URL too long";
		return -1;
	}
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p)) {
			*why = "URL contains white space or control characters";
			return -1;
		}
	if (strncasecmp(s, "http://", 7) != 0) {
		*why = "only http:// URLs are supported";
		return -1;
	}
	p = s + 7;
	if (*p == '[') {
		h = p + 1;
		if ((he = strchr(h, ']')) == NULL) {
			*why = "unterminated [IPv6] host";
			return -1;
		}
		p = he + 1;
		u->u_v6 = 1;
	} else {
		h = p;
		he = p + strcspn(p, ":/?#");
		p = he;
	}
	hl = (size_t)(he - h);
	if (hl == 0 || hl >= sizeof(u->u_host)) {
		*why = "empty or too long host";
		return -1;
	}
	if (memchr(h, '@', hl) != NULL) {
		*why = "user information in URLs is not supported";
		return -1;
	}
	memcpy(u->u_host, h, hl);
	u->u_host[hl] = '\0';
	if (*p == ':') {
		const char *ps = ++p;
		char num[8];

		p += strcspn(p, "/?#");
		if (p - ps == 0 || p - ps >= (long)sizeof(num)) {
			*why = "bad port";
			return -1;
		}
		memcpy(num, ps, (size_t)(p - ps));
		num[p - ps] = '\0';
		if (parse_num(num, 1, 65535, &port) == -1) {
			*why = "bad port";
			return -1;
		}
		snprintf(u->u_port, sizeof(u->u_port), "%lld", port);
	} else if (*p != '\0' && *p != '/' && *p != '?' && *p != '#') {
		*why = "junk after host";
		return -1;
	} else
		strcpy(u->u_port, "80");
	/* The fragment is never sent; a bare "?q" gets the root path. */
	hl = strcspn(p, "#");
	if (hl == 0 || *p != '/')
		snprintf(u->u_path, sizeof(u->u_path), "/%.*s", (int)hl, p);
	else
		snprintf(u->u_path, sizeof(u->u_path), "%.*s", (int)hl, p);
	return 0;
}

/*
 * head_end: length of the response head in buf up to and including the
 * empty line that ends it (CRLF or bare LF), or 0 if it is not complete.
 */
static size_t
head_end(const char *buf, size_t len)
{
	const char	*p = buf, *end = buf + len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (nl + 1 < end && nl[1] == '\n')
			return (size_t)(nl + 2 - buf);
		if (nl + 2 < end && nl[1] == '\r' && nl[2] == '\n')
			return (size_t)(nl + 3 - buf);
		p = nl + 1;
	}
	return 0;
}

/*
 * head_parse: reads the status line and the headers that frame the body
 * from a complete head of len bytes.  Returns 0, or -1 if malformed.
 */
static int
head_parse(const char *buf, size_t len, struct head *h)
{
	const char	*p = buf, *end = buf + len, *eol, *v;
	size_t		 n;
	int		 i;

	h->h_status = 0;
	h->h_clen = -1;
	h->h_chunked = 0;
	if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ')
		return -1;
	for (i = 9; i < 12; i++) {
		if (!isdigit((unsigned char)buf[i]))
			return -1;
		h->h_status = h->h_status * 10 + (buf[i] - '0');
	}
	if ((eol = memchr(p, '\n', len)) == NULL)
		return -1;
	for (p = eol + 1; p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;
		n = (size_t)(eol - p);
		if (n >= 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
			uint64_t cl = 0;
			int digits = 0;

			for (v = p + 15; v < eol && (*v == ' ' || *v == '\t'); v++)
				;
			for (; v < eol && isdigit((unsigned char)*v); v++) {
				if (cl > (UINT64_C(1) << 53))
					return -1;
				cl = cl * 10 + (uint64_t)(*v - '0');
				digits++;
			}
			for (; v < eol && isspace((unsigned char)*v); v++)
				;
			if (digits == 0 || v != eol)
				return -1;
			if (h->h_clen != -1 && (uint64_t)h->h_clen != cl)
				return -1;
			h->h_clen = (int64_t)cl;
		} else if (n >= 18 &&
		    strncasecmp(p, "Transfer-Encoding:", 18) == 0) {
			/* Chunked must be the last coding; look for it anywhere. */
			for (v = p + 18; v + 7 <= eol; v++)
				if (strncasecmp(v, "chunked", 7) == 0)
					h->h_chunked = 1;
		}
	}
	return 0;
}

/*
 * chunk_step: advances the chunked decoder over buf.  Returns the number of
 * bytes consumed and sets *data: when *data is non-zero the consumed bytes
 * are body data (all of them), else framing.  Returns -1 on bad framing.
 * Stop calling once ch_state is CH_DONE.
 */
static int
chunk_step(struct chunk *ch, const char *buf, size_t len, size_t *data)
{
	size_t	i;
	int	c, d;

	*data = 0;
	if (ch->ch_state == CH_DATA) {
		*data = len < ch->ch_left ? len : (size_t)ch->ch_left;
		if (*data > INT_MAX)
			*data = INT_MAX;
		ch->ch_left -= *data;
		if (ch->ch_left == 0)
			ch->ch_state = CH_DATA_END;
		return (int)*data;
	}
	for (i = 0; i < len && i < INT_MAX; i++) {
		c = (unsigned char)buf[i];
		switch (ch->ch_state) {
		case CH_SIZE:
			if (isxdigit(c)) {
				d = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
				if (ch->ch_left > (UINT64_C(1) << 48))
					return -1;
				ch->ch_left = ch->ch_left * 16 + (uint64_t)d;
				ch->ch_digits++;
			} else if (ch->ch_digits == 0)
				return -1;
			else if (c == '\n') {
				ch->ch_state = ch->ch_left == 0 ?
				    CH_TRAILER_BOL : CH_DATA;
				ch->ch_digits = 0;
				if (ch->ch_state == CH_DATA)
					return (int)i + 1;
			} else if (c == ';' || c == ' ' || c == '\t' ||
			    c == '\r')
				ch->ch_state = CH_EXT;
			else
				return -1;
			break;
		case CH_EXT:
			if (c == '\n') {
				ch->ch_state = ch->ch_left == 0 ?
				    CH_TRAILER_BOL : CH_DATA;
				ch->ch_digits = 0;
				if (ch->ch_state == CH_DATA)
					return (int)i + 1;
			}
			break;
		case CH_DATA_END:
			if (c == '\n')
				ch->ch_state = CH_SIZE;
			else if (c != '\r')
				return -1;
			break;
		case CH_TRAILER_BOL:
			if (c == '\n') {
				ch->ch_state = CH_DONE;
				return (int)i + 1;
			}
			if (c != '\r')
				ch->ch_state = CH_TRAILER;
			break;
		case CH_TRAILER:
			if (c == '\n')
				ch->ch_state = CH_TRAILER_BOL;
			break;
		case CH_DATA:
		case CH_DONE:
			return (int)i;
		}
	}
	return (int)i;
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
	struct head	 h;
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
connect_url(const struct url *u, int rcvbuf, int *eff, const char **why)
{
	struct addrinfo	 hints, *res, *ai;
	socklen_t	 sl;
	int		 fd = -1, gai, err = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* No AI_ADDRCONFIG: a host with only loopback must still resolve. */
	if (u->u_v6)
		hints.ai_flags = AI_NUMERICHOST;
	if ((gai = getaddrinfo(u->u_host, u->u_port, &hints, &res)) != 0) {
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

/* now_ms: monotonic clock in milliseconds. */
static double
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
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
	it.it_value.tv_sec = (time_t)secs;
	it.it_value.tv_usec = (suseconds_t)((secs - (double)(time_t)secs) * 1e6);
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
	struct url	 u;
	struct fetch	 f;
	const char	*why, *result = "ok", *outpath = NULL;
	char		*rbuf, req[URL_MAX + 1024], hosthdr[300];
	long long	 v, rcvbuf = 512, rsize = 512, pause = 1000;
	double		 limit = 0, t0, tconn = -1, treq = -1, tfirst = -1, tend;
	ssize_t		 n;
	size_t		 reqlen;
	int		 ch, quiet = 0, eff = -1, status = EXIT_OK, rc;

	while ((ch = getopt_long(argc, argv, "b:r:p:t:o:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (parse_num(optarg, 0, INT_MAX / 2, &v) == -1) {
				fprintf(stderr, "%s: --rcvbuf: not a byte "
				    "count: %s\n", progname, optarg);
				return EXIT_USAGE;
			}
			rcvbuf = v;
			break;
		case 'r':
			if (parse_num(optarg, 1, READ_SIZE_MAX, &v) == -1) {
				fprintf(stderr, "%s: --read-size: not a byte "
				    "count in 1..%d: %s\n", progname,
				    READ_SIZE_MAX, optarg);
				return EXIT_USAGE;
			}
			rsize = v;
			break;
		case 'p':
			if (parse_num(optarg, 0, 3600000, &v) == -1) {
				fprintf(stderr, "%s: --pause: not a number of "
				    "milliseconds: %s\n", progname, optarg);
				return EXIT_USAGE;
			}
			pause = v;
			break;
		case 't':
			if (parse_secs(optarg, &limit) == -1) {
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
	if (url_parse(argv[optind], &u, &why) == -1) {
		fprintf(stderr, "%s: bad URL %s: %s\n", progname, argv[optind],
		    why);
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

	if (u.u_v6)
		snprintf(hosthdr, sizeof(hosthdr), "[%s]", u.u_host);
	else
		snprintf(hosthdr, sizeof(hosthdr), "%s", u.u_host);
	if (strcmp(u.u_port, "80") != 0)
		snprintf(hosthdr + strlen(hosthdr),
		    sizeof(hosthdr) - strlen(hosthdr), ":%s", u.u_port);
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
		fprintf(stderr, "%s: connect to %s port %s: %s\n", progname,
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
