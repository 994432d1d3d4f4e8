/*
 * http_many: thousands of ordinary HTTP clients in one process, each on its
 * own connection from its own source address, all fetching one URL at once.
 *
 * Where http_get is one deliberately slow reader and http_load a load
 * generator, this is the crowd of slow links: N connections opened together
 * (or at a given rate), each bound before connect() to the next address of
 * a range or a file (so a shaper can tell them apart by address), each read
 * as fast as its socket allows: whatever slowness there is belongs to the
 * link, not to the client.  Each body may be checked byte for byte against
 * the demo's pattern (/big, /size?N, /stream?N).  At the end a summary says
 * how many connected, completed whole, were cut by the server while still
 * reading, gave up, or were still reading when the run's time was up, and
 * the spread of the clients' rates.  The run and the connection slots are
 * tools/loadgen's.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "app.h"
#include "http_parse.h"
#include "listen.h"
#include "loadgen.h"
#include "toolutil.h"

#define RBUF_SIZE	(64 * 1024)	/* one read at most */
#define PERIOD		64		/* of APP_PATTERN_LINE */
#define CONNS_MAX	1000000
#define OPEN_BATCH	256		/* connections opened per callback */
#define KINDS_MAX	32		/* error kinds counted apart */
#define SOURCES_MAX	CONNS_MAX	/* no client would use more */
#define STR(x)		#x
#define XSTR(x)		STR(x)		/* a number macro's digits */
#define TOO_MANY	"more than " XSTR(SOURCES_MAX) " source addresses in all"
#define SECS_MIN	0.001		/* --time-limit, --idle, --progress */
#define SECS_MAX	1000000

/* Exit statuses, documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_SOME = 1,
	EXIT_USAGE = 2,
	EXIT_LIMIT = 3
};

/* Where one client stands; the end states are disjoint counts. */
enum cl_state {
	CL_WAITING,		/* not opened yet (--open-rate) */
	CL_SENDING,		/* connect() issued or request partly sent */
	CL_READING,
	CL_COMPLETE,		/* the whole answer, status < 400 */
	CL_HTTP_ERROR,		/* the whole answer, status >= 400 */
	CL_CUT,			/* the server ended it while we read */
	CL_GAVE_UP,		/* our --idle timeout */
	CL_FAILED		/* never connected */
};

struct client {
	struct lg_slot	 cl_slot;
	enum cl_state	 cl_state;
	size_t		 cl_src;	/* index into sources[] */
	size_t		 cl_woff;	/* request bytes sent */
	struct http_frame cl_frame;
	uint64_t	 cl_bytes;	/* read from the socket */
	uint64_t	 cl_checked;	/* body bytes so far: the check's offset */
	int		 cl_bad;	/* a body byte differed */
	int		 cl_head;	/* its status line and head came */
	int64_t		 cl_t_req;	/* connected, request going out */
	int64_t		 cl_t_end;	/* ended, 0 while open */
};

/* One error kind and how often it came. */
struct kind {
	char		 k_name[48];
	long long	 k_count;
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static void	 parse_args(int, char **);
static void	 bad_value(const char *, const char *, const char *)
		    __attribute__((noreturn));
static long long int_arg(const char *, const char *, long long);
static double	 secs_arg(const char *, const char *);
static void	 bad_option(int, const char *) __attribute__((noreturn));
static void	 source_range(const char *);
static void	 source_file(const char *);
static void	 source_fail(const char *, size_t, const char *, const char *)
		    __attribute__((noreturn));
static int	 source_add(const struct sockaddr_storage *, socklen_t);
static void	 raise_nofile(long long);
static void	 url_setup(const char *);
static void	 start(void *);
static void	 open_cb(evutil_socket_t, short, void *);
static void	 client_open(struct client *);
static void	 client_send(struct client *);
static void	 client_cb(evutil_socket_t, short, void *);
static void	 client_woke(void *);
static void	 client_read(struct client *);
static void	 body_check(void *, const char *, size_t);
static void	 client_end(struct client *, enum cl_state, const char *,
		    int);
static void	 kind_count(const char *, int);
static void	 progress(void *);
static int	 cmp_double(const void *, const void *);
static int	 report(void);

static const char	*progname = "http_many";

/* Options. */
static long long	 nconns = 1, open_rate, rcvbuf, read_size = RBUF_SIZE;
static struct timeval	 pause_tv;	/* --pause: none when zero */
static double		 time_limit, idle_secs, progress_secs;
static int		 do_check, quiet_errors;
static const char	*url_str;

static struct sockaddr_storage	 dst;
static socklen_t		 dstlen;
static char			*request;
static size_t			 reqlen;
static struct sockaddr_storage	*sources;
static socklen_t		*sourcelens;
static size_t			 nsources, sources_cap;

static struct lg_run	 run;
static struct client	*clients;
static long long	 next_open;
static struct event	*open_ev;
static const struct timeval *idle_tv;
static char		 patbuf[RBUF_SIZE + PERIOD];

/* Counts. */
static long long	 n_connected, n_open, n_open_peak, n_head;
static long long	 n_state[CL_FAILED + 1];
static uint64_t		 total_bytes, total_body, total_checked;
static struct kind	 kinds[KINDS_MAX];
static size_t		 nkinds;

static const struct option longopts[] = {
	{ "connections",	required_argument,	NULL, 'c' },
	{ "source",		required_argument,	NULL, 's' },
	{ "source-file",	required_argument,	NULL, 'S' },
	{ "open-rate",		required_argument,	NULL, 'r' },
	{ "time-limit",		required_argument,	NULL, 't' },
	{ "idle",		required_argument,	NULL, 'i' },
	{ "rcvbuf",		required_argument,	NULL, 'b' },
	{ "read-size",		required_argument,	NULL, 'R' },
	{ "pause",		required_argument,	NULL, 'P' },
	{ "check",		no_argument,		NULL, 'k' },
	{ "progress",		required_argument,	NULL, 'p' },
	{ "quiet-errors",	no_argument,		NULL, 'Q' },
	{ "help",		no_argument,		NULL, 'h' },
	{ NULL,			0,			NULL, 0 }
};

/* usage: prints the help text to fp and exits with status. */
static void
usage(FILE *fp, int status)
{
	fprintf(fp,
"usage: %s [options] http://HOST[:PORT][/PATH]\n"
"N ordinary HTTP/1.1 clients (Connection: close) in one process, all\n"
"fetching URL at once, each reading as fast as its socket allows (or as\n"
"--read-size and --pause let it: a throttled reader, as http_get).\n"
"\n"
"  -c, --connections N  clients, one connection each (default 1)\n"
"  -s, --source RANGE   bind client i, before connect(), to address i of\n"
"                       RANGE, round robin: FIRST-LAST (IPv4) or one IPv4\n"
"                       or IPv6 address; repeated -s and -S add up (at\n"
"                       most 1000000 addresses; default: the kernel's)\n"
"  -S, --source-file F  the same from F, one IPv4 or IPv6 address a line\n"
"  -r, --open-rate N    open N connections a second (default: all at once)\n"
"  -t, --time-limit S   end the run after S seconds; clients still reading\n"
"                       then are counted as unfinished (default: the run\n"
"                       ends when every client has); SIGTERM or SIGINT\n"
"                       ends it the same way, with the summary\n"
"  -i, --idle S         give up on a client that got no byte, or did not\n"
"                       connect, for S seconds (default: never)\n"
"  -b, --rcvbuf N       SO_RCVBUF before connect() (default: the kernel's)\n"
"  -R, --read-size N    bytes asked for by each read (default 65536)\n"
"  -P, --pause MS       milliseconds each client waits after a read that\n"
"                       got bytes, before it reads again (default 0)\n"
"  -k, --check          compare every body byte with the demo's pattern\n"
"                       (evfcgid's /big, /size?N, /stream?N)\n"
"  -p, --progress S     a progress line on stderr every S seconds\n"
"  -Q, --quiet-errors   do not print each failed client (counts only)\n"
"  -h, --help           this text\n"
"N: 1 to 1000000 (--rcvbuf: to 1073741823; --read-size: to 65536;\n"
"--pause: to 3600000).  S: seconds, 0.001 to 1000000.\n"
"\n"
"The open file limit is raised to what N connections need, or the tool\n"
"says why it cannot and exits 2.  Summary on stdout:\n"
"  clients=N connected=N complete=N http_error=N cut=N gave_up=N\n"
"    unfinished=N unopened=N failed=N headers=N  (one line, wrapped here)\n"
"  open_peak=N bytes=N body=N checked=N bad_body=N seconds=X\n"
"  rate_min=X rate_median=X rate_max=X   (body bytes/s of connected clients)\n"
"  error KIND: N                         (one line per kind; after 31\n"
"                                         kinds, \"other kinds\" counts the rest)\n"
"checked: body bytes of 2xx answers compared with the pattern (--check).\n"
"complete: the whole answer (status < 400); http_error: the whole answer\n"
"of a status >= 400; cut: the server closed or reset while the client was\n"
"still reading (it always reads to the end); gave_up: --idle; unfinished:\n"
"still connecting or reading at --time-limit; unopened: not yet opened\n"
"then (--open-rate); failed: never connected.  These add up to clients.\n"
"A bad body is counted in bad_body whatever its end.  headers: the clients\n"
"whose status line and head came, whatever their end.\n"
"\n"
"Exit status: 0 every client complete with a good body; 1 otherwise;\n"
"2 bad usage or descriptors; 3 the time limit left clients unfinished or\n"
"unopened (and the rest complete).\n",
	    progname);
	exit(status);
}

/*
 * bad_value: says opt's value val is wrong and what it should be (want)
 * in one line, and exits EXIT_USAGE.
 */
static void
bad_value(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "%s: bad value for %s: %s (%s)\n", progname, opt,
	    val, want);
	exit(EXIT_USAGE);
}

/* int_arg: opt's value val, a whole number from 1 to max, or exits. */
static long long
int_arg(const char *opt, const char *val, long long max)
{
	char		want[64];
	long long	v;

	if (parse_int(val, 1, max, &v) == -1) {
		snprintf(want, sizeof(want), "a whole number from 1 to %lld",
		    max);
		bad_value(opt, val, want);
	}
	return v;
}

/*
 * secs_arg: opt's value val, seconds from SECS_MIN to SECS_MAX, or exits.
 * The timers keep microseconds: a shorter time would silently be none
 * (a progress line on every turn of the loop, a run or an idle timeout
 * over at once), and a millisecond is the least that means anything here.
 */
static double
secs_arg(const char *opt, const char *val)
{
	double	v;

	if (parse_secs(val, SECS_MAX, &v) == -1 || v < SECS_MIN)
		bad_value(opt, val, "seconds from " XSTR(SECS_MIN) " to " XSTR(SECS_MAX));
	return v;
}

/*
 * bad_option: getopt_long() returned ch, ':' for an option without its
 * value or '?' for one it does not know (optopt: the short option, or 0
 * for a long one) or a long one given a value it does not take; arg is
 * the long option's text.  Says which in one line and exits EXIT_USAGE.
 */
static void
bad_option(int ch, const char *arg)
{
	const struct option	*o;
	int			 n = (int)strcspn(arg, "="), lng;

	lng = strncmp(arg, "--", 2) == 0;
	for (o = longopts; o->name != NULL && o->val != optopt; o++)
		;
	if (ch == ':' && lng)
		fprintf(stderr, "%s: missing value for %.*s", progname, n, arg);
	else if (ch == ':')
		fprintf(stderr, "%s: missing value for -%c (--%s)", progname,
		    optopt, o->name);
	else if (optopt == 0)
		fprintf(stderr, "%s: unknown or ambiguous option %.*s",
		    progname, n, arg);
	else if (lng && arg[n] == '=' && o->name != NULL &&
	    strncmp(arg + 2, o->name, (size_t)n - 2) == 0)
		fprintf(stderr, "%s: %.*s takes no value", progname, n, arg);
	else
		fprintf(stderr, "%s: unknown option -%c", progname, optopt);
	fprintf(stderr, " (see --help)\n");
	exit(EXIT_USAGE);
}

/* parse_args: the command line into the options, or exits EXIT_USAGE. */
static void
parse_args(int argc, char **argv)
{
	long long	ms;
	int		ch;

	opterr = 0;	/* our one-line messages, not getopt's and a usage */
	while ((ch = getopt_long(argc, argv, ":c:s:S:r:t:i:b:R:P:kp:Qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			nconns = int_arg("--connections", optarg, CONNS_MAX);
			break;
		case 's':
			source_range(optarg);
			break;
		case 'S':
			source_file(optarg);
			break;
		case 'r':
			open_rate = int_arg("--open-rate", optarg, CONNS_MAX);
			break;
		case 't':
			time_limit = secs_arg("--time-limit", optarg);
			break;
		case 'i':
			idle_secs = secs_arg("--idle", optarg);
			break;
		case 'b':
			rcvbuf = int_arg("--rcvbuf", optarg, SLOW_RCVBUF_MAX);
			break;
		case 'R':
			read_size = int_arg("--read-size", optarg, RBUF_SIZE);
			break;
		case 'P':
			ms = int_arg("--pause", optarg, 3600000);
			pause_tv.tv_sec = (time_t)(ms / 1000);
			pause_tv.tv_usec = (suseconds_t)(ms % 1000 * 1000);
			break;
		case 'k':
			do_check = 1;
			break;
		case 'p':
			progress_secs = secs_arg("--progress", optarg);
			break;
		case 'Q':
			quiet_errors = 1;
			break;
		case 'h':
			usage(stdout, EXIT_OK);
		default:
			bad_option(ch, argv[optind - 1]);
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "%s: exactly one URL expected, got %d (see "
		    "--help)\n", progname, argc - optind);
		exit(EXIT_USAGE);
	}
	url_str = argv[optind];
}

/*
 * source_range: adds the IPv4 addresses FIRST-LAST, or the one IPv4 or
 * IPv6 address val, to sources[]; exits EXIT_USAGE on a bad or reversed
 * range or one beyond SOURCES_MAX in all.
 */
static void
source_range(const char *val)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct in_addr		 a, b;
	char			 first[INET6_ADDRSTRLEN];
	const char		*dash = strchr(val, '-');
	socklen_t		 len;
	uint32_t		 i, lo, hi;

	if (dash == NULL) {
		if (addr_literal(val, &ss, &len) == -1)
			bad_value("--source", val, "not an IPv4 or IPv6 address "
			    "nor an IPv4 range FIRST-LAST");
		if (source_add(&ss, len) == -1)
			bad_value("--source", val, TOO_MANY);
		return;
	}
	snprintf(first, sizeof(first), "%.*s", (int)(dash - val), val);
	if ((size_t)(dash - val) >= sizeof(first) ||
	    inet_pton(AF_INET, first, &a) != 1 ||
	    inet_pton(AF_INET, dash + 1, &b) != 1)
		bad_value("--source", val, "a range is FIRST-LAST, two IPv4 "
		    "addresses");
	lo = ntohl(a.s_addr);
	hi = ntohl(b.s_addr);
	if (hi < lo)
		bad_value("--source", val, "LAST is below FIRST");
	if ((uint64_t)hi - lo + 1 > SOURCES_MAX - nsources)
		bad_value("--source", val, TOO_MANY);
	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	for (i = lo;; i++) {
		sin->sin_addr.s_addr = htonl(i);
		(void)source_add(&ss, sizeof(*sin));
		if (i == hi)
			break;
	}
}

/*
 * source_file: adds every address of path (one IPv4 or IPv6 literal a
 * line, of any length; blank lines and # comments skipped) to sources[];
 * exits EXIT_USAGE if it cannot, or if path holds no address.
 */
static void
source_file(const char *path)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	FILE			*fp;
	char			*line = NULL, *p, *e;
	size_t			 cap = 0, lineno = 0, before = nsources;

	if ((fp = fopen(path, "r")) == NULL)
		source_fail(path, 0, strerror(errno), NULL);
	while (getline(&line, &cap, fp) != -1) {
		lineno++;
		for (p = line; isspace((unsigned char)*p); p++)
			;
		for (e = p + strlen(p); e > p &&
		    isspace((unsigned char)e[-1]); e--)
			;
		*e = '\0';
		if (*p == '\0' || *p == '#')
			continue;
		if (addr_literal(p, &ss, &len) == -1)
			source_fail(path, lineno, "not an address", p);
		if (source_add(&ss, len) == -1)
			source_fail(path, lineno, TOO_MANY, NULL);
	}
	if (ferror(fp))
		source_fail(path, 0, strerror(errno), NULL);
	if (nsources == before)
		source_fail(path, 0, "no address in it", NULL);
	free(line);
	fclose(fp);
}

/*
 * source_fail: says what is wrong with --source-file path (at line lineno
 * if not 0: why, and the text it found if any) and exits EXIT_USAGE.
 */
static void
source_fail(const char *path, size_t lineno, const char *why,
    const char *text)
{
	fprintf(stderr, "%s: --source-file %s", progname, path);
	if (lineno > 0)
		fprintf(stderr, ":%zu", lineno);
	fprintf(stderr, ": %s%s%.80s%s\n", why, text != NULL ? ": " : "",
	    text != NULL ? text : "",
	    text != NULL && strlen(text) > 80 ? "..." : "");
	exit(EXIT_USAGE);
}

/*
 * source_add: appends one source address.  Returns 0, or -1 if there are
 * SOURCES_MAX already; exits 1 without memory.
 */
static int
source_add(const struct sockaddr_storage *ss, socklen_t len)
{
	size_t	ncap;

	if (nsources == SOURCES_MAX)
		return -1;
	if (nsources == sources_cap) {
		ncap = sources_cap == 0 ? 256 : sources_cap * 2;
		if ((sources = realloc(sources, ncap * sizeof(*sources))) ==
		    NULL || (sourcelens = realloc(sourcelens,
		    ncap * sizeof(*sourcelens))) == NULL) {
			fprintf(stderr, "%s: out of memory\n", progname);
			exit(EXIT_SOME);
		}
		sources_cap = ncap;
	}
	sources[nsources] = *ss;
	sourcelens[nsources++] = len;
	return 0;
}

/*
 * raise_nofile: makes the open file limit at least need: the soft limit
 * up to the hard one, and the hard one too where we may (root).  Says
 * what the limit is, why it could not be raised and what to do, and exits
 * EXIT_USAGE, when it stays below need.
 */
static void
raise_nofile(long long need)
{
	struct rlimit	rl;
	int		err = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1) {
		fprintf(stderr, "%s: getrlimit: %s\n", progname,
		    strerror(errno));
		exit(EXIT_USAGE);
	}
	if (rl.rlim_cur != RLIM_INFINITY && (long long)rl.rlim_cur >= need)
		return;
	if (rl.rlim_max == RLIM_INFINITY || (long long)rl.rlim_max >= need)
		rl.rlim_cur = (rlim_t)need;
	else
		rl.rlim_cur = rl.rlim_max = (rlim_t)need;
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
		return;
	err = errno;
	(void)getrlimit(RLIMIT_NOFILE, &rl);
	fprintf(stderr, "%s: %lld connections need %lld open files; the limit "
	    "is %llu (hard %llu) and raising it failed: %s%s\n", progname,
	    nconns, need, (unsigned long long)rl.rlim_cur,
	    (unsigned long long)rl.rlim_max, strerror(err),
	    err == EPERM ? " (raise the hard limit as root: ulimit -Hn, "
	    "LimitNOFILE=, or limits.conf)" : " (see fs.nr_open)");
	exit(EXIT_USAGE);
}

/*
 * url_setup: parses and resolves the URL and formats the one request
 * every client sends; checks the sources' family.  Exits EXIT_USAGE.
 */
static void
url_setup(const char *s)
{
	struct http_url		 hu;
	enum http_url_err	 err;
	char			 port[8], host[300];
	const char		*why;
	size_t			 i;
	int			 n;

	if ((err = http_url_parse(s, &hu)) != URL_OK) {
		fprintf(stderr, "%s: bad URL %s: %s\n", progname, s,
		    http_url_why(err));
		exit(EXIT_USAGE);
	}
	snprintf(port, sizeof(port), "%d", hu.u_port);
	if (addr_resolve(hu.u_host, port, 0, &dst, &dstlen, &why) == -1) {
		fprintf(stderr, "%s: %s: %s\n", progname, hu.u_host, why);
		exit(EXIT_USAGE);
	}
	for (i = 0; i < nsources; i++)
		if (sources[i].ss_family != dst.ss_family) {
			fprintf(stderr, "%s: source addresses must all be of "
			    "the URL's family (%s)\n", progname,
			    dst.ss_family == AF_INET6 ? "IPv6" : "IPv4");
			exit(EXIT_USAGE);
		}
	http_host_header(&hu, host, sizeof(host));
	n = asprintf(&request, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: "
	    "http_many (evfcgid)\r\nAccept: */*\r\nConnection: close\r\n\r\n",
	    hu.u_path, host);
	if (n < 0) {
		fprintf(stderr, "%s: out of memory\n", progname);
		exit(EXIT_SOME);
	}
	reqlen = (size_t)n;
}

/* start: the first connections: all of them in batches, or by rate. */
static void
start(void *arg)
{
	struct timeval	tv = { 0, 0 };

	(void)arg;
	if ((open_ev = evtimer_new(run.lr_base, open_cb, NULL)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		exit(EXIT_SOME);
	}
	evtimer_add(open_ev, &tv);
}

/*
 * open_cb: opens the connections due by now (OPEN_BATCH at most, so the
 * loop serves those already open in between), then waits for the next.
 */
static void
open_cb(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	tv = { 0, 0 };
	long long	due = nconns, k;
	double		el;

	(void)fd;
	(void)what;
	(void)arg;
	if (open_rate > 0) {
		el = (double)(now_us() - run.lr_start_us) / 1e6;
		due = 1 + (long long)(el * (double)open_rate);
		if (due > nconns)
			due = nconns;
	}
	for (k = 0; next_open < due && k < OPEN_BATCH && !run.lr_stopping;
	    k++)
		client_open(&clients[next_open++]);
	if (next_open >= nconns || run.lr_stopping)
		return;
	if (open_rate > 0 && next_open >= due)
		tv = secs_tv(1.0 / (double)open_rate);
	evtimer_add(open_ev, &tv);
}

/* client_open: dials c from its source address and sends the request. */
static void
client_open(struct client *c)
{
	const char	*step;
	size_t		 i = (size_t)(c - clients);

	c->cl_state = CL_SENDING;
	http_frame_init(&c->cl_frame, 0);
	if (nsources > 0) {
		c->cl_src = i % nsources;
		c->cl_slot.ls_src = (struct sockaddr *)&sources[c->cl_src];
		c->cl_slot.ls_srclen = sourcelens[c->cl_src];
	}
	n_open++;
	if (n_open > n_open_peak)
		n_open_peak = n_open;
	if (lg_slot_dial(&c->cl_slot, (struct sockaddr *)&dst, dstlen, 0,
	    (int)rcvbuf, &step) == -1) {
		client_end(c, CL_FAILED, step, errno);
		return;
	}
	client_send(c);
}

/*
 * client_send: writes what is left of the request; while the socket is
 * still connecting send() says EAGAIN and we wait, and a refused connect
 * shows as its error.
 */
static void
client_send(struct client *c)
{
	struct lg_slot	*s = &c->cl_slot;
	ssize_t		 n;

	n = send(s->ls_fd, request + c->cl_woff, reqlen - c->cl_woff,
	    MSG_NOSIGNAL);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			lg_slot_watch(s, EV_WRITE, idle_tv);
		else
			client_end(c, s->ls_connected ? CL_CUT : CL_FAILED,
			    s->ls_connected ? "send" : "connect", errno);
		return;
	}
	if (!s->ls_connected) {
		s->ls_connected = 1;
		n_connected++;
		c->cl_t_req = now_us();
	}
	c->cl_woff += (size_t)n;
	if (c->cl_woff < reqlen) {
		lg_slot_watch(s, EV_WRITE, idle_tv);
		return;
	}
	c->cl_state = CL_READING;
	lg_slot_watch(s, EV_READ, idle_tv);
}

/* client_cb: every socket event and idle timeout of a client. */
static void
client_cb(evutil_socket_t fd, short what, void *arg)
{
	struct client	*c = arg;

	(void)fd;
	if (what & EV_TIMEOUT)
		client_end(c, c->cl_slot.ls_connected ? CL_GAVE_UP : CL_FAILED,
		    "idle", ETIMEDOUT);
	else if (c->cl_state == CL_SENDING)
		client_send(c);
	else if (c->cl_state == CL_READING)
		client_read(c);
}

/* client_woke: a client's --pause is over: it reads again. */
static void
client_woke(void *arg)
{
	struct client	*c = arg;

	if (c->cl_state == CL_READING)
		lg_slot_watch(&c->cl_slot, EV_READ, idle_tv);
}

/*
 * client_read: one read (bounded work per callback) through the framer,
 * the body to the check; ends the client on a whole answer, the server's
 * close or reset, or a malformed answer.
 */
static void
client_read(struct client *c)
{
	ssize_t	n;

	n = recv(c->cl_slot.ls_fd, run.lr_rbuf, (size_t)read_size, 0);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (n == -1) {
		client_end(c, CL_CUT, "read", errno);
		return;
	}
	if (n == 0) {
		if (http_frame_eof(&c->cl_frame))
			client_end(c, CL_COMPLETE, NULL, 0);
		else
			client_end(c, CL_CUT, c->cl_frame.hf_state == HF_HEAD ?
			    "closed in the head" : "closed in the body", 0);
		return;
	}
	c->cl_bytes += (uint64_t)n;
	total_bytes += (uint64_t)n;
	(void)http_frame_feed(&c->cl_frame, run.lr_rbuf, (size_t)n,
	    body_check, c);
	if (!c->cl_head && c->cl_frame.hf_state != HF_HEAD &&
	    c->cl_frame.hf_state != HF_ERROR) {
		c->cl_head = 1;
		n_head++;
	}
	if (c->cl_frame.hf_state == HF_ERROR)
		client_end(c, CL_CUT, "malformed answer", 0);
	else if (c->cl_frame.hf_state == HF_DONE)
		client_end(c, CL_COMPLETE, NULL, 0);
	else if (pause_tv.tv_sec != 0 || pause_tv.tv_usec != 0) {
		/* A throttled reader: nothing watched until the pause ends. */
		lg_slot_watch(&c->cl_slot, 0, NULL);
		lg_slot_pause(&c->cl_slot, &pause_tv);
	}
}

/*
 * body_check: with --check, compares len body bytes of client arg with
 * the pattern at their offset; the first difference marks the body bad.
 * Only a 2xx answer's body is the pattern: another status is an error of
 * its own kind, and its body is not checked.
 */
static void
body_check(void *arg, const char *buf, size_t len)
{
	struct client	*c = arg;
	size_t		 i;

	total_body += len;
	if (!do_check || c->cl_bad || c->cl_frame.hf_status < 200 ||
	    c->cl_frame.hf_status > 299) {
		c->cl_checked += len;
		return;
	}
	total_checked += len;
	if (memcmp(buf, patbuf + c->cl_checked % PERIOD, len) != 0) {
		for (i = 0; buf[i] == patbuf[(c->cl_checked + i) % PERIOD];
		    i++)
			;
		c->cl_bad = 1;
		if (!quiet_errors)
			fprintf(stderr, "%s: client %zu: body byte %llu "
			    "differs from the pattern\n", progname,
			    (size_t)(c - clients),
			    (unsigned long long)(c->cl_checked + i));
	}
	c->cl_checked += len;
}

/*
 * client_end: c ends in state how (a complete answer of HTTP status >= 400
 * is CL_HTTP_ERROR); what and err (an errno or 0) name the error kind.
 */
static void
client_end(struct client *c, enum cl_state how, const char *what, int err)
{
	char	kind[48];

	if (how == CL_COMPLETE && c->cl_frame.hf_status >= 400) {
		snprintf(kind, sizeof(kind), "http %d", c->cl_frame.hf_status);
		kind_count(kind, 0);
		how = CL_HTTP_ERROR;
	} else if (what != NULL)
		kind_count(what, err);
	if (what != NULL && !quiet_errors)
		fprintf(stderr, "%s: client %zu: %s%s%s\n", progname,
		    (size_t)(c - clients), what, err ? ": " : "",
		    err ? strerror(err) : "");
	c->cl_state = how;
	c->cl_t_end = now_us();
	n_state[how]++;
	n_open--;
	lg_slot_close(&c->cl_slot);
	lg_ended(&run);
}

/*
 * kind_count: counts one error of kind what (with errno err's name); the
 * kinds beyond the first KINDS_MAX - 1 are counted together as "other
 * kinds".
 */
static void
kind_count(const char *what, int err)
{
	char		 name[48];
	const char	*en = err ? strerrorname_np(err) : NULL;
	size_t		 i;

	snprintf(name, sizeof(name), "%s%s%s", what, en ? " " : "",
	    en ? en : "");
	for (i = 0; i < nkinds; i++)
		if (strcmp(kinds[i].k_name, name) == 0)
			break;
	if (i == nkinds && nkinds < KINDS_MAX - 1)
		snprintf(kinds[nkinds++].k_name, sizeof(name), "%s", name);
	else if (i == nkinds) {
		/* The last counts the rest, under a name that says so. */
		i = KINDS_MAX - 1;
		snprintf(kinds[i].k_name, sizeof(name), "other kinds");
		nkinds = KINDS_MAX;
	}
	kinds[i].k_count++;
}

/* progress: one line on stderr: time, open, reading, ended, bytes. */
static void
progress(void *arg)
{
	(void)arg;
	fprintf(stderr, "%s: %.0f s: open=%lld connected=%lld complete=%lld "
	    "cut=%lld failed=%lld body=%llu\n", progname,
	    (double)(now_us() - run.lr_start_us) / 1e6, n_open, n_connected,
	    n_state[CL_COMPLETE], n_state[CL_CUT], n_state[CL_FAILED],
	    (unsigned long long)total_body);
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * report: the summary on stdout (usage() describes it).  Returns the exit
 * status it implies.
 */
static int
report(void)
{
	double		*rates, el;
	long long	 i, nr = 0, bad = 0, unfinished = 0, unopened = 0;
	int64_t		 end;

	if ((rates = calloc((size_t)nconns, sizeof(*rates))) == NULL) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_SOME;
	}
	for (i = 0; i < nconns; i++) {
		struct client	*c = &clients[i];

		bad += c->cl_bad;
		if (c->cl_state == CL_SENDING || c->cl_state == CL_READING)
			unfinished++;
		else if (c->cl_state == CL_WAITING)
			unopened++;
		if (c->cl_t_req == 0)
			continue;
		end = c->cl_t_end != 0 ? c->cl_t_end : run.lr_end_us;
		if (end > c->cl_t_req)
			rates[nr++] = (double)c->cl_frame.hf_body * 1e6 /
			    (double)(end - c->cl_t_req);
	}
	qsort(rates, (size_t)nr, sizeof(*rates), cmp_double);
	el = (double)(run.lr_end_us - run.lr_start_us) / 1e6;
	printf("clients=%lld connected=%lld complete=%lld http_error=%lld "
	    "cut=%lld gave_up=%lld unfinished=%lld unopened=%lld failed=%lld "
	    "headers=%lld\n",
	    nconns, n_connected, n_state[CL_COMPLETE], n_state[CL_HTTP_ERROR],
	    n_state[CL_CUT], n_state[CL_GAVE_UP], unfinished, unopened,
	    n_state[CL_FAILED], n_head);
	printf("open_peak=%lld bytes=%llu body=%llu checked=%llu bad_body=%lld "
	    "seconds=%.3f\n", n_open_peak, (unsigned long long)total_bytes,
	    (unsigned long long)total_body,
	    (unsigned long long)total_checked, bad, el);
	printf("rate_min=%.0f rate_median=%.0f rate_max=%.0f\n",
	    nr > 0 ? rates[0] : 0.0, nr > 0 ? rates[nr / 2] : 0.0,
	    nr > 0 ? rates[nr - 1] : 0.0);
	for (i = 0; i < (long long)nkinds; i++)
		printf("error %s: %lld\n", kinds[i].k_name, kinds[i].k_count);
	fflush(stdout);
	free(rates);
	if (n_state[CL_COMPLETE] == nconns && bad == 0 && nkinds == 0)
		return EXIT_OK;
	unfinished += unopened;
	return unfinished > 0 && n_state[CL_COMPLETE] + unfinished == nconns &&
	    bad == 0 && nkinds == 0 ? EXIT_LIMIT : EXIT_SOME;
}

int
main(int argc, char **argv)
{
	struct timeval	 tv;
	const char	*why;
	long long	 i;
	int		 rc;

	parse_args(argc, argv);
	raise_nofile(nconns + LG_RESERVED_FDS);
	url_setup(url_str);
	for (i = 0; i < (long long)sizeof(patbuf); i++)
		patbuf[i] = APP_PATTERN_LINE[i % PERIOD];
	if (lg_init(&run, progname, RBUF_SIZE, &why) == -1) {
		fprintf(stderr, "%s: %s\n", progname, why);
		return EXIT_SOME;
	}
	if ((clients = calloc((size_t)nconns, sizeof(*clients))) == NULL) {
		fprintf(stderr, "%s: out of memory for %lld clients\n",
		    progname, nconns);
		return EXIT_SOME;
	}
	for (i = 0; i < nconns; i++)
		lg_slot_init(&clients[i].cl_slot, &run, client_cb, client_woke,
		    &clients[i]);
	if (idle_secs > 0) {
		tv = secs_tv(idle_secs);
		idle_tv = event_base_init_common_timeout(run.lr_base, &tv);
	}
	run.lr_count = nconns;
	run.lr_limit = time_limit;
	run.lr_sig_limit = 1;
	if (progress_secs > 0) {
		run.lr_tick_secs = progress_secs;
		run.lr_tick = progress;
	}
	if (lg_run(&run, start, NULL) == -1) {
		fprintf(stderr, "%s: out of memory\n", progname);
		return EXIT_SOME;
	}
	rc = report();
	for (i = 0; i < nconns; i++)
		lg_slot_close(&clients[i].cl_slot);
	if (open_ev != NULL)
		event_free(open_ev);
	lg_free(&run);
	return rc;
}
