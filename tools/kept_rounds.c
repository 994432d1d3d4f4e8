/*
 * kept_rounds: the keep-alive shape of make bench.  It holds N kept
 * HTTP/1.1 connections to one URL; each round writes one GET on every
 * connection, then reads every answer, connection by connection; R
 * rounds.  It reports calls/s: answers per second of the whole run.
 *
 * The point of the shape is many requests arriving at once and every
 * answer awaited before the next burst, through a front end that keeps
 * its connections (nginx in make bench).  Sockets are blocking and each
 * step is plain: connect(), write(), read() with SO_RCVTIMEO as the
 * no-progress timeout; answers are framed by the tools' one HTTP response
 * framer (tools/http_parse).  A connection the server ends (Connection:
 * close, as nginx does after keepalive_requests) is dialled again before
 * the next round and counted; a failed or non-200 answer is an error.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http_parse.h"
#include "listen.h"
#include "toolutil.h"

#define PROG		"kept_rounds"
#define DEF_CONNS	400
#define DEF_ROUNDS	2000
#define DEF_TIMEOUT	10		/* seconds without a byte */
#define MAX_ROUNDS	100000000LL
#define RBUF_SIZE	65536
#define MAX_SHOWN	5		/* error messages printed */

enum {
	EXIT_OK = 0,
	EXIT_ERRORS = 1,
	EXIT_USAGE = 2
};

/* Why an answer failed; the summary counts each kind. */
enum err_kind {
	ERR_CONNECT,		/* socket() or connect() failed */
	ERR_WRITE,		/* the request could not be written */
	ERR_TIMEOUT,		/* no byte for --timeout seconds */
	ERR_CLOSED,		/* connection lost before the answer ended */
	ERR_MALFORMED,		/* not an HTTP answer, or bytes after it */
	ERR_STATUS,		/* an answer other than 200 */
	ERR_NKINDS
};

static const char *const err_names[ERR_NKINDS] = {
	"connect", "write", "timeout", "closed", "malformed", "status"
};

/*
 * One kept connection: its socket (-1: none), whether it was ever dialled
 * (the next dial is a reconnect) and whether a request is out on it.
 */
struct kconn {
	int	 k_fd;
	int	 k_dialled;
	int	 k_sent;
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static void	 usage_error(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static void	 parse_args(int, char **);
static void	 setup(void);
static int	 run(void);
static void	 report(int64_t);
static int	 kc_dial(struct kconn *);
static void	 kc_close(struct kconn *);
static void	 kc_send(struct kconn *);
static void	 kc_answer(struct kconn *);
static void	 fail(enum err_kind, const char *, ...)
		    __attribute__((format(printf, 2, 3)));

/* Options. */
static long long	 opt_conns = DEF_CONNS, opt_rounds = DEF_ROUNDS;
static double		 opt_limit, opt_timeout = DEF_TIMEOUT;
static int		 opt_quiet;
static const char	*opt_url;

/* Setup. */
static struct http_url	 url;
static struct sockaddr_storage srv;
static socklen_t	 srv_len;
static char		*request;
static size_t		 request_len;
static struct kconn	*conns;

/* Results. */
static long long	 n_requests, n_ok, n_reconnects, n_rounds, n_cut;
static int64_t		 hard_stop;	/* no reading after this (0: none) */
static long long	 errs[ERR_NKINDS], n_errors;
static uint64_t		 body_bytes;

static void
usage(FILE *fp, int status)
{
	if (fp == stderr) {
		fprintf(fp, "usage: %s [options] URL\n"
		    "       %s --help for the options\n", PROG, PROG);
		exit(status);
	}
	fprintf(fp,
"usage: %s [options] URL\n"
"Holds N kept HTTP/1.1 connections to URL (http://HOST[:PORT]/PATH); each\n"
"round writes one GET on every connection, then reads every answer.\n"
"\n"
"  -c, --connections N  connections held (default %d)\n"
"  -r, --rounds N       rounds (default %d)\n"
"  -t, --time-limit S   start no round after S seconds, and stop reading\n"
"                       answers --timeout seconds after that (default: none)\n"
"      --timeout S      an answer with no byte for S seconds fails\n"
"                       (timeout; default %d)\n"
"  -q, --quiet          no summary\n"
"  -h, --help           this text\n"
"\n"
"A connection the server closes (Connection: close, or at end of input\n"
"between rounds) is dialled again before the next round and counted.\n"
"\n"
"Summary on stdout, one item a line:\n"
"  connections: N, rounds: N (rounds run), requests: N (written)\n"
"  responses: N         answers with status 200\n"
"  cut: N               answers not read at the time limit\n"
"  errors: N (KIND N, ...)\n"
"                       connect, write, timeout, closed, malformed, status\n"
"  reconnects: N        connections dialled again\n"
"  body_bytes: N        body bytes of every answer\n"
"  seconds: X           first connect to last answer\n"
"  calls_per_s: X       responses per second\n"
"\n"
"Exit status: 0 no errors; 1 errors; 2 bad usage.\n",
	    PROG, DEF_CONNS, DEF_ROUNDS, DEF_TIMEOUT);
	exit(status);
}

static void
usage_error(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "%s: ", PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr, EXIT_USAGE);
}

/* parse_args: the options and the URL, or a message and exit 2. */
static void
parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "connections", required_argument,	NULL, 'c' },
		{ "rounds",	required_argument,	NULL, 'r' },
		{ "time-limit",	required_argument,	NULL, 't' },
		{ "timeout",	required_argument,	NULL, 'T' },
		{ "quiet",	no_argument,		NULL, 'q' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	enum http_url_err	 ue;
	int			 c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:r:t:qh", longopts,
	    NULL)) != -1) {
		switch (c) {
		case 'c':
			if (parse_int(optarg, 1, 1000000, &opt_conns) == -1)
				usage_error("bad --connections '%s'", optarg);
			break;
		case 'r':
			if (parse_int(optarg, 1, MAX_ROUNDS, &opt_rounds) == -1)
				usage_error("bad --rounds '%s'", optarg);
			break;
		case 't':
			if (parse_secs(optarg, 86400, &opt_limit) == -1)
				usage_error("bad --time-limit '%s'", optarg);
			break;
		case 'T':
			if (parse_secs(optarg, 86400, &opt_timeout) == -1)
				usage_error("bad --timeout '%s'", optarg);
			break;
		case 'q':
			opt_quiet = 1;
			break;
		case 'h':
			usage(stdout, EXIT_OK);
		case ':':
			usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		usage_error(argc - optind == 0 ? "a URL is needed" :
		    "one URL only");
	opt_url = argv[optind];
	if ((ue = http_url_parse(opt_url, &url)) != URL_OK)
		usage_error("%s: %s", opt_url, http_url_why(ue));
	if (opt_conns > fd_budget(16))
		usage_error("--connections %lld: more than the %lld descriptors"
		    " this process may open", opt_conns, fd_budget(16));
}

/* setup: the server's address, the request's bytes, the connection table. */
static void
setup(void)
{
	const char	*why;
	char		 port[8], host[300];
	int		 n;

	snprintf(port, sizeof(port), "%d", url.u_port);
	if (addr_resolve(url.u_host, port, 0, &srv, &srv_len, &why) == -1) {
		fprintf(stderr, "%s: %s: %s\n", PROG, url.u_host, why);
		exit(EXIT_USAGE);
	}
	http_host_header(&url, host, sizeof(host));
	n = snprintf(NULL, 0, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: kept_rounds\r\n\r\n", url.u_path, host);
	if ((request = malloc((size_t)n + 1)) == NULL ||
	    (conns = calloc((size_t)opt_conns, sizeof(*conns))) == NULL) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(EXIT_ERRORS);
	}
	snprintf(request, (size_t)n + 1, "GET %s HTTP/1.1\r\nHost: %s\r\n"
	    "User-Agent: kept_rounds\r\n\r\n", url.u_path, host);
	request_len = (size_t)n;
}

int
main(int argc, char **argv)
{
	int64_t	 start;
	int	 rc;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	setup();
	start = now_us();
	rc = run();
	report(now_us() - start);
	return rc;
}

/*
 * run: the rounds: every connection dialled (the first time, or again
 * after the server ended it) and given its request, then every answer
 * read.  Returns the exit status: EXIT_ERRORS when the first connect
 * fails or any answer failed.
 */
static int
run(void)
{
	int64_t		 deadline = 0;
	long long	 i;

	for (i = 0; i < opt_conns; i++)
		conns[i].k_fd = -1;
	if (kc_dial(&conns[0]) == -1)
		return EXIT_ERRORS;	/* nothing listens: say so once */
	if (opt_limit > 0) {
		deadline = now_us() + (int64_t)(opt_limit * 1e6);
		hard_stop = deadline + (int64_t)(opt_timeout * 1e6);
	}
	for (n_rounds = 0; n_rounds < opt_rounds; n_rounds++) {
		if (deadline > 0 && now_us() >= deadline)
			break;
		for (i = 0; i < opt_conns; i++)
			kc_send(&conns[i]);
		for (i = 0; i < opt_conns; i++) {
			if (!conns[i].k_sent)
				continue;
			if (hard_stop > 0 && now_us() >= hard_stop) {
				n_cut++;	/* stuck past the limit: not waited for */
				kc_close(&conns[i]);
			} else
				kc_answer(&conns[i]);
		}
	}
	for (i = 0; i < opt_conns; i++)
		kc_close(&conns[i]);
	return n_errors > 0 ? EXIT_ERRORS : EXIT_OK;
}

/*
 * kc_dial: a new blocking socket connected to the server, with
 * TCP_NODELAY and the timeout on reads and writes.  Returns 0, or -1
 * (counted as a connect error).
 */
static int
kc_dial(struct kconn *k)
{
	struct timeval	 tv = secs_tv(opt_timeout);
	int		 one = 1;

	k->k_fd = socket(srv.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (k->k_fd == -1) {
		fail(ERR_CONNECT, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(k->k_fd, (struct sockaddr *)&srv, srv_len) == -1) {
		fail(ERR_CONNECT, "connect to %s:%d: %s", url.u_host,
		    url.u_port, strerror(errno));
		kc_close(k);
		return -1;
	}
	k->k_dialled = 1;
	(void)setsockopt(k->k_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(k->k_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(k->k_fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return 0;
}

/* kc_close: closes k's socket, if any. */
static void
kc_close(struct kconn *k)
{
	if (k->k_fd != -1)
		close(k->k_fd);
	k->k_fd = -1;
	k->k_sent = 0;
}

/*
 * kc_send: writes the request on k, dialling first when k has no
 * socket.  A kept connection that the server closed while idle fails the
 * write; it is dialled again once.  Sets k_sent when the request went.
 */
static void
kc_send(struct kconn *k)
{
	size_t	 off;
	ssize_t	 n;
	int	 tries;

	k->k_sent = 0;
	for (tries = 0; tries < 2; tries++) {
		if (k->k_fd == -1) {
			if (k->k_dialled)
				n_reconnects++;
			if (kc_dial(k) == -1)
				return;
		}
		for (off = 0; off < request_len; off += (size_t)n)
			if ((n = write(k->k_fd, request + off,
			    request_len - off)) <= 0)
				break;
		if (off == request_len) {
			k->k_sent = 1;
			n_requests++;
			return;
		}
		if (off > 0 || tries == 1) {
			fail(ERR_WRITE, "write: %s", strerror(errno));
			kc_close(k);
			return;
		}
		kc_close(k);	/* closed while idle: once more, anew */
	}
}

/*
 * kc_answer: reads k's answer to its end and counts it.  The connection
 * is closed when the answer failed, when the server said it will not
 * keep it, or when bytes follow the answer (nothing was asked for them).
 */
static void
kc_answer(struct kconn *k)
{
	struct http_frame	 f;
	char			 buf[RBUF_SIZE];
	size_t			 used;
	ssize_t			 n;

	http_frame_init(&f, 0);
	while (f.hf_state < HF_DONE) {
		n = read(k->k_fd, buf, sizeof(buf));
		if (n > 0) {
			used = http_frame_feed(&f, buf, (size_t)n, NULL, NULL);
			if (f.hf_state == HF_DONE && used < (size_t)n) {
				fail(ERR_MALFORMED, "%zd bytes after an answer",
				    n - (ssize_t)used);
				kc_close(k);
				return;
			}
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			fail(ERR_TIMEOUT, "no answer byte for %g s", opt_timeout);
		else if (n == 0 && http_frame_eof(&f))
			break;
		else
			fail(ERR_CLOSED, "connection lost before the answer"
			    " ended%s%s", n == -1 ? ": " : "",
			    n == -1 ? strerror(errno) : "");
		kc_close(k);
		return;
	}
	body_bytes += f.hf_body;
	if (f.hf_state == HF_ERROR)
		fail(ERR_MALFORMED, "a malformed answer");
	else if (f.hf_status != 200)
		fail(ERR_STATUS, "status %d", f.hf_status);
	else
		n_ok++;
	if (f.hf_state != HF_DONE || f.hf_close)
		kc_close(k);
	k->k_sent = 0;
}

/* fail: counts one error of kind and prints the first few. */
static void
fail(enum err_kind kind, const char *fmt, ...)
{
	va_list	 ap;

	errs[kind]++;
	if (n_errors++ >= MAX_SHOWN) {
		if (n_errors == MAX_SHOWN + 1)
			fprintf(stderr, "%s: more errors not shown\n", PROG);
		return;
	}
	fprintf(stderr, "%s: ", PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* report: the summary (usage() lists its lines) unless --quiet. */
static void
report(int64_t us)
{
	double	 secs = (double)us / 1e6;
	int	 i, first = 1;

	if (opt_quiet)
		return;
	printf("connections: %lld\nrounds: %lld\nrequests: %lld\n"
	    "responses: %lld\ncut: %lld\nerrors: %lld", opt_conns, n_rounds,
	    n_requests, n_ok, n_cut, n_errors);
	for (i = 0; i < ERR_NKINDS; i++) {
		if (errs[i] == 0)
			continue;
		printf("%s%s %lld", first ? " (" : ", ", err_names[i], errs[i]);
		first = 0;
	}
	printf("%s\nreconnects: %lld\nbody_bytes: %llu\nseconds: %.3f\n"
	    "calls_per_s: %.2f\n", first ? "" : ")", n_reconnects,
	    (unsigned long long)body_bytes, secs,
	    secs > 0 ? (double)n_ok / secs : 0.0);
}
