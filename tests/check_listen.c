/*
 * check_listen.c: socket activation (listen_activated): the sockets
 * systemd passes are taken only when LISTEN_PID is this process, each
 * must be a listening stream socket, malformed variables are refused, and
 * the variables are gone afterwards so that no child takes them.  And a
 * unix socket's mode and owner (listen_bind_owned): exactly the mode asked
 * whatever the umask, the umask given back, nothing left beside it.
 */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "listen.h"
#include "tests/suite.h"

#define FD0	100	/* the first fd "passed": Check holds 3 and 4 */

static char	names[256], err[256];

/* Sets LISTEN_PID to pid (0: this process), LISTEN_FDS and -FDNAMES. */
static void
set_vars(long pid, const char *fds, const char *fdnames)
{
	char	 p[32];

	snprintf(p, sizeof(p), "%ld", pid != 0 ? pid : (long)getpid());
	ck_assert_int_eq(setenv("LISTEN_PID", p, 1), 0);
	ck_assert_int_eq(setenv("LISTEN_FDS", fds, 1), 0);
	if (fdnames != NULL)
		ck_assert_int_eq(setenv("LISTEN_FDNAMES", fdnames, 1), 0);
}

static void
assert_unset(void)
{
	ck_assert_ptr_null(getenv("LISTEN_PID"));
	ck_assert_ptr_null(getenv("LISTEN_FDS"));
	ck_assert_ptr_null(getenv("LISTEN_FDNAMES"));
}

/* Puts a socket of type on fd, listening when listening. */
static void
socket_at(int fd, int type, int listening)
{
	struct sockaddr_in	 sin;
	int			 s;

	ck_assert_int_ne(s = socket(AF_INET, type, 0), -1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		ck_assert_int_eq(listen(s, 1), 0);
	ck_assert_int_eq(dup2(s, fd), fd);
	close(s);
}

START_TEST(core_none_passed)
{
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), 0);
	ck_assert_str_eq(names, "");
}
END_TEST

START_TEST(core_two_sockets)
{
	socket_at(FD0, SOCK_STREAM, 1);
	socket_at(FD0 + 1, SOCK_STREAM, 1);
	set_vars(0, "2", "web:admin");
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), 2);
	ck_assert_str_eq(names, "web:admin");
	assert_unset();
	/* Asked again (a child would be): nothing. */
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), 0);
}
END_TEST

START_TEST(core_other_process)
{
	socket_at(FD0, SOCK_STREAM, 1);
	set_vars(1, "1", NULL);
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), 0);
	assert_unset();
}
END_TEST

START_TEST(malformed_variables)
{
	static const char *const bad[] = { "", "x", "1x", "-1", "99999" };
	size_t	 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		set_vars(0, bad[i], NULL);
		ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
		    sizeof(err)), -1);
		ck_assert_ptr_nonnull(strstr(err, "LISTEN_FDS="));
		assert_unset();
	}
	ck_assert_int_eq(setenv("LISTEN_PID", "me", 1), 0);
	ck_assert_int_eq(setenv("LISTEN_FDS", "1", 1), 0);
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "LISTEN_PID=me"));
}
END_TEST

START_TEST(malformed_not_listening)
{
	socket_at(FD0, SOCK_STREAM, 0);
	set_vars(0, "1", NULL);
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "fd 100 is not a listening socket"));
	socket_at(FD0, SOCK_STREAM, 1);
	socket_at(FD0 + 1, SOCK_DGRAM, 0);
	set_vars(0, "2", NULL);
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "fd 101 is not"));
	close(FD0 + 1);
	set_vars(0, "2", NULL);
	ck_assert_int_eq(listen_activated(FD0, names, sizeof(names), err,
	    sizeof(err)), -1);
}
END_TEST

/* The entries of directory dir but . and .., counted. */
static int
entries(const char *dir)
{
	DIR		*d;
	struct dirent	*e;
	int		 n = 0;

	ck_assert_ptr_nonnull(d = opendir(dir));
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

START_TEST(core_unix_mode_owner)
{
	char			 dir[] = "/tmp/check_listen.XXXXXX", addr[64];
	struct sockaddr_un	 sun;
	struct stat		 st;
	int			 fd, c;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	umask(022);
	/* No owner: the mode by the umask around bind(). */
	snprintf(addr, sizeof(addr), "unix:%s/a", dir);
	ck_assert_int_ne(fd = listen_bind(addr, 0666, 4, err, sizeof(err)), -1);
	ck_assert_int_eq(lstat(addr + 5, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0666);
	close(fd);
	ck_assert_int_eq(unlink(addr + 5), 0);
	/* An owner: bound aside, given its owner, renamed into place. */
	snprintf(addr, sizeof(addr), "unix:%s/b", dir);
	ck_assert_int_ne(fd = listen_bind_owned(addr, 0640, getuid(), getgid(),
	    4, err, sizeof(err)), -1);
	ck_assert_int_eq(lstat(addr + 5, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0640);
	ck_assert_uint_eq(st.st_uid, getuid());
	ck_assert_uint_eq(st.st_gid, getgid());
	ck_assert_int_eq(entries(dir), 1);
	ck_assert_int_eq(umask(0), 022);
	/* It is served at its final path. */
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	ck_assert_uint_lt(strlen(addr + 5), sizeof(sun.sun_path));
	memcpy(sun.sun_path, addr + 5, strlen(addr + 5));
	ck_assert_int_ne(c = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(c);
	close(fd);
	ck_assert_int_eq(unlink(addr + 5), 0);
	/* A relative path: the directory beside it is the working one. */
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_ne(fd = listen_bind_owned("unix:c", 0600, (uid_t)-1,
	    getgid(), 4, err, sizeof(err)), -1);
	ck_assert_int_eq(lstat("c", &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(entries("."), 1);
	close(fd);
	ck_assert_int_eq(unlink("c"), 0);
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* addr_literal: IPv4 and IPv6 literals with port 0; nothing else. */
START_TEST(core_addr_literal)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 len = 0;
	static const char	*bad[] = { "", "localhost", "10.0.0.300",
	    "127.0.0.1:80", "[::1]", "::1%lo", "10.1.1.1 ", NULL };
	int			 i;

	ck_assert_int_eq(addr_literal("10.1.2.3", &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET);
	ck_assert_int_eq(len, sizeof(*sin));
	ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), 0x0a010203u);
	ck_assert_int_eq(sin->sin_port, 0);
	ck_assert_int_eq(addr_literal("fd00::7", &ss, &len), 0);
	ck_assert_int_eq(ss.ss_family, AF_INET6);
	ck_assert_int_eq(len, sizeof(*sin6));
	ck_assert_int_eq(sin6->sin6_addr.s6_addr[15], 7);
	ck_assert_int_eq(sin6->sin6_port, 0);
	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(addr_literal(bad[i], &ss, &len) == -1,
		    "'%s' taken as an address", bad[i]);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("listen");

	suite_add_case(s, "core", NULL, NULL, 0, core_none_passed,
	    core_two_sockets, core_other_process, core_unix_mode_owner,
	    core_addr_literal, NULL);
	suite_add_case(s, "malformed", NULL, NULL, 0, malformed_variables,
	    malformed_not_listening, NULL);
	return suite_run(s);
}
