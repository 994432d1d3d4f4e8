/*
 * cgi_reaper.c: the process that parents the CGI programs, and nothing
 * else.  Forked by the daemon at start, before anything is bound or any
 * program runs, it is the child subreaper (PR_SET_CHILD_SUBREAPER) of
 * what it starts: every process a program leaves outside its process
 * group (setsid, setpgid, a double fork) becomes its child once its
 * parent ends, and each time it reaps one, it ends every child of its
 * own that is no running program.  Its children are programs and such
 * leftovers only: nothing the daemon inherited (a shell's background
 * job, a container's front end started before `exec evfcgid`) is its
 * child, so nothing of that is ever touched.
 *
 * The daemon asks over a socket (SOCK_SEQPACKET, one message each): start
 * this program from these descriptors (the argument and environment
 * strings in a memfd: no size limit but the daemon's), send this signal
 * to this program's group (only a running program of its own), here is a
 * lifeline (a pipe whose other end the engine's process alone holds: at
 * its EOF the engine has died, and the reaper ends every program it
 * runs).  It tells, over a second socket, which program ended and how.
 * At the daemon's end (EOF), it ends what runs (SIGTERM, SIGKILL after
 * the grace) and exits.  Where the daemon was started as root, the reaper
 * gives root up at once for the programs' user (--cgi-user, else --user).
 */
#include <sys/types.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgi.h"
#include "cgi_reaper.h"

enum rq_type { RQ_SPAWN = 1, RQ_KILL, RQ_LIFELINE };

/*
 * Daemon to reaper.  A spawn's descriptors: the program, its directory,
 * its stdin, stdout and stderr ends, and the memfd of its strings unless
 * they follow the request in the message.
 */
struct rq {
	int	 rq_type;
	int	 rq_sig;
	pid_t	 rq_pid;
	int	 rq_script;
	size_t	 rq_argc;
	size_t	 rq_envc;
	size_t	 rq_len;	/* bytes of strings, after it or in a memfd */
	int	 rq_inline;	/* they follow it in the message */
};

/* Reaper to daemon, on the control socket: a spawn's answer. */
struct rp {
	int	 rp_err;	/* 0, or errno */
	pid_t	 rp_pid;
};

#define RQ_NFD		6
#define RQ_INLINE	32768	/* strings up to this go in the message */
#define REAPER_WAIT_MS	10000	/* for a spawn's answer */

/* The reaper's own state (in its process only). */
struct rp_prog {
	pid_t		 pg_pid;
	int		 pg_doomed;	/* SIGKILL at the deadline */
	unsigned long	 pg_cg;		/* its cgroup's number; 0: none */
};

struct rp_state {
	int			 s_ctl;
	int			 s_ev;
	int			 s_life;	/* -1: none */
	int			 s_sig;		/* signalfd of SIGCHLD */
	struct rp_prog		*s_progs;
	size_t			 s_n, s_cap;
	struct reaper_ev	*s_out;		/* events not sent yet */
	size_t			 s_nout, s_capout;
	int			 s_grace;
	struct timespec		 s_deadline;	/* doomed ones: SIGKILL */
	int			 s_dooming;
	struct spawn_as		 s_as;		/* what programs run as */
	char			 s_kids[64];	/* /proc/.../children */
	int			 s_kids_ok;
	const char		*s_cgpath;	/* where programs' groups go */
	int			 s_cgdir;	/* it, opened; -1: no groups */
	char			 s_cgname[CGROUP_NAME_MAX];	/* their names
							   begin so */
	size_t			 s_cgslot;	/* its slot's part of that */
	unsigned long		 s_pids;	/* their pids.max */
	unsigned long		 s_seq;		/* the last one's number */
	unsigned long		*s_dead;	/* groups to remove still */
	size_t			 s_ndead, s_capdead;
	int			 s_deadtries;
};

static void	reaper_main(struct rp_state *) __attribute__((noreturn));
static void	rp_exit(struct rp_state *) __attribute__((noreturn));
static void	rp_init(struct rp_state *);
static int	rp_timeout(struct rp_state *);
static void	rp_drop(uid_t, gid_t);
static void	rp_request(struct rp_state *);
static int	rp_args(const struct rq *, const char *, int, char **,
		    char ***);
static void	rp_spawn(struct rp_state *, const struct rq *, const char *,
		    int *, int);
static void	rp_reap(struct rp_state *);
static void	rp_orphans(struct rp_state *, int);
static int	rp_sweep(struct rp_state *);
static void	rp_doom_all(struct rp_state *);
static int	rp_cg_init(struct rp_state *);
static void	rp_cg_name(const struct rp_state *, unsigned long, char *,
		    size_t);
static int	rp_cg_end(struct rp_state *, unsigned long);
static void	rp_cg_retry(struct rp_state *);
static void	rp_send(struct rp_state *, const struct reaper_ev *);
static void	rp_flush(struct rp_state *);
static ssize_t	recv_fds(int, void *, size_t, int *, int);
static int	send_fds(int, const void *, size_t, const int *, int);
static struct rp_prog *rp_find(struct rp_state *, pid_t);
static void	close_pair(int[2]);

/* recvmsg of one message with up to nfd descriptors (-1 where none). */
static ssize_t
recv_fds(int s, void *buf, size_t len, int *fds, int nfd)
{
	union {
		struct cmsghdr	 h;
		char		 b[CMSG_SPACE(sizeof(int) * RQ_NFD)];
	}		 u;
	struct msghdr	 m;
	struct iovec	 iov = { buf, len };
	struct cmsghdr	*c;
	ssize_t		 n;
	int		 i, got;

	for (i = 0; i < nfd; i++)
		fds[i] = -1;
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	if ((n = recvmsg(s, &m, MSG_CMSG_CLOEXEC)) <= 0)
		return n;
	for (c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < got; i++) {
			int	 fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (i < nfd)
				fds[i] = fd;
			else
				close(fd);
		}
	}
	return n;
}

/* sendmsg of buf with nfd descriptors; 0, or -1 with errno. */
static int
send_fds(int s, const void *buf, size_t len, const int *fds, int nfd)
{
	union {
		struct cmsghdr	 h;
		char		 b[CMSG_SPACE(sizeof(int) * RQ_NFD)];
	}		 u;
	struct msghdr	 m;
	struct iovec	 iov = { (void *)(uintptr_t)buf, len };
	struct cmsghdr	*c;

	memset(&m, 0, sizeof(m));
	memset(&u, 0, sizeof(u));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (nfd > 0) {
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfd);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfd);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfd);
	}
	while (sendmsg(s, &m, MSG_NOSIGNAL) == -1)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* --- The daemon's side. --- */

int
reaper_start(struct cgi_reaper *r, const struct reaper_conf *conf,
    struct reaper_ev *hello)
{
	struct rp_state	 s;
	int		 ctl[2], ev[2];
	pid_t		 pid;
	ssize_t		 n;

	memset(r, 0, sizeof(*r));
	r->r_ctl = r->r_ev = r->r_life = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ev) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		return -1;
	}
	if ((pid = fork()) == -1) {
		close(ctl[0]);
		close(ctl[1]);
		close(ev[0]);
		close(ev[1]);
		return -1;
	}
	if (pid == 0) {
		memset(&s, 0, sizeof(s));
		s.s_ctl = ctl[1];
		s.s_ev = ev[1];
		s.s_life = -1;
		s.s_grace = conf->rc_grace;
		s.s_as.sa_uid = (uid_t)-1;
		s.s_as.sa_gid = (gid_t)-1;
		s.s_as.sa_nproc = conf->rc_nproc;
		s.s_as.sa_cgfd = -1;
		s.s_cgdir = -1;
		if (conf->rc_cg.cgr_v != 0 && conf->rc_pids > 0) {
			/* Its groups' names: the daemon's, its slot's, its. */
			s.s_cgpath = conf->rc_cg.cgr_dir;
			s.s_pids = conf->rc_pids;
			s.s_cgslot = (size_t)snprintf(s.s_cgname,
			    sizeof(s.s_cgname), "%s.%d.",
			    conf->rc_cg.cgr_prefix, conf->rc_slot);
			snprintf(s.s_cgname + s.s_cgslot, sizeof(s.s_cgname) -
			    s.s_cgslot, "%d.", (int)getpid());
		}
		close(ctl[0]);
		close(ev[0]);
		/* Apart: it keeps root to make each program that user. */
		if (conf->rc_apart) {
			s.s_as.sa_uid = conf->rc_uid;
			s.s_as.sa_gid = conf->rc_gid;
		} else if (conf->rc_uid != (uid_t)-1)
			rp_drop(conf->rc_uid, conf->rc_gid);
		reaper_main(&s);
	}
	close(ctl[1]);
	close(ev[1]);
	r->r_pid = pid;
	r->r_ctl = ctl[0];
	r->r_ev = ev[0];
	/* Its first word says what it could set up. */
	while ((n = recv(r->r_ev, hello, sizeof(*hello), 0)) == -1 &&
	    errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*hello) || hello->ev_type != RE_HELLO) {
		reaper_close(r);
		errno = EPIPE;
		return -1;
	}
	(void)fcntl(r->r_ev, F_SETFL, O_NONBLOCK);
	return 0;
}

int
reaper_attach(struct cgi_reaper *r)
{
	struct rq	 q;
	int		 p[2];

	if (r->r_ctl < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	memset(&q, 0, sizeof(q));
	q.rq_type = RQ_LIFELINE;
	if (send_fds(r->r_ctl, &q, sizeof(q), &p[0], 1) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	close(p[0]);
	if (r->r_life >= 0)
		close(r->r_life);
	r->r_life = p[1];
	return 0;
}

int
reaper_spawn(struct cgi_reaper *r, int prog, int dir, int script,
    char *const argv[], char *const envp[], const int fds[3], pid_t *pid)
{
	struct rq	 q;
	struct rp	 a;
	struct pollfd	 pfd;
	size_t		 i, off, l;
	int		 mfd = -1, sfds[RQ_NFD], e;
	ssize_t		 n;
	char		*buf, *strs;

	if (r->r_ctl < 0)
		return EPIPE;
	memset(&q, 0, sizeof(q));
	q.rq_type = RQ_SPAWN;
	q.rq_script = script;
	for (i = 0; argv[i] != NULL; i++)
		q.rq_len += strlen(argv[i]) + 1;
	q.rq_argc = i;
	for (i = 0; envp[i] != NULL; i++)
		q.rq_len += strlen(envp[i]) + 1;
	q.rq_envc = i;
	/* Small (as nearly all are): the strings follow it, no memfd. */
	q.rq_inline = q.rq_len <= RQ_INLINE;
	if ((buf = malloc(sizeof(q) + q.rq_len + 1)) == NULL)
		return ENOMEM;
	strs = buf + sizeof(q);
	for (off = 0, i = 0; argv[i] != NULL; i++, off += l)
		memcpy(strs + off, argv[i], l = strlen(argv[i]) + 1);
	for (i = 0; envp[i] != NULL; i++, off += l)
		memcpy(strs + off, envp[i], l = strlen(envp[i]) + 1);
	memcpy(buf, &q, sizeof(q));
	if (!q.rq_inline &&
	    (mfd = memfd_create("evfcgid-cgi", MFD_CLOEXEC)) == -1) {
		e = errno;
		free(buf);
		return e;
	}
	for (off = 0; !q.rq_inline && off < q.rq_len; off += (size_t)n)
		if ((n = write(mfd, strs + off, q.rq_len - off)) <= 0 &&
		    errno != EINTR) {
			e = n == 0 ? EIO : errno;
			free(buf);
			close(mfd);
			return e;
		} else if (n < 0)
			n = 0;
	sfds[0] = prog;
	sfds[1] = dir;
	sfds[2] = fds[0];
	sfds[3] = fds[1];
	sfds[4] = fds[2];
	sfds[5] = mfd;
	e = send_fds(r->r_ctl, buf, sizeof(q) + (q.rq_inline ? q.rq_len : 0),
	    sfds, q.rq_inline ? RQ_NFD - 1 : RQ_NFD) == -1 ? errno : 0;
	free(buf);
	if (mfd >= 0)
		close(mfd);
	if (e != 0)
		return e;
	/* Its answer comes at once: it only forks. */
	pfd.fd = r->r_ctl;
	pfd.events = POLLIN;
	for (;;) {
		if ((n = poll(&pfd, 1, REAPER_WAIT_MS)) == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return n == 0 ? ETIMEDOUT : errno;
		if ((n = recv(r->r_ctl, &a, sizeof(a), 0)) == -1 &&
		    errno == EINTR)
			continue;
		break;
	}
	if (n != (ssize_t)sizeof(a))
		return n == -1 ? errno : EPIPE;
	if (a.rp_err != 0)
		return a.rp_err;
	*pid = a.rp_pid;
	return 0;
}

void
reaper_kill(struct cgi_reaper *r, pid_t pid, int sig)
{
	struct rq	 q;

	if (r->r_ctl < 0)
		return;
	memset(&q, 0, sizeof(q));
	q.rq_type = RQ_KILL;
	q.rq_pid = pid;
	q.rq_sig = sig;
	(void)send_fds(r->r_ctl, &q, sizeof(q), NULL, 0);
}

int
reaper_read(struct cgi_reaper *r, struct reaper_ev *ev)
{
	ssize_t	 n;

	if (r->r_ev < 0)
		return -1;
	while ((n = recv(r->r_ev, ev, sizeof(*ev), 0)) == -1 &&
	    errno == EINTR)
		;
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return 0;
	if (n != (ssize_t)sizeof(*ev))
		return -1;
	return 1;
}

void
reaper_close(struct cgi_reaper *r)
{
	if (r->r_ctl >= 0)
		close(r->r_ctl);
	if (r->r_ev >= 0)
		close(r->r_ev);
	if (r->r_life >= 0)
		close(r->r_life);
	r->r_ctl = r->r_ev = r->r_life = -1;
}

/* --- The reaper's side. --- */

/* Gives root up for good for the programs' user; exits if it cannot. */
static void
rp_drop(uid_t uid, gid_t gid)
{
	uid_t	 ru, eu, su;

	if (geteuid() != 0) {
		if (getuid() == uid && geteuid() == uid)
			return;
		fprintf(stderr, "evfcgid: cgi reaper: only root can run the "
		    "programs as uid %u\n", (unsigned)uid);
		_exit(1);
	}
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1 ||
	    getresuid(&ru, &eu, &su) == -1 || ru != uid || eu != uid ||
	    su != uid || (uid != 0 && setuid(0) != -1)) {
		fprintf(stderr, "evfcgid: cgi reaper: cannot become uid %u: "
		    "%s\n", (unsigned)uid, strerror(errno));
		_exit(1);
	}
}

static struct rp_prog *
rp_find(struct rp_state *s, pid_t pid)
{
	size_t	 i;

	for (i = 0; i < s->s_n; i++)
		if (s->s_progs[i].pg_pid == pid)
			return &s->s_progs[i];
	return NULL;
}

/* Queues ev for the daemon and sends what it can without waiting. */
static void
rp_send(struct rp_state *s, const struct reaper_ev *ev)
{
	struct reaper_ev	*o;

	if (s->s_nout == s->s_capout) {
		if ((o = reallocarray(s->s_out, s->s_capout * 2 + 16,
		    sizeof(*o))) == NULL)
			return;
		s->s_out = o;
		s->s_capout = s->s_capout * 2 + 16;
	}
	s->s_out[s->s_nout++] = *ev;
	rp_flush(s);
}

static void
rp_flush(struct rp_state *s)
{
	size_t	 i = 0;

	while (i < s->s_nout && send(s->s_ev, &s->s_out[i],
	    sizeof(s->s_out[i]), MSG_DONTWAIT | MSG_NOSIGNAL) ==
	    (ssize_t)sizeof(s->s_out[i]))
		i++;
	memmove(s->s_out, s->s_out + i, (s->s_nout - i) * sizeof(*s->s_out));
	s->s_nout -= i;
}

/*
 * q's arguments and environment, NUL-ended strings in strs (or, sent apart,
 * in the descriptor fd), read into *bufp and pointed at from *argvp: the
 * arguments, a NULL, the environment, a NULL.  Returns 0, or an errno
 * (the caller frees what *bufp and *argvp hold either way).
 */
static int
rp_args(const struct rq *q, const char *strs, int fd, char **bufp,
    char ***argvp)
{
	char	*buf, **argv, **envp, *c;
	size_t	 i;
	ssize_t	 n;

	if ((*bufp = buf = malloc(q->rq_len + 1)) == NULL ||
	    (*argvp = argv = calloc(q->rq_argc + q->rq_envc + 2,
	    sizeof(*argv))) == NULL)
		return ENOMEM;
	if (strs != NULL)
		memcpy(buf, strs, q->rq_len);
	else if ((n = pread(fd, buf, q->rq_len, 0)) != (ssize_t)q->rq_len)
		return n == -1 ? errno : EIO;
	buf[q->rq_len] = '\0';
	envp = argv + q->rq_argc + 1;
	for (c = buf, i = 0; i < q->rq_argc + q->rq_envc; i++) {
		if (c >= buf + q->rq_len)
			return EINVAL;
		if (i < q->rq_argc)
			argv[i] = c;
		else
			envp[i - q->rq_argc] = c;
		c += strlen(c) + 1;
	}
	return 0;
}

/* Starts the program a spawn request carries (fds: see struct rq). */
static void
rp_spawn(struct rp_state *s, const struct rq *q, const char *strs, int *fds,
    int nfd)
{
	struct rp	 a = { 0, -1 };
	struct rp_prog	*p;
	struct spawn_as	 as;
	char		*buf = NULL, **argv = NULL;
	char		 name[CGROUP_NAME_MAX + 24];
	unsigned long	 seq = 0;
	int		 k;

	if (nfd < RQ_NFD || (strs == NULL && fds[5] < 0) ||
	    q->rq_len > (size_t)1 << 30 || fds[0] < 0 || fds[1] < 0 ||
	    fds[2] < 0 || fds[3] < 0 || fds[4] < 0 ||
	    q->rq_argc < 1 || q->rq_argc + q->rq_envc > q->rq_len) {
		a.rp_err = EINVAL;
		goto out;
	}
	if ((a.rp_err = rp_args(q, strs, fds[5], &buf, &argv)) != 0)
		goto out;
	if (s->s_n == s->s_cap) {
		if ((p = reallocarray(s->s_progs, s->s_cap * 2 + 16,
		    sizeof(*p))) == NULL) {
			a.rp_err = ENOMEM;
			goto out;
		}
		s->s_progs = p;
		s->s_cap = s->s_cap * 2 + 16;
	}
	/* Its cgroup first: it enters it itself, before exec. */
	as = s->s_as;
	if (s->s_cgdir >= 0) {
		seq = ++s->s_seq;
		rp_cg_name(s, seq, name, sizeof(name));
		if ((as.sa_cgfd = cgroup_make(s->s_cgdir, name,
		    s->s_pids)) == -1) {
			a.rp_err = errno;
			goto out;
		}
	}
	if (cgi_spawn_fds(fds[0], fds[1], q->rq_script, argv,
	    argv + q->rq_argc + 1, fds + 2,
	    &as, &a.rp_pid) == -1)
		a.rp_err = errno;
	else {
		s->s_progs[s->s_n].pg_pid = a.rp_pid;
		s->s_progs[s->s_n].pg_cg = seq;
		s->s_progs[s->s_n++].pg_doomed = 0;
	}
	if (as.sa_cgfd >= 0) {
		close(as.sa_cgfd);
		if (a.rp_err != 0)
			(void)rp_cg_end(s, seq);
	}
out:
	free(argv);
	free(buf);
	for (k = 0; k < nfd; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	(void)send_fds(s->s_ctl, &a, sizeof(a), NULL, 0);
}

/* One request of the daemon's; at its end (EOF), the end of all. */
static void
rp_request(struct rp_state *s)
{
	static char	 msg[sizeof(struct rq) + RQ_INLINE];
	struct rq	 q;
	int		 fds[RQ_NFD], k;
	ssize_t		 n;

	n = recv_fds(s->s_ctl, msg, sizeof(msg), fds, RQ_NFD);
	if (n == -1 && errno == EINTR)
		return;
	if (n <= 0) {
		/* The daemon is gone: what runs ends, then the reaper. */
		close(s->s_ctl);
		s->s_ctl = -1;
		rp_doom_all(s);
		return;
	}
	if (n >= (ssize_t)sizeof(q))
		memcpy(&q, msg, sizeof(q));
	if (n < (ssize_t)sizeof(q) || (size_t)n != sizeof(q) +
	    (q.rq_type == RQ_SPAWN && q.rq_inline ? q.rq_len : 0)) {
		for (k = 0; k < RQ_NFD; k++)
			if (fds[k] >= 0)
				close(fds[k]);
		return;
	}
	switch (q.rq_type) {
	case RQ_SPAWN:
		rp_spawn(s, &q, q.rq_inline ? msg + sizeof(q) : NULL, fds,
		    RQ_NFD);
		return;
	case RQ_KILL:
		/* Only a program of its own, still running. */
		if (rp_find(s, q.rq_pid) != NULL && q.rq_pid > 0 &&
		    kill(-q.rq_pid, q.rq_sig) == -1 && errno == ESRCH)
			(void)kill(q.rq_pid, q.rq_sig);
		break;
	case RQ_LIFELINE:
		if (fds[0] >= 0) {
			/*
			 * A new engine process for this slot: the one before
			 * is dead, whether its lifeline's end was seen yet or
			 * not (both may come in one turn): its programs end.
			 */
			if (s->s_life >= 0) {
				close(s->s_life);
				rp_doom_all(s);
			}
			s->s_life = fds[0];
			fds[0] = -1;
		}
		break;
	}
	for (k = 0; k < RQ_NFD; k++)
		if (fds[k] >= 0)
			close(fds[k]);
}

/*
 * Every program gets SIGTERM now, SIGKILL after the grace: its engine (a
 * worker that died) or the daemon is gone.
 */
static void
rp_doom_all(struct rp_state *s)
{
	size_t	 i;

	for (i = 0; i < s->s_n; i++) {
		if (!s->s_progs[i].pg_doomed &&
		    kill(-s->s_progs[i].pg_pid, SIGTERM) == -1 &&
		    errno == ESRCH)
			(void)kill(s->s_progs[i].pg_pid, SIGTERM);
		s->s_progs[i].pg_doomed = 1;
	}
	if (!s->s_dooming) {
		clock_gettime(CLOCK_MONOTONIC, &s->s_deadline);
		s->s_deadline.tv_sec += s->s_grace;
		s->s_dooming = 1;
	}
}

/*
 * SIGKILLs every child of the reaper that is no running program: what a
 * program left outside its group, given to the reaper as the subreaper.
 * Returns how many.
 */
static int
rp_sweep(struct rp_state *s)
{
	FILE	*f;
	long	 pid;
	int	 n = 0;

	if (!s->s_kids_ok || (f = fopen(s->s_kids, "re")) == NULL)
		return 0;
	while (fscanf(f, "%ld", &pid) == 1)
		if (pid > 0 && rp_find(s, (pid_t)pid) == NULL &&
		    kill((pid_t)pid, SIGKILL) == 0)
			n++;
	fclose(f);
	return n;
}

/* Reaps every child that ended; says which programs. */
static void
rp_reap(struct rp_state *s)
{
	struct reaper_ev	 ev;
	struct rp_prog		*p;
	pid_t			 pid;
	int			 st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		if ((p = rp_find(s, pid)) == NULL)
			continue;	/* a leftover, ended */
		memset(&ev, 0, sizeof(ev));
		ev.ev_type = RE_EXIT;
		ev.ev_pid = pid;
		ev.ev_status = st;
		/*
		 * What it left in its group (sleep 1000 &) follows it, and
		 * in its cgroup, all it started, wherever it went.
		 */
		ev.ev_n = kill(-pid, SIGKILL) == 0;
		if (p->pg_cg != 0)
			(void)rp_cg_end(s, p->pg_cg);
		*p = s->s_progs[--s->s_n];
		rp_send(s, &ev);
	}
	rp_orphans(s, rp_sweep(s));
}

/* Tells the daemon n leftovers were ended (none: nothing said). */
static void
rp_orphans(struct rp_state *s, int n)
{
	struct reaper_ev	 ev;

	if (n <= 0)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.ev_type = RE_ORPHANS;
	ev.ev_n = n;
	rp_send(s, &ev);
}

/*
 * The reaper's start: nothing of the daemon's kept (its sockets, fd 0
 * may be one; its log), signals its own, not dumpable, the subreaper;
 * its HELLO says what it could set up.  Exits if it cannot wait for
 * SIGCHLD.
 */
static void
rp_init(struct rp_state *s)
{
	struct reaper_ev	 hello;
	sigset_t		 set;
	int			 fd, hi, i, n;

	/* stderr stays, for its last words. */
	if ((fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		(void)dup2(fd, 0);
		(void)dup2(fd, 1);
		if (fd > 2)
			close(fd);
	}
	hi = s->s_ctl > s->s_ev ? s->s_ctl : s->s_ev;
	for (fd = 3; fd < hi; fd++)
		if (fd != s->s_ctl && fd != s->s_ev)
			(void)close(fd);
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)hi + 1, ~0U, 0) == -1)
#endif
		for (fd = hi + 1; fd < 65536; fd++)
			(void)close(fd);
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP && i != SIGCHLD)
			(void)signal(i, i == SIGPIPE || i == SIGHUP ||
			    i == SIGINT || i == SIGTERM ? SIG_IGN : SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	(void)sigprocmask(SIG_SETMASK, &set, NULL);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)prctl(PR_SET_NAME, "evfcgid-reaper", 0, 0, 0);
	memset(&hello, 0, sizeof(hello));
	hello.ev_type = RE_HELLO;
	hello.ev_pid = getpid();
	hello.ev_status = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 ?
	    0 : errno;
	snprintf(s->s_kids, sizeof(s->s_kids), "/proc/self/task/%d/children",
	    (int)getpid());
	s->s_kids_ok = access(s->s_kids, R_OK) == 0;
	hello.ev_n = s->s_kids_ok;
	if ((s->s_sig = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) == -1)
		_exit(1);
	n = rp_cg_init(s);
	rp_send(s, &hello);
	rp_orphans(s, n);
}

/*
 * Opens where programs' groups go, and ends what reapers of its slot
 * before it left there (one killed: its programs died with it, not what
 * they started).  Returns how many processes that ended; exits if it
 * cannot open it (the daemon said at start that programs get groups).
 */
static int
rp_cg_init(struct rp_state *s)
{
	struct timespec	 pause = { 0, 20 * 1000 * 1000 };
	char		 slot[CGROUP_NAME_MAX];
	int		 i, killed = 0;

	if (s->s_cgpath == NULL)
		return 0;
	if ((s->s_cgdir = open(s->s_cgpath, O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1) {
		fprintf(stderr, "evfcgid: cgi reaper: %s: %s\n", s->s_cgpath,
		    strerror(errno));
		_exit(1);
	}
	snprintf(slot, sizeof(slot), "%.*s", (int)s->s_cgslot, s->s_cgname);
	for (i = 0; i < 50 && cgroup_sweep(s->s_cgdir, slot, &killed) > 0;
	    i++)
		(void)nanosleep(&pause, NULL);
	return killed;
}

/* The name of its program group number seq. */
static void
rp_cg_name(const struct rp_state *s, unsigned long seq, char *buf,
    size_t len)
{
	snprintf(buf, len, "%s%lu", s->s_cgname, seq);
}

/*
 * Ends program group seq: what is in it SIGKILLed, the group removed, or
 * kept to be removed once they have exited.  Returns how many it held.
 */
static int
rp_cg_end(struct rp_state *s, unsigned long seq)
{
	unsigned long	*d;
	char		 name[CGROUP_NAME_MAX + 24];
	int		 n;

	rp_cg_name(s, seq, name, sizeof(name));
	if ((n = cgroup_kill(s->s_cgdir, name)) < 0)
		n = 0;
	if (cgroup_remove(s->s_cgdir, name) == 0)
		return n;
	if (s->s_ndead == s->s_capdead) {
		if ((d = reallocarray(s->s_dead, s->s_capdead * 2 + 16,
		    sizeof(*d))) == NULL)
			return n;
		s->s_dead = d;
		s->s_capdead = s->s_capdead * 2 + 16;
	}
	s->s_dead[s->s_ndead++] = seq;
	s->s_deadtries = 0;
	return n;
}

/*
 * Tries again to remove the groups whose processes had not all exited;
 * after a minute of tries, says so and leaves them.
 */
static void
rp_cg_retry(struct rp_state *s)
{
	char	 name[CGROUP_NAME_MAX + 24];
	size_t	 i = 0;

	while (i < s->s_ndead) {
		rp_cg_name(s, s->s_dead[i], name, sizeof(name));
		if (cgroup_remove(s->s_cgdir, name) == 0)
			s->s_dead[i] = s->s_dead[--s->s_ndead];
		else
			i++;
	}
	if (s->s_ndead > 0 && ++s->s_deadtries > 1200) {
		fprintf(stderr, "evfcgid: cgi reaper: %zu cgroups under %s "
		    "still hold processes; left\n", s->s_ndead, s->s_cgpath);
		s->s_ndead = 0;
	}
}

/*
 * The reaper's end, once the daemon is gone and every program reaped:
 * its slot's groups ended and removed (for at most 2 s), then exit.
 */
static void
rp_exit(struct rp_state *s)
{
	struct timespec	 pause = { 0, 20 * 1000 * 1000 };
	char		 slot[CGROUP_NAME_MAX];
	int		 i, killed = 0;

	if (s->s_cgdir < 0)
		_exit(0);
	snprintf(slot, sizeof(slot), "%.*s", (int)s->s_cgslot, s->s_cgname);
	for (i = 0; i < 100; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (cgroup_sweep(s->s_cgdir, slot, &killed) == 0)
			break;
		(void)nanosleep(&pause, NULL);
	}
	_exit(0);
}

/*
 * The milliseconds poll() may wait: until the doomed programs' SIGKILL
 * (sent here once it is due), else -1.
 */
static int
rp_timeout(struct rp_state *s)
{
	struct timespec	 now;
	char		 name[CGROUP_NAME_MAX + 24];
	size_t		 i;
	int		 t;

	/* Groups that still held processes: tried again soon. */
	if (!s->s_dooming)
		return s->s_ndead > 0 ? 50 : -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	t = (int)((s->s_deadline.tv_sec - now.tv_sec) * 1000 +
	    (s->s_deadline.tv_nsec - now.tv_nsec) / 1000000);
	if (t > 0)
		return s->s_ndead > 0 && t > 50 ? 50 : t;
	for (i = 0; i < s->s_n; i++) {
		if (!s->s_progs[i].pg_doomed)
			continue;
		if (kill(-s->s_progs[i].pg_pid, SIGKILL) == -1 &&
		    errno == ESRCH)
			(void)kill(s->s_progs[i].pg_pid, SIGKILL);
		if (s->s_progs[i].pg_cg != 0) {
			rp_cg_name(s, s->s_progs[i].pg_cg, name, sizeof(name));
			(void)cgroup_kill(s->s_cgdir, name);
		}
	}
	s->s_dooming = 0;
	return s->s_ndead > 0 ? 50 : -1;
}

/* The reaper's loop: exits once the daemon is gone and all is reaped. */
static void
reaper_main(struct rp_state *s)
{
	struct signalfd_siginfo	 si;
	struct pollfd		 pfd[4];
	int			 nfd, k;
	char			 c;

	rp_init(s);
	for (;;) {
		if (s->s_ndead > 0)
			rp_cg_retry(s);
		if (s->s_ctl < 0 && s->s_n == 0)
			rp_exit(s);
		nfd = 0;
		pfd[nfd].fd = s->s_sig;
		pfd[nfd++].events = POLLIN;
		if (s->s_ctl >= 0) {
			pfd[nfd].fd = s->s_ctl;
			pfd[nfd++].events = POLLIN;
		}
		if (s->s_life >= 0) {
			pfd[nfd].fd = s->s_life;
			pfd[nfd++].events = POLLIN;
		}
		if (s->s_nout > 0) {
			pfd[nfd].fd = s->s_ev;
			pfd[nfd++].events = POLLOUT;
		}
		if (poll(pfd, (nfds_t)nfd, rp_timeout(s)) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		for (k = 0; k < nfd; k++) {
			if (pfd[k].revents == 0)
				continue;
			if (pfd[k].fd == s->s_sig) {
				while (read(s->s_sig, &si, sizeof(si)) > 0)
					;
				rp_reap(s);
			} else if (pfd[k].fd == s->s_ctl)
				rp_request(s);
			else if (pfd[k].fd == s->s_life) {
				if (read(s->s_life, &c, 1) > 0)
					continue;
				close(s->s_life);
				s->s_life = -1;
				rp_doom_all(s);
			} else if (pfd[k].fd == s->s_ev)
				rp_flush(s);
		}
	}
}

/* Closes both ends of a pipe that are open. */
static void
close_pair(int p[2])
{
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	p[0] = p[1] = -1;
}

int
reaper_run(struct cgi_reaper *r, const struct cgi_prog *pr,
    char *const argv[], char *const envp[], struct cgi_proc *p)
{
	int	 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int	 err[2] = { -1, -1 }, fds[3], e;
	pid_t	 pid;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1)
		goto fail;
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	fds[0] = in[0];
	fds[1] = out[1];
	fds[2] = err[1];
	if ((e = reaper_spawn(r, pr->pr_fd, pr->pr_dir, pr->pr_script, argv,
	    envp, fds, &pid)) != 0) {
		errno = e;
		goto fail;
	}
	close(in[0]);
	close(out[1]);
	close(err[1]);
	p->p_pid = pid;
	p->p_in = in[1];
	p->p_out = out[0];
	p->p_err = err[0];
	return 0;
fail:
	e = errno;
	close_pair(in);
	close_pair(out);
	close_pair(err);
	errno = e;
	return -1;
}
