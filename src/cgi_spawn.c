/*
 * cgi_spawn.c: which file a request may run (inside the root, a regular
 * executable file), and starting it: vfork, then in the child only what
 * async-signal-safe calls can do before execve() (the daemon is one
 * thread, so nothing is held locked).  No shell in between.
 */
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgi.h"

static void	child_say(const char *, const char *, int);
static int	child_fd_high(int);
static void	child_close_from(int);
static void	child_run(const char *, char *const[], char *const[], int[3])
		    __attribute__((noreturn));
static void	close_pair(int[2]);

int
cgi_resolve(const char *root, size_t rootlen, const char *path, char **real,
    const char **why)
{
	struct stat	 st;
	char		*r;

	*real = NULL;
	if (path == NULL || path[0] != '/') {
		*why = "not an absolute path";
		return 404;
	}
	if ((r = realpath(path, NULL)) == NULL) {
		if (errno == ENOMEM) {
			*why = "out of memory";
			return 500;
		}
		*why = errno == EACCES ? "a directory on its way cannot be "
		    "searched" : "no such file";
		return errno == EACCES ? 403 : 404;
	}
	if (strncmp(r, root, rootlen) != 0 || (r[rootlen] != '/' &&
	    !(rootlen == 0 && r[0] == '/'))) {
		*why = "outside the CGI root";
		free(r);
		return 403;
	}
	if (stat(r, &st) == -1) {
		*why = "no such file";
		free(r);
		return 404;
	}
	if (!S_ISREG(st.st_mode)) {
		*why = S_ISDIR(st.st_mode) ? "a directory" :
		    "not a regular file";
		free(r);
		return 403;
	}
	if (access(r, X_OK) == -1) {
		*why = "not executable";
		free(r);
		return 403;
	}
	*real = r;
	return 0;
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
 * rest closed; then the program.  Never returns.
 */
static void
child_run(const char *real, char *const argv[], char *const envp[], int fds[3])
{
	const char	*argv0 = argv[0];
	char		 dir[PATH_MAX];
	char		*slash;
	sigset_t	 none;
	int		 i;

	/* Signals were blocked across fork: defaults first, then unblock. */
	for (i = 1; i < NSIG; i++)
		if (i != SIGKILL && i != SIGSTOP)
			(void)signal(i, SIG_DFL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	(void)setpgid(0, 0);
	for (i = 0; i < 3; i++)
		if ((fds[i] = child_fd_high(fds[i])) == -1)
			_exit(127);
	for (i = 0; i < 3; i++)
		if (dup2(fds[i], i) == -1)
			_exit(127);
	child_close_from(3);
	if (strlen(argv0) >= sizeof(dir)) {
		child_say("chdir", argv0, ENAMETOOLONG);
		_exit(127);
	}
	memcpy(dir, argv0, strlen(argv0) + 1);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
	if (chdir(dir) == -1) {
		child_say("chdir", dir, errno);
		_exit(127);
	}
	execve(real, argv, envp);
	child_say("execve", real, errno);
	_exit(127);
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
cgi_spawn(const char *real, char *const argv[], char *const envp[],
    struct cgi_proc *p)
{
	int		 in[2] = { -1, -1 }, out[2] = { -1, -1 };
	int		 err[2] = { -1, -1 }, fds[3], e;
	sigset_t	 all, old;
	pid_t		 pid;

	if (pipe2(in, O_CLOEXEC) == -1 || pipe2(out, O_CLOEXEC) == -1 ||
	    pipe2(err, O_CLOEXEC) == -1)
		goto fail;
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(out[0], F_SETFL, O_NONBLOCK) == -1 ||
	    fcntl(err[0], F_SETFL, O_NONBLOCK) == -1)
		goto fail;
	/* No handler of ours may run in the child before it resets them. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	/*
	 * vfork: the child only resets signals, moves descriptors, changes
	 * directory and execs (its own frame; nothing of ours it changes is
	 * read after), and fork's copy of the page tables grows with the
	 * output the daemon holds (the experiment: 0.52 of the baseline
	 * beside 100 slow CGI downloads).
	 */
	pid = vfork();
	if (pid == 0) {
		fds[0] = in[0];
		fds[1] = out[1];
		fds[2] = err[1];
		child_run(real, argv, envp, fds);
	}
	e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		errno = e;
		goto fail;
	}
	/* Either side may win the race; both make the group. */
	(void)setpgid(pid, pid);
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
