/*
 * main.c: evfcgid itself: the options (options.c), the listeners (given,
 * passed by systemd, or fd 0), giving up root, then the loop, in one
 * process or in workers.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <errno.h>
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
#include "cgi.h"
#include "evfcgi.h"
#include "listen.h"
#include "log.h"
#include "options.h"
#include "privs.h"
#include "server_ops.h"
#include "status.h"

/*
 * The users and groups named, resolved once before anything is bound:
 * -1 where none was named.  --group overrides --user's primary group.
 */
struct ids {
	uid_t	id_uid;			/* --user */
	gid_t	id_gid;			/* --group, else --user's group */
	uid_t	id_sock_uid;		/* --socket-owner */
	gid_t	id_sock_gid;		/* --socket-group */
};

static struct evfcgi_server *setup(const struct config *,
		    const struct ids *, struct event_base **, struct cgi **);
static void	setup_listeners(struct evfcgi_server *,
		    const struct config *, const struct ids *);
static void	resolve_ids(const struct config *, struct ids *);
static int	fd_is_unix(int);
static void	drop_root(const struct config *, const struct ids *);
static void	nofile_conns(struct config *);
static struct event_base *base_new(const char *);
static void	select_limits(struct config *);
static void	forward_signal(int);
static void	startup_signals(void);
static pid_t	spawn_worker(struct evfcgi_server *, struct event_base *,
		    const sigset_t *, int);
static int	run_workers(struct evfcgi_server *, struct event_base *, int);

/*
 * Connections a worker takes from a shared socket (unix, inherited) before
 * its loop turns; TCP addresses get a socket a worker instead.
 */
#define ACCEPT_SHARE	1

static pid_t			worker_pids[MAX_WORKERS];
/* The CGI engine (or NULL), whose totals each worker takes its share of. */
static struct cgi		*worker_cgi;
static int			 worker_total;
static int			nworkers;
static volatile sig_atomic_t	parent_stop;	/* SIGTERM or SIGINT came */

/*
 * Raises the soft descriptor limit to the hard one (as Go's runtime does
 * since 1.19: the soft 1024 is for select(), which evfcgid uses only when
 * asked), then makes the default --max-conns what the budget admits: the
 * --max-queued / --share-floor slow readers that get a share each hold a
 * connection (behind nginx with buffering off, one per request in
 * flight).  Fewer when the descriptors are short (past a reserve for
 * listeners, logs and --cgi's pipes): logged once, with the numbers.  An
 * explicit --max-conns stays, and a limit short of it is logged.
 */
static void
nofile_conns(struct config *cfg)
{
	struct rlimit	 rl;
	rlim_t		 keep = 64, room, was;
	size_t		 floor = cfg->lim.share_floor > 0 ?
	    cfg->lim.share_floor : cfg->lim.high_water;
	size_t		 admits = cfg->lim.max_queued / floor;

	if (cfg->cgi_on)
		keep += 4 * (rlim_t)cfg->cgi.c_max;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			rl.rlim_cur = was;
	}
	/* A tiny limit (a test's): half of it. */
	room = rl.rlim_cur > 2 * keep ? rl.rlim_cur - keep : rl.rlim_cur / 2;
	if (room < 1)
		room = 1;
	if (admits < 1)
		admits = 1;
	if (!options_given("max-conns")) {
		cfg->lim.max_conns = (rlim_t)admits < room ? admits :
		    (size_t)room;
		if ((rlim_t)admits > room)
			log_warn("descriptors: RLIMIT_NOFILE %llu (soft %llu, "
			    "hard %llu) allows %zu connections, fewer than "
			    "the %zu slow readers --max-queued / --share-floor "
			    "admit: --max-conns %zu (raise the hard limit: "
			    "LimitNOFILE)", (unsigned long long)rl.rlim_cur,
			    (unsigned long long)was,
			    (unsigned long long)rl.rlim_max, cfg->lim.max_conns,
			    admits, cfg->lim.max_conns);
	} else if ((rlim_t)cfg->lim.max_conns > room)
		log_warn("only %llu file descriptors for --max-conns %zu: "
		    "accept will back off at the limit",
		    (unsigned long long)rl.rlim_cur, cfg->lim.max_conns);
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
 * The loop, the server, the routes, the allowed peers and the listeners
 * that cfg asks for.  Returns the server, or exits with a message (1, or
 * 2 for usage).
 */
static struct evfcgi_server *
setup(const struct config *cfg, const struct ids *ids,
    struct event_base **basep, struct cgi **cgp)
{
	struct evfcgi_server	*srv;
	char			 err[256];

	if ((*basep = base_new(cfg->backend)) == NULL)
		fatal("cannot create the event loop");
	log_info("event loop on %s", event_base_get_method(*basep));
	if ((srv = evfcgi_server_new(*basep, &cfg->lim)) == NULL)
		fatal("inconsistent limits");
	*cgp = NULL;
	if (cfg->cgi_on) {
		/* CGI mode: every request runs a program, no demo routes. */
		if ((*cgp = cgi_new(srv, *basep, &cfg->cgi, err,
		    sizeof(err))) == NULL) {
			fprintf(stderr, "evfcgid: %s\n", err);
			exit(1);
		}
		log_info("CGI programs under %s, %zu at once, time limit %d s",
		    cfg->cgi.c_root != NULL ? cfg->cgi.c_root : "/",
		    cfg->cgi.c_max, cfg->cgi.c_timeout);
	} else if (app_register(srv, &cfg->app) == -1 ||
	    status_register(srv, cfg->app.max_size) == -1)
		fatal("out of memory");
	if (cfg->allow != NULL) {
		if (server_allow(srv, cfg->allow, err, sizeof(err)) == -1) {
			fprintf(stderr, "evfcgid: --allow: %s\n", err);
			exit(2);
		}
		log_info("TCP peers allowed: %s", cfg->allow);
	}
	if (cfg->workers > 1)
		server_listen_groups(srv, cfg->workers);
	setup_listeners(srv, cfg, ids);
	return srv;
}

/*
 * The --listen addresses (unix sockets given their owner), the sockets
 * systemd passed, or else fd 0.  Exits with a message when one fails.
 */
static void
setup_listeners(struct evfcgi_server *srv, const struct config *cfg,
    const struct ids *ids)
{
	char	 err[256], names[256];
	size_t	 i, tcp = 0;
	int	 n;

	server_socket_owner(srv, ids->id_sock_uid, ids->id_sock_gid);
	for (i = 0; i < cfg->nlisten; i++) {
		if (evfcgi_listen(srv, cfg->listen[i], (int)cfg->mode, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "evfcgid: %s: %s\n",
			    cfg->listen_who[i] != NULL ? cfg->listen_who[i] :
			    "--listen", err);
			exit(1);
		}
		tcp += strncmp(cfg->listen[i], "unix:", 5) != 0;
	}
	if ((n = listen_activated(LISTEN_FDS_START, names, sizeof(names), err,
	    sizeof(err))) == -1) {
		fprintf(stderr, "evfcgid: socket activation: %s\n", err);
		exit(1);
	}
	if (n > 0)
		log_info("%d sockets from systemd%s%s", n,
		    names[0] != '\0' ? ", named " : "", names);
	for (i = 0; i < (size_t)n; i++) {
		if (evfcgi_listen_fd(srv, LISTEN_FDS_START + (int)i) == -1)
			fatal("cannot serve socket %zu from systemd",
			    LISTEN_FDS_START + i);
		tcp += !fd_is_unix(LISTEN_FDS_START + (int)i);
	}
	if (cfg->nlisten == 0 && n == 0 &&
	    evfcgi_listen_fd(srv, STDIN_FILENO) == -1) {
		fprintf(stderr, "evfcgid: no --listen given, no socket from "
		    "systemd (LISTEN_FDS) and fd 0 is not a listening "
		    "socket\nTry 'evfcgid --help'.\n");
		exit(2);
	}
	if (cfg->nlisten == 0 && n == 0)
		tcp += !fd_is_unix(STDIN_FILENO);
	if (cfg->cgi_on && cfg->allow == NULL && tcp > 0)
		log_warn("--cgi on a TCP socket without --allow: any peer that "
		    "reaches it runs the programs under --cgi-root; give "
		    "--allow ADDR or listen on a unix socket");
}

/*
 * Resolves every user and group named into ids, before anything is
 * bound: the one place where a name is looked up.  A name that does not
 * exist is a bad value: exits 2 with the option named.
 */
static void
resolve_ids(const struct config *cfg, struct ids *ids)
{
	char		 err[256];
	const char	*opt = NULL;
	gid_t		 gid;

	ids->id_uid = ids->id_sock_uid = (uid_t)-1;
	ids->id_gid = ids->id_sock_gid = (gid_t)-1;
	if (cfg->user != NULL && privs_user(cfg->user, &ids->id_uid,
	    &ids->id_gid, err, sizeof(err)) == -1)
		opt = "user";
	else if (cfg->group != NULL && privs_group(cfg->group, &ids->id_gid,
	    err, sizeof(err)) == -1)
		opt = "group";
	else if (cfg->socket_owner != NULL && privs_user(cfg->socket_owner,
	    &ids->id_sock_uid, &gid, err, sizeof(err)) == -1)
		opt = "socket-owner";
	else if (cfg->socket_group != NULL && privs_group(cfg->socket_group,
	    &ids->id_sock_gid, err, sizeof(err)) == -1)
		opt = "socket-group";
	if (opt != NULL) {
		fprintf(stderr, "evfcgid: %s %s\n", options_who(opt), err);
		exit(2);
	}
}

/* Whether the socket fd is a unix one (else TCP, for the --cgi warning). */
static int
fd_is_unix(int fd)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);

	return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 &&
	    ss.ss_family == AF_UNIX;
}

/*
 * With --user, root (the listeners bound) becomes that user and --group
 * for good.  Exits with a message when it cannot.
 */
static void
drop_root(const struct config *cfg, const struct ids *ids)
{
	char	 err[256];
	uid_t	 uid = ids->id_uid;
	gid_t	 gid = ids->id_gid;

	if (cfg->user == NULL)
		return;
	/* Already that user: nothing to give up. */
	if (geteuid() != 0 && getuid() == uid && geteuid() == uid &&
	    getgid() == gid && getegid() == gid)
		return;
	if (privs_drop(uid, gid, err, sizeof(err)) == -1) {
		fprintf(stderr, "evfcgid: --user %s: %s\n", cfg->user, err);
		exit(1);
	}
	log_info("running as %s (uid %u, gid %u)", cfg->user, (unsigned)uid,
	    (unsigned)gid);
}

int
main(int argc, char **argv)
{
	struct config		 cfg;
	struct evfcgi_server	*srv;
	struct event_base	*base;
	struct cgi		*cg;
	struct ids		 ids;
	char			 err[256];
	int			 rc;

	if ((rc = options_parse(argc, argv, &cfg)) != OPTIONS_GO_ON)
		return rc;
	if (log_init("evfcgid", cfg.level, cfg.use_syslog,
	    cfg.log_file) == -1) {
		fprintf(stderr, "evfcgid: %s %s: %s\n",
		    options_who("log-file"), cfg.log_file, log_file_error());
		return 1;
	}
	if (cfg.user == NULL && geteuid() == 0 && !cfg.allow_root) {
		fprintf(stderr, "evfcgid: refusing to run as root: give --user "
		    "USER (root is given up after binding) or --allow-root\n");
		return 2;
	}
	resolve_ids(&cfg, &ids);
	/* Not even its own user may read its memory or ptrace it. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (ids.id_uid == 0)
		log_warn("%s %s is uid 0 (--allow-root): running as root",
		    options_who("user"), cfg.user);
	/* Given up before any program runs; nothing to give up to here. */
	if (cfg.cgi_on && (cfg.cgi.c_uid == 0 || (cfg.cgi.c_uid ==
	    (uid_t)-1 && geteuid() == 0)))
		log_warn("--cgi as root without --user, or as uid 0: every "
		    "program runs as "
		    "uid 0 with all capabilities; give --user (root is given "
		    "up after binding)");
	nofile_conns(&cfg);
	select_limits(&cfg);
	/* A write to a peer that has gone must not end the daemon. */
	signal(SIGPIPE, SIG_IGN);
	/*
	 * From the bind on, a peer may connect and a service manager may
	 * stop us: a SIGTERM before the loop runs is kept (parent_stop) and
	 * acted on once it does, not the default's death (exit 143).
	 */
	startup_signals();
	srv = setup(&cfg, &ids, &base, &cg);
	drop_root(&cfg, &ids);
	/* Opened as the user it runs as, who reopens it after SIGHUP. */
	if (cfg.access_log != NULL && server_access_log(srv, cfg.access_log,
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "evfcgid: %s %s\n", options_who("access-log"),
		    err);
		return 1;
	}
	rc = 0;
	if (cfg.workers > 1) {
		server_accept_share(srv, ACCEPT_SHARE);
		worker_cgi = cg;
		worker_total = cfg.workers;
		rc = run_workers(srv, base, cfg.workers);
	} else {
		if (evfcgi_handle_signals(srv) == -1)
			fatal("the event loop failed");
		if (parent_stop)
			evfcgi_drain(srv);
		if (evfcgi_run(srv) == -1)
			fatal("the event loop failed");
	}
	/* The requests end first: their programs are told to stop. */
	evfcgi_server_free(srv);
	app_release();
	cgi_free(cg);
	event_base_free(base);
	return rc;
}

/*
 * The parent's handlers, from start-up on: until the loop runs SIGTERM and
 * SIGINT are kept (parent_stop) and SIGHUP waits; with --workers they
 * stay, and pass every signal on (forward_signal()).
 */
static void
startup_signals(void)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Parent's handler: passes the signal on to every worker at once. */
static void
forward_signal(int sig)
{
	int	 i;

	/* Once set, no later signal (a SIGHUP) takes the stop back. */
	if (sig == SIGTERM || sig == SIGINT)
		parent_stop = 1;
	for (i = 0; i < nworkers; i++)
		if (worker_pids[i] > 0)
			kill(worker_pids[i], sig);
}

/*
 * Forks worker slot (from 0) on the shared listeners, running its own
 * loop.  Called with the parent's signals blocked; old is the mask the
 * worker runs with.  Returns its pid.
 */
static pid_t
spawn_worker(struct evfcgi_server *srv, struct event_base *base,
    const sigset_t *old, int slot)
{
	char	 n[16];
	pid_t	 pid;

	if ((pid = fork()) == -1)
		fatal("fork: %s", strerror(errno));
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* Which worker this is, for /status (a Prometheus label). */
		snprintf(n, sizeof(n), "%d", slot + 1);
		(void)setenv("EVFCGID_WORKER", n, 1);
		if (event_reinit(base) == -1 ||
		    evfcgi_handle_signals(srv) == -1)
			fatal("worker: cannot set up the loop");
		server_worker_slot(srv, slot);
		cgi_share(worker_cgi, slot, worker_total);
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
	sigset_t		 sigs, old;
	time_t			 started[MAX_WORKERS];
	pid_t			 pid;
	int			 i, alive = 0, status, rc = 0, stopping = 0;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	/* forward_signal() is the handler since start-up (main). */
	sigprocmask(SIG_BLOCK, &sigs, &old);
	for (nworkers = 0; nworkers < n; nworkers++, alive++) {
		worker_pids[nworkers] = spawn_worker(srv, base, &old,
		    nworkers);
		started[nworkers] = time(NULL);
	}
	/* A stop that came before the workers did: they hear of it now. */
	if (parent_stop)
		for (i = 0; i < nworkers; i++)
			kill(worker_pids[i], SIGTERM);
	sigprocmask(SIG_SETMASK, &old, NULL);
	log_info("%d workers started", n);
	while (alive > 0) {
		if (!stopping && parent_stop) {
			/*
			 * The workers drain, and take what waits in the accept
			 * queue: the parent only lets go of its copies of the
			 * listeners (its loop never runs: what it accepted
			 * would be reset, 0 of 5 answered).
			 */
			stopping = 1;
			server_close_listeners(srv);
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
			if (stopping || parent_stop)
				rc = 1;
		}
		worker_pids[i] = 0;
		if (stopping || parent_stop) {
			alive--;
			continue;
		}
		/* A worker that dies at once again is not restarted in a loop. */
		if (time(NULL) - started[i] < 1)
			sleep(1);
		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (parent_stop)
			alive--;
		else {
			worker_pids[i] = spawn_worker(srv, base, &old, i);
			started[i] = time(NULL);
			log_warn("worker %d replaced by %d", (int)pid,
			    (int)worker_pids[i]);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	return rc;
}
