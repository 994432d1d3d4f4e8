/*
 * options.c: evfcgid's options.  One table names every option; the command
 * line (getopt_long) and the --config file (one "name value" a line) both
 * go through it, so a flag and its line in the file cannot drift apart.
 */
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "allow.h"
#include "listen.h"
#include "options.h"
#include "privs.h"

#define OPT_BASE	256	/* getopt values of table rows start here */
#define LINE_MAX_LEN	4096

/* How an option's argument is read and where it goes. */
enum opt_kind {
	K_SIZE,		/* size_t, k/m/g suffix, in [min, max] */
	K_U64,		/* uint64_t, likewise */
	K_INT,		/* int, likewise (seconds, counts) */
	K_MODE,		/* octal file mode */
	K_STR,		/* const char *, as given */
	K_LISTEN,	/* appended to the listen list */
	K_ALLOW,	/* appended to the allow list */
	K_BACKEND,	/* epoll, poll or select */
	K_CONFIG,	/* the file read before the command line */
	K_ON,		/* no argument: the int is set to 1 */
	K_VERBOSE,	/* no argument: one level more */
	K_QUIET,	/* no argument: warnings and errors only */
	K_HELP,
	K_VERSION
};

struct opt {
	const char	*o_name;
	int		 o_short;	/* 0: long only */
	enum opt_kind	 o_kind;
	size_t		 o_off;		/* in struct config */
	uint64_t	 o_min;
	uint64_t	 o_max;
};

#define LIM(f)	offsetof(struct config, lim.f)
#define CFG(f)	offsetof(struct config, f)

static const struct opt opts[] = {
	{ "config", 0, K_CONFIG, CFG(config), 0, 0 },
	{ "listen", 'l', K_LISTEN, 0, 0, 0 },
	{ "socket-mode", 0, K_MODE, CFG(mode), 0, 07777 },
	{ "socket-owner", 0, K_STR, CFG(socket_owner), 0, 0 },
	{ "socket-group", 0, K_STR, CFG(socket_group), 0, 0 },
	{ "allow", 0, K_ALLOW, 0, 0, 0 },
	{ "max-conns", 'c', K_SIZE, LIM(max_conns), 1, 1000000 },
	{ "max-reqs", 'm', K_SIZE, LIM(max_reqs), 1, 65535 },
	{ "max-conn-requests", 0, K_SIZE, LIM(max_conn_requests), 0,
	    UINT32_MAX },
	{ "max-params", 0, K_SIZE, LIM(max_params), 1, SIZE_MAX / 2 },
	{ "max-body", 0, K_SIZE, LIM(max_body), 0, SIZE_MAX / 2 },
	{ "max-size", 0, K_U64, CFG(app.max_size), 0, UINT64_MAX / 2 },
	{ "high-water", 0, K_SIZE, LIM(high_water), 1, SIZE_MAX / 2 },
	{ "low-water", 0, K_SIZE, LIM(low_water), 0, SIZE_MAX / 2 },
	{ "max-queued", 0, K_SIZE, LIM(max_queued), 1, SIZE_MAX / 2 },
	{ "share-floor", 0, K_SIZE, LIM(share_floor), 1, SIZE_MAX / 2 },
	{ "max-input", 0, K_SIZE, LIM(max_input), 1, SIZE_MAX / 2 },
	{ "header-timeout", 0, K_INT, LIM(header_timeout), 1, 86400 },
	{ "idle-timeout", 0, K_INT, LIM(idle_timeout), 1, 86400 },
	{ "write-timeout", 0, K_INT, LIM(write_timeout), 1, 86400 },
	{ "drain-timeout", 0, K_INT, LIM(drain_timeout), 1, 86400 },
	{ "sndbuf", 0, K_SIZE, LIM(sndbuf), 0, INT_MAX / 2 },
	{ "cgi", 0, K_ON, CFG(cgi_on), 0, 0 },
	{ "cgi-root", 0, K_STR, CFG(cgi.c_root), 0, 0 },
	{ "cgi-max", 0, K_SIZE, CFG(cgi.c_max), 1, 65536 },
	{ "cgi-queue", 0, K_SIZE, CFG(cgi.c_queue), 0, 1000000 },
	{ "cgi-timeout", 0, K_INT, CFG(cgi.c_timeout), 0, 7 * 86400 },
	{ "cgi-lifetime", 0, K_INT, CFG(cgi.c_lifetime), 0, 7 * 86400 },
	{ "cgi-write-timeout", 0, K_INT, CFG(cgi.c_write_timeout), 0,
	    7 * 86400 },
	{ "cgi-max-header", 0, K_SIZE, CFG(cgi.c_max_header), 256, 65536 },
	{ "cgi-hold", 0, K_SIZE, CFG(cgi.c_hold), 65536, SIZE_MAX / 2 },
	{ "cgi-kill-grace", 0, K_INT, CFG(cgi.c_grace), 1, 3600 },
	{ "cgi-stderr-rate", 0, K_INT, CFG(cgi.c_stderr_rate), 0, 1000000 },
	{ "cgi-argv", 0, K_ON, CFG(cgi.c_argv), 0, 0 },
	{ "cgi-user", 0, K_STR, CFG(cgi_user), 0, 0 },
	{ "cgi-nproc", 0, K_SIZE, CFG(cgi.c_nproc), 0, 1000000 },
	{ "cgi-pids", 0, K_SIZE, CFG(cgi.c_pids), 0, 1000000 },
	{ "workers", 0, K_INT, CFG(workers), 1, MAX_WORKERS },
	{ "event-backend", 0, K_BACKEND, CFG(backend), 0, 0 },
	{ "user", 0, K_STR, CFG(user), 0, 0 },
	{ "group", 0, K_STR, CFG(group), 0, 0 },
	{ "allow-root", 0, K_ON, CFG(allow_root), 0, 0 },
	{ "access-log", 0, K_STR, CFG(access_log), 0, 0 },
	{ "log-file", 0, K_STR, CFG(log_file), 0, 0 },
	{ "syslog", 0, K_ON, CFG(use_syslog), 0, 0 },
	{ "verbose", 'v', K_VERBOSE, CFG(level), 0, 0 },
	{ "quiet", 'q', K_QUIET, CFG(level), 0, 0 },
	{ "help", 'h', K_HELP, 0, 0, 0 },
	{ "version", 'V', K_VERSION, 0, 0, 0 }
};

#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

/* How each option was last set, for messages (options_who()). */
static char	*who_of[NOPTS];
/* The --allow lists, joined by commas (struct config's allow). */
static char	*allow_list;
/* How many -v: one is info (the default, after -q too), two debug. */
static int	 verbose;

static void	usage(FILE *);
static int	arg_mode(const char *, const char *, long, long *);
static int	arg_size(const char *, const char *, uint64_t, uint64_t,
		    uint64_t *);
static int	listen_append(struct config *, const char *, const char *,
		    const char *);
static int	allow_append(struct config *, const char *, const char *,
		    const char *);
static int	set_opt(struct config *, const struct opt *, const char *,
		    const char *);
static int	read_file(struct config *, const char *);
static int	file_line(struct config *, char *, const char *);
static int	parse_argv(int, char **, struct config *, int);
static int	check_all(struct config *);
static int	check_ids(struct config *);
static void	usage_limits(FILE *);
static void	usage_cgi(FILE *);

/* The flags, by section: the top and how to listen. */
static void
usage(FILE *f)
{
	fputs(
"usage: evfcgid [options]\n"
"A single-threaded FastCGI responder on one libevent loop.\n"
"\n"
"      --config FILE         options from FILE, one a line as \"name value\"\n"
"                            (long names, no dashes; # comments); the\n"
"                            command line overrides it\n"
"\n"
"Listening:\n"
"  -l, --listen ADDR         HOST:PORT, [V6]:PORT or unix:/path; repeatable.\n"
"                            Without it: the sockets systemd passes\n"
"                            (LISTEN_FDS), else fd 0 if it is a listening\n"
"                            socket (spawn-fcgi, lighttpd bin-path).\n"
"      --socket-mode MODE    octal mode of unix sockets (default 0660)\n"
"      --socket-owner USER   owner of unix sockets (no path followed)\n"
"      --socket-group GROUP  group of unix sockets\n"
"      --allow ADDR[/BITS][,...]\n"
"                            TCP peers allowed: IPv4/IPv6 addresses or\n"
"                            prefixes (10.0.0.0/8, fd00::/8); repeatable.\n"
"                            Others are closed at accept.  Default: the\n"
"                            environment's FCGI_WEB_SERVER_ADDRS, else all\n"
"\n", f);
	usage_limits(f);
	usage_cgi(f);
	fputs(
"Processes:\n"
"      --workers N           N processes, each its own loop; a TCP address\n"
"                            gets a socket a worker (SO_REUSEPORT);\n"
"                            /status counts per process (1)\n"
"      --event-backend NAME  the kernel interface of the loop: epoll,\n"
"                            poll or select (libevent's choice: epoll);\n"
"                            select caps --max-conns below FD_SETSIZE\n"
"      --user USER           after binding, run as USER (started as root)\n"
"      --group GROUP         and as GROUP (default: USER's group)\n"
"      --allow-root          run as root without --user (refused else;\n"
"                            also EVFCGID_ALLOW_ROOT=1)\n"
"\n"
"Logging and the rest:\n"
"      --access-log PATH     one line per request (off by default; SIGHUP\n"
"                            reopens it)\n"
"      --log-file PATH       append the log there (SIGHUP reopens it)\n"
"      --syslog              log to syslog (daemon facility)\n"
"  -v, --verbose             more log: -v info (default), -vv debug\n"
"  -q, --quiet               errors and warnings only\n"
"  -h, --help                this text\n"
"  -V, --version             the version\n"
"\n"
"Routes: /hello /big /size?N /stream?N /echo /sleep?MS\n"
"        /upload (POST/PUT: cksum of the body) /redirect (302 to /hello)\n"
"        /status (JSON; ?format=prometheus: Prometheus text format)\n"
"\n"
"Exit status: 0 after --help, --version or a drained stop; 2 for a bad\n"
"option or value (file:line for the config file) or nothing to listen\n"
"on; 1 when the daemon fails at run time (bind, log file, the loop).\n", f);
}

/* The limits, with their defaults. */
static void
usage_limits(FILE *f)
{
	struct evfcgi_limits	 d;

	evfcgi_limits_default(&d);
	fprintf(f,
"Limits (sizes take a k, m or g suffix; each answered as said):\n"
"  -c, --max-conns N         connections at once; accept pauses (what\n"
"                            --max-queued / --share-floor admits, %zu\n"
"                            on the defaults, or fewer when the\n"
"                            descriptors (RLIMIT_NOFILE's hard limit)\n"
"                            are short: logged)\n"
"  -m, --max-reqs N          requests in flight per connection; beyond:\n"
"                            FCGI_OVERLOADED for each at once (%zu)\n"
"      --max-conn-requests N requests per connection, then it closes;\n"
"                            beyond: FCGI_OVERLOADED; 0 = no limit (%zu)\n"
"      --max-params BYTES    PARAMS per request; beyond: 431 (%zu)\n"
"      --max-body BYTES      request body; beyond: 413 (%zu)\n"
"      --max-size BYTES      largest /size?N and /stream?N; beyond: 413\n"
"                            (1g)\n"
"      --high-water BYTES    output per connection above which it stops\n"
"                            reading and producers wait (%zu)\n"
"      --low-water BYTES     output below which they resume (%zu)\n"
"      --max-queued BYTES    output queued in all connections: 7/8 of it\n"
"                            shared among those whose peer reads slowly,\n"
"                            1/8 kept for the rest; full, producers wait,\n"
"                            and new requests get 503 once the holders'\n"
"                            floors alone fill it (%zu)\n"
"      --share-floor BYTES   a slow connection's share of --max-queued:\n"
"                            at least this, at most --high-water (%zu)\n"
"      --max-input BYTES     PARAMS and bodies held by all requests; a\n"
"                            request that would pass it gets 503 (%zu)\n"
"      --header-timeout S    BEGIN_REQUEST to end of PARAMS; then the\n"
"                            connection is closed (%d)\n"
"      --idle-timeout S      no input on an idle connection or a request\n"
"                            body; then it is closed (%d)\n"
"      --write-timeout S     queued output with no progress (no write, and\n"
"                            the peer took nothing from the kernel's send\n"
"                            queue); then the connection is closed (%d).\n"
"                            Behind a front end, progress shows only in\n"
"                            steps of its buffers: minutes at 512 B/s\n"
"      --drain-timeout S     after SIGTERM/SIGINT, time to finish (%d)\n"
"      --sndbuf BYTES        SO_SNDBUF of each TCP connection (capped at\n"
"                            net.core.wmem_max, then doubled by the\n"
"                            kernel), a quarter of it on a unix socket\n"
"                            (in a spike, half --share-floor\n"
"                            while a connection holds output);\n"
"                            0 = autotuned up to tcp_wmem's max,\n"
"                            megabytes per slow reader (%zu)\n"
"\n",
	    d.max_conns, d.max_reqs, d.max_conn_requests, d.max_params,
	    d.max_body, d.high_water, d.low_water, d.max_queued,
	    d.share_floor, d.max_input,
	    d.header_timeout, d.idle_timeout, d.write_timeout,
	    d.drain_timeout, d.sndbuf);
}

/* The CGI flags, with their defaults. */
static void
usage_cgi(FILE *f)
{
	struct cgi_config	 cg;

	cgi_config_default(&cg);
	fprintf(f,
"CGI programs (fcgiwrap's job: every request runs a program):\n"
"      --cgi                 run the program SCRIPT_FILENAME names (else\n"
"                            DOCUMENT_ROOT + SCRIPT_NAME) for each request,\n"
"                            instead of the demo routes\n"
"      --cgi-root DIR        programs must be executable regular files\n"
"                            inside DIR (realpath), else 403/404; needed\n"
"      --cgi-max N           programs running at once, in all: with\n"
"                            --workers, shared among them (%zu)\n"
"      --cgi-queue N         requests waiting for one, in all (shared the\n"
"                            same way); beyond: 503 (%zu)\n"
"      --cgi-timeout S       per request (time its output waits for the\n"
"                            client not counted), then its process group\n"
"                            gets SIGTERM (504 if nothing was sent);\n"
"                            0 = none (%d)\n"
"      --cgi-lifetime S      per request, wall clock from its arrival, the\n"
"                            client's time included: a slow client holds a\n"
"                            slot no longer; then as --cgi-timeout;\n"
"                            0 = none (%d)\n"
"      --cgi-write-timeout S a program whose output waits S seconds for a\n"
"                            client that takes none of it is ended, its\n"
"                            slot freed, the answer cut; 0 = none (%d)\n"
"      --cgi-kill-grace S    SIGTERM to SIGKILL (%d)\n"
"      --cgi-max-header BYTES a program's header block; beyond: 502 (%zu)\n"
"      --cgi-hold BYTES      output held while the request body still comes\n"
"                            (nginx sends no more body once the answer has\n"
"                            begun); beyond, the program waits (%zu)\n"
"      --cgi-stderr-rate N   stderr lines logged a second per program; the\n"
"                            rest counted (%d)\n"
"      --cgi-argv            an indexed query (RFC 3875 4.4: no '=') gives\n"
"                            the program its words as arguments, none that\n"
"                            starts with '-' (off: no arguments ever)\n"
"      --cgi-user USER       programs run as USER (needs root), apart from\n"
"                            the daemon's --user: they can neither signal\n"
"                            nor read it (default: the daemon's user)\n"
"      --cgi-nproc N         RLIMIT_NPROC of each program: its user's\n"
"                            processes at most, a fork bomb's bound;\n"
"                            0 = inherited (%zu)\n"
"      --cgi-pids N          each program in a cgroup of its own whose\n"
"                            pids.max is N: its tasks and all it starts,\n"
"                            ended with it; where no cgroup can be made\n"
"                            (said at start), --cgi-nproc alone;\n"
"                            0 = no cgroups (%zu)\n"
"\n",
	    cg.c_max, cg.c_queue, cg.c_timeout, cg.c_lifetime,
	    cg.c_write_timeout, cg.c_grace,
	    cg.c_max_header,
	    cg.c_hold, cg.c_stderr_rate, cg.c_nproc, cg.c_pids);
}

/*
 * Parses an octal mode into *out.  Returns 0, or -1 after a message
 * naming who when s is not one in [0, max].
 */
static int
arg_mode(const char *who, const char *s, long max, long *out)
{
	char	*end;

	errno = 0;
	*out = strtol(s, &end, 8);
	if (errno != 0 || *end != '\0' || *s == '\0' || *out < 0 ||
	    *out > max) {
		fprintf(stderr, "evfcgid: %s %s: expected an octal mode\n", who,
		    s);
		return -1;
	}
	return 0;
}

/*
 * Parses a size or count with an optional k/m/g suffix into *out.  Returns
 * 0, or -1 after a message naming who (the flag, or file:line and name)
 * when s is not a number in [min, max].
 */
static int
arg_size(const char *who, const char *s, uint64_t min, uint64_t max,
    uint64_t *out)
{
	char			*end;
	unsigned long long	 n;
	uint64_t		 mult = 1;

	errno = 0;
	if (*s < '0' || *s > '9')
		goto bad;
	n = strtoull(s, &end, 10);
	if (errno != 0)
		goto bad;
	switch (*end) {
	case 'k': case 'K':
		mult = 1024;
		end++;
		break;
	case 'm': case 'M':
		mult = 1024 * 1024;
		end++;
		break;
	case 'g': case 'G':
		mult = 1024 * 1024 * 1024;
		end++;
		break;
	}
	if (*end != '\0' || n > UINT64_MAX / mult)
		goto bad;
	n *= mult;
	if (n < min || n > max)
		goto bad;
	*out = n;
	return 0;
bad:
	fprintf(stderr, "evfcgid: %s %s: expected a number from %" PRIu64
	    " to %" PRIu64 "\n", who, s, min, max);
	return -1;
}

/*
 * Appends the listening address arg (checked; who names it, where the
 * file's line or NULL) to cfg's; the command line's replace the file's.
 * Returns OPTIONS_GO_ON to go on, or 2 after a message.
 */
static int
listen_append(struct config *cfg, const char *who, const char *arg,
    const char *where)
{
	const char	*why;
	struct addr	 a;

	if (addr_parse(arg, 1, &a, &why) == -1) {
		fprintf(stderr, "evfcgid: %s %s: %s\n", who, arg, why);
		return 2;
	}
	if (where == NULL && cfg->listen_from_file) {
		cfg->nlisten = 0;
		cfg->listen_from_file = 0;
	}
	if (cfg->nlisten == MAX_LISTEN) {
		fprintf(stderr, "evfcgid: %s: at most %d listen addresses\n",
		    who, MAX_LISTEN);
		return 2;
	}
	cfg->listen_who[cfg->nlisten] = where != NULL ? strdup(who) : NULL;
	cfg->listen[cfg->nlisten++] = arg;
	if (where != NULL)
		cfg->listen_from_file = 1;
	return OPTIONS_GO_ON;
}

/*
 * Appends list (checked; who names it) to cfg's allowed peers; the
 * command line's replace the file's.  Returns OPTIONS_GO_ON to go on,
 * or 2 after a message.
 */
static int
allow_append(struct config *cfg, const char *who, const char *list,
    const char *where)
{
	struct allow	 al;
	char		 err[256], *p;
	size_t		 old, n = strlen(list);

	if (allow_parse(&al, list, err, sizeof(err)) == -1) {
		fprintf(stderr, "evfcgid: %s: %s\n", who, err);
		return 2;
	}
	allow_free(&al);
	if (where == NULL && cfg->allow_from_file) {
		cfg->allow = NULL;
		cfg->allow_from_file = 0;
	}
	old = cfg->allow != NULL ? strlen(cfg->allow) : 0;
	if ((p = realloc(allow_list, old + n + 2)) == NULL) {
		fprintf(stderr, "evfcgid: %s: out of memory\n", who);
		return 2;
	}
	allow_list = p;
	if (old > 0)
		p[old++] = ',';
	memcpy(p + old, list, n + 1);
	cfg->allow = p;
	if (where != NULL)
		cfg->allow_from_file = 1;
	return OPTIONS_GO_ON;
}

/*
 * Applies one option of the table to cfg; where is "FILE:LINE" for a line
 * of the config file, NULL for the command line.  Returns OPTIONS_GO_ON
 * to go on, else the exit status (0 after --help or --version, 2 for a
 * bad value).
 */
static int
set_opt(struct config *cfg, const struct opt *o, const char *arg,
    const char *where)
{
	char		*p = (char *)cfg + o->o_off;
	char		 who[LINE_MAX_LEN];
	long		 mode;
	uint64_t	 n;
	int		 rc;

	if (where != NULL)
		snprintf(who, sizeof(who), "%s: %s", where, o->o_name);
	else
		snprintf(who, sizeof(who), "--%s", o->o_name);
	/* Kept for the messages that come later (options_who()). */
	free(who_of[o - opts]);
	who_of[o - opts] = strdup(who);
	switch (o->o_kind) {
	case K_SIZE:
	case K_U64:
	case K_INT:
		if (arg_size(who, arg, o->o_min, o->o_max, &n) == -1)
			return 2;
		if (o->o_kind == K_SIZE)
			*(size_t *)(void *)p = (size_t)n;
		else if (o->o_kind == K_U64)
			*(uint64_t *)(void *)p = n;
		else
			*(int *)(void *)p = (int)n;
		break;
	case K_MODE:
		if (arg_mode(who, arg, (long)o->o_max, &mode) == -1)
			return 2;
		*(long *)(void *)p = mode;
		break;
	case K_STR:
	case K_CONFIG:
		if (*arg == '\0') {
			fprintf(stderr, "evfcgid: %s: empty value\n", who);
			return 2;
		}
		*(const char **)(void *)p = arg;
		break;
	case K_LISTEN:
		if ((rc = listen_append(cfg, who, arg, where)) != OPTIONS_GO_ON)
			return rc;
		break;
	case K_ALLOW:
		if ((rc = allow_append(cfg, who, arg, where)) != OPTIONS_GO_ON)
			return rc;
		break;
	case K_BACKEND:
		if (strcmp(arg, "epoll") != 0 && strcmp(arg, "poll") != 0 &&
		    strcmp(arg, "select") != 0) {
			fprintf(stderr, "evfcgid: %s: '%s' is not epoll, poll "
			    "or select\n", who, arg);
			return 2;
		}
		*(const char **)(void *)p = arg;
		break;
	case K_ON:
		*(int *)(void *)p = 1;
		break;
	case K_VERBOSE:
		cfg->level = ++verbose >= 2 ? LOG_DEBUG : LOG_INFO;
		break;
	case K_QUIET:
		cfg->level = LOG_WARNING;
		break;
	case K_HELP:
		usage(stdout);
		return 0;
	case K_VERSION:
		printf("evfcgid %s (libevent %s)\n", PACKAGE_VERSION,
		    event_get_version());
		return 0;
	}
	return OPTIONS_GO_ON;
}

/*
 * Applies one line of the config file (modified in place; kept, since
 * string options point into it).  Returns OPTIONS_GO_ON to go on, or 2
 * after a message naming where.
 */
static int
file_line(struct config *cfg, char *line, const char *where)
{
	char	*name, *val, *e;
	size_t	 i;

	for (name = line; isspace((unsigned char)*name); name++)
		;
	if (*name == '\0' || *name == '#')
		return OPTIONS_GO_ON;
	for (val = name; *val != '\0' && !isspace((unsigned char)*val); val++)
		;
	if (*val != '\0')
		*val++ = '\0';
	while (isspace((unsigned char)*val))
		val++;
	/* A # at the start of the value or after a blank: a comment. */
	for (e = val; *e != '\0'; e++)
		if (*e == '#' && (e == val || isspace((unsigned char)e[-1]))) {
			*e = '\0';
			break;
		}
	for (e = val + strlen(val); e > val &&
	    isspace((unsigned char)e[-1]); e--)
		;
	*e = '\0';
	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].o_name, name) == 0)
			break;
	if (i == NOPTS || opts[i].o_kind == K_HELP ||
	    opts[i].o_kind == K_VERSION || opts[i].o_kind == K_CONFIG) {
		fprintf(stderr, "evfcgid: %s: unknown option '%s'\n", where,
		    name);
		return 2;
	}
	if (opts[i].o_kind >= K_ON && *val != '\0') {
		fprintf(stderr, "evfcgid: %s: %s takes no value\n", where,
		    name);
		return 2;
	}
	if (opts[i].o_kind < K_ON && *val == '\0') {
		fprintf(stderr, "evfcgid: %s: %s needs a value\n", where,
		    name);
		return 2;
	}
	return set_opt(cfg, &opts[i], val, where);
}

/*
 * Reads the config file path into cfg.  Its lines stay allocated for the
 * life of the process (options point into them).  Returns OPTIONS_GO_ON
 * to go on, or 2 after a message.
 */
static int
read_file(struct config *cfg, const char *path)
{
	FILE	*f;
	char	 buf[LINE_MAX_LEN], where[LINE_MAX_LEN], *line;
	size_t	 len;
	int	 lineno = 0, rc = OPTIONS_GO_ON;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "evfcgid: --config %s: %s\n", path,
		    strerror(errno));
		return 2;
	}
	while (rc == OPTIONS_GO_ON && fgets(buf, sizeof(buf), f) != NULL) {
		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		len = strlen(buf);
		if (len == sizeof(buf) - 1 && buf[len - 1] != '\n') {
			fprintf(stderr, "evfcgid: %s: line too long\n", where);
			rc = 2;
			break;
		}
		if ((line = strdup(buf)) == NULL) {
			fprintf(stderr, "evfcgid: %s: out of memory\n", where);
			rc = 2;
			break;
		}
		rc = file_line(cfg, line, where);
	}
	if (rc == OPTIONS_GO_ON && ferror(f)) {
		fprintf(stderr, "evfcgid: --config %s: %s\n", path,
		    strerror(errno));
		rc = 2;
	}
	fclose(f);
	return rc;
}

/*
 * One pass over the command line: pass 0 reads only --config (quietly),
 * pass 1 every other option.  Returns OPTIONS_GO_ON to go on, else the
 * exit status.
 */
static int
parse_argv(int argc, char **argv, struct config *cfg, int pass)
{
	struct option	 lo[NOPTS + 1];
	char		 so[3 * NOPTS + 2], *s = so;
	size_t		 i;
	int		 ch, rc;

	memset(lo, 0, sizeof(lo));
	*s++ = '+';	/* no reordering: both passes see the same order */
	for (i = 0; i < NOPTS; i++) {
		lo[i].name = opts[i].o_name;
		lo[i].has_arg = opts[i].o_kind < K_ON ? required_argument :
		    no_argument;
		lo[i].val = OPT_BASE + (int)i;
		if (opts[i].o_short != 0) {
			*s++ = (char)opts[i].o_short;
			if (lo[i].has_arg)
				*s++ = ':';
		}
	}
	*s = '\0';
	optind = 0;
	opterr = pass == 1;
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		for (i = 0; i < NOPTS; i++)
			if (ch == OPT_BASE + (int)i || ch == opts[i].o_short)
				break;
		if (ch == '?' || i == NOPTS) {
			if (pass == 0)
				continue;
			fprintf(stderr, "Try 'evfcgid --help'.\n");
			return 2;
		}
		if ((pass == 0) != (opts[i].o_kind == K_CONFIG))
			continue;
		if ((rc = set_opt(cfg, &opts[i], optarg, NULL)) !=
		    OPTIONS_GO_ON)
			return rc;
	}
	if (pass == 1 && optind < argc) {
		fprintf(stderr, "evfcgid: unexpected argument '%s'\n"
		    "Try 'evfcgid --help'.\n", argv[optind]);
		return 2;
	}
	return OPTIONS_GO_ON;
}

/*
 * Checks the options together.  Returns OPTIONS_GO_ON to go on, or 2
 * after a message.
 */
static int
check_all(struct config *cfg)
{
	char	 high[LINE_MAX_LEN];

	if (cfg->lim.low_water > cfg->lim.high_water) {
		snprintf(high, sizeof(high), "%s", options_who("high-water"));
		fprintf(stderr, "evfcgid: %s %zu is above %s %zu\n",
		    options_who("low-water"), cfg->lim.low_water, high,
		    cfg->lim.high_water);
		return 2;
	}
	if (cfg->cgi_on && cfg->cgi.c_root == NULL) {
		fprintf(stderr, "evfcgid: --cgi needs --cgi-root DIR, the "
		    "directory its programs must be in (no default: / would "
		    "let a peer run any program)\n");
		return 2;
	}
	/* Totals, shared among the workers: each needs a slot. */
	if (cfg->cgi_on && cfg->cgi.c_max < (size_t)cfg->workers) {
		snprintf(high, sizeof(high), "%s", options_who("workers"));
		fprintf(stderr, "evfcgid: %s %zu is below %s %d: it is the "
		    "total of programs at once, shared among the workers, "
		    "and each needs at least one\n", options_who("cgi-max"),
		    cfg->cgi.c_max, high, cfg->workers);
		return 2;
	}
	if (!cfg->cgi_on && cfg->cgi.c_argv) {
		fprintf(stderr, "evfcgid: %s needs --cgi\n",
		    options_who("cgi-argv"));
		return 2;
	}
	if (!cfg->cgi_on && cfg->cgi.c_root != NULL) {
		fprintf(stderr, "evfcgid: %s needs --cgi\n",
		    options_who("cgi-root"));
		return 2;
	}
	if (cfg->group != NULL && cfg->user == NULL) {
		fprintf(stderr, "evfcgid: %s needs --user\n",
		    options_who("group"));
		return 2;
	}
	if (!cfg->cgi_on && cfg->cgi_user != NULL) {
		fprintf(stderr, "evfcgid: %s needs --cgi\n",
		    options_who("cgi-user"));
		return 2;
	}
	cfg->cgi.c_reapers = cfg->workers;
	return check_ids(cfg);
}

/*
 * uid 0 however spelled (root, 0, a name that maps to it) in --user or
 * --cgi-user is refused without --allow-root; the programs' ids are
 * those of --cgi-user, else of --user (and --group).  Returns
 * OPTIONS_GO_ON, or 2 after a message.
 */
static int
check_ids(struct config *cfg)
{
	static const char *const names[] = { "user", "cgi-user" };
	const char	*who[2] = { cfg->user, cfg->cgi_user };
	char		 err[256];
	uid_t		 uid[2] = { (uid_t)-1, (uid_t)-1 };
	gid_t		 gid[2] = { (gid_t)-1, (gid_t)-1 };
	int		 i;

	for (i = 0; i < 2; i++) {
		if (who[i] == NULL)
			continue;
		if (privs_user(who[i], &uid[i], &gid[i], err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "evfcgid: %s %s\n",
			    options_who(names[i]), err);
			return 2;
		}
		if (uid[i] == 0 && !cfg->allow_root) {
			fprintf(stderr, "evfcgid: refusing to run as root: %s "
			    "%s is uid 0; give another user, or "
			    "--allow-root\n", options_who(names[i]), who[i]);
			return 2;
		}
	}
	if (cfg->cgi_user != NULL && geteuid() != 0 && uid[1] != geteuid()) {
		fprintf(stderr, "evfcgid: %s %s: only root can run programs "
		    "as another user\n", options_who("cgi-user"),
		    cfg->cgi_user);
		return 2;
	}
	if (!cfg->cgi_on)
		return OPTIONS_GO_ON;
	i = cfg->cgi_user != NULL;
	cfg->cgi.c_uid = uid[i];
	cfg->cgi.c_gid = gid[i];
	/* Another user than the daemon's: started by a reaper kept root. */
	cfg->cgi.c_apart = i == 1 && geteuid() == 0 && uid[1] != (cfg->user !=
	    NULL ? uid[0] : 0);
	if (i == 0 && cfg->group != NULL && privs_group(cfg->group,
	    &cfg->cgi.c_gid, err, sizeof(err)) == -1) {
		fprintf(stderr, "evfcgid: %s %s\n", options_who("group"), err);
		return 2;
	}
	return OPTIONS_GO_ON;
}

const char *
options_who(const char *name)
{
	static char	 buf[64];
	size_t		 i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].o_name, name) == 0 && who_of[i] != NULL)
			return who_of[i];
	snprintf(buf, sizeof(buf), "--%s", name);
	return buf;
}

int
options_given(const char *name)
{
	size_t	 i;

	for (i = 0; i < NOPTS; i++)
		if (strcmp(opts[i].o_name, name) == 0)
			return who_of[i] != NULL;
	return 0;
}

int
options_parse(int argc, char **argv, struct config *cfg)
{
	const char	*env;
	int		 rc;

	memset(cfg, 0, sizeof(*cfg));
	evfcgi_limits_default(&cfg->lim);
	cfg->app.max_size = 1024ULL * 1024 * 1024;
	cfg->mode = 0660;
	cfg->level = LOG_INFO;
	cfg->workers = 1;
	cgi_config_default(&cfg->cgi);
	if ((rc = parse_argv(argc, argv, cfg, 0)) != OPTIONS_GO_ON)
		return rc;
	if (cfg->config != NULL &&
	    (rc = read_file(cfg, cfg->config)) != OPTIONS_GO_ON)
		return rc;
	if ((rc = parse_argv(argc, argv, cfg, 1)) != OPTIONS_GO_ON)
		return rc;
	/* libfcgi's variable, when no --allow was given. */
	if (cfg->allow == NULL && (env = getenv("FCGI_WEB_SERVER_ADDRS")) !=
	    NULL && *env != '\0' && (rc = allow_append(cfg,
	    "FCGI_WEB_SERVER_ADDRS", env, NULL)) != OPTIONS_GO_ON)
		return rc;
	if ((env = getenv("EVFCGID_ALLOW_ROOT")) != NULL &&
	    strcmp(env, "1") == 0)
		cfg->allow_root = 1;
	return check_all(cfg);
}
