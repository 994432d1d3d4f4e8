/*
 * server_ops.h: what server.c offers the evfcgid daemon beyond evfcgi.h:
 * the peers let in (--allow), the access log (--access-log) and the share
 * of a burst of connections each worker takes (--workers).
 */
#ifndef SERVER_OPS_H
#define SERVER_OPS_H

#include <sys/types.h>

#include <stddef.h>

struct evfcgi_server;

/*
 * Lets in only TCP peers whose address is in list (ADDR[,ADDR...], exact
 * IPv4 or IPv6 addresses, libfcgi's FCGI_WEB_SERVER_ADDRS); others are
 * closed at accept, counted and logged (at most one line in 10 s).  Unix
 * socket peers are not filtered.  Returns 0, or -1 with a message in err.
 */
int	server_allow(struct evfcgi_server *srv, const char *list, char *err,
	    size_t errlen);

/*
 * Writes a line per answered request to path (see access_log.h); SIGHUP
 * reopens it.  Returns 0, or -1 with a message in err.
 */
int	server_access_log(struct evfcgi_server *srv, const char *path,
	    char *err, size_t errlen);

/*
 * Takes at most n connections from the listeners a wakeup (0: all there
 * are), then lets the loop turn once before accepting again.  With several
 * worker processes on one listening socket, the first one woken would
 * otherwise take a whole burst of connections; kept connections stay where
 * they were accepted, so the burst's worker serves all of them.
 */
void	server_accept_share(struct evfcgi_server *srv, unsigned n);

/*
 * Makes evfcgi_listen() bind n TCP sockets an address (SO_REUSEPORT), one
 * for each of n workers: the kernel then spreads connections among the
 * workers by a hash of the peer, whichever of them is awake.  Call before
 * evfcgi_listen(); unix sockets and inherited ones stay shared.
 */
void	server_listen_groups(struct evfcgi_server *srv, int n);

/*
 * Makes evfcgi_listen() give the unix sockets it binds owner uid and
 * group gid (-1: unchanged), with no path followed (listen_bind_owned()).
 */
void	server_socket_owner(struct evfcgi_server *srv, uid_t uid, gid_t gid);

/*
 * In worker slot (0 to n-1) after fork: closes the TCP sockets of the
 * other workers, keeping the shared ones and its own.
 */
void	server_worker_slot(struct evfcgi_server *srv, int slot);

/*
 * Closes srv's listening sockets without accepting what waits in their
 * queues and without removing a unix socket's file: for a parent whose
 * workers hold the same listeners and take the queue in their own drain.
 */
void	server_close_listeners(struct evfcgi_server *srv);

#endif /* SERVER_OPS_H */
