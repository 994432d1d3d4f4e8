/*
 * http_load: the classic ACME http_load command line and summary, rebuilt
 * on a libevent loop so thousands of parallel connections cost nothing but
 * their sockets (the original used select() and stopped at FD_SETSIZE).
 *
 * Each fetch picks a random URL from the URL file.  By default a fetch is
 * one TCP connection carrying one request with "Connection: close", as the
 * original did; -keepalive reuses connections with HTTP/1.1 keep-alive.
 * Bodies framed by Content-Length, chunked coding or the server's close are
 * all understood.  "bytes" are body bytes, as in the original.  -proxy
 * sends every request to one proxy, the absolute URL as its target; -sip
 * dials each connection from the next source address of a file.
 *
 * The hot path is kept short on purpose, because the tests hold it to ab
 * and wrk: URLs are resolved and requests formatted once, a request is
 * written right after connect() (a loopback handshake is usually done by
 * then), a kept-alive connection stays registered for reading between
 * requests, and responses are framed in place as they arrive.  The run
 * and the connection slots are tools/loadgen's, shared with fcgi_load.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "http_parse.h"
#include "listen.h"
#include "loadgen.h"
#include "toolutil.h"

#define THROTTLE_MODEM	3360		/* bytes/s: 33.6 kbit/s, 10 bits a byte */
#define BITS_PER_BYTE	10.0		/* -Throttle's: start and stop bits */
#define IDLE_SECS	60		/* default -timeout */
#define PROGRESS_SECS	60		/* -verbose report interval */
#define RATE_MAX	100000
#define RBUF_SIZE	(128 * 1024)	/* one read at most */
#define EXIT_BADVAL	2		/* a bad -proxy or -sip */
#define LINE_MAX_LEN	(HTTP_URL_MAX + 2) /* of the URL and -sip files */
#define PROXY_PORT	"80"		/* -proxy HOST alone */

/* The request, formatted once per URL: scheme and authority for a proxy. */
#define REQUEST_FMT	"GET %s%s%s HTTP/1.1\r\nHost: %s\r\n" \
			"User-Agent: http_load (evfcgid)\r\n%s\r\n"

struct url {
	char			*u_str;
	struct sockaddr_storage	 u_sa;
	socklen_t		 u_salen;
	char			*u_req;		/* the request, formatted once */
	size_t			 u_reqlen;
	int			 u_got_bytes;
	int64_t			 u_bytes;
	int			 u_got_sum;
	uint64_t		 u_sum;
};

/* A source address of -sip. */
struct sip {
	struct sockaddr_storage	 s_ss;
	socklen_t		 s_len;
	char			 s_str[INET6_ADDRSTRLEN];
};

enum hconn_state {
	CS_FREE,		/* on the free list, no socket */
	CS_SENDING,		/* connect() issued or request partly written */
	CS_READING,		/* reading the response */
	CS_PAUSED,		/* throttled: not reading until woken */
	CS_IDLE			/* kept alive between fetches (-rate) */
};

/* How a fetch ended. */
enum fetch_end {
	FE_OK,			/* complete response */
	FE_SHORT,		/* closed or failed in the middle */
	FE_TIMEOUT,
	FE_CONNFAIL		/* never connected */
};

/*
 * One socket (the slot: ls_done > 0 means this fetch runs on a kept-alive
 * socket) and the fetch it carries; torn down by hconn_close().
 */
struct hconn {
	struct lg_slot	 c_slot;
	struct hconn	*c_next;	/* free list or idle list */
	struct hconn	*c_prev;	/* idle list only */
	enum hconn_state	 c_state;
	struct url	*c_url;
	struct sip	*c_sip;		/* -sip: dialled from, or NULL */
	int		 c_did_response;
	int64_t		 c_start_us;	/* fetch started */
	int64_t		 c_connect_us;	/* connect() called */
	int64_t		 c_request_us;	/* connection up, request going out */
	int64_t		 c_ready_us;	/* first readable, 0 until then */
	int64_t		 c_response_us;	/* first response byte (when ready) */
	int64_t		 c_paced_us;	/* -throttle: the pacer's clock */
	size_t		 c_woff;	/* request bytes written */
	int64_t		 c_rbytes;	/* bytes read in this fetch */
	struct http_frame c_frame;	/* the response */
	int		 c_close;	/* not reusable after this response */
	uint64_t	 c_sum;
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static int	 opt_match(const char *);
static const char *parse_args(int, char **);
static int	 opt_flag(int, const char *);
static void	 opt_value(int, const char *, const char *);
static void	 read_lines(const char *, const char *, int,
		    void (*)(const char *, size_t, char *));
static void	*grow(void *, size_t *, size_t, size_t);
static void	 read_url_file(const char *);
static void	 url_take(const char *, size_t, char *);
static void	 sip_take(const char *, size_t, char *);
static int	 sip_parse(struct sip *, const char *);
static void	 sip_check(const char *);
static struct sip *sip_pick(int);
static const char *url_why(enum http_url_err);
static int	 url_load(struct url *, const char *, const char **);
static int	 request_format(struct url *, const struct http_url *,
		    const char *);
static void	 proxy_parse(const char *);
static void	 fetch_error(struct hconn *, const char *, ...)
		    __attribute__((format(printf, 2, 3)));
static struct hconn *hconn_new(void);
static void	 hconn_close(struct hconn *);
static void	 hconn_cb(evutil_socket_t, short, void *);
static void	 hconn_woke(void *);
static void	 hconn_connect(struct hconn *);
static void	 hconn_send(struct hconn *);
static void	 hconn_read(struct hconn *);
static size_t	 hconn_paced(struct hconn *);
static void	 body_sum(void *, const char *, size_t);
static void	 idle_push(struct hconn *);
static void	 idle_remove(struct hconn *);
static struct url *url_pick(void);
static void	 fetch_begin(struct hconn *, struct url *);
static void	 fetch_start(void);
static void	 fetch_end(struct hconn *, enum fetch_end);
static void	 fetch_times(const struct hconn *);
static void	 fetch_check(struct hconn *);
static void	 refill(void);
static void	 start(void *);
static void	 rate_cb(evutil_socket_t, short, void *);
static void	 progress(void *);
static void	 report(void);

static const char	*progname = "http_load";

/* Options. */
static int		 do_checksum, do_throttle, do_verbose, do_jitter;
static int		 do_keepalive, do_proxy;
static struct addr	 proxy;		/* -proxy: where every request goes */
static const char	*sip_file;	/* -sip */
static double		 throttle = THROTTLE_MODEM;	/* bytes/second */
static double		 idle_secs = IDLE_SECS;
static long long	 start_parallel, start_rate, end_fetches;
static double		 end_seconds;

static struct url	*urls;
static size_t		 nurls, urls_cap;
static struct sip	*sips;
static size_t		 nsips, sips_cap, sip_next;

/* The run: fetches started and ended are run.lr_started, lr_ended. */
static struct lg_run	 run;
static const struct timeval *idle_tv;	/* libevent common timeout */
static struct event	*rate_ev;
static int64_t		 rate_next_us, rate_interval_us;
static size_t		 read_max;
static struct lg_pace	 pace;		/* -throttle's rate */

static struct hconn	*free_conns;
static struct hconn	*idle_conns;
static long long	 conns_open, max_conns;
static int		 refilling;

/* Statistics, in the original's terms. */
static long long	 num_active, max_parallel;
static long long	 connects_completed, responses_completed;
static long long	 total_bytes;
static int64_t		 total_connect_us, max_connect_us, min_connect_us;
static int64_t		 total_response_us, max_response_us, min_response_us;
static long long	 total_timeouts, total_badbytes, total_badsums;
static long long	 total_connfails;

/* The options, in the order the original tried its prefixes. */
enum {
	OPT_CHECKSUM, OPT_THROTTLE, OPT_THROTTLE_N, OPT_VERBOSE, OPT_TIMEOUT,
	OPT_JITTER, OPT_PARALLEL, OPT_RATE, OPT_FETCHES, OPT_SECONDS,
	OPT_SIP, OPT_PROXY, OPT_KEEPALIVE, OPT_HELP
};
static const char *const optnames[] = {
	"checksum", "throttle", "Throttle", "verbose", "timeout", "jitter",
	"parallel", "rate", "fetches", "seconds", "sip", "proxy",
	"keepalive", "help", NULL
};

/* usage: prints the synopsis to fp and exits with status. */
static void
usage(FILE *fp, int status)
{
	fprintf(fp,
"usage:  %s [-checksum] [-throttle] [-Throttle N] [-proxy host:port]\n"
"            [-verbose] [-timeout secs] [-sip sip_file] [-keepalive]\n"
"            -parallel N | -rate N [-jitter]\n"
"            -fetches N | -seconds N\n"
"            url_file\n"
"One start specifier, either -parallel or -rate, is required.\n"
"One end specifier, either -fetches or -seconds, is required.\n"
"\n"
"Options may be abbreviated to any unique prefix and may start with -- .\n"
"  -checksum    compare a checksum of each body with earlier fetches of the\n"
"               same URL (reports bad checksums instead of bad byte counts)\n"
"  -throttle    read like a 33.6 kbit/s modem (%d bytes/s per connection)\n"
"  -Throttle N  read like a modem of N bits/s: N/10 bytes/s per connection\n"
"               (a byte on the line is 10 bits with its start and stop bits)\n"
"  -proxy H:P   send every request to the HTTP proxy at host H, port P (80\n"
"               if none; [V6]:P for IPv6), the absolute URL as its target;\n"
"               the proxy, not http_load, resolves the URLs' hosts\n"
"  -verbose     progress report on stderr every %d seconds, every error shown\n"
"  -timeout S   give up on a connection idle for S seconds (default %d)\n"
"  -sip FILE    dial each connection from the next source address of FILE,\n"
"               in turn (one IPv4 or IPv6 address a line; the original\n"
"               picks one at random)\n"
"  -keepalive   reuse connections (HTTP/1.1 keep-alive) instead of one\n"
"               connection per fetch with Connection: close\n"
"  -parallel N  keep N fetches in flight\n"
"  -rate N      start N fetches a second (-jitter: vary intervals by 10%%)\n"
"  -fetches N   stop after N fetches\n"
"  -seconds S   stop after S seconds; fetches in flight are not counted\n"
"url_file holds one http:// URL per line; each fetch picks one at random.\n",
	    progname, THROTTLE_MODEM, PROGRESS_SECS, IDLE_SECS);
	exit(status);
}

/*
 * opt_match: returns the OPT_ index arg abbreviates ("-p", "--parallel"),
 * the first in table order as the original did, or -1.
 */
static int
opt_match(const char *arg)
{
	size_t	len;
	int	i;

	if (arg[0] != '-')
		return -1;
	arg += arg[1] == '-' ? 2 : 1;
	if ((len = strlen(arg)) == 0)
		return -1;
	for (i = 0; optnames[i] != NULL; i++)
		if (strncmp(arg, optnames[i], len) == 0)
			return i;
	return -1;
}

/*
 * parse_args: reads the command line into the options and returns the
 * URL file; says what is wrong and exits 1 otherwise.
 */
static const char *
parse_args(int argc, char **argv)
{
	int	argn, o;

	for (argn = 1; argn < argc && argv[argn][0] == '-' &&
	    argv[argn][1] != '\0'; argn++) {
		o = opt_match(argv[argn]);
		if (opt_flag(o, argv[argn]))
			continue;
		/* The rest take a value. */
		if (argn + 1 >= argc) {
			fprintf(stderr, "%s: %s needs a value\n", progname,
			    argv[argn]);
			usage(stderr, 1);
		}
		argn++;
		opt_value(o, argv[argn - 1], argv[argn]);
	}
	if (argn + 1 != argc) {
		fprintf(stderr, "%s: exactly one url_file expected\n",
		    progname);
		usage(stderr, 1);
	}
	if ((start_parallel == 0 && start_rate == 0) ||
	    (end_fetches == 0 && end_seconds == 0)) {
		fprintf(stderr, "%s: a start and an end specifier are "
		    "required\n", progname);
		usage(stderr, 1);
	}
	if (do_jitter && start_rate == 0) {
		fprintf(stderr, "%s: -jitter needs -rate\n", progname);
		usage(stderr, 1);
	}
	return argv[argn];
}

/*
 * opt_flag: takes option o (as opt_match() found it in arg) if it is one
 * without a value, and returns 1; returns 0 for one with a value.  -help
 * and an unknown option end the program.
 */
static int
opt_flag(int o, const char *arg)
{
	switch (o) {
	case OPT_CHECKSUM:
		do_checksum = 1;
		return 1;
	case OPT_THROTTLE:
		do_throttle = 1;
		return 1;
	case OPT_VERBOSE:
		do_verbose = 1;
		return 1;
	case OPT_JITTER:
		do_jitter = 1;
		return 1;
	case OPT_KEEPALIVE:
		do_keepalive = 1;
		return 1;
	case OPT_HELP:
		usage(stdout, 0);
	case -1:
		fprintf(stderr, "%s: unknown option %s\n", progname, arg);
		usage(stderr, 1);
	default:
		return 0;
	}
}

/*
 * opt_value: takes option o, given as arg, with its value val; says what
 * is wrong and exits 1 if it cannot.
 */
static void
opt_value(int o, const char *arg, const char *val)
{
	long long	v = 0;
	int		bad = 0, two = 0;

	if (o == OPT_PARALLEL || o == OPT_RATE)
		two = start_rate > 0 || start_parallel > 0;
	else if (o == OPT_FETCHES || o == OPT_SECONDS)
		two = end_fetches > 0 || end_seconds > 0;
	if (two) {
		fprintf(stderr, "%s: only one of %s\n", progname,
		    o == OPT_PARALLEL || o == OPT_RATE ?
		    "-parallel and -rate" : "-fetches and -seconds");
		usage(stderr, 1);
	}
	switch (o) {
	case OPT_THROTTLE_N:
		/* Bits a second on a serial line, as the original. */
		bad = parse_int(val, 1, INT_MAX, &v) == -1;
		do_throttle = 1;
		throttle = (double)v / BITS_PER_BYTE;
		break;
	case OPT_TIMEOUT:
		bad = parse_secs(val, 1e7, &idle_secs) == -1;
		break;
	case OPT_PARALLEL:
		bad = parse_int(val, 1, LLONG_MAX, &start_parallel) == -1;
		break;
	case OPT_RATE:
		bad = parse_int(val, 1, RATE_MAX, &start_rate) == -1;
		break;
	case OPT_FETCHES:
		bad = parse_int(val, 1, LLONG_MAX, &end_fetches) == -1;
		break;
	case OPT_SECONDS:
		bad = parse_secs(val, 1e7, &end_seconds) == -1;
		break;
	case OPT_SIP:
		sip_file = val;
		break;
	case OPT_PROXY:
		proxy_parse(val);
		break;
	}
	if (bad) {
		fprintf(stderr, "%s: bad value for %s: %s\n", progname, arg,
		    val);
		exit(1);
	}
	if (start_parallel > max_conns) {
		fprintf(stderr, "%s: parallel may be at most %lld (open file "
		    "limit)\n", progname, max_conns);
		exit(1);
	}
}

/*
 * url_why: why a URL was refused, in this tool's words where they differ
 * from http_url_why()'s.
 */
static const char *
url_why(enum http_url_err err)
{
	switch (err) {
	case URL_SPACE:
		return "white space or control characters in URL";
	case URL_SCHEME:
		return "unknown protocol (only http:// is supported)";
	case URL_HOST:
	case URL_USERINFO:
		return "bad host";
	default:
		return http_url_why(err);
	}
}

/*
 * proxy_parse: takes -proxy's value, HOST[:PORT] or [V6][:PORT] (port 80
 * if none, as the original), resolved now into proxy.  Says what is wrong
 * and exits EXIT_BADVAL if it cannot.
 */
static void
proxy_parse(const char *val)
{
	char		 buf[300];
	const char	*why = "too long", *rb = strrchr(val, ']');
	int		 noport;

	noport = val[0] == '[' ? rb != NULL && rb[1] == '\0' :
	    strchr(val, ':') == NULL;
	if (strncmp(val, "unix:", 5) == 0)
		why = "a proxy is a TCP HOST:PORT";
	else if (snprintf(buf, sizeof(buf), "%s%s", val,
	    noport ? ":" PROXY_PORT : "") < (int)sizeof(buf) &&
	    addr_parse(buf, 0, &proxy, &why) == 0) {
		do_proxy = 1;
		return;
	}
	fprintf(stderr, "%s: bad value for -proxy: %s: %s\n", progname, val,
	    why);
	exit(EXIT_BADVAL);
}

/*
 * url_load: parses "http://HOST[:PORT][/PATH]", resolves HOST with
 * listen's resolver (IPv4 first, as the original) unless a proxy will,
 * and formats the request once.  Returns 0, or -1 with *why set to a
 * static reason.
 */
static int
url_load(struct url *u, const char *s, const char **why)
{
	struct http_url		 hu;
	enum http_url_err	 err;
	char			 port[8], hosthdr[300];

	memset(u, 0, sizeof(*u));
	if ((err = http_url_parse(s, &hu)) != URL_OK) {
		*why = url_why(err);
		return -1;
	}
	http_host_header(&hu, hosthdr, sizeof(hosthdr));
	if (do_proxy) {
		memcpy(&u->u_sa, &proxy.a_ss, proxy.a_len);
		u->u_salen = proxy.a_len;
	} else {
		snprintf(port, sizeof(port), "%d", hu.u_port);
		if (addr_resolve(hu.u_host, port, 0, &u->u_sa, &u->u_salen,
		    why) == -1)
			return -1;
		/* Brackets hold an IPv6 literal, never a name. */
		if (hu.u_v6 && u->u_sa.ss_family != AF_INET6) {
			*why = gai_strerror(EAI_NONAME);
			return -1;
		}
	}
	if (request_format(u, &hu, hosthdr) == -1 ||
	    (u->u_str = strdup(s)) == NULL) {
		*why = "out of memory";
		return -1;
	}
	return 0;
}

/*
 * request_format: formats u's request into u_req (allocated, u_reqlen
 * long): the path as the target, or the absolute URL for a proxy, and
 * hosthdr as the Host header.  Returns 0, or -1 without memory.
 */
static int
request_format(struct url *u, const struct http_url *hu, const char *hosthdr)
{
	const char	*scheme = do_proxy ? "http://" : "";
	const char	*authority = do_proxy ? hosthdr : "";
	const char	*conn = do_keepalive ? "" : "Connection: close\r\n";
	int		 n;

	n = snprintf(NULL, 0, REQUEST_FMT, scheme, authority, hu->u_path,
	    hosthdr, conn);
	if (n < 0 || (u->u_req = malloc((size_t)n + 1)) == NULL)
		return -1;
	snprintf(u->u_req, (size_t)n + 1, REQUEST_FMT, scheme, authority,
	    hu->u_path, hosthdr, conn);
	u->u_reqlen = (size_t)n;
	return 0;
}

/*
 * read_lines: calls take(path, lineno, line) for every line of path but
 * blank ones and those starting with #, trailing white space cut.  Says
 * what is wrong (after what, the option that named path, or "") and
 * exits with status if path cannot be read or a line is too long.
 */
static void
read_lines(const char *what, const char *path, int status,
    void (*take)(const char *, size_t, char *))
{
	FILE	*fp;
	char	 line[LINE_MAX_LEN];
	size_t	 len, lineno = 0;

	if ((fp = fopen(path, "r")) == NULL) {
		fprintf(stderr, "%s: %s%s: %s\n", progname, what, path,
		    strerror(errno));
		exit(status);
	}
	while (fgets(line, sizeof(line), fp) != NULL) {
		lineno++;
		len = strlen(line);
		if (len > 0 && line[len - 1] != '\n' && !feof(fp)) {
			fprintf(stderr, "%s: %s%s:%zu: line too long\n",
			    progname, what, path, lineno);
			exit(status);
		}
		while (len > 0 && isspace((unsigned char)line[len - 1]))
			line[--len] = '\0';
		if (len > 0 && line[0] != '#')
			take(path, lineno, line);
	}
	if (ferror(fp)) {
		fprintf(stderr, "%s: %s%s: %s\n", progname, what, path,
		    strerror(errno));
		exit(status);
	}
	fclose(fp);
}

/*
 * grow: arr, an array of *cap elements of size bytes holding n, with room
 * for one more: itself, or moved to twice the size.  Exits 1 without
 * memory.
 */
static void *
grow(void *arr, size_t *cap, size_t n, size_t size)
{
	size_t	ncap = *cap == 0 ? 16 : *cap * 2;

	if (n < *cap)
		return arr;
	if ((arr = realloc(arr, ncap * size)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		exit(1);
	}
	*cap = ncap;
	return arr;
}

/*
 * read_url_file: loads every URL of path into urls[]; blank lines and
 * lines starting with # are skipped.  Exits with status 1 on any error.
 */
static void
read_url_file(const char *path)
{
	read_lines("", path, 1, url_take);
	if (nurls == 0) {
		fprintf(stderr, "%s: %s: no URLs\n", progname, path);
		exit(1);
	}
}

/* url_take: loads line lineno of path into urls[], or exits 1. */
static void
url_take(const char *path, size_t lineno, char *line)
{
	const char	*why;

	urls = grow(urls, &urls_cap, nurls, sizeof(*urls));
	if (url_load(&urls[nurls], line, &why) == -1) {
		fprintf(stderr, "%s: %s:%zu: %s: %s\n", progname, path,
		    lineno, line, why);
		exit(1);
	}
	nurls++;
}

/*
 * sip_take: loads line lineno of -sip's path into sips[], an address this
 * host can bind to, or says why not and exits EXIT_BADVAL.
 */
static void
sip_take(const char *path, size_t lineno, char *line)
{
	struct sip	*sp;
	int		 fd;

	sips = grow(sips, &sips_cap, nsips, sizeof(*sips));
	sp = &sips[nsips];
	if (sip_parse(sp, line) == -1) {
		fprintf(stderr, "%s: -sip %s:%zu: %s: not an IPv4 or IPv6 "
		    "address\n", progname, path, lineno, line);
		exit(EXIT_BADVAL);
	}
	/* Every connection would fail to bind: say so once, now. */
	if ((fd = socket(sp->s_ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1 || bind(fd, (struct sockaddr *)&sp->s_ss,
	    sp->s_len) == -1) {
		fprintf(stderr, "%s: -sip %s:%zu: cannot bind to %s: %s\n",
		    progname, path, lineno, line, strerror(errno));
		exit(EXIT_BADVAL);
	}
	close(fd);
	nsips++;
}

/* sip_parse: sp from an IPv4 or IPv6 literal, port 0.  0, or -1. */
static int
sip_parse(struct sip *sp, const char *str)
{
	memset(sp, 0, sizeof(*sp));
	if (addr_literal(str, &sp->s_ss, &sp->s_len) == -1)
		return -1;
	snprintf(sp->s_str, sizeof(sp->s_str), "%s", str);
	return 0;
}

/*
 * sip_check: loads -sip's path into sips[] and makes sure every URL's
 * address (the proxy's with -proxy) has a source address of its family;
 * says what is wrong and exits EXIT_BADVAL otherwise.
 */
static void
sip_check(const char *path)
{
	size_t	i;

	read_lines("-sip ", path, EXIT_BADVAL, sip_take);
	if (nsips == 0) {
		fprintf(stderr, "%s: -sip %s: no addresses\n", progname,
		    path);
		exit(EXIT_BADVAL);
	}
	for (i = 0; i < nurls; i++)
		if (sip_pick(urls[i].u_sa.ss_family) == NULL) {
			fprintf(stderr, "%s: -sip %s: no %s source address "
			    "for %s\n", progname, path,
			    urls[i].u_sa.ss_family == AF_INET6 ? "IPv6" :
			    "IPv4", urls[i].u_str);
			exit(EXIT_BADVAL);
		}
	sip_next = 0;
}

/*
 * sip_pick: the next source address of family, in turn from where the
 * last pick left off; NULL if -sip has none of that family.
 */
static struct sip *
sip_pick(int family)
{
	size_t	i, k;

	for (i = 0; i < nsips; i++) {
		k = (sip_next + i) % nsips;
		if (sips[k].s_ss.ss_family == family) {
			sip_next = k + 1;
			return &sips[k];
		}
	}
	return NULL;
}

/*
 * fetch_error: reports one failed fetch on stderr as "URL: message"; only
 * the first LG_ERRORS_SHOWN are shown unless -verbose.
 */
static void
fetch_error(struct hconn *c, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	lg_verror(&run, c->c_url->u_str, fmt, ap);
	va_end(ap);
}

/*
 * hconn_new: a connection slot without a socket, from the free list or
 * freshly allocated; NULL when -rate has used every descriptor we may use.
 */
static struct hconn *
hconn_new(void)
{
	struct hconn	*c;

	if (conns_open >= max_conns)
		return NULL;
	if ((c = free_conns) != NULL)
		free_conns = c->c_next;
	else {
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			fprintf(stderr, "%s: out of memory\n", progname);
			exit(1);
		}
		lg_slot_init(&c->c_slot, &run, hconn_cb, hconn_woke, c);
	}
	c->c_next = c->c_prev = NULL;
	c->c_state = CS_SENDING;
	conns_open++;
	return c;
}

/*
 * hconn_close: closes c's socket and returns the slot to the free list.
 * Idempotent for a slot already free.
 */
static void
hconn_close(struct hconn *c)
{
	if (c->c_state == CS_FREE)
		return;
	if (c->c_state == CS_IDLE)
		idle_remove(c);
	lg_slot_close(&c->c_slot);
	c->c_state = CS_FREE;
	c->c_next = free_conns;
	free_conns = c;
	conns_open--;
}

/* idle_push: parks a kept-alive connection between fetches. */
static void
idle_push(struct hconn *c)
{
	c->c_state = CS_IDLE;
	c->c_prev = NULL;
	c->c_next = idle_conns;
	if (idle_conns != NULL)
		idle_conns->c_prev = c;
	idle_conns = c;
}

/* idle_remove: takes c off the idle list; its state is the caller's job. */
static void
idle_remove(struct hconn *c)
{
	if (c->c_prev != NULL)
		c->c_prev->c_next = c->c_next;
	else
		idle_conns = c->c_next;
	if (c->c_next != NULL)
		c->c_next->c_prev = c->c_prev;
	c->c_next = c->c_prev = NULL;
}

/*
 * fetch_begin: resets c for a new fetch of u; the socket, if any, stays.
 */
static void
fetch_begin(struct hconn *c, struct url *u)
{
	c->c_url = u;
	c->c_start_us = now_us();
	c->c_did_response = 0;
	c->c_ready_us = 0;
	c->c_paced_us = c->c_start_us;
	c->c_woff = 0;
	c->c_rbytes = 0;
	http_frame_init(&c->c_frame, 0);
	c->c_close = !do_keepalive;
	c->c_sum = UINT64_C(14695981039346656037);
	c->c_state = CS_SENDING;
	num_active++;
	if (num_active > max_parallel)
		max_parallel = num_active;
}

/*
 * hconn_connect: opens a socket for c's fetch and starts connecting, then
 * tries to send at once.  A failure ends the fetch as FE_CONNFAIL.
 */
static void
hconn_connect(struct hconn *c)
{
	struct url	*u = c->c_url;
	const char	*step;

	c->c_woff = 0;		/* a redial sends the request again */
	c->c_ready_us = 0;
	if (nsips > 0 && (c->c_sip = sip_pick(u->u_sa.ss_family)) != NULL) {
		c->c_slot.ls_src = (struct sockaddr *)&c->c_sip->s_ss;
		c->c_slot.ls_srclen = c->c_sip->s_len;
	}
	c->c_connect_us = now_us();
	/* A kept connection must not hold a request back behind Nagle. */
	if (lg_slot_dial(&c->c_slot, (struct sockaddr *)&u->u_sa, u->u_salen,
	    do_keepalive, 0, &step) == -1) {
		if (strcmp(step, "bind") == 0)
			fetch_error(c, "bind to %s: %s", c->c_sip->s_str,
			    strerror(errno));
		else if (strcmp(step, "connect") != 0)
			fetch_error(c, "%s: %s", step, strerror(errno));
		else
			fetch_error(c, "%s", strerror(errno));
		fetch_end(c, FE_CONNFAIL);
		return;
	}
	hconn_send(c);
}

/*
 * hconn_send: writes what is left of the request.  On a socket still
 * connecting, send() says EAGAIN and we wait for writability; a refused
 * connection shows here as the send() error.
 */
static void
hconn_send(struct hconn *c)
{
	struct lg_slot	*s = &c->c_slot;
	struct url	*u = c->c_url;
	ssize_t		 n;

	n = send(s->ls_fd, u->u_req + c->c_woff, u->u_reqlen - c->c_woff,
	    MSG_NOSIGNAL);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			lg_slot_watch(s, EV_WRITE, idle_tv);
		else if (!s->ls_connected) {
			fetch_error(c, "%s", strerror(errno));
			fetch_end(c, FE_CONNFAIL);
		} else if (c->c_woff == 0 && lg_slot_redial(s))
			hconn_connect(c);	/* the server let it go */
		else {
			fetch_error(c, "send: %s", strerror(errno));
			fetch_end(c, FE_SHORT);
		}
		return;
	}
	if (!s->ls_connected) {
		s->ls_connected = 1;
		c->c_request_us = now_us();
	} else if (c->c_woff == 0 && s->ls_done > 0)
		c->c_request_us = c->c_start_us;
	else if (c->c_woff == 0)
		c->c_request_us = now_us();
	c->c_woff += (size_t)n;
	if (c->c_woff < u->u_reqlen) {
		lg_slot_watch(s, EV_WRITE, idle_tv);
		return;
	}
	c->c_state = CS_READING;
	lg_slot_watch(s, EV_READ, idle_tv);
}

/* hconn_cb: every socket event and idle timeout of a connection. */
static void
hconn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct hconn	*c = arg;

	(void)fd;
	if (what & EV_TIMEOUT) {
		if (c->c_state == CS_IDLE) {
			hconn_close(c);
			return;
		}
		fetch_error(c, "timed out");
		fetch_end(c, FE_TIMEOUT);
		return;
	}
	switch (c->c_state) {
	case CS_SENDING:
		hconn_send(c);
		break;
	case CS_READING:
		hconn_read(c);
		break;
	case CS_IDLE:
		/* The server closed (or spoke out of turn): drop it. */
		hconn_close(c);
		break;
	case CS_PAUSED:
	case CS_FREE:
		break;
	}
}

/* hconn_woke: a throttle pause of conn arg is over; read again. */
static void
hconn_woke(void *arg)
{
	struct hconn	*c = arg;

	if (c->c_state != CS_PAUSED)
		return;
	c->c_state = CS_READING;
	lg_slot_watch(&c->c_slot, EV_READ, idle_tv);
}

/*
 * hconn_read: one read (bounded work per callback), fed to the framer; ends
 * the fetch on a complete response, EOF or error.  Under -throttle a read
 * takes only what is due, and the connection pauses until more is.
 */
static void
hconn_read(struct hconn *c)
{
	size_t	want;
	ssize_t	n;

	/* The server's answer time is not the pause's. */
	if (c->c_ready_us == 0)
		c->c_ready_us = now_us();
	if ((want = hconn_paced(c)) == 0)
		return;
	n = recv(c->c_slot.ls_fd, run.lr_rbuf, want, 0);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n <= 0 && c->c_rbytes == 0 && lg_slot_redial(&c->c_slot)) {
		hconn_connect(c);	/* closed under us before answering */
		return;
	}
	if (n == -1) {
		fetch_error(c, "read: %s", strerror(errno));
		fetch_end(c, FE_SHORT);
		return;
	}
	if (n == 0) {
		if (http_frame_eof(&c->c_frame))
			fetch_end(c, FE_OK);
		else {
			fetch_error(c, "connection closed before the end of "
			    "the response");
			fetch_end(c, FE_SHORT);
		}
		return;
	}
	if (!c->c_did_response) {
		c->c_did_response = 1;
		c->c_response_us = c->c_ready_us;
	}
	c->c_rbytes += n;
	if (do_throttle)
		c->c_paced_us = lg_pace_spent(&pace, c->c_paced_us, now_us(),
		    (size_t)n);
	(void)http_frame_feed(&c->c_frame, run.lr_rbuf, (size_t)n,
	    do_checksum ? body_sum : NULL, c);
	if (c->c_frame.hf_state == HF_ERROR) {
		fetch_error(c, "malformed response");
		c->c_close = 1;
		fetch_end(c, FE_SHORT);
	} else if (c->c_frame.hf_state == HF_DONE)
		fetch_end(c, FE_OK);
	else
		(void)hconn_paced(c);	/* rather than wake just to wait */
}

/*
 * hconn_paced: how many bytes c may read now: read_max, or under -throttle
 * what its line has carried since its fetch began and it last read.  When
 * that is less than a tick's worth, pauses c until it is and returns 0.
 */
static size_t
hconn_paced(struct hconn *c)
{
	struct timeval	tv;
	int64_t		wait;
	size_t		due;

	if (!do_throttle)
		return read_max;
	if ((due = lg_pace_due(&pace, c->c_paced_us, now_us(), &wait)) > 0)
		return due;
	tv.tv_sec = (time_t)(wait / 1000000);
	tv.tv_usec = (suseconds_t)(wait % 1000000);
	c->c_state = CS_PAUSED;
	lg_slot_watch(&c->c_slot, 0, NULL);
	lg_slot_pause(&c->c_slot, &tv);
	return 0;
}

/* body_sum: folds body bytes into the FNV-1a checksum of conn arg. */
static void
body_sum(void *arg, const char *buf, size_t len)
{
	struct hconn	*c = arg;
	uint64_t	 h = c->c_sum;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)buf[i];
		h *= UINT64_C(1099511628211);
	}
	c->c_sum = h;
}

/* url_pick: a URL of the file at random. */
static struct url *
url_pick(void)
{
	return nurls == 1 ? &urls[0] : &urls[(size_t)random() % nurls];
}

/*
 * fetch_start: starts one fetch of a random URL, on an idle kept-alive
 * connection if there is one, else on a new connection.
 */
static void
fetch_start(void)
{
	struct hconn	*c;
	struct url	*u;

	u = url_pick();
	run.lr_started++;
	if ((c = idle_conns) != NULL) {
		idle_remove(c);
		fetch_begin(c, u);
		hconn_send(c);
		return;
	}
	if ((c = hconn_new()) == NULL) {
		fprintf(stderr, "%s: ran out of connection slots (%lld)\n",
		    progname, max_conns);
		run.lr_started--;
		lg_stop(&run);
		return;
	}
	fetch_begin(c, u);
	hconn_connect(c);
}

/*
 * fetch_end: accounts for c's fetch as the original did (every ended fetch
 * counts, a timed-out one too), then keeps the connection for the next
 * fetch or closes it, and starts whatever fetches are now due.
 */
static void
fetch_end(struct hconn *c, enum fetch_end how)
{
	num_active--;
	total_bytes += (long long)c->c_frame.hf_body;
	if (how == FE_CONNFAIL)
		total_connfails++;
	if (how == FE_TIMEOUT)
		total_timeouts++;
	fetch_times(c);
	lg_status(&run, c->c_frame.hf_status);
	if (how != FE_CONNFAIL)
		fetch_check(c);
	lg_ended(&run);
	if (how == FE_OK)
		c->c_slot.ls_done++;

	if (how != FE_OK || c->c_close || c->c_frame.hf_close ||
	    run.lr_stopping)
		hconn_close(c);
	else if (start_parallel > 0 && lg_more(&run)) {
		/* Straight on to the next fetch, same connection. */
		fetch_begin(c, url_pick());
		run.lr_started++;
		hconn_send(c);
		return;
	} else if (start_rate > 0)
		idle_push(c);
	else
		hconn_close(c);
	refill();
}

/* fetch_times: adds c's connect and first-response times to the stats. */
static void
fetch_times(const struct hconn *c)
{
	int64_t	d;

	if (c->c_slot.ls_connected && c->c_slot.ls_done == 0) {
		d = c->c_request_us - c->c_connect_us;
		total_connect_us += d;
		if (connects_completed == 0 || d > max_connect_us)
			max_connect_us = d;
		if (connects_completed == 0 || d < min_connect_us)
			min_connect_us = d;
		connects_completed++;
	}
	if (c->c_did_response) {
		d = c->c_response_us - c->c_request_us;
		total_response_us += d;
		if (responses_completed == 0 || d > max_response_us)
			max_response_us = d;
		if (responses_completed == 0 || d < min_response_us)
			min_response_us = d;
		responses_completed++;
	}
}

/*
 * fetch_check: compares c's body with the first fetch of its URL: the
 * checksum with -checksum, else the byte count.
 */
static void
fetch_check(struct hconn *c)
{
	struct url	*u = c->c_url;
	int64_t		 bytes = (int64_t)c->c_frame.hf_body;

	if (do_checksum) {
		if (!u->u_got_sum) {
			u->u_sum = c->c_sum;
			u->u_got_sum = 1;
		} else if (c->c_sum != u->u_sum) {
			fetch_error(c, "checksum wrong");
			total_badsums++;
		}
	} else {
		if (!u->u_got_bytes) {
			u->u_bytes = bytes;
			u->u_got_bytes = 1;
		} else if (bytes != u->u_bytes) {
			fetch_error(c, "byte count wrong");
			total_badbytes++;
		}
	}
}

/*
 * refill: with -parallel, starts fetches until N are in flight or all have
 * been started.  Not reentrant on purpose: a fetch that fails at once ends
 * inside fetch_start(), and the loop here, not recursion, goes on.
 */
static void
refill(void)
{
	if (start_parallel == 0 || refilling)
		return;
	refilling = 1;
	while (num_active < start_parallel && lg_more(&run))
		fetch_start();
	refilling = 0;
}

/* start: the first fetches, by rate or to -parallel. */
static void
start(void *arg)
{
	(void)arg;
	if (start_rate > 0) {
		if ((rate_ev = evtimer_new(run.lr_base, rate_cb, NULL)) ==
		    NULL) {
			fprintf(stderr, "%s: out of memory\n", progname);
			exit(1);
		}
		rate_interval_us = 1000000 / start_rate;
		rate_next_us = run.lr_start_us;
		rate_cb(-1, EV_TIMEOUT, NULL);
	} else
		refill();
}

/*
 * rate_cb: starts every fetch that is due by now (catching up after a late
 * wake-up, so the long-run rate holds), then sleeps until the next one.
 */
static void
rate_cb(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv;
	int64_t		 now, step;

	(void)fd;
	(void)what;
	(void)arg;
	now = now_us();
	while (!run.lr_stopping && rate_next_us <= now) {
		if (!lg_more(&run))
			return;
		fetch_start();
		step = rate_interval_us;
		if (do_jitter)
			step = step * 9 / 10 +
			    (int64_t)(random() % (step / 5 + 1));
		rate_next_us += step;
	}
	if (run.lr_stopping)
		return;
	tv.tv_sec = (rate_next_us - now) / 1000000;
	tv.tv_usec = (rate_next_us - now) % 1000000;
	evtimer_add(rate_ev, &tv);
}

/* progress: the -verbose report, the original's fields. */
static void
progress(void *arg)
{
	(void)arg;
	fprintf(stderr, "--- %g secs, %lld fetches started, %lld completed, "
	    "%lld current\n", (double)(now_us() - run.lr_start_us) / 1e6,
	    run.lr_started, run.lr_ended, num_active);
}

/* report: prints the summary, line for line as the original. */
static void
report(void)
{
	double	elapsed = (double)(run.lr_end_us - run.lr_start_us) / 1e6;
	int	i;

	printf("%lld fetches, %lld max parallel, %g bytes, in %g seconds\n",
	    run.lr_ended, max_parallel, (double)total_bytes, elapsed);
	if (run.lr_ended > 0)
		printf("%g mean bytes/connection\n",
		    (double)total_bytes / (double)run.lr_ended);
	if (elapsed > 0.01)
		printf("%g fetches/sec, %g bytes/sec\n",
		    (double)run.lr_ended / elapsed,
		    (double)total_bytes / elapsed);
	if (connects_completed > 0)
		printf("msecs/connect: %g mean, %g max, %g min\n",
		    (double)total_connect_us / (double)connects_completed / 1e3,
		    (double)max_connect_us / 1e3,
		    (double)min_connect_us / 1e3);
	if (responses_completed > 0)
		printf("msecs/first-response: %g mean, %g max, %g min\n",
		    (double)total_response_us / (double)responses_completed /
		    1e3, (double)max_response_us / 1e3,
		    (double)min_response_us / 1e3);
	if (total_timeouts != 0)
		printf("%lld timeouts\n", total_timeouts);
	if (total_connfails != 0)
		printf("%lld connect failures\n", total_connfails);
	if (do_checksum) {
		if (total_badsums != 0)
			printf("%lld bad checksums\n", total_badsums);
	} else if (total_badbytes != 0)
		printf("%lld bad byte counts\n", total_badbytes);
	printf("HTTP response codes:\n");
	for (i = 0; i < LG_STATUS_MAX; i++)
		if (run.lr_status[i] > 0)
			printf("  code %03d -- %lld\n", i, run.lr_status[i]);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct timeval	 tv;
	const char	*url_file, *why;

	max_conns = lg_fd_budget();
	url_file = parse_args(argc, argv);
	read_url_file(url_file);
	if (sip_file != NULL)
		sip_check(sip_file);

	if (lg_init(&run, progname, RBUF_SIZE, &why) == -1) {
		fprintf(stderr, "%s: %s\n", progname, why);
		return 1;
	}
	read_max = RBUF_SIZE;
	if (do_throttle && lg_pace_init(&pace, throttle, RBUF_SIZE) == -1) {
		fprintf(stderr, "%s: bad throttle rate\n", progname);
		return 1;
	}
	tv = secs_tv(idle_secs);
	idle_tv = event_base_init_common_timeout(run.lr_base, &tv);
	run.lr_count = end_fetches;
	run.lr_seconds = end_seconds;
	run.lr_show_all = do_verbose;
	run.lr_hidden_note = "further errors not shown (use -verbose)";
	if (do_verbose) {
		run.lr_tick_secs = PROGRESS_SECS;
		run.lr_tick = progress;
	}

	if (lg_run(&run, start, NULL) == -1) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return 1;
	}
	report();
	if (rate_ev != NULL)
		event_free(rate_ev);
	return 0;
}
