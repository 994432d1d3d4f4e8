/*
 * listen.h: socket addresses as evfcgid writes them ("HOST:PORT",
 * "[V6]:PORT", "unix:/path"), name resolution, and binding a listening
 * socket.  No logging, no exits, no state: the server and the tools that
 * link the project share it (blocking_fcgid stays independent on purpose).
 */
#ifndef LISTEN_H
#define LISTEN_H

#include <sys/types.h>
#include <sys/socket.h>

/* One parsed (and, for TCP, resolved) address. */
struct addr {
	struct sockaddr_storage	 a_ss;
	socklen_t		 a_len;
	int			 a_unix;	/* a_host holds the path */
	char			 a_host[256];	/* no brackets; or the path */
	char			 a_port[8];	/* decimal; "0" for unix */
};

/*
 * Parses s, one of HOST:PORT, [V6]:PORT or unix:/path, into a, resolving
 * HOST (IPv4 first when a name has both); passive for an address to bind
 * (port 0 allowed, "*" or "0.0.0.0" for every address).  Returns 0, or -1
 * with *why set to a static reason.
 */
int	addr_parse(const char *s, int passive, struct addr *a,
	    const char **why);

/*
 * Resolves host and port (numeric) into ss, preferring IPv4 when a name has
 * both.  Returns 0, or -1 with *why set to a static reason.
 */
int	addr_resolve(const char *host, const char *port, int passive,
	    struct sockaddr_storage *ss, socklen_t *len, const char **why);

/*
 * Parses s, an IPv4 or IPv6 literal (no name, no port), into ss with port
 * 0, as a local address to bind before connect().  Returns 0, or -1.
 */
int	addr_literal(const char *s, struct sockaddr_storage *ss,
	    socklen_t *len);

/*
 * Binds and listens on addr (as for addr_parse); a unix socket is made
 * with mode's permission bits (by the umask around bind(), no chmod of a
 * path), and a stale socket file at its path is replaced while a live one
 * is an error.  Returns the listening socket (close-on-exec), or -1 with
 * a message in err (errlen bytes).
 */
int	listen_bind(const char *addr, int mode, int backlog, char *err,
	    size_t errlen);

/*
 * As listen_bind(), but a unix socket is also given uid and gid (-1:
 * unchanged) without any path being followed: see bind_owned() in
 * listen.c.
 */
int	listen_bind_owned(const char *addr, int mode, uid_t uid, gid_t gid,
	    int backlog, char *err, size_t errlen);

/*
 * As listen_bind(), but a TCP socket gets SO_REUSEPORT before its bind,
 * so that listen_clone() can add more sockets on the same address, among
 * which the kernel spreads new connections by a hash of the peer.
 */
int	listen_bind_shared(const char *addr, int mode, int backlog, char *err,
	    size_t errlen);

/*
 * Another listening socket on the address fd (bound by
 * listen_bind_shared()) is bound to.  Returns it (close-on-exec), or -1
 * with a message in err.
 */
int	listen_clone(int fd, int backlog, char *err, size_t errlen);

/*
 * The listening sockets systemd passed (the sd_listen_fds(3) protocol):
 * when LISTEN_PID is this process, LISTEN_FDS=N names fds first to
 * first+N-1 (first is LISTEN_FDS_START but for tests).
 * Unsets LISTEN_PID, LISTEN_FDS and LISTEN_FDNAMES, so that no child takes
 * them for its own, after copying LISTEN_FDNAMES (for logs; "" if absent)
 * into names.  Returns N (0: none passed to this process), or -1 with a
 * message in err when the variables are malformed or an fd is not a
 * listening stream socket.
 */
#define LISTEN_FDS_START	3
int	listen_activated(int first, char *names, size_t nameslen, char *err,
	    size_t errlen);

/* "1.2.3.4:80", "[::1]:80" or "unix" (for logs), into buf. */
void	sockaddr_name(const struct sockaddr *sa, char *buf, size_t len);

#endif /* LISTEN_H */
