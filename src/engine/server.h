/*
 * server.h: the server's own state: listeners, accept caps, the drain,
 * signals, routes and counters.  Only server.c includes it; connections
 * see the server through the struct conn_env it lends them.
 */
#ifndef SERVER_H
#define SERVER_H

#include <sys/queue.h>

#include <time.h>

#include "access_log.h"
#include "allow.h"
#include "linger.h"
#include "budget.h"
#include "conn.h"
#include "evfcgi.h"

struct evconnlistener;
struct rpat;

struct route {
	char		*rt_path;
	size_t		 rt_len;
	int		 rt_flags;	/* EVFCGI_ROUTE_* */
	char		*rt_allow;	/* "GET, HEAD": the methods; NULL: all */
	evfcgi_handler	 rt_fn;
	void		*rt_arg;
	uint64_t	 rt_body_max;	/* evfcgi_route_body_limit(), 0: none */
	struct rpat	*rt_pat;	/* a pattern route's (srv_pats), or NULL */
};

struct listener {
	struct evconnlistener	*l_lev;
	int			 l_slot;	/* the worker it is for; -1:
						   shared by all */
	char			*l_unix_path;	/* unlinked at close */
	char			 l_name[128];
};

TAILQ_HEAD(conn_list, conn);

struct evfcgi_server {
	struct event_base	*srv_base;
	struct event_base	*srv_own_base;	/* made by evfcgi_server_new() */
	struct evfcgi_limits	 srv_lim;
	struct evfcgi_stats	 srv_st;
	struct budget		 srv_budget;	/* the global output cap */
	struct budget		 srv_input;	/* the global input cap */
	struct req_pool		 srv_pool;	/* requests kept for reuse */
	struct linger_set	 srv_linger;	/* closed, still sending */
	struct conn_env		 srv_env;	/* lent to every connection */
	struct conn_list	 srv_conns;	/* every open connection */
	struct listener		*srv_listeners;
	size_t			 srv_nlisteners;
	struct route		*srv_routes;
	size_t			 srv_nroutes;
	struct route		*srv_pats;	/* routes with a pattern */
	size_t			 srv_npats;
	evfcgi_handler		 srv_default_fn;	/* no route took it */
	void			*srv_default_arg;
	int			 srv_accepting;	/* listeners enabled */
	int			 srv_groups;	/* TCP sockets an address */
	uid_t			 srv_sock_uid;	/* unix sockets' owner, or -1 */
	gid_t			 srv_sock_gid;	/* and group, or -1 */
	unsigned		 srv_share;	/* accepts a wakeup, 0: all */
	unsigned		 srv_taken;	/* accepted since the last turn */
	int			 srv_yielding;	/* share taken: waits a turn */
	struct event		*srv_yield_ev;
	int			 srv_in_backoff; /* accept paused: EMFILE */
	unsigned		 srv_nbackoff;	/* pauses in this episode */
	time_t			 srv_backoff_logged;
	int			 srv_draining;	/* 1 draining, 2 past the
						   deadline: cuts going out */
	struct event		*srv_backoff_ev;
	struct event		*srv_drain_ev;
	struct event		*srv_sig[3];
	struct allow		 srv_allow;	/* TCP peers let in; empty: all */
	uint64_t		 srv_denied_quiet; /* denied, not yet logged */
	time_t			 srv_denied_logged;
	struct access_log	*srv_alog;	/* or NULL */
};

#endif /* SERVER_H */
