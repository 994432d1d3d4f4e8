/*
 * cgi_cgroup.c: a cgroup per CGI program, for the reaper (cgi_reaper.c).
 * The daemon finds at start where it may make them (its own cgroup,
 * where it is a hierarchy's root or was delegated, in v2 or in a v1 pids
 * hierarchy); the reaper makes one per program with pids.max set before
 * the program runs (the program enters it itself, between fork and
 * exec), SIGKILLs what is in it when the program ends, and removes it.
 * Nothing here is on the loop: each call is a few small files' reads
 * and writes.
 */
#include <sys/types.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgi_cgroup.h"

#define CGROUP_KILL_ROUNDS	64

static int	has_word(const char *, const char *, const char *);
static int	read_at(int, const char *, char *, size_t);
static int	write_at(int, const char *, const char *);
static int	own_path(int, char *, size_t);
static int	locate(int, char *, size_t, int *);
static int	delegated(const char *);
static int	v2_pids(const char *, char *, size_t);
static int	probe(const char *, const char *, char *, size_t);
static size_t	read_pids(int, const char *, pid_t **, size_t *);
static int	cgroup_end(int, const char *, int *);

/* Whether w is one of list's words (separated by any of seps). */
static int
has_word(const char *list, const char *w, const char *seps)
{
	size_t	 n = strlen(w), k;

	while (*list != '\0') {
		k = strcspn(list, seps);
		if (k == n && strncmp(list, w, n) == 0)
			return 1;
		list += k;
		list += strspn(list, seps);
	}
	return 0;
}

/* Reads the small file path (under dirfd) into buf, NUL-ended: its
 * length, or -1. */
static int
read_at(int dirfd, const char *path, char *buf, size_t len)
{
	ssize_t	 n;
	size_t	 got = 0;
	int	 fd, e;

	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		got += (size_t)n;
	}
	buf[got] = '\0';
	close(fd);
	return (int)got;
}

/* Writes s to the cgroup file path (under dirfd) in one write: 0, or -1
 * with errno. */
static int
write_at(int dirfd, const char *path, const char *s)
{
	ssize_t	 n;
	int	 fd, e;

	if ((fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	while ((n = write(fd, s, strlen(s))) == -1 && errno == EINTR)
		;
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/*
 * This process's cgroup path in the hierarchy of version v (2: the
 * unified one; 1: the one with the pids controller), from
 * /proc/self/cgroup.  Returns 0, or -1.
 */
static int
own_path(int v, char *buf, size_t len)
{
	FILE	*f;
	char	 line[1024], *ctl, *path;
	int	 found = -1;

	if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
		return -1;
	while (found == -1 && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((ctl = strchr(line, ':')) == NULL ||
		    (path = strchr(++ctl, ':')) == NULL)
			continue;
		*path++ = '\0';
		if (v == 2 ? strcmp(line, "0:") == 0 && *ctl == '\0' :
		    has_word(ctl, "pids", ","))
			found = snprintf(buf, len, "%s", path) < (int)len ?
			    0 : -1;
	}
	fclose(f);
	return found;
}

/*
 * The directory of this process's cgroup in the hierarchy of version v,
 * where it is mounted (/proc/self/mountinfo), and whether that cgroup is
 * the hierarchy's root as this process sees it.  Returns 0, or -1.
 */
static int
locate(int v, char *dir, size_t len, int *isroot)
{
	FILE		*f;
	char		 line[4096], own[CGROUP_PATH_MAX], *fld[6], *dash;
	char		*type, *opts, *p, *rel;
	size_t		 rl;
	int		 i, found = -1;

	if (own_path(v, own, sizeof(own)) == -1 ||
	    (f = fopen("/proc/self/mountinfo", "re")) == NULL)
		return -1;
	while (found == -1 && fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((dash = strstr(line, " - ")) == NULL)
			continue;
		*dash = '\0';
		type = strtok_r(dash + 3, " ", &p);
		(void)strtok_r(NULL, " ", &p);
		opts = strtok_r(NULL, " ", &p);
		if (type == NULL || opts == NULL)
			continue;
		if (v == 2 ? strcmp(type, "cgroup2") != 0 :
		    strcmp(type, "cgroup") != 0 || !has_word(opts, "pids", ","))
			continue;
		for (i = 0, p = line; i < 5 && p != NULL; i++)
			fld[i] = strsep(&p, " ");
		if (i < 5 || fld[4] == NULL)
			continue;
		/* The mount's root (its field 4) may be below the top. */
		rel = own;
		if (strcmp(fld[3], "/") != 0) {
			rl = strlen(fld[3]);
			if (strncmp(own, fld[3], rl) != 0 ||
			    (own[rl] != '/' && own[rl] != '\0'))
				continue;
			rel = own + rl;
		}
		if (strcmp(rel, "/") == 0)
			rel = "";
		*isroot = *rel == '\0';
		found = snprintf(dir, len, "%s%s", fld[4], rel) < (int)len ?
		    0 : -1;
	}
	fclose(f);
	return found;
}

/*
 * Whether dir was given to this process: systemd's Delegate= marks it
 * (trusted.delegate, or user.delegate for a user's manager), and a
 * cgroup delegated by hand is owned by its non-root user.
 */
static int
delegated(const char *dir)
{
	struct stat	 st;
	char		 v[8];
	ssize_t		 n;

	if ((n = getxattr(dir, "trusted.delegate", v, sizeof(v))) > 0 ||
	    (n = getxattr(dir, "user.delegate", v, sizeof(v))) > 0)
		return v[0] == '1';
	return stat(dir, &st) == 0 && geteuid() != 0 &&
	    st.st_uid == geteuid();
}

/*
 * v2: the pids controller enabled for dir's children.  A group with
 * processes may not enable one (but the root): this process moves to the
 * leaf dir/evfcgid first, back again if that does not help.  Returns 0,
 * or -1 with why.
 */
static int
v2_pids(const char *dir, char *why, size_t whylen)
{
	char	 buf[512];
	int	 dfd, made, e;

	if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (read_at(dfd, "cgroup.controllers", buf, sizeof(buf)) == -1 ||
	    !has_word(buf, "pids", " ")) {
		snprintf(why, whylen, "no pids controller given to it");
		close(dfd);
		return -1;
	}
	if (read_at(dfd, "cgroup.subtree_control", buf, sizeof(buf)) >= 0 &&
	    has_word(buf, "pids", " ")) {
		close(dfd);
		return 0;
	}
	if (write_at(dfd, "cgroup.subtree_control", "+pids") == 0) {
		close(dfd);
		return 0;
	}
	if (errno != EBUSY) {
		snprintf(why, whylen, "enabling pids: %s", strerror(errno));
		close(dfd);
		return -1;
	}
	/* Processes in it (this one): they go to a leaf of their own. */
	made = mkdirat(dfd, "evfcgid", 0755) == 0;
	if ((made || errno == EEXIST) &&
	    write_at(dfd, "evfcgid/cgroup.procs", "0") == 0 &&
	    write_at(dfd, "cgroup.subtree_control", "+pids") == 0) {
		close(dfd);
		return 0;
	}
	e = errno;
	(void)write_at(dfd, "cgroup.procs", "0");
	if (made)
		(void)unlinkat(dfd, "evfcgid", AT_REMOVEDIR);
	snprintf(why, whylen, "enabling pids from the leaf evfcgid: %s",
	    strerror(e));
	close(dfd);
	return -1;
}

/* Makes and removes a group under dir: 0, or -1 with why. */
static int
probe(const char *dir, const char *prefix, char *why, size_t whylen)
{
	char	 name[CGROUP_NAME_MAX + 8];
	int	 dfd, fd;

	snprintf(name, sizeof(name), "%s.probe", prefix);
	if ((dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    (fd = cgroup_make(dfd, name, 1)) == -1) {
		snprintf(why, whylen, "making a group: %s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	close(fd);
	(void)cgroup_remove(dfd, name);
	close(dfd);
	return 0;
}

int
cgroup_find(struct cgi_cgroup *cgr, char *why, size_t whylen)
{
	char		 dir[CGROUP_PATH_MAX], r[CGROUP_PATH_MAX + 320];
	char		 e[256];
	uint32_t	 tok;
	size_t		 off = 0;
	int		 v, isroot;

	memset(cgr, 0, sizeof(*cgr));
	if (getrandom(&tok, sizeof(tok), GRND_NONBLOCK) != sizeof(tok))
		tok = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
	/* Unique among daemons, also in other pid namespaces. */
	snprintf(cgr->cgr_prefix, sizeof(cgr->cgr_prefix),
	    "evfcgid-cgi.%d.%08x", (int)getpid(), (unsigned)tok);
	why[0] = '\0';
	for (v = 2; v >= 1; v--) {
		if (locate(v, dir, sizeof(dir), &isroot) == -1)
			snprintf(r, sizeof(r), "%s", v == 2 ?
			    "no cgroup2 mount" : "no pids hierarchy mounted");
		else if (!isroot && !delegated(dir))
			snprintf(r, sizeof(r), "%s not delegated to it "
			    "(systemd: Delegate=pids)", dir);
		else if ((v == 2 && v2_pids(dir, e, sizeof(e)) == -1) ||
		    probe(dir, cgr->cgr_prefix, e, sizeof(e)) == -1)
			snprintf(r, sizeof(r), "%s: %s", dir, e);
		else {
			cgr->cgr_v = v;
			snprintf(cgr->cgr_dir, sizeof(cgr->cgr_dir), "%s", dir);
			return 0;
		}
		if (off < whylen)
			off += (size_t)snprintf(why + off, whylen - off,
			    "%sv%d: %s", off > 0 ? "; " : "", v, r);
	}
	return -1;
}

int
cgroup_make(int dirfd, const char *name, unsigned long max)
{
	char	 path[CGROUP_NAME_MAX + 32], num[32];
	int	 fd, e;

	if (mkdirat(dirfd, name, 0755) == -1) {
		/* A group of that name left (its reaper died): ended first. */
		if (errno != EEXIST || cgroup_remove(dirfd, name) != 0 ||
		    mkdirat(dirfd, name, 0755) == -1)
			return -1;
	}
	snprintf(num, sizeof(num), "%lu", max);
	snprintf(path, sizeof(path), "%s/pids.max", name);
	if (write_at(dirfd, path, num) == -1)
		goto fail;
	snprintf(path, sizeof(path), "%s/cgroup.procs", name);
	if ((fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC)) == -1)
		goto fail;
	return fd;
fail:
	e = errno;
	(void)unlinkat(dirfd, name, AT_REMOVEDIR);
	errno = e;
	return -1;
}

/*
 * The pids in group name's cgroup.procs into *pids (grown as needed, cap
 * *cap).  Returns how many; (size_t)-1 when it cannot be read.
 */
static size_t
read_pids(int dirfd, const char *name, pid_t **pids, size_t *cap)
{
	char	 path[CGROUP_NAME_MAX + 32];
	pid_t	*p;
	FILE	*f;
	long	 pid;
	size_t	 n = 0;
	int	 fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", name);
	if ((fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) == -1)
		return (size_t)-1;
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return (size_t)-1;
	}
	while (fscanf(f, "%ld", &pid) == 1) {
		if (n == *cap) {
			if ((p = reallocarray(*pids, *cap * 2 + 64,
			    sizeof(*p))) == NULL)
				break;
			*pids = p;
			*cap = *cap * 2 + 64;
		}
		(*pids)[n++] = (pid_t)pid;
	}
	fclose(f);
	return n;
}

int
cgroup_kill(int dirfd, const char *name)
{
	char	 path[CGROUP_NAME_MAX + 32];
	pid_t	*cur = NULL, *prev = NULL, *t;
	size_t	 ncur, nprev = 0, ccur = 0, cprev = 0, i, j;
	int	 round, fresh, total = 0;

	for (round = 0; round < CGROUP_KILL_ROUNDS; round++) {
		ncur = read_pids(dirfd, name, &cur, &ccur);
		if (ncur == (size_t)-1) {
			total = round == 0 ? -1 : total;
			break;
		}
		/* v2 (5.14 on): the kernel kills them all, forks included. */
		snprintf(path, sizeof(path), "%s/cgroup.kill", name);
		if (round == 0 && ncur > 0 && write_at(dirfd, path, "1") == 0) {
			total = (int)ncur;
			break;
		}
		/*
		 * Until a round finds none it has not signalled: a process
		 * that exited stays listed until it is reaped.
		 */
		for (i = 0, fresh = 0; i < ncur; i++) {
			for (j = 0; j < nprev && prev[j] != cur[i]; j++)
				;
			if (j < nprev)
				continue;
			if (kill(cur[i], SIGKILL) == 0)
				fresh++;
		}
		total += fresh;
		if (fresh == 0)
			break;
		t = prev, prev = cur, cur = t;
		j = cprev, cprev = ccur, ccur = j;
		nprev = ncur;
	}
	free(cur);
	free(prev);
	return total;
}

int
cgroup_remove(int dirfd, const char *name)
{
	return cgroup_end(dirfd, name, NULL);
}

/* cgroup_remove, adding to *killed (if not NULL) what was SIGKILLed. */
static int
cgroup_end(int dirfd, const char *name, int *killed)
{
	int	 n;

	if ((n = cgroup_kill(dirfd, name)) == -1 && errno == ENOENT)
		return 0;
	if (n > 0 && killed != NULL)
		*killed += n;
	if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
		return 0;
	return 1;
}

int
cgroup_sweep(int dirfd, const char *prefix, int *killed)
{
	struct dirent	*d;
	DIR		*dp;
	size_t		 pl = strlen(prefix);
	int		 fd, busy = 0;

	if ((fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1)
		return 0;
	if ((dp = fdopendir(fd)) == NULL) {
		close(fd);
		return 0;
	}
	while ((d = readdir(dp)) != NULL)
		if (strncmp(d->d_name, prefix, pl) == 0 &&
		    strlen(d->d_name) < CGROUP_NAME_MAX &&
		    cgroup_end(dirfd, d->d_name, killed) != 0)
			busy++;
	closedir(dp);
	return busy;
}
