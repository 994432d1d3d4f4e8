/*
 * cgi_reaper.h: the process that parents the CGI programs and nothing
 * else (cgi_reaper.c), so that what a program leaves can be found and
 * ended without touching what the daemon inherited.  The daemon's side:
 * start it, hand it a lifeline, ask it to start a program or to signal
 * one, read what ended.
 */
#ifndef CGI_REAPER_H
#define CGI_REAPER_H

#include <sys/types.h>
#include <sys/resource.h>

#include "cgi_cgroup.h"

/* The daemon's handle on one reaper. */
struct cgi_reaper {
	pid_t	 r_pid;
	int	 r_ctl;		/* requests, and a spawn's answer */
	int	 r_ev;		/* what ended (non-blocking) */
	int	 r_life;	/* the lifeline's end we hold; -1: none */
};

/* What a program runs as, and with. */
struct spawn_as {
	uid_t	 sa_uid;	/* -1: as its parent is */
	gid_t	 sa_gid;
	rlim_t	 sa_nproc;	/* RLIMIT_NPROC; 0: inherited */
	int	 sa_cgfd;	/* its cgroup's cgroup.procs; -1: none */
};

struct reaper_conf {
	uid_t	 rc_uid;	/* the programs' user; -1: as it is */
	gid_t	 rc_gid;
	int	 rc_apart;	/* the reaper keeps root, each program
				   changes user (started as root) */
	int	 rc_grace;	/* s from SIGTERM to SIGKILL at the end */
	rlim_t	 rc_nproc;	/* RLIMIT_NPROC of a program; 0: inherited */
	struct cgi_cgroup rc_cg; /* where programs' groups go; v 0: none */
	unsigned long rc_pids;	/* their pids.max */
	int	 rc_slot;	/* the worker slot it serves */
};

enum re_type { RE_HELLO = 1, RE_EXIT, RE_ORPHANS };

/* What the reaper tells. */
struct reaper_ev {
	int	 ev_type;
	pid_t	 ev_pid;	/* HELLO: its own; EXIT: the program */
	int	 ev_status;	/* EXIT: waitpid's; HELLO: subreaper errno */
	int	 ev_n;		/* EXIT: its group had more; ORPHANS: how
				   many ended; HELLO: leftovers can be found */
};

/*
 * Forks a reaper per conf (it gives root up for rc_uid at once, unless
 * rc_apart) and reads its HELLO into hello.  With cgroups (rc_cg), it
 * first ends what a reaper of the same slot before it left in theirs.
 * Returns 0, or -1 with errno (r then holds nothing).
 */
int	reaper_start(struct cgi_reaper *r, const struct reaper_conf *conf,
	    struct reaper_ev *hello);

/*
 * Hands r a new lifeline whose other end this process alone holds: when
 * it ends, the reaper ends every program it runs (SIGTERM, SIGKILL after
 * the grace).  Returns 0, or -1.
 */
int	reaper_attach(struct cgi_reaper *r);

/*
 * Starts a program (see cgi_spawn_fds) through r, which parents it; the
 * descriptors are copied over.  Waits for its answer (at most 10 s).
 * Returns 0 with *pid, or an errno value.
 */
int	reaper_spawn(struct cgi_reaper *r, int prog, int dir, int script,
	    char *const argv[], char *const envp[], const int fds[3],
	    pid_t *pid);

/* Asks r to send sig to program pid's process group (pid alone if none). */
void	reaper_kill(struct cgi_reaper *r, pid_t pid, int sig);

/*
 * One event of r's.  Returns 1 (ev filled), 0 when none waits, -1 when
 * the reaper is gone.
 */
int	reaper_read(struct cgi_reaper *r, struct reaper_ev *ev);

struct cgi_prog;
struct cgi_proc;

/*
 * Starts the program pr holds through r with the command line argv and
 * environment envp, on pipes whose other ends (non-blocking,
 * close-on-exec) p gets.  Returns 0, or -1 with errno.  pr is the
 * caller's still.
 */
int	reaper_run(struct cgi_reaper *r, const struct cgi_prog *pr,
	    char *const argv[], char *const envp[], struct cgi_proc *p);

/* Closes this process's ends of r (the reaper ends at the last). */
void	reaper_close(struct cgi_reaper *r);

/*
 * Starts a program in this process (the reaper): from its descriptor prog
 * (fexecve, no shell), in its directory dir, argv, envp, as the leader of
 * a process group of its own, signals at their defaults, fds (its stdin,
 * stdout and stderr ends) as 0-2 and nothing else open but, for a script,
 * prog as 3; in the cgroup, as the user and with the limit as says.  A
 * failure in the child is told on its stderr and it exits 127.  Returns
 * 0 with *pid, or -1 with errno.  (cgi_spawn.c)
 */
int	cgi_spawn_fds(int prog, int dir, int script, char *const argv[],
	    char *const envp[], const int fds[3], const struct spawn_as *as,
	    pid_t *pid);

#endif /* CGI_REAPER_H */
