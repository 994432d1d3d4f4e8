/*
 * cgi_child.c: the CGI engine's processes: one record per child until it
 * is reaped (its job may have ended before), its stderr read, its process
 * group ended (SIGTERM, SIGKILL after the grace; a grace first when its
 * job is done with it but it still runs), and reaping on SIGCHLD, which
 * ends what it left in its group and frees its slot for who waits.
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

#include "cgi_job.h"
#include "evfcgi.h"
#include "log.h"

static void	child_killcb(evutil_socket_t, short, void *);
static void	child_pacecb(evutil_socket_t, short, void *);
static void	cgi_reapcb(evutil_socket_t, short, void *);

/*
 * Makes the loop reap children, before the first is forked: a SIGCHLD
 * that came before the handler would be lost (its default is to drop it)
 * and the child left a zombie.  Returns 0, or -1.
 */
int
cgi_sigchld_on(struct cgi *cg)
{
	if (cg->cg_sigchld != NULL)
		return 0;
	if ((cg->cg_sigchld = evsignal_new(cg->cg_base, SIGCHLD, cgi_reapcb,
	    cg)) == NULL)
		return -1;
	if (evsignal_add(cg->cg_sigchld, NULL) == -1) {
		event_free(cg->cg_sigchld);
		cg->cg_sigchld = NULL;
		return -1;
	}
	return 0;
}


/* A child record for p, run for job, its stderr read; or NULL. */
struct cgi_child *
cgi_child_new(struct cgi *cg, struct cgi_job *job, const struct cgi_proc *p)
{
	struct cgi_child	*ch;

	if ((ch = calloc(1, sizeof(*ch))) == NULL)
		return NULL;
	ch->ch_cg = cg;
	ch->ch_job = job;
	ch->ch_pid = p->p_pid;
	ch->ch_err = p->p_err;
	if ((ch->ch_name = strdup(job->j_name)) == NULL ||
	    (ch->ch_errev = event_new(cg->cg_base, p->p_err,
	    EV_READ | EV_PERSIST, cgi_io_errcb, ch)) == NULL ||
	    (ch->ch_killev = evtimer_new(cg->cg_base, child_killcb,
	    ch)) == NULL ||
	    (ch->ch_errpace = evtimer_new(cg->cg_base, child_pacecb,
	    ch)) == NULL) {
		if (ch->ch_errev != NULL)
			event_free(ch->ch_errev);
		if (ch->ch_killev != NULL)
			event_free(ch->ch_killev);
		free(ch->ch_name);
		free(ch);
		return NULL;
	}
	event_add(ch->ch_errev, NULL);
	TAILQ_INSERT_TAIL(&cg->cg_children, ch, ch_entry);
	cg->cg_nchildren++;
	/* If it has ended already, its SIGCHLD waits for the loop. */
	return ch;
}

void
cgi_child_signal(pid_t pid, int sig)
{
	if (kill(-pid, sig) == -1 && errno == ESRCH)
		(void)kill(pid, sig);
}

/* Ends ch's process group: SIGTERM now, SIGKILL after the grace. */
void
cgi_child_kill(struct cgi_child *ch)
{
	struct timeval	 tv = { ch->ch_cg->cg_cfg.c_grace, 0 };

	if (ch->ch_killing)
		return;
	ch->ch_killing = 1;
	log_info("cgi %s[%d]: ending it (SIGTERM to its process group)",
	    ch->ch_name, (int)ch->ch_pid);
	cgi_child_signal(ch->ch_pid, SIGTERM);
	evtimer_add(ch->ch_killev, &tv);
}

/*
 * job is done with ch (its output ended, a local redirect): a program
 * that still runs after the grace, or at its job's time limit if that
 * comes first, is ended; so it holds its slot no longer than that and
 * --cgi-kill-grace more.
 */
void
cgi_child_letgo(struct cgi_child *ch, const struct cgi_job *job)
{
	struct timeval	 tv = { ch->ch_cg->cg_cfg.c_grace, 0 };
	struct timespec	 now, left;

	ch->ch_job = NULL;
	if (ch->ch_killing)
		return;
	if (job != NULL && ch->ch_cg->cg_cfg.c_timeout > 0) {
		left = job->j_left;
		if (!job->j_clock_paused) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = job->j_deadline.tv_sec - now.tv_sec;
			left.tv_nsec = job->j_deadline.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
		}
		if (left.tv_sec < 0)
			left.tv_sec = left.tv_nsec = 0;
		if (left.tv_sec < tv.tv_sec) {
			tv.tv_sec = left.tv_sec;
			tv.tv_usec = left.tv_nsec / 1000;
		}
	}
	evtimer_add(ch->ch_killev, &tv);
}

/* The grace ran out: after its request (SIGTERM), or after SIGTERM. */
static void
child_killcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_child	*ch = arg;

	(void)fd;
	(void)what;
	if (!ch->ch_killing) {
		log_info("cgi %s[%d]: still running after its request was "
		    "done (--cgi-kill-grace, --cgi-timeout)", ch->ch_name,
		    (int)ch->ch_pid);
		cgi_child_kill(ch);
		return;
	}
	log_warn("cgi %s[%d]: still running %d s after SIGTERM: SIGKILL",
	    ch->ch_name, (int)ch->ch_pid, ch->ch_cg->cg_cfg.c_grace);
	cgi_child_signal(ch->ch_pid, SIGKILL);
}

/* The pause of a stderr past CGI_ERR_MAX is over: read it again. */
static void
child_pacecb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_child	*ch = arg;

	(void)fd;
	(void)what;
	if (ch->ch_err >= 0)
		event_add(ch->ch_errev, NULL);
}

/* Forgets ch (reaped, or at exit); its stderr is read no more. */
void
cgi_child_free(struct cgi_child *ch)
{
	struct cgi	*cg = ch->ch_cg;

	TAILQ_REMOVE(&cg->cg_children, ch, ch_entry);
	cg->cg_nchildren--;
	if (ch->ch_err >= 0) {
		event_free(ch->ch_errev);
		close(ch->ch_err);
	}
	event_free(ch->ch_killev);
	event_free(ch->ch_errpace);
	free(ch->ch_name);
	free(ch);
}

/* SIGCHLD: reaps every child that ended; their slots go to who waits. */
static void
cgi_reapcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi		*cg = arg;
	struct cgi_child	*ch;
	pid_t			 pid;
	int			 st;

	(void)fd;
	(void)what;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		TAILQ_FOREACH(ch, &cg->cg_children, ch_entry)
			if (ch->ch_pid == pid)
				break;
		if (ch == NULL)
			continue;
		cgi_io_stderr(ch, 1);
		if (WIFSIGNALED(st))
			log_msg(ch->ch_killing ? LOG_INFO : LOG_WARNING,
			    "cgi %s[%d]: ended by signal %d", ch->ch_name,
			    (int)pid, WTERMSIG(st));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			log_warn("cgi %s[%d]: exited with status %d",
			    ch->ch_name, (int)pid, WEXITSTATUS(st));
		else
			log_debug("cgi %s[%d]: exited", ch->ch_name, (int)pid);
		/* What it left in its group (sleep 1000 &) follows it. */
		if (kill(-pid, SIGKILL) == 0 && !ch->ch_killing)
			log_info("cgi %s[%d]: what it left running in its "
			    "process group is ended", ch->ch_name, (int)pid);
		if (ch->ch_job != NULL)
			ch->ch_job->j_child = NULL;
		cgi_child_free(ch);
	}
	cgi_run_queue(cg);
}
