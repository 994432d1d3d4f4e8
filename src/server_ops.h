/*
 * server_ops.h: what server.c offers the evfcgid daemon beyond evfcgi.h:
 * the peers let in (--allow) and the access log (--access-log).
 */
#ifndef SERVER_OPS_H
#define SERVER_OPS_H

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

#endif /* SERVER_OPS_H */
