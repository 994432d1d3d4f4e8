/*
 * cgi_job.h: the CGI engine's inside, shared by its files, from the top
 * down: cgi.c (requests, jobs, limits, reaping, local redirects), cgi_io.c
 * (the bytes through the pipes), cgi_redirect.c (a redirect's new
 * parameters), cgi_child.c (the processes and their stderr).  A job is
 * one request's run (it may run a second program after a local
 * redirect); a child is one process, kept until it is reaped, which may
 * be after its job has ended.
 */
#ifndef CGI_JOB_H
#define CGI_JOB_H

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <time.h>

#include <event2/util.h>

#include "cgi.h"
#include "cgi_reaper.h"

struct event;
struct evbuffer;
struct evfcgi_req;
struct cgi_job;

#define CGI_LINE_MAX	1024	/* a stderr line logged, the rest cut */
#define CGI_NOVER	12	/* params a local redirect overrides */
/*
 * stderr of a program split into lines and logged; beyond, it is read and
 * discarded (counted), at most CGI_ERR_PACE_BYTES every CGI_ERR_PACE_MS:
 * a flood waits in its own write() and costs the loop next to nothing.
 */
#define CGI_ERR_MAX	(1024 * 1024)
#define CGI_ERR_PACE_BYTES	65536
#define CGI_ERR_PACE_MS	100

struct cgi {
	struct evfcgi_server	*cg_srv;
	struct event_base	*cg_base;
	struct cgi_config	 cg_cfg;
	char			*cg_root;	/* resolved; "" for "/" */
	size_t			 cg_rootlen;
	int			 cg_rootfd;	/* it, opened (O_PATH) */
	struct event		*cg_sigchld;	/* from the first child on */
	struct cgi_reaper	*cg_reapers;	/* one per worker slot */
	int			 cg_nreapers;
	struct cgi_reaper	*cg_reaper;	/* this process's */
	struct reaper_conf	 cg_rconf;	/* how they were started */
	struct event		*cg_reapev;	/* its events */
	TAILQ_HEAD(, cgi_child)	 cg_children;
	size_t			 cg_nchildren;	/* not reaped yet */
	TAILQ_HEAD(, cgi_job)	 cg_queue;	/* waiting for a slot */
	size_t			 cg_nqueued;
	size_t			 cg_held;	/* output held, all programs */
	size_t			 cg_held_cap;	/* --max-queued */
	TAILQ_HEAD(, cgi_job)	 cg_holdq;	/* waiting for room in it */
	struct event		*cg_holdev;	/* wakes them, next turn */
};

struct cgi_child {
	struct cgi		*ch_cg;
	struct cgi_job		*ch_job;	/* NULL once let go */
	pid_t			 ch_pid;	/* and its process group */
	char			*ch_name;	/* the program, for the log */
	int			 ch_err;	/* its stderr; -1 closed */
	struct event		*ch_errev;
	struct event		*ch_killev;	/* the grace's end */
	struct event		*ch_errpace;	/* stderr read again */
	int			 ch_killing;	/* SIGTERM sent */
	char			 ch_line[CGI_LINE_MAX + 1];
	size_t			 ch_linelen;
	int			 ch_cut;	/* the line went past the max */
	time_t			 ch_sec;	/* rate: this second ... */
	int			 ch_lines;	/* ... so many lines logged */
	unsigned long		 ch_dropped;	/* not logged: over the rate */
	size_t			 ch_errbytes;	/* stderr read, up to the max */
	unsigned long long	 ch_errgone;	/* beyond it: discarded */
	TAILQ_ENTRY(cgi_child)	 ch_entry;
};

struct cgi_job {
	struct cgi		*j_cg;
	struct evfcgi_req	*j_req;
	struct cgi_child	*j_child;	/* running it, or NULL */
	char			*j_argv0;	/* the program as named */
	struct cgi_prog		 j_prog;	/* opened, checked: what runs */
	char			*j_name;	/* argv0 made safe to log */
	struct cgi_param	 j_over[CGI_NOVER]; /* a local redirect's */
	size_t			 j_nover;
	char			*j_overmem;	/* their strings */
	int			 j_redirects;
	int			 j_in;		/* its stdin; -1 closed */
	int			 j_out;		/* its stdout; -1 closed */
	struct event		*j_inev;
	struct event		*j_outev;
	struct evbuffer		*j_body;	/* the request's (borrowed) */
	struct evbuffer		*j_head;	/* header block so far */
	size_t			 j_scanpos;
	size_t			 j_held;	/* of j_head, charged to cg_held */
	TAILQ_ENTRY(cgi_job)	 j_holdentry;	/* in cg_holdq */
	struct event		*j_timer;	/* the time limit */
	struct event		*j_life;	/* the wall-clock limit */
	struct event		*j_wtimer;	/* no write progress */
	struct timespec		 j_deadline;	/* when it runs out */
	struct timespec		 j_left;	/* while paused: what is left */
	unsigned		 j_started:1;	/* a program ran for it */
	unsigned		 j_headed:1;	/* the header was sent */
	unsigned		 j_body_done:1;	/* the body has ended */
	unsigned		 j_discard:1;	/* the body goes nowhere */
	unsigned		 j_queued:1;
	unsigned		 j_holding:1;	/* output held: body not ended */
	unsigned		 j_eof:1;	/* stdout ended while held */
	unsigned		 j_clock_paused:1; /* output waits on the client */
	unsigned		 j_holdwait:1;	/* in cg_holdq */
	TAILQ_ENTRY(cgi_job)	 j_entry;
};

/* cgi.c */

/*
 * Ends job with status (or, after its header, cuts the response), why
 * logged with the program's name; its program is ended.  job is freed.
 */
void	cgi_job_fail(struct cgi_job *job, int status, const char *why);

/* The program's output ended: the response is complete.  job is freed. */
void	cgi_job_done(struct cgi_job *job);

/*
 * The program answered with a local redirect to loc (len bytes): runs
 * the program that path names instead, or answers an error.
 */
void	cgi_job_redirect(struct cgi_job *job, const char *loc, size_t len);

/*
 * Runs job's program now if a slot is free and nobody waits before it
 * (front: it goes first, a local redirect), else queues it, else 503.
 */
void	cgi_job_start(struct cgi_job *job, int front);

/* Starts what waits while slots are free. */
void	cgi_run_queue(struct cgi *cg);

/*
 * Makes the loop read what the reaper says ended, before the first
 * program starts, and reap the daemon's own children.  Returns 0, or -1.
 */
int	cgi_sigchld_on(struct cgi *cg);

/*
 * The time limit stops while job's output waits for the client (room in
 * its connection), and goes on when it has room: a slow client is not
 * the program's time.  Each does nothing without a limit or twice over.
 */
void	cgi_job_clock_pause(struct cgi_job *job);
void	cgi_job_clock_resume(struct cgi_job *job);

/* cgi_child.c */

/* A child record for p, run for job, its stderr read; or NULL. */
struct cgi_child *cgi_child_new(struct cgi *cg, struct cgi_job *job,
	    const struct cgi_proc *p);

/*
 * Has the reaper send sig to program pid's process group, or to pid alone
 * when it has none of its own (both sides' setpgid() failed).
 */
void	cgi_child_signal(struct cgi *cg, pid_t pid, int sig);

/* Ends ch's process group: SIGTERM now, SIGKILL after the grace. */
void	cgi_child_kill(struct cgi_child *ch);

/*
 * job is done with ch (its output ended, a local redirect): if it still
 * runs after the grace, or at job's time limit if sooner, its process
 * group is ended.
 */
void	cgi_child_letgo(struct cgi_child *ch, const struct cgi_job *job);

/* Forgets ch (reaped, or at exit); its stderr is read no more. */
void	cgi_child_free(struct cgi_child *ch);

/* Reads child's stderr until EAGAIN (final: and closes it). */
void	cgi_io_stderr(struct cgi_child *ch, int final);

/* libevent callback of a child's stderr. */
void	cgi_io_errcb(evutil_socket_t fd, short what, void *arg);

/* A copy of s with control characters as '?', or NULL. */
char	*cgi_safe_str(const char *s);

/* cgi_redirect.c */

/*
 * The overrides of a local redirect to loc (len bytes: path and query):
 * the path resolved (cgi_local_path), the program is the longest leading
 * part of it that is a file under DOCUMENT_ROOT (SCRIPT_NAME), the rest
 * is PATH_INFO; method GET, no body.  Returns 0, or the status to answer
 * (500 for a path refused, 404 for no program on it) with *why.
 */
int	cgi_redirect_params(struct cgi_job *job, const char *loc, size_t len,
	    const char **why);

/* cgi_io.c */

/*
 * The program's stdin (in) and stdout (out) are job's now: feeds one,
 * reads the other.  Returns 0, or -1 when out of memory (both closed).
 */
int	cgi_io_start(struct cgi_job *job, int in, int out);

/*
 * Closes job's stdin and stdout and their events, gives back what it
 * held; its program, read no more, is let go (cgi_child_letgo).
 */
void	cgi_io_close(struct cgi_job *job);

/* Feeds job's program what waits of the body; closes stdin at its end. */
void	cgi_io_feed(struct cgi_job *job);

/*
 * The held output's cap has room again (cg_holdev, made active when held
 * output was given back): the jobs waiting for it read on.
 */
void	cgi_io_holdcb(evutil_socket_t fd, short what, void *arg);

/* The request body's callback (evfcgi_body_cb) of a streamed job. */
void	cgi_io_bodycb(struct evfcgi_req *req, struct evbuffer *body, int done,
	    void *arg);


#endif /* CGI_JOB_H */
