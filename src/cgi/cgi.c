/*
 * cgi.c: the CGI engine on the loop: a request becomes a job, which runs
 * its program when a child slot is free (else waits in a bounded queue,
 * else 503); the time limit, a client gone or the engine ending the
 * request end the program's process group (SIGTERM, then SIGKILL after a
 * grace); children are reaped on SIGCHLD.  The bytes: cgi_io.c.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "cgi_cgroup.h"
#include "cgi_job.h"
#include "evfcgi.h"
#include "log.h"

static void	cgi_handler(struct evfcgi_req *, void *);
static struct cgi_param *cgi_params(struct evfcgi_req *, size_t *);
static char	*cgi_script(struct evfcgi_req *);
static struct cgi_job *job_new(struct cgi *, struct evfcgi_req *, char *,
		    struct cgi_prog *);
static void	job_free(struct cgi_job *, int);
static void	job_spawn(struct cgi_job *);
static char	**job_env(struct cgi_job *);
static void	job_abortcb(struct evfcgi_req *, void *);
static void	job_timeoutcb(evutil_socket_t, short, void *);
static void	job_lifecb(evutil_socket_t, short, void *);
static void	job_writecb(evutil_socket_t, short, void *);
static void	cgi_reapcb(evutil_socket_t, short, void *);
static void	cgi_sigchldcb(evutil_socket_t, short, void *);
static int	cgi_reapers(struct cgi *, char *, size_t);
static void	cgi_reaper_lost(struct cgi *);

void
cgi_config_default(struct cgi_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->c_root = NULL;
	cfg->c_max = 64;
	cfg->c_queue = 256;
	cfg->c_timeout = 600;
	cfg->c_lifetime = 3600;
	cfg->c_write_timeout = 900;
	cfg->c_max_header = 65536;
	cfg->c_hold = 8 * 1024 * 1024;
	cfg->c_grace = 2;
	cfg->c_stderr_rate = 50;
	cfg->c_reapers = 1;
	cfg->c_uid = (uid_t)-1;
	cfg->c_gid = (gid_t)-1;
	cfg->c_nproc = 4096;
	cfg->c_pids = 512;
}

struct cgi *
cgi_new(struct evfcgi_server *srv, struct event_base *base,
    const struct cgi_config *cfg, char *err, size_t errlen)
{
	struct cgi	*cg;
	const char	*root = cfg->c_root;
	const char	*why;
	struct stat	 st;

	if (root == NULL) {
		snprintf(err, errlen, "no --cgi-root: the directory the "
		    "programs must be in has no default");
		return NULL;
	}
	if ((cg = calloc(1, sizeof(*cg))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	cg->cg_srv = srv;
	cg->cg_base = base;
	cg->cg_cfg = *cfg;
	TAILQ_INIT(&cg->cg_children);
	TAILQ_INIT(&cg->cg_queue);
	TAILQ_INIT(&cg->cg_holdq);
	why = NULL;
	if ((cg->cg_root = realpath(root, NULL)) == NULL ||
	    stat(cg->cg_root, &st) == -1)
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	/* Programs are opened beneath it. */
	else if ((cg->cg_rootfd = open(cg->cg_root, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		why = strerror(errno);
	if (why != NULL) {
		snprintf(err, errlen, "--cgi-root %s: %s", root, why);
		free(cg->cg_root);
		free(cg);
		return NULL;
	}
	cg->cg_rootlen = strlen(cg->cg_root);
	if (cg->cg_rootlen == 1)
		cg->cg_root[cg->cg_rootlen = 0] = '\0';
	/* Held output: a cap of its own, as big as the output's. */
	cg->cg_held_cap = evfcgi_get_limits(srv)->max_queued;
	if ((cg->cg_holdev = event_new(base, -1, 0, cgi_io_holdcb,
	    cg)) == NULL ||
	    evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX | EVFCGI_ROUTE_STREAM,
	    NULL, cgi_handler, cg) == -1) {
		snprintf(err, errlen, "out of memory");
		close(cg->cg_rootfd);
		if (cg->cg_holdev != NULL)
			event_free(cg->cg_holdev);
		free(cg->cg_root);
		free(cg);
		return NULL;
	}
	evfcgi_route_default(srv, cgi_handler, cg);
	if (cgi_reapers(cg, err, errlen) == -1) {
		cgi_free(cg);
		return NULL;
	}
	return cg;
}

/*
 * Forks the reapers (one per worker slot), before anything is bound and
 * while root may still be had: started as root, they keep it and each
 * program becomes its user, so that no program can signal its reaper,
 * and the reaper can make and remove the programs' cgroups where only
 * root may.  Without workers, this process takes the one.  Says once
 * whether programs get cgroups, and what a reaper could not set up.
 * Returns 0, or -1 with err.
 */
static int
cgi_reapers(struct cgi *cg, char *err, size_t errlen)
{
	struct reaper_conf	*rc = &cg->cg_rconf;
	struct reaper_ev	 hello;
	char			 why[1024];
	int			 i, n = cg->cg_cfg.c_reapers;

	if (n < 1)
		n = 1;
	if ((cg->cg_reapers = calloc((size_t)n, sizeof(*cg->cg_reapers))) ==
	    NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc->rc_uid = cg->cg_cfg.c_uid;
	rc->rc_gid = cg->cg_cfg.c_gid;
	rc->rc_apart = cg->cg_cfg.c_apart || (geteuid() == 0 &&
	    rc->rc_uid != (uid_t)-1 && rc->rc_uid != 0);
	rc->rc_grace = cg->cg_cfg.c_grace;
	rc->rc_nproc = (rlim_t)cg->cg_cfg.c_nproc;
	rc->rc_pids = cg->cg_cfg.c_pids;
	if (rc->rc_pids == 0)
		memset(&rc->rc_cg, 0, sizeof(rc->rc_cg));
	else if (cgroup_find(&rc->rc_cg, why, sizeof(why)) == -1)
		log_warn("cgi: no cgroup can be made for each program (%s): "
		    "--cgi-pids is not applied, a program's processes are "
		    "bounded by --cgi-nproc (RLIMIT_NPROC, per user) alone",
		    why);
	else
		log_info("cgi: each program runs in a cgroup of its own under "
		    "%s (cgroup v%d), pids.max %lu", rc->rc_cg.cgr_dir,
		    rc->rc_cg.cgr_v, rc->rc_pids);
	for (i = 0; i < n; i++) {
		rc->rc_slot = i;
		if (reaper_start(&cg->cg_reapers[i], rc, &hello) == -1) {
			snprintf(err, errlen, "cannot start the process that "
			    "parents the CGI programs: %s", strerror(errno));
			return -1;
		}
		cg->cg_nreapers++;
		if (i > 0)
			continue;
		if (hello.ev_status != 0)
			log_warn("cgi: PR_SET_CHILD_SUBREAPER: %s: what a "
			    "program leaves outside its process group (setsid, "
			    "a double fork) is not ended",
			    strerror(hello.ev_status));
		else if (!hello.ev_n)
			log_warn("cgi: no /proc/PID/task/PID/children (no /proc, "
			    "or a kernel without CONFIG_PROC_CHILDREN): what a "
			    "program leaves outside its process group (setsid, "
			    "a double fork) is not ended");
	}
	if (n == 1 && reaper_attach(&cg->cg_reapers[0]) == 0)
		cg->cg_reaper = &cg->cg_reapers[0];
	return 0;
}

void
cgi_share(struct cgi *cg, int slot, int n)
{
	struct cgi_config	*c;
	size_t			 k, i;

	if (cg == NULL || n <= 1 || slot < 0 || slot >= n)
		return;
	c = &cg->cg_cfg;
	k = (size_t)n;
	i = (size_t)slot;
	c->c_max = c->c_max / k + (i < c->c_max % k);
	c->c_queue = c->c_queue / k + (i < c->c_queue % k);
	/* Its own reaper; the others' ends are the other workers'. */
	for (k = 0; k < (size_t)cg->cg_nreapers; k++)
		if (k != i)
			reaper_close(&cg->cg_reapers[k]);
	if (i < (size_t)cg->cg_nreapers &&
	    reaper_attach(&cg->cg_reapers[i]) == 0)
		cg->cg_reaper = &cg->cg_reapers[i];
	log_debug("cgi: worker %d of %d: %zu programs at once, %zu waiting",
	    slot + 1, n, c->c_max, c->c_queue);
}

void
cgi_free(struct cgi *cg)
{
	struct cgi_child	*ch;
	struct cgi_job		*job;
	int			 i;

	if (cg == NULL)
		return;
	while ((job = TAILQ_FIRST(&cg->cg_queue)) != NULL)
		job_free(job, 0);
	while ((ch = TAILQ_FIRST(&cg->cg_children)) != NULL) {
		cgi_child_signal(cg, ch->ch_pid, ch->ch_killing ? SIGKILL :
		    SIGTERM);
		log_info("cgi %s[%d]: still running at exit: %s", ch->ch_name,
		    (int)ch->ch_pid, ch->ch_killing ? "SIGKILL" : "SIGTERM");
		if (ch->ch_job != NULL)
			ch->ch_job->j_child = NULL;
		cgi_child_free(ch);
	}
	if (cg->cg_sigchld != NULL)
		event_free(cg->cg_sigchld);
	if (cg->cg_reapev != NULL)
		event_free(cg->cg_reapev);
	/* At their last end, the reapers end what runs on and exit. */
	for (i = 0; i < cg->cg_nreapers; i++)
		reaper_close(&cg->cg_reapers[i]);
	free(cg->cg_reapers);
	close(cg->cg_rootfd);
	if (cg->cg_holdev != NULL)
		event_free(cg->cg_holdev);
	free(cg->cg_root);
	free(cg);
}

/*
 * The program a request names: SCRIPT_FILENAME (fcgiwrap's convention),
 * else DOCUMENT_ROOT and SCRIPT_NAME, each the last of its name.
 * Returns it (malloc'd), or NULL.
 */
static char *
cgi_script(struct evfcgi_req *req)
{
	const char	*f, *root, *name;
	char		*s;

	if ((f = evfcgi_param(req, "SCRIPT_FILENAME")) != NULL && *f != '\0')
		return strdup(f);
	root = evfcgi_param(req, "DOCUMENT_ROOT");
	name = evfcgi_param(req, "SCRIPT_NAME");
	if (root == NULL || name == NULL || *root == '\0' || *name == '\0')
		return NULL;
	if (asprintf(&s, "%s%s", root, name) == -1)
		return NULL;
	return s;
}

/* req's params in order (free() the array; n set), or NULL. */
static struct cgi_param *
cgi_params(struct evfcgi_req *req, size_t *n)
{
	struct cgi_param	*pv;
	const char		*name, *value;
	size_t			 i = 0;

	*n = 0;
	while (evfcgi_param_next(req, &i, &name, &value))
		(*n)++;
	if ((pv = calloc(*n + 1, sizeof(*pv))) == NULL)
		return NULL;
	i = *n = 0;
	while (evfcgi_param_next(req, &i, &name, &value)) {
		pv[*n].p_name = name;
		pv[(*n)++].p_value = value;
	}
	return pv;
}

/* The route: every request runs a program. */
static void
cgi_handler(struct evfcgi_req *req, void *arg)
{
	struct cgi		*cg = arg;
	struct cgi_job		*job;
	struct cgi_param	*pv;
	struct cgi_prog		 prog;
	const char		*why;
	char			*argv0, *name;
	size_t			 n;
	int			 status;

	if ((pv = cgi_params(req, &n)) == NULL) {
		log_err("cgi: out of memory");
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	/*
	 * A name given twice (a location's line after `include
	 * fastcgi_params`): the last is what is checked and what the
	 * program sees, as a later line intends and as PHP-FPM reads it.
	 */
	if ((why = cgi_param_dup(pv, n)) != NULL)
		log_debug("cgi: %s given more than once: the last is used",
		    why);
	free(pv);
	if ((argv0 = cgi_script(req)) == NULL) {
		log_warn("cgi: request for %s names no program (no "
		    "SCRIPT_FILENAME, nor DOCUMENT_ROOT and SCRIPT_NAME)",
		    evfcgi_path(req));
		evfcgi_respond_error(req, 500, "no program named");
		return;
	}
	if ((status = cgi_open(cg->cg_rootfd, cg->cg_root, cg->cg_rootlen,
	    argv0, &prog, &why)) != 0) {
		name = cgi_safe_str(argv0);
		log_warn("cgi %s: refused (%d): %s", name != NULL ? name :
		    "?", status, why);
		free(name);
		free(argv0);
		evfcgi_respond_error(req, status, NULL);
		return;
	}
	if ((job = job_new(cg, req, argv0, &prog)) == NULL) {
		log_err("cgi: out of memory");
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	evfcgi_on_abort(req, job_abortcb, job);
	if (evfcgi_on_body(req, cgi_io_bodycb, job) == -1) {
		/* Not streamed (the default route): the body is whole. */
		job->j_body = evfcgi_body(req);
		job->j_body_done = 1;
	}
	cgi_job_start(job, 0);
}

/* A job for req running argv0 (opened: prog), both taken; or NULL. */
static struct cgi_job *
job_new(struct cgi *cg, struct evfcgi_req *req, char *argv0,
    struct cgi_prog *prog)
{
	struct cgi_job	*job;
	struct timeval	 tv = { cg->cg_cfg.c_timeout, 0 };
	struct timeval	 life = { cg->cg_cfg.c_lifetime, 0 };

	if ((job = calloc(1, sizeof(*job))) == NULL ||
	    (job->j_name = cgi_safe_str(argv0)) == NULL ||
	    (job->j_head = evbuffer_new()) == NULL ||
	    (job->j_timer = evtimer_new(cg->cg_base, job_timeoutcb,
	    job)) == NULL ||
	    (job->j_life = evtimer_new(cg->cg_base, job_lifecb,
	    job)) == NULL ||
	    (job->j_wtimer = evtimer_new(cg->cg_base, job_writecb,
	    job)) == NULL) {
		if (job != NULL) {
			if (job->j_timer != NULL)
				event_free(job->j_timer);
			if (job->j_life != NULL)
				event_free(job->j_life);
			free(job->j_name);
			if (job->j_head != NULL)
				evbuffer_free(job->j_head);
			free(job);
		}
		free(argv0);
		cgi_prog_close(prog);
		return NULL;
	}
	job->j_cg = cg;
	job->j_req = req;
	job->j_argv0 = argv0;
	job->j_prog = *prog;
	job->j_in = job->j_out = -1;
	if (cg->cg_cfg.c_timeout > 0) {
		clock_gettime(CLOCK_MONOTONIC, &job->j_deadline);
		job->j_deadline.tv_sec += cg->cg_cfg.c_timeout;
		evtimer_add(job->j_timer, &tv);
	}
	/* Never paused: a slow client holds a slot at most this long. */
	if (cg->cg_cfg.c_lifetime > 0)
		evtimer_add(job->j_life, &life);
	return job;
}

void
cgi_job_clock_pause(struct cgi_job *job)
{
	struct timeval	 wt = { job->j_cg->cg_cfg.c_write_timeout, 0 };
	struct timespec	 now;

	/* From now on, the client must take some of it in time. */
	if (wt.tv_sec > 0 && !evtimer_pending(job->j_wtimer, NULL))
		evtimer_add(job->j_wtimer, &wt);
	if (job->j_cg->cg_cfg.c_timeout <= 0 || job->j_clock_paused)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	job->j_left.tv_sec = job->j_deadline.tv_sec - now.tv_sec;
	job->j_left.tv_nsec = job->j_deadline.tv_nsec - now.tv_nsec;
	if (job->j_left.tv_nsec < 0) {
		job->j_left.tv_sec--;
		job->j_left.tv_nsec += 1000000000L;
	}
	/* Past it already: the timer fires on this turn anyway. */
	if (job->j_left.tv_sec < 0)
		return;
	evtimer_del(job->j_timer);
	job->j_clock_paused = 1;
}

void
cgi_job_clock_resume(struct cgi_job *job)
{
	struct timespec	 now;
	struct timeval	 tv;

	/* The connection took some: the client makes progress. */
	evtimer_del(job->j_wtimer);
	if (!job->j_clock_paused)
		return;
	job->j_clock_paused = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	job->j_deadline.tv_sec = now.tv_sec + job->j_left.tv_sec;
	job->j_deadline.tv_nsec = now.tv_nsec + job->j_left.tv_nsec;
	if (job->j_deadline.tv_nsec >= 1000000000L) {
		job->j_deadline.tv_sec++;
		job->j_deadline.tv_nsec -= 1000000000L;
	}
	tv.tv_sec = job->j_left.tv_sec;
	tv.tv_usec = job->j_left.tv_nsec / 1000;
	evtimer_add(job->j_timer, &tv);
}

/*
 * Frees job (its request is not touched: answered or gone); with kill,
 * its program is ended, else let go to finish on its own.
 */
static void
job_free(struct cgi_job *job, int kill)
{
	struct cgi	*cg = job->j_cg;

	if (job->j_queued) {
		TAILQ_REMOVE(&cg->cg_queue, job, j_entry);
		cg->cg_nqueued--;
	}
	if (job->j_child != NULL) {
		if (kill)
			cgi_child_kill(job->j_child);
		job->j_child->ch_job = NULL;
	}
	cgi_io_close(job);
	event_free(job->j_timer);
	event_free(job->j_life);
	event_free(job->j_wtimer);
	evbuffer_free(job->j_head);
	free(job->j_argv0);
	cgi_prog_close(&job->j_prog);
	free(job->j_name);
	free(job->j_overmem);
	free(job);
}

void
cgi_job_fail(struct cgi_job *job, int status, const char *why)
{
	struct evfcgi_req	*req = job->j_req;

	log_warn("cgi %s: %s: %s", job->j_name, why, job->j_headed ?
	    "the response is cut" : evfcgi_status_text(status));
	job->j_req = NULL;
	evfcgi_on_abort(req, NULL, NULL);
	job_free(job, 1);
	if (req != NULL)
		evfcgi_respond_error(req, status, NULL);
}

void
cgi_job_done(struct cgi_job *job)
{
	struct evfcgi_req	*req = job->j_req;

	evfcgi_on_abort(req, NULL, NULL);
	job_free(job, 0);
	evfcgi_finish(req);
}

/* The request died (client gone, ABORT_REQUEST, drain deadline...). */
static void
job_abortcb(struct evfcgi_req *req, void *arg)
{
	struct cgi_job	*job = arg;

	(void)req;
	log_info("cgi %s: the request ended before the program%s",
	    job->j_name, job->j_child != NULL ? ": ending it" : "");
	job->j_req = NULL;
	job_free(job, 1);
}

/* The time limit. */
static void
job_timeoutcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_job	*job = arg;
	char		 why[64];

	(void)fd;
	(void)what;
	snprintf(why, sizeof(why), "time limit of %d s reached%s",
	    job->j_cg->cg_cfg.c_timeout, job->j_queued ? " waiting" : "");
	cgi_job_fail(job, 504, why);
}

/* The wall-clock limit, client's time included. */
static void
job_lifecb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_job	*job = arg;
	char		 why[80];

	(void)fd;
	(void)what;
	snprintf(why, sizeof(why), "lifetime limit of %d s reached%s "
	    "(--cgi-lifetime)", job->j_cg->cg_cfg.c_lifetime,
	    job->j_queued ? " waiting" : "");
	cgi_job_fail(job, 504, why);
}

/*
 * Its output waited for the client c_write_timeout seconds and the
 * connection took none of it: the client is gone or stalled, and the
 * program's slot is freed now rather than at --cgi-lifetime.
 */
static void
job_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi_job	*job = arg;
	char		 why[112];

	(void)fd;
	(void)what;
	snprintf(why, sizeof(why), "its client took no output for %d s "
	    "(--cgi-write-timeout)", job->j_cg->cg_cfg.c_write_timeout);
	cgi_job_fail(job, 504, why);
}

/*
 * Runs job's program now if a slot is free and nobody waits before it
 * (front: it goes first, a local redirect), else queues it, else 503.
 */
void
cgi_job_start(struct cgi_job *job, int front)
{
	struct cgi	*cg = job->j_cg;
	char		 why[96];

	if (cg->cg_nchildren < cg->cg_cfg.c_max &&
	    (front || TAILQ_EMPTY(&cg->cg_queue))) {
		job_spawn(job);
		return;
	}
	if (!front && cg->cg_nqueued >= cg->cg_cfg.c_queue) {
		snprintf(why, sizeof(why), "%zu programs running and %zu "
		    "waiting (--cgi-max, --cgi-queue)", cg->cg_nchildren,
		    cg->cg_nqueued);
		cgi_job_fail(job, 503, why);
		return;
	}
	/* Opened again when its turn comes: no descriptors while it waits. */
	cgi_prog_close(&job->j_prog);
	if (front)
		TAILQ_INSERT_HEAD(&cg->cg_queue, job, j_entry);
	else
		TAILQ_INSERT_TAIL(&cg->cg_queue, job, j_entry);
	job->j_queued = 1;
	cg->cg_nqueued++;
}

/*
 * The environment for job's program (free() it), or NULL: what it names
 * is what was checked, SCRIPT_FILENAME the path opened, and no
 * PATH_TRANSLATED, which the peer sent unchecked (php-cgi would run it).
 */
static char **
job_env(struct cgi_job *job)
{
	struct cgi_param	*pv, over[CGI_NOVER + 2];
	char			**envp;
	size_t			 n, nover = job->j_nover;

	if ((pv = cgi_params(job->j_req, &n)) == NULL)
		return NULL;
	memcpy(over, job->j_over, nover * sizeof(over[0]));
	over[nover].p_name = "SCRIPT_FILENAME";
	over[nover++].p_value = job->j_argv0;
	over[nover].p_name = "PATH_TRANSLATED";
	over[nover++].p_value = NULL;
	envp = cgi_env_build(pv, n, over, nover);
	free(pv);
	return envp;
}

/* Starts job's program (a slot is free); on failure answers 500/503. */
static void
job_spawn(struct cgi_job *job)
{
	struct cgi		*cg = job->j_cg;
	struct cgi_proc		 p;
	const char		*refused;
	char			**envp, **argv, why[128];
	int			 e;

	if (cgi_sigchld_on(cg) == -1) {
		cgi_job_fail(job, 503, "no process to parent it (the reaper)");
		return;
	}
	/* It waited: opened and checked again, as it is now. */
	if (job->j_prog.pr_fd == -1 && (e = cgi_open(cg->cg_rootfd,
	    cg->cg_root, cg->cg_rootlen, job->j_argv0, &job->j_prog,
	    &refused)) != 0) {
		snprintf(why, sizeof(why), "refused: %s", refused);
		/* A local redirect's target that is refused: 500. */
		cgi_job_fail(job, e == 403 && job->j_redirects > 0 ? 500 : e,
		    why);
		return;
	}
	if ((envp = job_env(job)) == NULL) {
		cgi_job_fail(job, 500, "out of memory");
		return;
	}
	/* A local redirect is a new request of the server's: no words. */
	if ((argv = cgi_argv_build(job->j_argv0, envp, cg->cg_cfg.c_argv &&
	    job->j_redirects == 0)) == NULL) {
		free(envp);
		cgi_job_fail(job, 500, "out of memory");
		return;
	}
	e = cg->cg_reaper == NULL ? EAGAIN : reaper_run(cg->cg_reaper,
	    &job->j_prog, argv, envp, &p) == -1 ? errno : 0;
	/* The child has its copies, or there is none. */
	cgi_prog_close(&job->j_prog);
	if (e != 0) {
		snprintf(why, sizeof(why), "cannot start it: %s", strerror(e));
		free(argv);
		free(envp);
		/* Out of processes or descriptors: try again later. */
		cgi_job_fail(job, e == EAGAIN || e == EMFILE || e == ENFILE ?
		    503 : 500, why);
		return;
	}
	free(argv);
	free(envp);
	job->j_started = 1;
	if ((job->j_child = cgi_child_new(cg, job, &p)) == NULL) {
		cgi_child_signal(cg, p.p_pid, SIGKILL);
		close(p.p_in);
		close(p.p_out);
		close(p.p_err);
		cgi_job_fail(job, 500, "out of memory");
		return;
	}
	log_debug("cgi %s[%d]: started", job->j_name, (int)p.p_pid);
	if (cgi_io_start(job, p.p_in, p.p_out) == -1)
		cgi_job_fail(job, 500, "out of memory");
}

/* Starts what waits while slots are free. */
void
cgi_run_queue(struct cgi *cg)
{
	struct cgi_job	*job;

	while (cg->cg_nchildren < cg->cg_cfg.c_max &&
	    (job = TAILQ_FIRST(&cg->cg_queue)) != NULL) {
		TAILQ_REMOVE(&cg->cg_queue, job, j_entry);
		cg->cg_nqueued--;
		job->j_queued = 0;
		job_spawn(job);
	}
}

/*
 * Makes the loop read what the reaper says ended, before the first
 * program starts, and reap the daemon's own children (the reaper, and
 * what it inherited: a container's PID 1 must).  Returns 0, or -1.
 */
int
cgi_sigchld_on(struct cgi *cg)
{
	if (cg->cg_reapev != NULL)
		return 0;
	if (cg->cg_reaper == NULL)
		return -1;
	if (cg->cg_sigchld == NULL && ((cg->cg_sigchld = evsignal_new(
	    cg->cg_base, SIGCHLD, cgi_sigchldcb, cg)) == NULL ||
	    evsignal_add(cg->cg_sigchld, NULL) == -1)) {
		if (cg->cg_sigchld != NULL)
			event_free(cg->cg_sigchld);
		cg->cg_sigchld = NULL;
		return -1;
	}
	if ((cg->cg_reapev = event_new(cg->cg_base, cg->cg_reaper->r_ev,
	    EV_READ | EV_PERSIST, cgi_reapcb, cg)) == NULL ||
	    event_add(cg->cg_reapev, NULL) == -1) {
		if (cg->cg_reapev != NULL)
			event_free(cg->cg_reapev);
		cg->cg_reapev = NULL;
		return -1;
	}
	return 0;
}

/*
 * SIGCHLD: the daemon's own children (the reaper, what it inherited) are
 * reaped; nothing is killed.  Programs are the reaper's children.
 */
static void
cgi_sigchldcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi	*cg = arg;
	pid_t		 pid;
	int		 st;

	(void)fd;
	(void)what;
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (cg->cg_reaper != NULL && pid == cg->cg_reaper->r_pid)
			log_err("cgi: the process that parents the programs "
			    "(%d) ended (status %d)", (int)pid, st);
}

/*
 * The reaper is gone (killed: a program of the daemon's user can): its
 * programs died with it (PR_SET_PDEATHSIG), so their slots are free, and
 * a new reaper takes its place, forked by this process, which runs as the
 * programs' user; it ends what they left in their cgroups.  A reaper that
 * kept root (started as root) cannot be had again here, but no program
 * could signal it: then programs no longer start.
 */
static void
cgi_reaper_lost(struct cgi *cg)
{
	struct cgi_child	*ch;
	struct reaper_ev	 hello;

	event_free(cg->cg_reapev);
	cg->cg_reapev = NULL;
	reaper_close(cg->cg_reaper);
	while ((ch = TAILQ_FIRST(&cg->cg_children)) != NULL) {
		/*
		 * What it left in its process group has no reaper now: ended
		 * here (this process is their user).  What left the group is
		 * the new reaper's to end, from the cgroups.
		 */
		(void)kill(-ch->ch_pid, SIGKILL);
		cgi_io_stderr(ch, 1);
		log_warn("cgi %s[%d]: ended with the process that parented it",
		    ch->ch_name, (int)ch->ch_pid);
		if (ch->ch_job != NULL)
			ch->ch_job->j_child = NULL;
		cgi_child_free(ch);
	}
	cg->cg_rconf.rc_slot = (int)(cg->cg_reaper - cg->cg_reapers);
	if (cg->cg_rconf.rc_apart ||
	    reaper_start(cg->cg_reaper, &cg->cg_rconf, &hello) == -1 ||
	    reaper_attach(cg->cg_reaper) == -1) {
		log_err("cgi: the process that parents the programs is gone, "
		    "and no other could be started: no program can start");
		reaper_close(cg->cg_reaper);
		cg->cg_reaper = NULL;
		return;
	}
	log_warn("cgi: the process that parents the programs ended: %d "
	    "takes its place", (int)cg->cg_reaper->r_pid);
}

/* What the reaper says: a program ended (its slot goes to who waits). */
static void
cgi_reapcb(evutil_socket_t fd, short what, void *arg)
{
	struct cgi		*cg = arg;
	struct cgi_child	*ch;
	struct reaper_ev	 ev;
	pid_t			 pid;
	int			 st, rc, n = 0;

	(void)fd;
	(void)what;
	while (n++ < 256 && (rc = reaper_read(cg->cg_reaper, &ev)) != 0) {
		if (rc == -1) {
			cgi_reaper_lost(cg);
			break;
		}
		if (ev.ev_type == RE_ORPHANS) {
			log_info("cgi: ended what programs left outside their "
			    "process groups (setsid, setpgid, a double fork): "
			    "%d", ev.ev_n);
			continue;
		}
		if (ev.ev_type != RE_EXIT)
			continue;
		pid = ev.ev_pid;
		st = ev.ev_status;
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
		if (ev.ev_n && !ch->ch_killing)
			log_info("cgi %s[%d]: what it left running in its "
			    "process group is ended", ch->ch_name, (int)pid);
		if (ch->ch_job != NULL)
			ch->ch_job->j_child = NULL;
		cgi_child_free(ch);
	}
	cgi_run_queue(cg);
}

void
cgi_job_redirect(struct cgi_job *job, const char *loc, size_t len)
{
	struct cgi	*cg = job->j_cg;
	struct cgi_prog	 prog;
	const char	*why;
	char		*argv0, *name, msg[256], to[104];
	size_t		 i;
	int		 status;

	if (++job->j_redirects > CGI_MAX_REDIRECTS) {
		cgi_job_fail(job, 500, "too many local redirects");
		return;
	}
	/* loc points into the header block: copied before it goes. */
	for (i = 0; i < len && i < sizeof(to) - 4; i++)
		to[i] = (unsigned char)loc[i] < 0x20 || loc[i] == 0x7f ? '?' :
		    loc[i];
	to[i] = '\0';
	if (i < len)
		strcpy(to + i, "...");
	status = cgi_redirect_params(job, loc, len, &why);
	/* The first program's part is over; it finishes on its own. */
	cgi_io_close(job);
	if (job->j_child != NULL)
		job->j_child->ch_job = NULL;
	job->j_child = NULL;
	evbuffer_drain(job->j_head, evbuffer_get_length(job->j_head));
	job->j_scanpos = 0;
	job->j_discard = 1;
	if (job->j_body != NULL)
		evbuffer_drain(job->j_body, evbuffer_get_length(job->j_body));
	/* Refused (not missing): the path would leave the CGI root. */
	if (status == 0 &&
	    (status = cgi_open(cg->cg_rootfd, cg->cg_root, cg->cg_rootlen,
	    job->j_over[0].p_value, &prog, &why)) == 403)
		status = 500;
	if (status == 0) {
		argv0 = strdup(job->j_over[0].p_value);
		name = cgi_safe_str(job->j_over[0].p_value);
		if (argv0 == NULL || name == NULL) {
			free(argv0);
			free(name);
			cgi_prog_close(&prog);
			cgi_job_fail(job, 500, "out of memory");
			return;
		}
		cgi_prog_close(&job->j_prog);
		free(job->j_argv0);
		free(job->j_name);
		job->j_prog = prog;
		job->j_argv0 = argv0;
		job->j_name = name;
		log_debug("cgi %s: local redirect", name);
		cgi_job_start(job, 1);
		return;
	}
	snprintf(msg, sizeof(msg), "local redirect to %s: %s", to, why);
	cgi_job_fail(job, status, msg);
}
