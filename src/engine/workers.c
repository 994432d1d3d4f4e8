/*
 * workers.c: one library application in n processes on the listeners it
 * bound (evfcgi_run_workers()), as evfcgid --workers runs the daemon: a
 * parent that forks the workers, passes SIGTERM, SIGINT and SIGHUP on to
 * them, replaces one that dies, and returns once they have all drained.
 * It changes signal dispositions only because the application asked, and
 * puts them back before it returns; it never exits: a worker returns too.
 */
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "evfcgi.h"
#include "log.h"
#include "server_ops.h"

#define WORKERS_MAX	64

static volatile sig_atomic_t	 wk_sig;
static pid_t			 wk_pids[WORKERS_MAX];
static int			 wk_n;

static void	wk_forward(int);
static pid_t	wk_spawn(struct evfcgi_server *, const sigset_t *, int *);

/* The parent's handler: the signal goes on to every worker at once. */
static void
wk_forward(int sig)
{
	int	 i, saved = errno;

	wk_sig = sig;
	for (i = 0; i < wk_n; i++)
		if (wk_pids[i] > 0)
			kill(wk_pids[i], sig);
	errno = saved;
}

/*
 * Forks a worker (with the parent's signals blocked; old is the mask it
 * runs with).  In the parent returns its pid (-1: fork failed); in the
 * worker runs the loop, sets *rc to what evfcgi_run() returned, and
 * returns 0.
 */
static pid_t
wk_spawn(struct evfcgi_server *srv, const sigset_t *old, int *rc)
{
	pid_t	 pid;

	if ((pid = fork()) != 0)
		return pid;
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	wk_n = 0;
	if (event_reinit(evfcgi_server_base(srv)) == -1 ||
	    evfcgi_handle_signals(srv) == -1)
		*rc = -1;
	else {
		/* A burst on a shared socket is not all one worker's. */
		server_accept_share(srv, 1);
		/* Unblocked only now: a signal meanwhile waits for the loop. */
		sigprocmask(SIG_SETMASK, old, NULL);
		*rc = evfcgi_run(srv);
	}
	return 0;
}

/*
 * The parent's SIGTERM, SIGINT and SIGHUP: on, wk_forward() for each and
 * their dispositions kept in osa; off, osa's put back (the host's own).
 */
static void
wk_signals(struct sigaction osa[3], int on)
{
	static const int	 sig[3] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction	 sa;
	int			 i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wk_forward;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sig[i], on ? &sa : &osa[i], on ? &osa[i] : NULL);
}

int
evfcgi_run_workers(struct evfcgi_server *srv, int n)
{
	struct sigaction	 osa[3];
	sigset_t		 sigs, old;
	time_t			 started[WORKERS_MAX];
	pid_t			 pid;
	int			 i, alive = 0, status, rc = 0, wrc = 0;

	if (n < 1 || n > WORKERS_MAX || wk_n != 0) {
		errno = EINVAL;
		return -1;
	}
	if (n == 1)
		return evfcgi_handle_signals(srv) == -1 ? -1 : evfcgi_run(srv);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	wk_signals(osa, 1);
	wk_sig = 0;
	for (wk_n = 0; wk_n < n; wk_n++, alive++) {
		if ((wk_pids[wk_n] = wk_spawn(srv, &old, &wrc)) == 0)
			return wrc;		/* a worker, done */
		if (wk_pids[wk_n] == -1) {
			log_warn("fork: %s", strerror(errno));
			rc = -1;
			wk_forward(SIGTERM);
			break;
		}
		started[wk_n] = time(NULL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	log_info("%d workers started", alive);
	while (alive > 0) {
		if ((pid = waitpid(-1, &status, 0)) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < wk_n && wk_pids[i] != pid; i++)
			;
		if (i == wk_n)
			continue;
		wk_pids[i] = 0;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			log_warn("worker %d ended abnormally (status %d)",
			    (int)pid, status);
			if (wk_sig == SIGTERM || wk_sig == SIGINT)
				rc = -1;
		}
		if (wk_sig == SIGTERM || wk_sig == SIGINT || rc == -1) {
			alive--;
			continue;
		}
		/* One that dies at once again is not restarted in a loop. */
		if (time(NULL) - started[i] < 1)
			sleep(1);
		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (wk_sig == SIGTERM || wk_sig == SIGINT)
			alive--;
		else if ((wk_pids[i] = wk_spawn(srv, &old, &wrc)) == 0)
			return wrc;
		else if (wk_pids[i] == -1) {
			wk_pids[i] = 0;
			alive--;
		} else {
			started[i] = time(NULL);
			log_warn("worker %d replaced by %d", (int)pid,
			    (int)wk_pids[i]);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	wk_signals(osa, 0);
	wk_n = 0;
	return rc;
}
