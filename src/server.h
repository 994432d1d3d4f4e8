/*
 * server.h: what the connection layer may see of the server: limits,
 * counters, the route table and the lists of connections.
 */
#ifndef SERVER_H
#define SERVER_H

#include <sys/queue.h>

#include "evfcgi.h"

struct conn;
struct evconnlistener;

struct route {
	char		*rt_path;
	evfcgi_handler	 rt_fn;
	void		*rt_arg;
};

struct listener {
	struct evconnlistener	*l_lev;
	char			*l_unix_path;	/* unlinked at close */
	char			 l_name[128];
};

TAILQ_HEAD(conn_list, conn);

struct evfcgi_server {
	struct event_base	*srv_base;
	struct evfcgi_limits	 srv_lim;
	struct evfcgi_stats	 srv_st;
	struct conn_list	 srv_conns;	/* every open connection */
	struct conn_list	 srv_starved;	/* producers held by max_queued */
	struct listener		*srv_listeners;
	size_t			 srv_nlisteners;
	struct route		*srv_routes;
	size_t			 srv_nroutes;
	int			 srv_accepting;	/* listeners enabled */
	int			 srv_backoff;	/* accept paused after EMFILE */
	int			 srv_draining;
	struct event		*srv_backoff_ev;
	struct event		*srv_drain_ev;
	struct event		*srv_wake_ev;
	struct event		*srv_sig[4];
};

/* The route for path, or NULL. */
const struct route *server_route(struct evfcgi_server *srv, const char *path);

/* Accounts queued output (delta may be negative) and keeps the peak. */
void	server_queued(struct evfcgi_server *srv, long long delta);

/* Whether the global output cap stops producers now. */
int	server_over_cap(struct evfcgi_server *srv);

/* Puts c on the starved list; it is pumped again when the cap frees up. */
void	server_starve(struct evfcgi_server *srv, struct conn *c);

/* Called by the connection layer when c is gone; may resume accepting. */
void	server_conn_closed(struct evfcgi_server *srv, struct conn *c);

#endif /* SERVER_H */
