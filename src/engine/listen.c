/*
 * listen.c: the one parser of evfcgid's address syntax, resolution and
 * binding.  Pure socket calls: errors come back as strings, nothing is
 * logged and nothing exits.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen.h"

static int	addr_parse_unix(const char *, struct addr *, const char **);
static int	addr_split(const char *, int, struct addr *, const char **);
static int	listen_bind_opt(const char *, int, uid_t, gid_t, int, int,
		    char *, size_t);
static int	bind_inet(const char *, const struct addr *, int, int, char *,
		    size_t);
static int	bind_unix(const struct addr *, int, uid_t, gid_t, int, char *,
		    size_t);
static int	bind_owned(int, const char *, int, uid_t, gid_t, char *,
		    size_t);
static int	bind_here(int, int, const char *, int);

int
addr_parse(const char *s, int passive, struct addr *a, const char **why)
{
	memset(a, 0, sizeof(*a));
	if (strncmp(s, "unix:", 5) == 0)
		return addr_parse_unix(s + 5, a, why);
	if (addr_split(s, passive, a, why) == -1)
		return -1;
	return addr_resolve(a->a_host, a->a_port, passive, &a->a_ss,
	    &a->a_len, why);
}

/* Fills a with the unix socket at path.  0, or -1 with *why. */
static int
addr_parse_unix(const char *path, struct addr *a, const char **why)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&a->a_ss;
	size_t			 len = strlen(path);

	if (len == 0 || len >= sizeof(sun->sun_path) ||
	    len >= sizeof(a->a_host)) {
		*why = "empty or too long socket path";
		return -1;
	}
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, path, len + 1);
	a->a_len = (socklen_t)sizeof(*sun);
	a->a_unix = 1;
	memcpy(a->a_host, path, len + 1);
	snprintf(a->a_port, sizeof(a->a_port), "0");
	return 0;
}

/*
 * Splits HOST:PORT or [V6]:PORT into a->a_host and a->a_port, checking the
 * port (0 only when passive).  Returns 0, or -1 with *why.
 */
static int
addr_split(const char *s, int passive, struct addr *a, const char **why)
{
	const char	*h = s, *he, *port;
	size_t		 hl, i, plen;
	unsigned long	 n = 0;

	if (s[0] == '[') {
		h = s + 1;
		if ((he = strchr(h, ']')) == NULL || he[1] != ':') {
			*why = "expected [V6]:PORT";
			return -1;
		}
	} else {
		if ((he = strrchr(s, ':')) == NULL) {
			*why = "expected HOST:PORT, [V6]:PORT or unix:/path";
			return -1;
		}
		if (memchr(s, ':', (size_t)(he - s)) != NULL) {
			*why = "an IPv6 address needs brackets: [V6]:PORT";
			return -1;
		}
	}
	port = s[0] == '[' ? he + 2 : he + 1;
	hl = (size_t)(he - h);
	if (hl == 0 || hl >= sizeof(a->a_host)) {
		*why = "empty or too long host";
		return -1;
	}
	plen = strlen(port);
	for (i = 0; i < plen && plen <= 5; i++)
		n = n * 10 + (unsigned long)(port[i] - '0');
	if (plen == 0 || plen > 5 || strspn(port, "0123456789") != plen ||
	    n > 65535 || (n == 0 && !passive)) {
		*why = "bad port";
		return -1;
	}
	memcpy(a->a_host, h, hl);
	a->a_host[hl] = '\0';
	snprintf(a->a_port, sizeof(a->a_port), "%lu", n);
	return 0;
}

int
addr_resolve(const char *host, const char *port, int passive,
    struct sockaddr_storage *ss, socklen_t *len, const char **why)
{
	struct addrinfo	 hints, *res, *ai, *pick;
	int		 gai;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* No AI_ADDRCONFIG: a host with only loopback must still resolve. */
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	if ((gai = getaddrinfo(host, port, &hints, &res)) != 0) {
		*why = gai_strerror(gai);
		return -1;
	}
	/* A server binds what the resolver lists first; a client tries v4. */
	pick = res;
	for (ai = res; !passive && ai != NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET) {
			pick = ai;
			break;
		}
	memcpy(ss, pick->ai_addr, pick->ai_addrlen);
	*len = pick->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

int
addr_literal(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, s, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
	} else
		return -1;
	return 0;
}

static int
listen_bind_opt(const char *addr, int mode, uid_t uid, gid_t gid,
    int backlog, int shared, char *err, size_t errlen)
{
	struct addr	 a;
	const char	*why;

	if (addr_parse(addr, 1, &a, &why) == -1) {
		snprintf(err, errlen, "%s: %s", addr, why);
		return -1;
	}
	if (a.a_unix)
		return bind_unix(&a, mode, uid, gid, backlog, err, errlen);
	return bind_inet(addr, &a, backlog, shared, err, errlen);
}

int
listen_bind(const char *addr, int mode, int backlog, char *err,
    size_t errlen)
{
	return listen_bind_opt(addr, mode, (uid_t)-1, (gid_t)-1, backlog, 0,
	    err, errlen);
}

int
listen_bind_owned(const char *addr, int mode, uid_t uid, gid_t gid,
    int backlog, char *err, size_t errlen)
{
	return listen_bind_opt(addr, mode, uid, gid, backlog, 0, err, errlen);
}

int
listen_bind_shared(const char *addr, int mode, int backlog, char *err,
    size_t errlen)
{
	return listen_bind_opt(addr, mode, (uid_t)-1, (gid_t)-1, backlog, 1,
	    err, errlen);
}

int
listen_clone(int fd, int backlog, char *err, size_t errlen)
{
	struct addr	 a;
	char		 name[128];

	memset(&a, 0, sizeof(a));
	a.a_len = sizeof(a.a_ss);
	if (getsockname(fd, (struct sockaddr *)&a.a_ss, &a.a_len) == -1) {
		snprintf(err, errlen, "getsockname: %s", strerror(errno));
		return -1;
	}
	sockaddr_name((struct sockaddr *)&a.a_ss, name, sizeof(name));
	return bind_inet(name, &a, backlog, 1, err, errlen);
}

/*
 * Binds and listens on the TCP address a, with SO_REUSEPORT when shared.
 * The socket, or -1 with err.
 */
static int
bind_inet(const char *addr, const struct addr *a, int backlog, int shared,
    char *err, size_t errlen)
{
	int	 fd, one = 1;

	fd = socket(a->a_ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (shared && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
	    sizeof(one)) == -1) {
		snprintf(err, errlen, "SO_REUSEPORT: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (a->a_ss.ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
		    sizeof(one));
	if (bind(fd, (const struct sockaddr *)&a->a_ss, a->a_len) == -1 ||
	    listen(fd, backlog) == -1) {
		snprintf(err, errlen, "cannot listen on %s: %s", addr,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Binds the unix socket a: a stale socket file (nobody accepts on it) is
 * replaced, a live one is an error.  The file is made with mode (its
 * permission bits) by the umask bind() sees, never by a chmod() of the
 * path; an owner or group (not -1) is given as bind_owned() does.
 * Returns the socket, or -1 with err.
 */
static int
bind_unix(const struct addr *a, int mode, uid_t uid, gid_t gid,
    int backlog, char *err, size_t errlen)
{
	const char	*path = a->a_host;
	struct stat	 st;
	int		 fd, probe, rc;

	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "unix:%s: exists and is not a "
			    "socket", path);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe != -1 && connect(probe,
		    (const struct sockaddr *)&a->a_ss, a->a_len) == 0) {
			close(probe);
			snprintf(err, errlen, "unix:%s: another server is "
			    "listening on it", path);
			return -1;
		}
		if (probe != -1)
			close(probe);
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (uid == (uid_t)-1 && gid == (gid_t)-1)
		rc = bind_here(fd, AT_FDCWD, path, mode);
	else
		rc = bind_owned(fd, path, mode, uid, gid, err, errlen);
	if (rc != 0 || listen(fd, backlog) == -1) {
		if (rc != -2)
			snprintf(err, errlen, "cannot listen on unix:%s: %s",
			    path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Binds fd to the unix socket name, relative to the directory dfd
 * (AT_FDCWD: as given), the file made with mode's permission bits.
 * Returns 0, or -1 with errno.
 */
static int
bind_here(int fd, int dfd, const char *name, int mode)
{
	struct sockaddr_un	 sun;
	mode_t			 old;
	int			 cwd = -1, rc, saved;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(name) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sun.sun_path, name, strlen(name));
	/* bind() has no *at() form: the directory is entered for it. */
	if (dfd != AT_FDCWD && ((cwd = open(".", O_PATH | O_DIRECTORY |
	    O_CLOEXEC)) == -1 || fchdir(dfd) == -1)) {
		saved = errno;
		if (cwd != -1)
			close(cwd);
		errno = saved;
		return -1;
	}
	old = umask((mode_t)(~mode & 0777));
	rc = bind(fd, (const struct sockaddr *)&sun, (socklen_t)sizeof(sun));
	saved = errno;
	(void)umask(old);
	if (cwd != -1) {
		if (fchdir(cwd) == -1 && rc == 0) {
			rc = -1;
			saved = errno;
		}
		close(cwd);
	}
	errno = saved;
	return rc;
}

/*
 * Binds fd as the unix socket path owned by uid and gid (-1: unchanged).
 * The socket is made in a new directory beside path that only this user
 * can write, given its owner there (fchownat, no symbolic link followed)
 * and then renamed to path.  So the owner is only ever given to the file
 * bind() made: whoever can write path's directory, a symbolic link, a
 * hard link or another file swapped in meanwhile is never touched.
 * Returns 0; -1 with errno; or -2 with err.
 */
static int
bind_owned(int fd, const char *path, int mode, uid_t uid, gid_t gid,
    char *err, size_t errlen)
{
	char		 tmp[PATH_MAX];
	const char	*slash = strrchr(path, '/'), *base, *tname;
	struct stat	 st;
	int		 pfd = -1, tfd = -1, rc = -1, saved, made = 0;
	int		 bound = 0;

	base = slash != NULL ? slash + 1 : path;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%.*s.evfcgid-XXXXXX",
	    (int)(base - path), path) >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	tname = tmp + (base - path);
	if (slash == path)
		pfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	else if (slash != NULL) {
		tmp[slash - path] = '\0';
		pfd = open(tmp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		tmp[slash - path] = '/';
	} else
		pfd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd == -1 || mkdtemp(tmp) == NULL)
		goto out;
	made = 1;
	tfd = openat(pfd, tname, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC);
	/* Made by this user and open to nobody else, or not the one made. */
	if (tfd != -1 && (fstat(tfd, &st) == -1 || st.st_uid != geteuid() ||
	    (st.st_mode & 077) != 0)) {
		snprintf(err, errlen, "unix:%s: the directory %s changed "
		    "under evfcgid", path, tmp);
		rc = -2;
		goto out;
	}
	if (tfd == -1 || bind_here(fd, tfd, "s", mode) == -1)
		goto out;
	bound = 1;
	if (fchownat(tfd, "s", uid, gid, AT_SYMLINK_NOFOLLOW) == -1 ||
	    renameat(tfd, "s", pfd, base) == -1)
		goto out;
	bound = 0;
	rc = 0;
out:
	saved = errno;
	if (bound)
		(void)unlinkat(tfd, "s", 0);
	if (made)
		(void)unlinkat(pfd, tname, AT_REMOVEDIR);
	if (tfd != -1)
		close(tfd);
	if (pfd != -1)
		close(pfd);
	errno = saved;
	return rc;
}

void
sockaddr_name(const struct sockaddr *sa, char *buf, size_t len)
{
	char	 a[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const void *)sa;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(buf, len, "%s:%u", a, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const void *)sa;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(buf, len, "[%s]:%u", a, ntohs(sin6->sin6_port));
	} else
		snprintf(buf, len, "unix");
}

int
listen_activated(int first, char *names, size_t nameslen, char *err,
    size_t errlen)
{
	const char	*pid_s, *fds_s, *nm;
	char		*end;
	long		 pid, n, i;
	socklen_t	 olen;
	int		 on, type;

	names[0] = '\0';
	pid_s = getenv("LISTEN_PID");
	fds_s = getenv("LISTEN_FDS");
	if ((nm = getenv("LISTEN_FDNAMES")) != NULL)
		snprintf(names, nameslen, "%s", nm);
	if (pid_s == NULL || fds_s == NULL)
		return 0;
	errno = 0;
	pid = strtol(pid_s, &end, 10);
	if (errno != 0 || *end != '\0' || *pid_s == '\0' || pid <= 0) {
		snprintf(err, errlen, "LISTEN_PID=%s: not a process id", pid_s);
		return -1;
	}
	(void)unsetenv("LISTEN_PID");
	(void)unsetenv("LISTEN_FDS");
	(void)unsetenv("LISTEN_FDNAMES");
	if (pid != (long)getpid())
		return 0;
	errno = 0;
	n = strtol(fds_s, &end, 10);
	if (errno != 0 || *end != '\0' || *fds_s == '\0' || n < 0 ||
	    n > 1024) {
		snprintf(err, errlen, "LISTEN_FDS=%s: not a count of sockets",
		    fds_s);
		return -1;
	}
	for (i = 0; i < n; i++) {
		on = type = 0;
		olen = sizeof(on);
		if (getsockopt(first + (int)i, SOL_SOCKET, SO_ACCEPTCONN, &on,
		    &olen) == -1 || !on) {
			snprintf(err, errlen, "LISTEN_FDS: fd %ld is not a "
			    "listening socket", first + i);
			return -1;
		}
		olen = sizeof(type);
		if (getsockopt(first + (int)i, SOL_SOCKET, SO_TYPE, &type,
		    &olen) == -1 || type != SOCK_STREAM) {
			snprintf(err, errlen, "LISTEN_FDS: fd %ld is not a "
			    "stream socket", first + i);
			return -1;
		}
	}
	return (int)n;
}
