/*
 * main.c: evfcgid's command line: flags, listeners, then the loop.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "app.h"
#include "evfcgi.h"
#include "log.h"

#define MAX_LISTEN	16
#define MAX_WORKERS	64

enum {
	OPT_SOCKET_MODE = 256, OPT_MAX_CONN_REQUESTS, OPT_MAX_PARAMS,
	OPT_MAX_BODY, OPT_MAX_SIZE, OPT_HIGH_WATER, OPT_LOW_WATER,
	OPT_MAX_QUEUED, OPT_HEADER_TIMEOUT, OPT_IDLE_TIMEOUT,
	OPT_WRITE_TIMEOUT, OPT_DRAIN_TIMEOUT, OPT_SNDBUF, OPT_LOG_FILE,
	OPT_SYSLOG, OPT_WORKERS
};

static const struct option longopts[] = {
	{ "listen",		required_argument, NULL, 'l' },
	{ "socket-mode",	required_argument, NULL, OPT_SOCKET_MODE },
	{ "max-conns",		required_argument, NULL, 'c' },
	{ "max-reqs",		required_argument, NULL, 'm' },
	{ "max-conn-requests",	required_argument, NULL, OPT_MAX_CONN_REQUESTS },
	{ "max-params",		required_argument, NULL, OPT_MAX_PARAMS },
	{ "max-body",		required_argument, NULL, OPT_MAX_BODY },
	{ "max-size",		required_argument, NULL, OPT_MAX_SIZE },
	{ "high-water",		required_argument, NULL, OPT_HIGH_WATER },
	{ "low-water",		required_argument, NULL, OPT_LOW_WATER },
	{ "max-queued",		required_argument, NULL, OPT_MAX_QUEUED },
	{ "header-timeout",	required_argument, NULL, OPT_HEADER_TIMEOUT },
	{ "idle-timeout",	required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "write-timeout",	required_argument, NULL, OPT_WRITE_TIMEOUT },
	{ "drain-timeout",	required_argument, NULL, OPT_DRAIN_TIMEOUT },
	{ "sndbuf",		required_argument, NULL, OPT_SNDBUF },
	{ "log-file",		required_argument, NULL, OPT_LOG_FILE },
	{ "syslog",		no_argument,	   NULL, OPT_SYSLOG },
	{ "workers",		required_argument, NULL, OPT_WORKERS },
	{ "verbose",		no_argument,	   NULL, 'v' },
	{ "quiet",		no_argument,	   NULL, 'q' },
	{ "help",		no_argument,	   NULL, 'h' },
	{ "version",		no_argument,	   NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

static void	usage(FILE *);
static uint64_t	arg_size(const char *, const char *, uint64_t, uint64_t);
static void	raise_nofile(size_t);
static void	forward_signal(int);
static int	run_workers(struct evfcgi_server *, struct event_base *, int);

static pid_t			worker_pids[MAX_WORKERS];
static int			nworkers;
static volatile sig_atomic_t	parent_sig;

static void
usage(FILE *f)
{
	struct evfcgi_limits	 d;

	evfcgi_limits_default(&d);
	fprintf(f,
"usage: evfcgid [options]\n"
"A single-threaded FastCGI responder on one libevent loop.\n"
"\n"
"Listening:\n"
"  -l, --listen ADDR         HOST:PORT, [V6]:PORT or unix:/path; repeatable.\n"
"                            Without it, fd 0 is used if it is a listening\n"
"                            socket (spawn-fcgi, lighttpd bin-path).\n"
"      --socket-mode MODE    octal mode of unix sockets (default 0660)\n"
"\n"
"Limits (sizes take a k, m or g suffix; each answered as said):\n"
"  -c, --max-conns N         connections at once; accept pauses (%zu)\n"
"  -m, --max-reqs N          requests in flight per connection; beyond:\n"
"                            END_REQUEST FCGI_OVERLOADED (%zu)\n"
"      --max-conn-requests N requests per connection, then it closes;\n"
"                            0 = no limit (%zu)\n"
"      --max-params BYTES    PARAMS per request; beyond: 431 (%zu)\n"
"      --max-body BYTES      request body; beyond: 413 (%zu)\n"
"      --max-size BYTES      largest /size?N and /stream?N; beyond: 413\n"
"                            (1g)\n"
"      --high-water BYTES    output per connection above which it stops\n"
"                            reading and producers wait (%zu)\n"
"      --low-water BYTES     output below which they resume (%zu)\n"
"      --max-queued BYTES    output queued in all connections; beyond:\n"
"                            producers wait, new requests get 503 (%zu)\n"
"      --header-timeout S    BEGIN_REQUEST to end of PARAMS; then the\n"
"                            connection is closed (%d)\n"
"      --idle-timeout S      no input on an idle connection or a request\n"
"                            body; then it is closed (%d)\n"
"      --write-timeout S     queued output with no progress; then the\n"
"                            connection is closed (%d)\n"
"      --drain-timeout S     after SIGTERM/SIGINT, time to finish (%d)\n"
"      --sndbuf BYTES        SO_SNDBUF of each connection (capped at\n"
"                            net.core.wmem_max, then doubled by the\n"
"                            kernel); 0 = autotuned up to tcp_wmem's max,\n"
"                            megabytes per slow reader (0)\n"
"\n"
"Processes:\n"
"      --workers N           N processes, each its own loop, sharing the\n"
"                            listeners; /status counts per process (1)\n"
"\n"
"Logging and the rest:\n"
"      --log-file PATH       append the log there (SIGHUP reopens it)\n"
"      --syslog              log to syslog (daemon facility)\n"
"  -v, --verbose             more log: -v info (default), -vv debug\n"
"  -q, --quiet               errors and warnings only\n"
"  -h, --help                this text\n"
"  -V, --version             the version\n"
"\n"
"Routes: /hello /big /size?N /stream?N /echo /sleep?MS /status\n",
	    d.max_conns, d.max_reqs, d.max_conn_requests, d.max_params,
	    d.max_body, d.high_water, d.low_water, d.max_queued,
	    d.header_timeout, d.idle_timeout, d.write_timeout,
	    d.drain_timeout);
}

/*
 * Parses a size or count with an optional k/m/g suffix for flag.  Exits
 * with a message when it is not a number in [min, max].
 */
static uint64_t
arg_size(const char *flag, const char *s, uint64_t min, uint64_t max)
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
	return n;
bad:
	fprintf(stderr, "evfcgid: --%s %s: expected a number from %" PRIu64
	    " to %" PRIu64 "\n", flag, s, min, max);
	exit(2);
}

/* Lets the process hold the connections it was told to accept. */
static void
raise_nofile(size_t conns)
{
	struct rlimit	 rl;
	rlim_t		 want = (rlim_t)conns + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur < want)
		log_warn("only %llu file descriptors for --max-conns %zu: "
		    "accept will back off at the limit",
		    (unsigned long long)rl.rlim_cur, conns);
}

int
main(int argc, char **argv)
{
	struct evfcgi_limits	 lim;
	struct app_config	 app = { .max_size = 1024ULL * 1024 * 1024 };
	struct evfcgi_server	*srv;
	struct event_base	*base;
	const char		*listen[MAX_LISTEN], *log_file = NULL;
	char			 err[256], *end;
	size_t			 nlisten = 0, i;
	long			 mode = 0660;
	int			 ch, level = LOG_INFO, use_syslog = 0, rc = 0;
	int			 workers = 1;

	evfcgi_limits_default(&lim);
	while ((ch = getopt_long(argc, argv, "l:c:m:vqhV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (nlisten == MAX_LISTEN) {
				fprintf(stderr, "evfcgid: at most %d "
				    "--listen\n", MAX_LISTEN);
				return 2;
			}
			listen[nlisten++] = optarg;
			break;
		case OPT_SOCKET_MODE:
			errno = 0;
			mode = strtol(optarg, &end, 8);
			if (errno != 0 || *end != '\0' || *optarg == '\0' ||
			    mode < 0 || mode > 07777) {
				fprintf(stderr, "evfcgid: --socket-mode %s: "
				    "expected an octal mode\n", optarg);
				return 2;
			}
			break;
		case 'c':
			lim.max_conns = arg_size("max-conns", optarg, 1,
			    1000000);
			break;
		case 'm':
			lim.max_reqs = arg_size("max-reqs", optarg, 1, 65535);
			break;
		case OPT_MAX_CONN_REQUESTS:
			lim.max_conn_requests = arg_size("max-conn-requests",
			    optarg, 0, UINT32_MAX);
			break;
		case OPT_MAX_PARAMS:
			lim.max_params = arg_size("max-params", optarg, 1,
			    SIZE_MAX / 2);
			break;
		case OPT_MAX_BODY:
			lim.max_body = arg_size("max-body", optarg, 0,
			    SIZE_MAX / 2);
			break;
		case OPT_MAX_SIZE:
			app.max_size = arg_size("max-size", optarg, 0,
			    UINT64_MAX / 2);
			break;
		case OPT_HIGH_WATER:
			lim.high_water = arg_size("high-water", optarg, 1,
			    SIZE_MAX / 2);
			break;
		case OPT_LOW_WATER:
			lim.low_water = arg_size("low-water", optarg, 0,
			    SIZE_MAX / 2);
			break;
		case OPT_MAX_QUEUED:
			lim.max_queued = arg_size("max-queued", optarg, 1,
			    SIZE_MAX / 2);
			break;
		case OPT_HEADER_TIMEOUT:
			lim.header_timeout = (int)arg_size("header-timeout",
			    optarg, 1, 86400);
			break;
		case OPT_IDLE_TIMEOUT:
			lim.idle_timeout = (int)arg_size("idle-timeout",
			    optarg, 1, 86400);
			break;
		case OPT_WRITE_TIMEOUT:
			lim.write_timeout = (int)arg_size("write-timeout",
			    optarg, 1, 86400);
			break;
		case OPT_SNDBUF:
			lim.sndbuf = arg_size("sndbuf", optarg, 0, INT_MAX / 2);
			break;
		case OPT_DRAIN_TIMEOUT:
			lim.drain_timeout = (int)arg_size("drain-timeout",
			    optarg, 1, 86400);
			break;
		case OPT_LOG_FILE:
			log_file = optarg;
			break;
		case OPT_SYSLOG:
			use_syslog = 1;
			break;
		case OPT_WORKERS:
			workers = (int)arg_size("workers", optarg, 1,
			    MAX_WORKERS);
			break;
		case 'v':
			level = level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
			break;
		case 'q':
			level = LOG_WARNING;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("evfcgid %s (libevent %s)\n", PACKAGE_VERSION,
			    event_get_version());
			return 0;
		default:
			fprintf(stderr, "Try 'evfcgid --help'.\n");
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "evfcgid: unexpected argument '%s'\n"
		    "Try 'evfcgid --help'.\n", argv[optind]);
		return 2;
	}
	if (lim.low_water > lim.high_water) {
		fprintf(stderr, "evfcgid: --low-water %zu is above "
		    "--high-water %zu\n", lim.low_water, lim.high_water);
		return 2;
	}
	if (log_init("evfcgid", level, use_syslog, log_file) == -1) {
		fprintf(stderr, "evfcgid: --log-file %s: %s\n", log_file,
		    strerror(errno));
		return 1;
	}
	raise_nofile(lim.max_conns);

	if ((base = event_base_new()) == NULL)
		fatal("cannot create the event loop");
	if ((srv = evfcgi_server_new(base, &lim)) == NULL)
		fatal("inconsistent limits");
	if (app_register(srv, &app) == -1)
		fatal("out of memory");
	for (i = 0; i < nlisten; i++) {
		if (evfcgi_listen(srv, listen[i], (int)mode, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "evfcgid: %s\n", err);
			return 1;
		}
	}
	if (nlisten == 0 && evfcgi_listen_fd(srv, STDIN_FILENO) == -1) {
		fprintf(stderr, "evfcgid: no --listen given and fd 0 is not a "
		    "listening socket\nTry 'evfcgid --help'.\n");
		return 2;
	}
	if (workers > 1)
		rc = run_workers(srv, base, workers);
	else
		evfcgi_run(srv);
	evfcgi_server_free(srv);
	event_base_free(base);
	return rc;
}

/* Parent's handler: passes the signal on to every worker at once. */
static void
forward_signal(int sig)
{
	int	 i;

	parent_sig = sig;
	for (i = 0; i < nworkers; i++)
		if (worker_pids[i] > 0)
			kill(worker_pids[i], sig);
}

/*
 * Forks n workers that share the bound listeners, each running its own
 * loop, and waits for them.  SIGTERM, SIGINT and SIGHUP are passed on.
 * Returns 0 when every worker exited 0, else 1.
 */
static int
run_workers(struct evfcgi_server *srv, struct event_base *base, int n)
{
	struct sigaction	 sa;
	sigset_t		 sigs, old;
	pid_t			 pid;
	int			 i, alive = 0, status, rc = 0;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	for (i = 0; i < n; i++) {
		if ((pid = fork()) == -1)
			fatal("fork: %s", strerror(errno));
		if (pid == 0) {
			if (event_reinit(base) == -1)
				fatal("worker: cannot reinitialise the loop");
			sigprocmask(SIG_SETMASK, &old, NULL);
			evfcgi_run(srv);
			exit(0);
		}
		worker_pids[nworkers++] = pid;
		alive++;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);
	log_info("%d workers started", n);
	while (alive > 0) {
		if ((pid = waitpid(-1, &status, 0)) == -1) {
			if (errno != EINTR)
				break;
			/* Stop queueing connections nobody will accept. */
			if (parent_sig == SIGTERM || parent_sig == SIGINT)
				evfcgi_drain(srv);
			continue;
		}
		for (i = 0; i < nworkers; i++)
			if (worker_pids[i] == pid)
				worker_pids[i] = 0;
		alive--;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			log_warn("worker %d ended abnormally (status %d)",
			    (int)pid, status);
			rc = 1;
		}
	}
	return rc;
}
