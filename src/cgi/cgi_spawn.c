/*
 * cgi_spawn.c: which file a request may run (inside the root, a regular
 * executable file), opened once and checked on its descriptor, and
 * starting it from that descriptor, in the reaper (cgi_reaper.c): vfork,
 * then in the child only what async-signal-safe calls can do before
 * fexecve() (the reaper is one thread, so nothing is held locked).  No
 * shell in between, and no path looked up again between the check and
 * the run.
 */
#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SYS_openat2
#include <linux/openat2.h>
#endif

#include "cgi.h"
#include "cgi_reaper.h"

static int	sys_openat2(int, const char *, int);
static int	open_beneath(int, const char *, int, const char *);
static int	may_exec(int, const struct stat *);
static int	open_prog(int, const char *, const char *);
static int	open_status(int, const char **);
static void	child_say(const char *, const char *, int);
static int	child_fd_high(int);
static void	child_close_from(int);
static void	child_run(int, int, int, char *const[], char *const[],
		    const int[3], const struct spawn_as *)
		    __attribute__((noreturn));

/*
 * Whether openat2 and faccessat2 answer here: 1 yes, 0 no, -1 not known
 * yet.  Each is tried once on something that must succeed (the directory
 * itself, a file open already): a kernel without them says ENOSYS, but a
 * seccomp filter that does not know them (older container runtimes'
 * default profiles) says EPERM or EACCES, which would otherwise read as a
 * refusal of every program.
 */
static int	have_openat2 = -1;
static int	have_faccessat2 = -1;
/* The reaper's pid, for its vfork children to check it still runs. */
static pid_t	spawn_parent;

/* openat2 of rel beneath dirfd, no link on the way; -1 with errno. */
static int
sys_openat2(int dirfd, const char *rel, int flags)
{
#ifdef SYS_openat2
	struct open_how	 how;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned)(flags | O_CLOEXEC);
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
	    RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
#else
	(void)dirfd;
	(void)rel;
	(void)flags;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * Opens rel (relative, "." for dirfd itself) beneath dirfd (a directory)
 * with flags (O_PATH and the like; close-on-exec added), no symbolic link
 * followed on the way.  want is the absolute path rel must turn out to
 * be, checked on the descriptor where openat2 does not answer.  Returns
 * the descriptor, or -1 with errno (ELOOP, EXDEV: a link or a way out).
 */
static int
open_beneath(int dirfd, const char *rel, int flags, const char *want)
{
	char		 link[32], got[PATH_MAX];
	ssize_t		 n;
	int		 fd;

	if (have_openat2 == -1) {
		if ((fd = sys_openat2(dirfd, ".", O_PATH | O_DIRECTORY)) >= 0)
			close(fd);
		have_openat2 = fd >= 0;
	}
	if (have_openat2)
		return sys_openat2(dirfd, rel, flags);
	/* No openat2 (old kernel, seccomp): where it landed is checked. */
	if ((fd = openat(dirfd, rel, flags | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, got, sizeof(got) - 1)) == -1 ||
	    (got[n] = '\0', strcmp(got, want) != 0)) {
		close(fd);
		errno = EXDEV;
		return -1;
	}
	return fd;
}

/* Whether this process (its effective ids) may execute fd's file, st. */
static int
may_exec(int fd, const struct stat *st)
{
#ifdef SYS_faccessat2
	/* F_OK on a file open already cannot fail where it works. */
	if (have_faccessat2 == -1)
		have_faccessat2 = syscall(SYS_faccessat2, fd, "", F_OK,
		    AT_EMPTY_PATH | AT_EACCESS) == 0;
	if (have_faccessat2)
		return syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH |
		    AT_EACCESS) == 0;
#else
	(void)fd;
#endif
	/* Without faccessat2: the mode bits (no ACLs; execve has them). */
	if (geteuid() == 0)
		return (st->st_mode & 0111) != 0;
	if (st->st_uid == geteuid())
		return (st->st_mode & S_IXUSR) != 0;
	if (st->st_gid == getegid())
		return (st->st_mode & S_IXGRP) != 0;
	return (st->st_mode & S_IXOTH) != 0;
}

/* The status (and *why) for errno e from opening a program. */
static int
open_status(int e, const char **why)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
		*why = "no such file";
		return 404;
	case ENOMEM:
		*why = "out of memory";
		return 500;
	case EMFILE:
	case ENFILE:
		*why = "out of descriptors";
		return 503;
	case EACCES:
		*why = "a directory on its way cannot be searched";
		return 403;
	case ELOOP:
	case EXDEV:
		*why = "a symbolic link on its way, or a way out of the CGI "
		    "root, since it was resolved";
		return 403;
	default:
		*why = "cannot be opened";
		return 403;
	}
}

int
cgi_open(int rootfd, const char *root, size_t rootlen, const char *path,
    struct cgi_prog *pr, const char **why)
{
	struct stat	 st;
	char		*r, *slash, magic[2];
	const char	*rel;
	int		 e;

	pr->pr_fd = pr->pr_dir = -1;
	pr->pr_real = NULL;
	pr->pr_script = 0;
	if (path == NULL || path[0] != '/') {
		*why = "not an absolute path";
		return 404;
	}
	if ((r = realpath(path, NULL)) == NULL)
		return open_status(errno, why);
	if (strncmp(r, root, rootlen) != 0 || (r[rootlen] != '/' &&
	    !(rootlen == 0 && r[0] == '/'))) {
		*why = "outside the CGI root";
		free(r);
		return 403;
	}
	if (r[rootlen + 1] == '\0') {
		*why = "a directory";
		free(r);
		return 403;
	}
	pr->pr_real = r;
	/* Its directory beneath the root, then the file in it. */
	rel = r + rootlen + 1;
	slash = strrchr(r, '/');
	if (slash == r + rootlen)
		pr->pr_dir = open_beneath(rootfd, ".", O_PATH | O_DIRECTORY,
		    rootlen > 0 ? root : "/");
	else {
		*slash = '\0';
		pr->pr_dir = open_beneath(rootfd, rel, O_PATH | O_DIRECTORY,
		    r);
		*slash = '/';
	}
	if (pr->pr_dir == -1 || (pr->pr_fd = open_prog(pr->pr_dir,
	    slash + 1, r)) == -1 || fstat(pr->pr_fd, &st) == -1) {
		e = errno;
		cgi_prog_close(pr);
		return open_status(e, why);
	}
	if (!S_ISREG(st.st_mode) || !may_exec(pr->pr_fd, &st)) {
		*why = S_ISDIR(st.st_mode) ? "a directory" :
		    !S_ISREG(st.st_mode) ? "not a regular file" :
		    "not executable";
		cgi_prog_close(pr);
		return 403;
	}
	/* One read here spares the child a failed exec of a script. */
	pr->pr_script = pread(pr->pr_fd, magic, 2, 0) == 2 &&
	    magic[0] == '#' && magic[1] == '!';
	return 0;
}

/*
 * Opens the program name beneath its directory dirfd (real: its path)
 * read-only: the interpreter of a "#!" script reads it as /dev/fd/3, and
 * perl reads that descriptor itself.  A file that may only be executed
 * is opened O_PATH.  O_NONBLOCK: a FIFO swapped in must not block us (a
 * device cannot be, without root's mknod).  Returns the descriptor, or
 * -1 with errno.
 */
static int
open_prog(int dirfd, const char *name, const char *real)
{
	int	 fd;

	if ((fd = open_beneath(dirfd, name, O_RDONLY | O_NONBLOCK | O_NOCTTY,
	    real)) == -1 && errno == EACCES)
		fd = open_beneath(dirfd, name, O_PATH, real);
	return fd;
}

void
cgi_prog_close(struct cgi_prog *pr)
{
	if (pr->pr_fd >= 0)
		close(pr->pr_fd);
	if (pr->pr_dir >= 0)
		close(pr->pr_dir);
	free(pr->pr_real);
	pr->pr_fd = pr->pr_dir = -1;
	pr->pr_real = NULL;
}

/* Child side: "evfcgid: cgi: WHAT ARG: strerror(err)" on fd 2. */
static void
child_say(const char *what, const char *arg, int err)
{
	const char	*parts[7];
	size_t		 i;

	parts[0] = "evfcgid: cgi: ";
	parts[1] = what;
	parts[2] = " ";
	parts[3] = arg;
	parts[4] = ": ";
	parts[5] = strerror(err);
	parts[6] = "\n";
	for (i = 0; i < 7; i++)
		(void)!write(STDERR_FILENO, parts[i], strlen(parts[i]));
}

/* Child side: fd moved to 3 or above (0-2 are about to be replaced). */
static int
child_fd_high(int fd)
{
	return fd > 2 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 3);
}

/* Child side: closes every descriptor from fd up. */
static void
child_close_from(int fd)
{
	long	 max, i;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)fd, ~0U, 0) == 0)
		return;
#endif
	if ((max = sysconf(_SC_OPEN_MAX)) < 0 || max > 65536)
		max = 65536;
	for (i = fd; i < max; i++)
		(void)close((int)i);
}

/*
 * Child side: fds (its stdin, stdout, stderr ends) become 0, 1, 2, the
 * rest closed but the program's file as 3; into its directory, then the
 * program from its descriptor.  Never returns.
 */
static void
child_run(int prog, int dir, int script, char *const argv[],
    char *const envp[], const int pipes[3], const struct spawn_as *as)
{
	struct rlimit	 rl;
	sigset_t	 none;
	int		 i, fds[3];

	/* Signals were blocked across fork: defaults first, then unblock. */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			(void)signal(i, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0);
	/*
	 * Into its cgroup while it may still (before its change of user):
	 * its pids.max counts it and all it starts from here on.
	 */
	if (as->sa_cgfd >= 0 && write(as->sa_cgfd, "0", 1) != 1) {
		child_say("cgroup", argv[0], errno);
		_exit(127);
	}
	/*
	 * Its own user (the reaper kept root for this alone), by the raw
	 * calls: this is a vfork child, and glibc's wrappers may synchronise
	 * threads.  Then its processes at once, counted per user.
	 */
	if (as->sa_uid != (uid_t)-1 &&
	    (syscall(SYS_setgroups, 1, &as->sa_gid) == -1 ||
	    syscall(SYS_setresgid, as->sa_gid, as->sa_gid, as->sa_gid) == -1 ||
	    syscall(SYS_setresuid, as->sa_uid, as->sa_uid, as->sa_uid) == -1)) {
		child_say("setresuid", argv[0], errno);
		_exit(127);
	}
	if (as->sa_nproc > 0) {
		rl.rlim_cur = rl.rlim_max = as->sa_nproc;
		if (setrlimit(RLIMIT_NPROC, &rl) == -1)
			_exit(127);
	}
	/*
	 * It dies with the reaper (a program of its user that kills the
	 * reaper takes its siblings with it, none runs on unparented).  Set
	 * after the change of user, which clears it.
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != spawn_parent)
		_exit(127);
	for (i = 0; i < 3; i++)
		if ((fds[i] = child_fd_high(pipes[i])) == -1)
			_exit(127);
	if ((prog = child_fd_high(prog)) == -1 ||
	    (dir = child_fd_high(dir)) == -1)
		_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) == -1)
			_exit(127);
	if (fchdir(dir) == -1) {
		child_say("chdir", argv[0], errno);
		_exit(127);
	}
	if (prog != 3 && dup3(prog, 3, O_CLOEXEC) == -1)
		_exit(127);
	child_close_from(4);
	/*
	 * A "#!" script's interpreter reads /dev/fd/3, which close-on-exec
	 * would close: it stays open for it.  ENOENT: a script the parent's
	 * read did not see as one (it changed in place since).
	 */
	if (script && fcntl(3, F_SETFD, 0) == -1)
		_exit(127);
	(void)fexecve(3, argv, envp);
	if (errno == ENOENT && !script && fcntl(3, F_SETFD, 0) == 0)
		(void)fexecve(3, argv, envp);
	child_say("exec", argv[0], errno);
	_exit(127);
}

int
cgi_spawn_fds(int prog, int dir, int script, char *const argv[],
    char *const envp[], const int fds[3], const struct spawn_as *as,
    pid_t *pidp)
{
	sigset_t	 all, old;
	pid_t		 pid;
	int		 e;

	/* No handler of ours may run in the child before it resets them. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	spawn_parent = getpid();
	/*
	 * vfork: the child only resets signals, moves descriptors, changes
	 * directory and execs (its own frame; nothing of ours it changes is
	 * read after); fork would copy the page tables for nothing.
	 */
	pid = vfork();
	if (pid == 0)
		child_run(prog, dir, script, argv, envp, fds, as);
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		errno = e;
		return -1;
	}
	/* Either side may win the race; both make the group. */
	(void)setpgid(pid, pid);
	*pidp = pid;
	return 0;
}
