/*
 * cgi_child.c: the CGI engine's processes: one record per child until it
 * is reaped (its job may have ended before; cgi.c reaps), its process
 * group ended (SIGTERM, SIGKILL after the grace; a grace first when its
 * job is done with it but it still runs), and its stderr: logged line by
 * line, at most so many lines a second, and past CGI_ERR_MAX discarded at
 * a paced rate.  It calls nothing of the files above it.
 */
#include <sys/types.h>

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

#define IO_ERR_TURN	(CGI_ERR_PACE_BYTES / 16384) /* stderr reads a callback */
#define IO_ERR_LAST	64	/* and at most when its process has ended */

static void	child_killcb(evutil_socket_t, short, void *);
static void	child_pacecb(evutil_socket_t, short, void *);
static void	io_err_bytes(struct cgi_child *, const char *, size_t);
static void	io_err_take(struct cgi_child *, const char *, size_t);
static void	io_err_line(struct cgi_child *);
static void	io_err_summary(struct cgi_child *);


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
cgi_child_signal(struct cgi *cg, pid_t pid, int sig)
{
	if (cg->cg_reaper != NULL)
		reaper_kill(cg->cg_reaper, pid, sig);
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
	cgi_child_signal(ch->ch_cg, ch->ch_pid, SIGTERM);
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
	cgi_child_signal(ch->ch_cg, ch->ch_pid, SIGKILL);
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

char *
cgi_safe_str(const char *s)
{
	char	*c, *p;

	if ((c = strdup(s)) == NULL)
		return NULL;
	for (p = c; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

/* Logs the line gathered, within the rate; counts it otherwise. */
static void
io_err_line(struct cgi_child *ch)
{
	time_t	 now = time(NULL);

	if (ch->ch_linelen > 0 && ch->ch_line[ch->ch_linelen - 1] == '\r')
		ch->ch_linelen--;
	ch->ch_line[ch->ch_linelen] = '\0';
	if (now != ch->ch_sec) {
		io_err_summary(ch);
		ch->ch_sec = now;
		ch->ch_lines = 0;
	}
	if (ch->ch_lines < ch->ch_cg->cg_cfg.c_stderr_rate) {
		ch->ch_lines++;
		log_warn("cgi %s[%d]: %s%s", ch->ch_name, (int)ch->ch_pid,
		    ch->ch_line, ch->ch_cut ? " [cut]" : "");
	} else
		ch->ch_dropped++;
	ch->ch_linelen = 0;
	ch->ch_cut = 0;
}

/* Says how many lines the rate kept from the log, if any. */
static void
io_err_summary(struct cgi_child *ch)
{
	if (ch->ch_dropped == 0)
		return;
	log_warn("cgi %s[%d]: %lu more stderr lines not logged (over %d a "
	    "second)", ch->ch_name, (int)ch->ch_pid, ch->ch_dropped,
	    ch->ch_cg->cg_cfg.c_stderr_rate);
	ch->ch_dropped = 0;
}

/* Splits stderr bytes into lines (control characters made '?'). */
static void
io_err_bytes(struct cgi_child *ch, const char *p, size_t len)
{
	size_t		 i;
	unsigned char	 c;

	for (i = 0; i < len; i++) {
		c = (unsigned char)p[i];
		if (c == '\n') {
			io_err_line(ch);
			continue;
		}
		if (ch->ch_linelen >= CGI_LINE_MAX) {
			ch->ch_cut = 1;
			continue;
		}
		ch->ch_line[ch->ch_linelen++] = (c < 0x20 && c != '\t' &&
		    c != '\r') || c == 0x7f ? '?' : (char)c;
	}
}

/*
 * Takes len stderr bytes: parsed into lines up to CGI_ERR_MAX in all,
 * counted beyond (the first time, said).
 */
static void
io_err_take(struct cgi_child *ch, const char *p, size_t len)
{
	size_t	 take = CGI_ERR_MAX - ch->ch_errbytes;

	if (take > len)
		take = len;
	io_err_bytes(ch, p, take);
	ch->ch_errbytes += take;
	if (take == len)
		return;
	if (ch->ch_errgone == 0)
		log_warn("cgi %s[%d]: over %d bytes of stderr: the rest is "
		    "read and discarded", ch->ch_name, (int)ch->ch_pid,
		    CGI_ERR_MAX);
	ch->ch_errgone += len - take;
}

void
cgi_io_stderr(struct cgi_child *ch, int final)
{
	struct timeval	 tv = { 0, CGI_ERR_PACE_MS * 1000 };
	char		 buf[16384];
	ssize_t		 n = -1;
	size_t		 got = 0;
	int		 i;

	if (ch->ch_err < 0)
		return;
	for (i = 0; i < (final ? IO_ERR_LAST : IO_ERR_TURN); i++) {
		if ((n = read(ch->ch_err, buf, sizeof(buf))) <= 0)
			break;
		io_err_take(ch, buf, (size_t)n);
		got += (size_t)n;
	}
	/* Past the max, a flood is read at a pace: the loop has better to do. */
	if (!final && got > 0 && ch->ch_errgone > 0) {
		event_del(ch->ch_errev);
		evtimer_add(ch->ch_errpace, &tv);
		return;
	}
	if (n == -1 && errno == EINTR)
		return;
	if (!final && (n > 0 || (n == -1 && errno == EAGAIN)))
		return;
	/* Its end (or its process's): what is left is said now. */
	if (ch->ch_linelen > 0)
		io_err_line(ch);
	io_err_summary(ch);
	if (ch->ch_errgone > 0)
		log_warn("cgi %s[%d]: %llu bytes of stderr discarded (over "
		    "%d)", ch->ch_name, (int)ch->ch_pid, ch->ch_errgone,
		    CGI_ERR_MAX);
	event_free(ch->ch_errev);
	ch->ch_errev = NULL;
	close(ch->ch_err);
	ch->ch_err = -1;
}

void
cgi_io_errcb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	cgi_io_stderr(arg, 0);
}
