/*
 * main.c: evfcgid's command line: flags, listeners, then the loop.
 */
#include <sys/types.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "config.h"
#include "app.h"
#include "evfcgi.h"
#include "log.h"

#define MAX_LISTEN	16
#define MAX_WORKERS	64
#define OPT_BASE	256	/* getopt values of table rows start here */

/* Everything the command line sets. */
struct config {
	struct evfcgi_limits	 lim;
	struct app_config	 app;
	const char		*listen[MAX_LISTEN];
	size_t			 nlisten;
	long			 mode;
	const char		*log_file;
	int			 level;
	int			 use_syslog;
	int			 workers;
	const char		*backend;	/* NULL: libevent's choice */
};

/* How a flag's argument is read and where it goes. */
enum opt_kind {
	K_SIZE,		/* size_t, k/m/g suffix, in [min, max] */
	K_U64,		/* uint64_t, likewise */
	K_INT,		/* int, likewise (seconds, counts) */
	K_MODE,		/* octal file mode */
	K_STR,		/* const char *, as given */
	K_LISTEN,	/* appended to the listen list */
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
	{ "listen", 'l', K_LISTEN, 0, 0, 0 },
	{ "socket-mode", 0, K_MODE, CFG(mode), 0, 07777 },
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
	{ "max-input", 0, K_SIZE, LIM(max_input), 1, SIZE_MAX / 2 },
	{ "header-timeout", 0, K_INT, LIM(header_timeout), 1, 86400 },
	{ "idle-timeout", 0, K_INT, LIM(idle_timeout), 1, 86400 },
	{ "write-timeout", 0, K_INT, LIM(write_timeout), 1, 86400 },
	{ "drain-timeout", 0, K_INT, LIM(drain_timeout), 1, 86400 },
	{ "sndbuf", 0, K_SIZE, LIM(sndbuf), 0, INT_MAX / 2 },
	{ "log-file", 0, K_STR, CFG(log_file), 0, 0 },
	{ "syslog", 0, K_ON, CFG(use_syslog), 0, 0 },
	{ "workers", 0, K_INT, CFG(workers), 1, MAX_WORKERS },
	{ "event-backend", 0, K_STR, CFG(backend), 0, 0 },
	{ "verbose", 'v', K_VERBOSE, CFG(level), 0, 0 },
	{ "quiet", 'q', K_QUIET, CFG(level), 0, 0 },
	{ "help", 'h', K_HELP, 0, 0, 0 },
	{ "version", 'V', K_VERSION, 0, 0, 0 }
};

#define NOPTS	(sizeof(opts) / sizeof(opts[0]))

static void	usage(FILE *);
static uint64_t	arg_size(const char *, const char *, uint64_t, uint64_t);
static int	set_opt(struct config *, const struct opt *, const char *);
static int	parse_args(int, char **, struct config *);
static struct evfcgi_server *setup(const struct config *,
		    struct event_base **);
static void	raise_nofile(size_t);
static struct event_base *base_new(const char *);
static void	select_limits(struct config *);
static void	forward_signal(int);
static pid_t	spawn_worker(struct evfcgi_server *, struct event_base *,
		    const sigset_t *);
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
"                            the next waits unread until one ends (%zu)\n"
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
"      --sndbuf BYTES        SO_SNDBUF of each connection (capped at\n"
"                            net.core.wmem_max, then doubled by the\n"
"                            kernel); 0 = autotuned up to tcp_wmem's max,\n"
"                            megabytes per slow reader (%zu)\n"
"\n"
"Processes:\n"
"      --workers N           N processes, each its own loop, sharing the\n"
"                            listeners; /status counts per process (1)\n"
"      --event-backend NAME  the kernel interface of the loop: epoll,\n"
"                            poll or select (libevent's choice: epoll);\n"
"                            select caps --max-conns below FD_SETSIZE\n"
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
	    d.max_body, d.high_water, d.low_water, d.max_queued, d.max_input,
	    d.header_timeout, d.idle_timeout, d.write_timeout,
	    d.drain_timeout, d.sndbuf);
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

/*
 * Applies one flag of the table to cfg.  Returns -1 to go on, else the
 * exit status (0 after --help or --version, 2 for a bad value).
 */
static int
set_opt(struct config *cfg, const struct opt *o, const char *arg)
{
	char	*p = (char *)cfg + o->o_off, *end;
	long	 mode;

	switch (o->o_kind) {
	case K_SIZE:
		*(size_t *)(void *)p = arg_size(o->o_name, arg, o->o_min,
		    o->o_max);
		break;
	case K_U64:
		*(uint64_t *)(void *)p = arg_size(o->o_name, arg, o->o_min,
		    o->o_max);
		break;
	case K_INT:
		*(int *)(void *)p = (int)arg_size(o->o_name, arg, o->o_min,
		    o->o_max);
		break;
	case K_MODE:
		errno = 0;
		mode = strtol(arg, &end, 8);
		if (errno != 0 || *end != '\0' || *arg == '\0' || mode < 0 ||
		    mode > (long)o->o_max) {
			fprintf(stderr, "evfcgid: --%s %s: expected an octal "
			    "mode\n", o->o_name, arg);
			return 2;
		}
		*(long *)(void *)p = mode;
		break;
	case K_STR:
		*(const char **)(void *)p = arg;
		break;
	case K_LISTEN:
		if (cfg->nlisten == MAX_LISTEN) {
			fprintf(stderr, "evfcgid: at most %d --listen\n",
			    MAX_LISTEN);
			return 2;
		}
		cfg->listen[cfg->nlisten++] = arg;
		break;
	case K_ON:
		*(int *)(void *)p = 1;
		break;
	case K_VERBOSE:
		cfg->level = cfg->level < LOG_INFO ? LOG_INFO : LOG_DEBUG;
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
	return -1;
}

/*
 * Reads the command line into cfg (defaults first), from the table.
 * Returns -1 to go on, else the status to exit with.
 */
static int
parse_args(int argc, char **argv, struct config *cfg)
{
	struct option	 lo[NOPTS + 1];
	char		 so[3 * NOPTS + 1], *s = so;
	size_t		 i;
	int		 ch, rc;

	memset(lo, 0, sizeof(lo));
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
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		for (i = 0; i < NOPTS; i++)
			if (ch == OPT_BASE + (int)i || ch == opts[i].o_short)
				break;
		if (ch == '?' || i == NOPTS) {
			fprintf(stderr, "Try 'evfcgid --help'.\n");
			return 2;
		}
		if ((rc = set_opt(cfg, &opts[i], optarg)) != -1)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "evfcgid: unexpected argument '%s'\n"
		    "Try 'evfcgid --help'.\n", argv[optind]);
		return 2;
	}
	if (cfg->backend != NULL && strcmp(cfg->backend, "epoll") != 0 &&
	    strcmp(cfg->backend, "poll") != 0 &&
	    strcmp(cfg->backend, "select") != 0) {
		fprintf(stderr, "evfcgid: --event-backend: '%s' is not "
		    "epoll, poll or select\n", cfg->backend);
		return 2;
	}
	if (cfg->lim.low_water > cfg->lim.high_water) {
		fprintf(stderr, "evfcgid: --low-water %zu is above "
		    "--high-water %zu\n", cfg->lim.low_water,
		    cfg->lim.high_water);
		return 2;
	}
	return -1;
}

/*
 * The event loop on the kernel interface named (NULL: libevent's choice),
 * or NULL (logged) when this libevent cannot use it.
 */
static struct event_base *
base_new(const char *backend)
{
	static const char *const methods[] = { "epoll", "poll", "select" };
	struct event_config	*cfg;
	struct event_base	*base;
	size_t			 i;

	if (backend == NULL)
		return event_base_new();
	if ((cfg = event_config_new()) == NULL)
		return NULL;
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i], backend) != 0)
			(void)event_config_avoid_method(cfg, methods[i]);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	if (base != NULL && strcmp(event_base_get_method(base), backend) != 0) {
		log_warn("event backend %s asked, %s given",
		    backend, event_base_get_method(base));
		event_base_free(base);
		base = NULL;
	}
	return base;
}

/*
 * select() takes no descriptor at or above FD_SETSIZE (glibc's checked
 * FD_SET aborts): cap --max-conns below it, and the descriptor limit at
 * it, so that accept() meets EMFILE (and backs off) before such a
 * descriptor exists.
 */
static void
select_limits(struct config *cfg)
{
	struct rlimit	 rl;
	size_t		 most = FD_SETSIZE - 64;

	if (cfg->backend == NULL || strcmp(cfg->backend, "select") != 0)
		return;
	if (cfg->lim.max_conns > most) {
		log_warn("--event-backend select: --max-conns %zu capped at "
		    "%zu (descriptors must stay below FD_SETSIZE, %d)",
		    cfg->lim.max_conns, most, FD_SETSIZE);
		cfg->lim.max_conns = most;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > FD_SETSIZE) {
		rl.rlim_cur = FD_SETSIZE;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The loop, the server, the routes and the listeners that cfg asks for.
 * Returns the server, or exits with a message (1, or 2 for usage).
 */
static struct evfcgi_server *
setup(const struct config *cfg, struct event_base **basep)
{
	struct evfcgi_server	*srv;
	char			 err[256];
	size_t			 i;

	if ((*basep = base_new(cfg->backend)) == NULL)
		fatal("cannot create the event loop");
	log_info("event loop on %s", event_base_get_method(*basep));
	if ((srv = evfcgi_server_new(*basep, &cfg->lim)) == NULL)
		fatal("inconsistent limits");
	if (app_register(srv, &cfg->app) == -1)
		fatal("out of memory");
	for (i = 0; i < cfg->nlisten; i++) {
		if (evfcgi_listen(srv, cfg->listen[i], (int)cfg->mode, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "evfcgid: %s\n", err);
			exit(1);
		}
	}
	if (cfg->nlisten == 0 && evfcgi_listen_fd(srv, STDIN_FILENO) == -1) {
		fprintf(stderr, "evfcgid: no --listen given and fd 0 is not a "
		    "listening socket\nTry 'evfcgid --help'.\n");
		exit(2);
	}
	return srv;
}

int
main(int argc, char **argv)
{
	struct config		 cfg = {
		.app = { .max_size = 1024ULL * 1024 * 1024 },
		.mode = 0660,
		.level = LOG_INFO,
		.workers = 1
	};
	struct evfcgi_server	*srv;
	struct event_base	*base;
	int			 rc;

	evfcgi_limits_default(&cfg.lim);
	if ((rc = parse_args(argc, argv, &cfg)) != -1)
		return rc;
	if (log_init("evfcgid", cfg.level, cfg.use_syslog,
	    cfg.log_file) == -1) {
		fprintf(stderr, "evfcgid: --log-file %s: %s\n", cfg.log_file,
		    strerror(errno));
		return 1;
	}
	select_limits(&cfg);
	raise_nofile(cfg.lim.max_conns);
	/* A write to a peer that has gone must not end the daemon. */
	signal(SIGPIPE, SIG_IGN);
	srv = setup(&cfg, &base);
	rc = 0;
	if (cfg.workers > 1)
		rc = run_workers(srv, base, cfg.workers);
	else if (evfcgi_handle_signals(srv) == -1 || evfcgi_run(srv) == -1)
		fatal("the event loop failed");
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
 * Forks one worker on the shared listeners, running its own loop.  Called
 * with the parent's signals blocked; old is the mask the worker runs with.
 * Returns its pid.
 */
static pid_t
spawn_worker(struct evfcgi_server *srv, struct event_base *base,
    const sigset_t *old)
{
	pid_t	 pid;

	if ((pid = fork()) == -1)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		if (event_reinit(base) == -1 ||
		    evfcgi_handle_signals(srv) == -1)
			fatal("worker: cannot set up the loop");
		/* Unblocked only now: a signal meanwhile waits for the loop. */
		sigprocmask(SIG_SETMASK, old, NULL);
		if (evfcgi_run(srv) == -1)
			fatal("worker: the event loop failed");
		exit(0);
	}
	return pid;
}

/*
 * Forks n workers that share the bound listeners and keeps n running: one
 * that dies (killed, crashed) is replaced, at most once a second per slot,
 * so the listeners are always served.  SIGTERM, SIGINT and SIGHUP are
 * passed on; after SIGTERM or SIGINT nobody is replaced and the workers
 * drain.  Returns 0 when every worker then exited 0, else 1.
 */
static int
run_workers(struct evfcgi_server *srv, struct event_base *base, int n)
{
	struct sigaction	 sa;
	sigset_t		 sigs, old;
	time_t			 started[MAX_WORKERS];
	pid_t			 pid;
	int			 i, alive = 0, status, rc = 0, stopping = 0;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	for (nworkers = 0; nworkers < n; nworkers++, alive++) {
		worker_pids[nworkers] = spawn_worker(srv, base, &old);
		started[nworkers] = time(NULL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	log_info("%d workers started", n);
	while (alive > 0) {
		if (!stopping && (parent_sig == SIGTERM || parent_sig == SIGINT)) {
			/* Stop queueing connections nobody will accept. */
			stopping = 1;
			evfcgi_drain(srv);
		}
		if ((pid = waitpid(-1, &status, 0)) == -1) {
			if (errno != EINTR)
				break;
			continue;
		}
		for (i = 0; i < nworkers && worker_pids[i] != pid; i++)
			;
		if (i == nworkers)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			log_warn("worker %d ended abnormally (status %d)",
			    (int)pid, status);
			if (stopping || parent_sig == SIGTERM ||
			    parent_sig == SIGINT)
				rc = 1;
		}
		worker_pids[i] = 0;
		if (stopping || parent_sig == SIGTERM || parent_sig == SIGINT) {
			alive--;
			continue;
		}
		/* A worker that dies at once again is not restarted in a loop. */
		if (time(NULL) - started[i] < 1)
			sleep(1);
		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (parent_sig == SIGTERM || parent_sig == SIGINT)
			alive--;
		else {
			worker_pids[i] = spawn_worker(srv, base, &old);
			started[i] = time(NULL);
			log_warn("worker %d replaced by %d", (int)pid,
			    (int)worker_pids[i]);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	return rc;
}
