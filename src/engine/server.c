/*
 * server.c: listeners, accepting within the connection cap, the global cap
 * on queued output, signals and the drain on SIGTERM, routes and counters.
 * It owns the connections' list and lends each one its conn_env.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "listen.h"
#include "log.h"
#include "reqdata.h"
#include "router.h"
#include "server.h"
#include "server_ops.h"

/*
 * Connections waiting to be accepted (the kernel caps it at somaxconn,
 * 4096 by default since Linux 5.4): behind nginx with buffering off a
 * burst of thousands of clients is as many connects at once, and a unix
 * socket's full backlog fails a connect at once (nginx: 502).
 */
#define LISTEN_BACKLOG	4096
#define BACKOFF_MS	200
#define DENIED_LOG_S	10	/* at most one line about denied peers */

/* What server_pattern() finds when it has no memory to split a path. */
static struct route	route_nomem;

static void	server_acceptcb(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	server_accept_errorcb(struct evconnlistener *, void *);
static void	server_backoffcb(evutil_socket_t, short, void *);
static void	server_route(void *, struct evfcgi_req *, struct req_route *);
static struct route *server_pattern(struct evfcgi_server *,
		    struct evfcgi_req *, const char *, int,
		    const struct route *);
static void	server_pattern_dispatch(struct evfcgi_req *, void *);
static void	server_no_memory(struct evfcgi_req *, void *);
static int	server_route_add(struct route **, size_t *, struct route *);
static void	server_route_free(struct route *);
static char	*server_methods(const char *);
static int	server_method_in(const char *, const char *);
static void	server_conn_closed(void *, struct conn *);
static void	server_drain_deadlinecb(evutil_socket_t, short, void *);
static void	server_drain_queue(struct evfcgi_server *);
static void	server_signalcb(evutil_socket_t, short, void *);
static void	server_set_accepting(struct evfcgi_server *, int);
static void	server_listeners_apply(struct evfcgi_server *);
static void	server_count_accept(struct evfcgi_server *);
static void	server_yieldcb(evutil_socket_t, short, void *);
static struct conn *server_conn_new(struct evfcgi_server *, int,
		    const char *);
static int	server_add_listener(struct evfcgi_server *, int,
		    const char *, const char *);
static int	server_denied(struct evfcgi_server *, int,
		    const struct sockaddr *);
static void	server_req_finished(void *, struct evfcgi_req *);

/* The role flags, and what makes two routes the same kind. */
#define ROUTE_ROLES	(EVFCGI_ROUTE_AUTHORIZER | EVFCGI_ROUTE_FILTER)
#define ROUTE_KIND	(EVFCGI_ROUTE_PREFIX | ROUTE_ROLES)

/* The role a route of flags takes (EVFCGI_RESPONDER ...). */
static int
route_role(int flags)
{
	if (flags & EVFCGI_ROUTE_AUTHORIZER)
		return EVFCGI_AUTHORIZER;
	return flags & EVFCGI_ROUTE_FILTER ? EVFCGI_FILTER : EVFCGI_RESPONDER;
}

void
evfcgi_limits_default(struct evfcgi_limits *lim)
{
	lim->max_conns = 16384;		/* max_queued / share_floor */
	lim->max_reqs = 16;
	lim->max_conn_requests = 0;
	lim->max_params = 64 * 1024;
	lim->max_body = 64 * 1024 * 1024;
	lim->high_water = 256 * 1024;
	lim->low_water = 64 * 1024;
	lim->max_queued = 128 * 1024 * 1024;
	lim->share_floor = 8 * 1024;
	lim->max_input = 256 * 1024 * 1024;
	lim->sndbuf = 64 * 1024;
	lim->header_timeout = 30;
	lim->idle_timeout = 60;
	lim->write_timeout = 3600;
	lim->drain_timeout = 10;
}

struct evfcgi_server *
evfcgi_server_new(struct event_base *base, const struct evfcgi_limits *lim)
{
	struct evfcgi_server	*srv;
	struct evfcgi_limits	 def;
	struct event_base	*own = NULL;

	if (lim == NULL) {
		evfcgi_limits_default(&def);
		lim = &def;
	}
	if (lim->max_conns == 0 || lim->max_reqs == 0 ||
	    lim->max_reqs > 65535 || lim->high_water == 0 ||
	    lim->low_water > lim->high_water || lim->max_queued == 0 ||
	    lim->max_input == 0 ||
	    lim->header_timeout <= 0 || lim->idle_timeout <= 0 ||
	    lim->write_timeout <= 0 || lim->drain_timeout <= 0)
		return NULL;
	/* No base: the server's own, for an application that needs no other. */
	if (base == NULL && (base = own = event_base_new()) == NULL)
		return NULL;
	if ((srv = calloc(1, sizeof(*srv))) == NULL) {
		if (own != NULL)
			event_base_free(own);
		return NULL;
	}
	srv->srv_own_base = own;
	srv->srv_base = base;
	srv->srv_lim = *lim;
	TAILQ_INIT(&srv->srv_conns);
	srv->srv_accepting = 1;
	srv->srv_groups = 1;
	srv->srv_sock_uid = (uid_t)-1;
	srv->srv_sock_gid = (gid_t)-1;
	linger_init(&srv->srv_linger, base, lim->max_conns, lim->write_timeout,
	    &srv->srv_st.lingering);
	srv->srv_env = (struct conn_env){
		.ce_base = base,
		.ce_lim = &srv->srv_lim,
		.ce_st = &srv->srv_st,
		.ce_budget = &srv->srv_budget,
		.ce_input = &srv->srv_input,
		.ce_srv = srv,
		.ce_linger = &srv->srv_linger,
		.ce_route = server_route,
		.ce_roles = 1u << EVFCGI_RESPONDER,
		.ce_closed = server_conn_closed,
		.ce_arg = srv,
		.ce_req = {
			.re_base = base,
			.re_srv = srv,
			.re_lim = &srv->srv_lim,
			.re_st = &srv->srv_st,
			.re_input = &srv->srv_input,
			.re_output = &srv->srv_budget,
			.re_ops = &conn_req_ops,
			.re_pool = &srv->srv_pool,
			.re_finished = server_req_finished,
			.re_finished_arg = srv
		}
	};
	srv->srv_backoff_ev = evtimer_new(base, server_backoffcb, srv);
	srv->srv_yield_ev = evtimer_new(base, server_yieldcb, srv);
	srv->srv_drain_ev = evtimer_new(base, server_drain_deadlinecb, srv);
	if (budget_init(&srv->srv_budget, base, lim->max_queued) == -1 ||
	    budget_init(&srv->srv_input, base, lim->max_input) == -1 ||
	    srv->srv_backoff_ev == NULL || srv->srv_drain_ev == NULL ||
	    srv->srv_yield_ev == NULL) {
		evfcgi_server_free(srv);
		return NULL;
	}
	budget_trim_on_fall(&srv->srv_input);
	/* A floor of 0 (limits not from evfcgi_limits_default): no shares,
	   every connection may hold the high mark, as before there were. */
	budget_shares(&srv->srv_budget, lim->share_floor > 0 ?
	    lim->share_floor : lim->high_water, lim->high_water);
	return srv;
}

void
evfcgi_server_free(struct evfcgi_server *srv)
{
	struct conn	*c;
	size_t		 i;

	while ((c = TAILQ_FIRST(&srv->srv_conns)) != NULL)
		conn_end(c, CONN_NOW, CONN_CLOSE, NULL);
	for (i = 0; i < srv->srv_nlisteners; i++) {
		if (srv->srv_listeners[i].l_lev != NULL)
			evconnlistener_free(srv->srv_listeners[i].l_lev);
		if (srv->srv_listeners[i].l_unix_path != NULL) {
			unlink(srv->srv_listeners[i].l_unix_path);
			free(srv->srv_listeners[i].l_unix_path);
		}
	}
	free(srv->srv_listeners);
	for (i = 0; i < srv->srv_nroutes; i++)
		server_route_free(&srv->srv_routes[i]);
	free(srv->srv_routes);
	for (i = 0; i < srv->srv_npats; i++)
		server_route_free(&srv->srv_pats[i]);
	free(srv->srv_pats);
	for (i = 0; i < sizeof(srv->srv_sig) / sizeof(srv->srv_sig[0]); i++)
		if (srv->srv_sig[i] != NULL)
			event_free(srv->srv_sig[i]);
	if (srv->srv_backoff_ev != NULL)
		event_free(srv->srv_backoff_ev);
	if (srv->srv_yield_ev != NULL)
		event_free(srv->srv_yield_ev);
	if (srv->srv_drain_ev != NULL)
		event_free(srv->srv_drain_ev);
	budget_fini(&srv->srv_budget);
	budget_fini(&srv->srv_input);
	linger_fini(&srv->srv_linger);
	req_pool_fini(&srv->srv_pool);
	allow_free(&srv->srv_allow);
	access_log_close(srv->srv_alog);
	if (srv->srv_own_base != NULL)
		event_base_free(srv->srv_own_base);
	free(srv);
}

int
evfcgi_route(struct evfcgi_server *srv, const char *path, evfcgi_handler fn,
    void *arg)
{
	return evfcgi_route_ex(srv, path, 0, NULL, fn, arg);
}

int
evfcgi_route_methods(struct evfcgi_server *srv, const char *path,
    const char *methods, evfcgi_handler fn, void *arg)
{
	return evfcgi_route_ex(srv, path, 0, methods, fn, arg);
}

int
evfcgi_route_prefix(struct evfcgi_server *srv, const char *prefix,
    evfcgi_handler fn, void *arg)
{
	return evfcgi_route_ex(srv, prefix, EVFCGI_ROUTE_PREFIX, NULL, fn, arg);
}

void
evfcgi_route_default(struct evfcgi_server *srv, evfcgi_handler fn, void *arg)
{
	srv->srv_default_fn = fn;
	srv->srv_default_arg = arg;
}

struct event_base *
evfcgi_server_base(struct evfcgi_server *srv)
{
	return srv->srv_base;
}

int
evfcgi_route_ex(struct evfcgi_server *srv, const char *path, int flags,
    const char *methods, evfcgi_handler fn, void *arg)
{
	struct route	 nrt;

	/* One role at most; streamed routes are the Responder's. */
	if (path == NULL || *path == '\0' || fn == NULL ||
	    (flags & ~(EVFCGI_ROUTE_PREFIX | EVFCGI_ROUTE_STREAM |
	    ROUTE_ROLES)) != 0 || (flags & ROUTE_ROLES) == ROUTE_ROLES ||
	    ((flags & ROUTE_ROLES) != 0 && (flags & EVFCGI_ROUTE_STREAM)))
		return -1;
	memset(&nrt, 0, sizeof(nrt));
	if ((methods != NULL && (nrt.rt_allow = server_methods(methods)) ==
	    NULL) || (nrt.rt_path = strdup(path)) == NULL) {
		free(nrt.rt_allow);
		return -1;
	}
	nrt.rt_len = strlen(path);
	nrt.rt_flags = flags;
	nrt.rt_fn = fn;
	nrt.rt_arg = arg;
	if (rpat_is(path)) {
		/* A pattern takes the rest with {name...}, not a prefix. */
		if ((flags & EVFCGI_ROUTE_PREFIX) ||
		    (nrt.rt_pat = malloc(sizeof(*nrt.rt_pat))) == NULL ||
		    rpat_compile(path, nrt.rt_pat) == -1) {
			server_route_free(&nrt);
			return -1;
		}
		if (server_route_add(&srv->srv_pats, &srv->srv_npats,
		    &nrt) == -1)
			return -1;
	} else if (server_route_add(&srv->srv_routes, &srv->srv_nroutes,
	    &nrt) == -1)
		return -1;
	srv->srv_env.ce_roles |= 1u << route_role(flags);
	return 0;
}

/* Frees what a route holds (not the route). */
static void
server_route_free(struct route *rt)
{
	free(rt->rt_path);
	free(rt->rt_allow);
	if (rt->rt_pat != NULL) {
		rpat_free(rt->rt_pat);
		free(rt->rt_pat);
	}
}

/*
 * Adds nrt to the array *v of *n routes, in place of one of the same path,
 * kind and role.  Returns 0, or -1 (nrt freed) when out of memory.
 */
static int
server_route_add(struct route **v, size_t *n, struct route *nrt)
{
	struct route	*rt;
	size_t		 i;

	for (i = 0; i < *n; i++) {
		rt = &(*v)[i];
		if (strcmp(rt->rt_path, nrt->rt_path) == 0 &&
		    (rt->rt_flags & ROUTE_KIND) ==
		    (nrt->rt_flags & ROUTE_KIND)) {
			server_route_free(rt);
			*rt = *nrt;
			return 0;
		}
	}
	if ((rt = realloc(*v, (*n + 1) * sizeof(*rt))) == NULL) {
		server_route_free(nrt);
		return -1;
	}
	*v = rt;
	rt[(*n)++] = *nrt;
	return 0;
}

int
evfcgi_route_body_limit(struct evfcgi_server *srv, const char *path,
    int flags, uint64_t max)
{
	size_t	 i;

	for (i = 0; i < srv->srv_nroutes; i++)
		if (strcmp(srv->srv_routes[i].rt_path, path) == 0 &&
		    (srv->srv_routes[i].rt_flags & ROUTE_KIND) ==
		    (flags & ROUTE_KIND)) {
			srv->srv_routes[i].rt_body_max = max;
			return 0;
		}
	for (i = 0; i < srv->srv_npats; i++)
		if (strcmp(srv->srv_pats[i].rt_path, path) == 0 &&
		    (srv->srv_pats[i].rt_flags & ROUTE_KIND) ==
		    (flags & ROUTE_KIND)) {
			srv->srv_pats[i].rt_body_max = max;
			return 0;
		}
	return -1;
}

int
evfcgi_set_error_page(struct evfcgi_server *srv, evfcgi_error_page fn,
    void *arg)
{
	if (srv == NULL)
		return -1;
	srv->srv_env.ce_req.re_errpage = fn;
	srv->srv_env.ce_req.re_errpage_arg = arg;
	return 0;
}

/*
 * The method list "GET,POST" as an Allow value, "GET, HEAD, POST": HEAD
 * added after GET when missing (HEAD is GET without the body, which the
 * engine drops).  Returns it (malloc'd), or NULL when a method is not a
 * token, the list is empty, or out of memory.
 */
static char *
server_methods(const char *methods)
{
	const char	*p = methods, *e;
	char		*out, *o;
	size_t		 n, len = strlen(methods);
	int		 get = 0, head = 0;

	/* Room for each method, its ", ", and "HEAD, ". */
	if ((out = o = malloc(len * 3 + 8)) == NULL)
		return NULL;
	for (;;) {
		p += strspn(p, " \t");
		e = p + strcspn(p, ", \t");
		if ((n = (size_t)(e - p)) == 0 || strspn(p,
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789!#$%&'*+-.^_`|~") < n)
			goto bad;
		if (o != out)
			o = (char *)memcpy(o, ", ", 2) + 2;
		o = (char *)memcpy(o, p, n) + n;
		if (n == 3 && memcmp(p, "GET", 3) == 0)
			get = 1;
		if (n == 4 && memcmp(p, "HEAD", 4) == 0)
			head = 1;
		p = e + strspn(e, " \t");
		if (*p == '\0')
			break;
		if (*p++ != ',')
			goto bad;
	}
	if (get && !head)
		o = (char *)memcpy(o, ", HEAD", 6) + 6;
	*o = '\0';
	return out;
bad:
	free(out);
	return NULL;
}

/* Whether method m is in the Allow value allow ("GET, HEAD"). */
static int
server_method_in(const char *allow, const char *m)
{
	size_t	 n = strlen(m), k;

	while (*allow != '\0') {
		k = strcspn(allow, ",");
		if (k == n && memcmp(allow, m, n) == 0)
			return 1;
		allow += k;
		allow += strspn(allow, ", ");
	}
	return 0;
}

/*
 * Fills rt for r (conn_env's route): a route of r's role, exact for its
 * decoded path, else the most specific pattern for its raw path's
 * segments (server_pattern()), else the longest prefix, else (Responder)
 * the default; a method the route does not list gets its Allow value
 * instead of a handler.  A pattern route's handler is
 * server_pattern_dispatch(), which records the parameters.
 */
static void
server_route(void *arg, struct evfcgi_req *r, struct req_route *rt)
{
	struct evfcgi_server	*srv = arg;
	struct route		*best = NULL, *e;
	const char		*path = evfcgi_path(r);
	size_t			 i;
	int			 role = evfcgi_role(r);

	for (i = 0; i < srv->srv_nroutes; i++) {
		e = &srv->srv_routes[i];
		if (route_role(e->rt_flags) != role)
			continue;
		if (!(e->rt_flags & EVFCGI_ROUTE_PREFIX)) {
			if (strcmp(e->rt_path, path) == 0) {
				best = e;
				break;
			}
		} else if ((best == NULL || e->rt_len > best->rt_len) &&
		    strncmp(e->rt_path, path, e->rt_len) == 0)
			best = e;
	}
	if (srv->srv_npats > 0 && (best == NULL ||
	    (best->rt_flags & EVFCGI_ROUTE_PREFIX)) &&
	    (e = server_pattern(srv, r, path, role, best)) != NULL) {
		if (e == &route_nomem) {
			rt->rr_fn = server_no_memory;
			return;
		}
		if (e->rt_allow != NULL && !server_method_in(e->rt_allow,
		    evfcgi_method(r))) {
			rt->rr_allow = e->rt_allow;
			return;
		}
		rt->rr_fn = server_pattern_dispatch;
		rt->rr_arg = e;
		rt->rr_flags = e->rt_flags;
		rt->rr_plen = 0;
		rt->rr_body_max = e->rt_body_max;
		return;
	}
	if (best == NULL) {
		rt->rr_plen = 0;
		if (role == EVFCGI_RESPONDER) {
			rt->rr_fn = srv->srv_default_fn;
			rt->rr_arg = srv->srv_default_arg;
		}
		return;
	}
	if (best->rt_allow != NULL && !server_method_in(best->rt_allow,
	    evfcgi_method(r))) {
		rt->rr_allow = best->rt_allow;
		return;
	}
	rt->rr_fn = best->rt_fn;
	rt->rr_arg = best->rt_arg;
	rt->rr_flags = best->rt_flags;
	rt->rr_plen = best->rt_len;
	rt->rr_body_max = best->rt_body_max;
}

/*
 * The most specific pattern route of role matching r's path, unless the
 * prefix route that took its decoded path (path; or NULL) is more
 * specific.  The segments are REQUEST_URI's path split before it is
 * decoded, so a %2F is data inside its segment; without an escape that
 * is the decoded path split.  NULL: none; &route_nomem: no memory to
 * split a long escaped path.
 */
static struct route *
server_pattern(struct evfcgi_server *srv, struct evfcgi_req *r,
    const char *path, int role, const struct route *prefix)
{
	struct rseg	 segs[RPAT_MAX_SEGS];
	struct route	*best = NULL, *p;
	const char	*raw = evfcgi_param(r, "REQUEST_URI");
	char		 small[512], *mem = small;
	size_t		 i, len = raw != NULL ? strcspn(raw, "?") : 0;
	size_t		 whole = 0;
	int		 n;

	if (raw != NULL && memchr(raw, '%', len) != NULL) {
		if (len >= sizeof(small) && (mem = malloc(len + 1)) == NULL)
			return &route_nomem;
		n = rseg_split_raw(raw, len, mem, segs, RPAT_MAX_SEGS);
	} else
		n = rseg_split(path, segs, RPAT_MAX_SEGS);
	for (i = 0; n > 0 && i < srv->srv_npats; i++) {
		p = &srv->srv_pats[i];
		if (route_role(p->rt_flags) == role &&
		    rpat_match(p->rt_pat, segs, n, NULL) &&
		    (best == NULL || rpat_cmp(p->rt_pat, best->rt_pat) > 0))
			best = p;
	}
	if (mem != small)
		free(mem);
	if (best == NULL || prefix == NULL)
		return best;
	/* "/a/b/" is "/a/b/{rest...}": 2 whole segments. */
	for (i = 1; i < prefix->rt_len; i++)
		whole += prefix->rt_path[i] == '/';
	return rpat_lead(best->rt_pat) >= whole ? best : NULL;
}

/*
 * A pattern route's handler (arg: the route server_route() chose):
 * splits the path again, into the request's own room, records the
 * parameters and runs the route's handler.
 */
static void
server_pattern_dispatch(struct evfcgi_req *r, void *arg)
{
	const struct route	*rt = arg;
	struct rseg		 segs[RPAT_MAX_SEGS], vals[RPAT_MAX_SEGS];
	struct reqdata		*d;
	int			 n;

	if ((d = reqdata_get(r)) == NULL) {
		(void)evfcgi_respond_error(r, 503, "out of memory");
		return;
	}
	/* The same segments as at routing: the match holds. */
	n = reqdata_path_segs(r, d, segs, RPAT_MAX_SEGS);
	if (n <= 0 || !rpat_match(rt->rt_pat, segs, n, vals)) {
		(void)evfcgi_respond_error(r, 500, NULL);
		return;
	}
	reqdata_path_set(d, rt->rt_pat, vals);
	rt->rt_fn(r, rt->rt_arg);
}

/* The handler of a request its route could not be found for. */
static void
server_no_memory(struct evfcgi_req *r, void *arg)
{
	(void)arg;
	(void)evfcgi_respond_error(r, 503, "out of memory");
}

/* A connection closed (conn_env's closed): may resume accepting or exit. */
static void
server_conn_closed(void *arg, struct conn *c)
{
	struct evfcgi_server	*srv = arg;

	TAILQ_REMOVE(&srv->srv_conns, c, c_entry);
	if (srv->srv_draining) {
		if (TAILQ_EMPTY(&srv->srv_conns))
			event_base_loopexit(srv->srv_base, NULL);
		return;
	}
	if (!srv->srv_accepting && !srv->srv_in_backoff &&
	    srv->srv_st.connections < srv->srv_lim.max_conns)
		server_set_accepting(srv, 1);
}

static void
server_set_accepting(struct evfcgi_server *srv, int on)
{
	if (srv->srv_accepting == on)
		return;
	srv->srv_accepting = on;
	server_listeners_apply(srv);
}

/* Listeners listen while accepting and not waiting a turn (the share). */
static void
server_listeners_apply(struct evfcgi_server *srv)
{
	size_t	 i;
	int	 on = srv->srv_accepting && !srv->srv_yielding;

	for (i = 0; i < srv->srv_nlisteners; i++) {
		if (srv->srv_listeners[i].l_lev == NULL)
			continue;
		if (on)
			evconnlistener_enable(srv->srv_listeners[i].l_lev);
		else
			evconnlistener_disable(srv->srv_listeners[i].l_lev);
	}
}

void
server_accept_share(struct evfcgi_server *srv, unsigned n)
{
	srv->srv_share = n;
}

void
server_listen_groups(struct evfcgi_server *srv, int n)
{
	srv->srv_groups = n > 1 ? n : 1;
}

void
server_socket_owner(struct evfcgi_server *srv, uid_t uid, gid_t gid)
{
	srv->srv_sock_uid = uid;
	srv->srv_sock_gid = gid;
}

void
server_worker_slot(struct evfcgi_server *srv, int slot)
{
	struct listener	*l;
	size_t		 i;

	for (i = 0; i < srv->srv_nlisteners; i++) {
		l = &srv->srv_listeners[i];
		if (l->l_slot < 0 || l->l_slot == slot || l->l_lev == NULL)
			continue;
		evconnlistener_free(l->l_lev);
		l->l_lev = NULL;
	}
}

/* One connection taken: at the share, listen again only after a turn. */
static void
server_count_accept(struct evfcgi_server *srv)
{
	struct timeval	 now = { 0, 0 };

	if (srv->srv_share == 0 || ++srv->srv_taken < srv->srv_share)
		return;
	srv->srv_yielding = 1;
	server_listeners_apply(srv);
	evtimer_add(srv->srv_yield_ev, &now);
}

static void
server_yieldcb(evutil_socket_t fd, short what, void *arg)
{
	struct evfcgi_server	*srv = arg;

	(void)fd;
	(void)what;
	srv->srv_taken = 0;
	srv->srv_yielding = 0;
	server_listeners_apply(srv);
}

static void
server_acceptcb(struct evconnlistener *lev, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct evfcgi_server	*srv = arg;
	char			 peer[56];

	(void)lev;
	(void)salen;
	if (server_denied(srv, fd, sa))
		return;
	if (srv->srv_nbackoff > 0) {
		log_info("accepting again after %u pauses for lack of "
		    "descriptors", srv->srv_nbackoff);
		srv->srv_nbackoff = 0;
	}
	sockaddr_name(sa, peer, sizeof(peer));
	if (server_conn_new(srv, fd, peer) == NULL)
		log_warn("%s: dropped: out of memory", peer);
	server_count_accept(srv);
	if (srv->srv_st.connections >= srv->srv_lim.max_conns) {
		log_info("%zu connections: not accepting until one closes",
		    srv->srv_lim.max_conns);
		server_set_accepting(srv, 0);
	}
}

/*
 * Closes fd when its peer sa is not in the allowed list.  Logged: the
 * first at once, then how many more at most every DENIED_LOG_S seconds,
 * so that a flood cannot fill the log.  Returns 1 when fd was closed.
 */
static int
server_denied(struct evfcgi_server *srv, int fd, const struct sockaddr *sa)
{
	char	 peer[56];
	time_t	 now;

	if (allow_match(&srv->srv_allow, sa))
		return 0;
	evutil_closesocket(fd);
	srv->srv_st.denied++;
	now = time(NULL);
	if (now - srv->srv_denied_logged < DENIED_LOG_S) {
		srv->srv_denied_quiet++;
		return 1;
	}
	sockaddr_name(sa, peer, sizeof(peer));
	if (srv->srv_denied_quiet > 0)
		log_warn("%s: not an allowed peer: closed (and %" PRIu64
		    " more since the last such line)", peer,
		    srv->srv_denied_quiet);
	else
		log_warn("%s: not an allowed peer: closed", peer);
	srv->srv_denied_quiet = 0;
	srv->srv_denied_logged = now;
	return 1;
}

int
server_allow(struct evfcgi_server *srv, const char *list, char *err,
    size_t errlen)
{
	struct allow	 al;

	if (allow_parse(&al, list, err, errlen) == -1)
		return -1;
	allow_free(&srv->srv_allow);
	srv->srv_allow = al;
	return 0;
}

int
server_access_log(struct evfcgi_server *srv, const char *path, char *err,
    size_t errlen)
{
	struct access_log	*al;

	if ((al = access_log_open(srv->srv_base, path, err, errlen)) == NULL)
		return -1;
	access_log_close(srv->srv_alog);
	srv->srv_alog = al;
	return 0;
}

/* A request was answered (req_env's finished): counted, then logged. */
static void
server_req_finished(void *arg, struct evfcgi_req *r)
{
	struct evfcgi_server	*srv = arg;
	struct evfcgi_stats	*st = &srv->srv_st;
	const struct req_head	*h = req_h(r);

	st->body_bytes += h->h_sent;
	if (h->h_status >= 200 && h->h_status < 300)
		st->answered_2xx++;
	else if (h->h_status >= 300 && h->h_status < 400)
		st->answered_3xx++;
	else if (h->h_status >= 400 && h->h_status < 500)
		st->answered_4xx++;
	else
		st->answered_5xx++;
	if (h->h_status == 413)
		st->status_413++;
	else if (h->h_status == 431)
		st->status_431++;
	else if (h->h_status == 503)
		st->status_503++;
	if (srv->srv_alog != NULL)
		access_log_request(srv->srv_alog, r);
}

/*
 * accept() failed: out of descriptors backs off, the rest are logged.  An
 * episode of back-offs is logged when it starts, every 10 s while it
 * lasts, and when accept works again: not every 200 ms.
 */
static void
server_accept_errorcb(struct evconnlistener *lev, void *arg)
{
	struct evfcgi_server	*srv = arg;
	struct timeval		 tv = { 0, BACKOFF_MS * 1000 };
	time_t			 now = time(NULL);
	int			 err = EVUTIL_SOCKET_ERROR();

	(void)lev;
	if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
		if (srv->srv_nbackoff == 0)
			log_warn("accept: %s: pausing accept for %d ms at a "
			    "time until it works again", strerror(err),
			    BACKOFF_MS);
		else if (now - srv->srv_backoff_logged >= 10)
			log_warn("accept: still %s after %u pauses",
			    strerror(err), srv->srv_nbackoff);
		if (srv->srv_nbackoff == 0 ||
		    now - srv->srv_backoff_logged >= 10)
			srv->srv_backoff_logged = now;
		srv->srv_nbackoff++;
		srv->srv_in_backoff = 1;
		server_set_accepting(srv, 0);
		evtimer_add(srv->srv_backoff_ev, &tv);
		return;
	}
	log_warn("accept: %s", strerror(err));
}

static void
server_backoffcb(evutil_socket_t fd, short what, void *arg)
{
	struct evfcgi_server	*srv = arg;

	(void)fd;
	(void)what;
	srv->srv_in_backoff = 0;
	if (!srv->srv_draining &&
	    srv->srv_st.connections < srv->srv_lim.max_conns)
		server_set_accepting(srv, 1);
}

/* Wraps the listening socket fd (owned from now on) in an evconnlistener. */
static int
server_add_listener(struct evfcgi_server *srv, int fd, const char *name,
    const char *unix_path)
{
	struct listener	*l;

	l = realloc(srv->srv_listeners,
	    (srv->srv_nlisteners + 1) * sizeof(*l));
	if (l == NULL) {
		close(fd);
		return -1;
	}
	srv->srv_listeners = l;
	l += srv->srv_nlisteners;
	memset(l, 0, sizeof(*l));
	l->l_slot = -1;
	evutil_make_socket_nonblocking(fd);
	evutil_make_socket_closeonexec(fd);
	/* Backlog 0: listen() has been called already. */
	l->l_lev = evconnlistener_new(srv->srv_base, server_acceptcb, srv,
	    LEV_OPT_CLOSE_ON_FREE, 0, fd);
	if (l->l_lev == NULL) {
		close(fd);
		return -1;
	}
	evconnlistener_set_error_cb(l->l_lev, server_accept_errorcb);
	if (!srv->srv_accepting)
		evconnlistener_disable(l->l_lev);
	if (unix_path != NULL)
		l->l_unix_path = strdup(unix_path);
	snprintf(l->l_name, sizeof(l->l_name), "%s", name);
	srv->srv_nlisteners++;
	log_info("listening on %s", name);
	return 0;
}

int
evfcgi_listen(struct evfcgi_server *srv, const char *addr, int mode,
    char *err, size_t errlen)
{
	struct sockaddr_storage	 ss;
	socklen_t		 slen = sizeof(ss);
	char			 name[128];
	int			 fd, i, is_unix = strncmp(addr, "unix:", 5) == 0;
	int			 groups = is_unix ? 1 : srv->srv_groups;

	fd = groups > 1 ?
	    listen_bind_shared(addr, mode, LISTEN_BACKLOG, err, errlen) :
	    listen_bind_owned(addr, mode, srv->srv_sock_uid,
	    srv->srv_sock_gid, LISTEN_BACKLOG, err, errlen);
	if (fd == -1)
		return -1;
	/* Name the real port, which the kernel picked if the address said 0. */
	if (is_unix || getsockname(fd, (struct sockaddr *)&ss, &slen) == -1)
		snprintf(name, sizeof(name), "%s", addr);
	else
		sockaddr_name((struct sockaddr *)&ss, name, sizeof(name));
	for (i = 0; i < groups; i++) {
		if (i > 0 && (fd = listen_clone(fd, LISTEN_BACKLOG, err,
		    errlen)) == -1)
			return -1;
		if (server_add_listener(srv, fd, name,
		    is_unix ? addr + 5 : NULL) == -1) {
			snprintf(err, errlen, "%s: out of memory", addr);
			return -1;
		}
		srv->srv_listeners[srv->srv_nlisteners - 1].l_slot =
		    groups > 1 ? i : -1;
	}
	if (groups > 1)
		log_info("%s: %d sockets, one a worker (SO_REUSEPORT)", name,
		    groups);
	return 0;
}

int
evfcgi_listen_fd(struct evfcgi_server *srv, int fd)
{
	struct sockaddr_storage	 ss;
	socklen_t		 slen = sizeof(ss), olen;
	char			 name[128];
	int			 on = 0;

	olen = sizeof(on);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) == -1 ||
	    !on)
		return -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &slen) == 0)
		sockaddr_name((struct sockaddr *)&ss, name, sizeof(name));
	else
		snprintf(name, sizeof(name), "fd %d", fd);
	return server_add_listener(srv, fd, name, NULL);
}

int
evfcgi_adopt(struct evfcgi_server *srv, int fd)
{
	return server_conn_new(srv, fd, "adopted") == NULL ? -1 : 0;
}

/*
 * Serves the connected socket fd as a new connection on srv's list (told
 * to close after its requests when the server drains).  Returns it, or
 * NULL (fd closed) when out of memory.
 */
static struct conn *
server_conn_new(struct evfcgi_server *srv, int fd, const char *peer)
{
	struct conn	*c;

	if ((c = conn_new(&srv->srv_env, fd, peer)) == NULL)
		return NULL;
	TAILQ_INSERT_TAIL(&srv->srv_conns, c, c_entry);
	if (srv->srv_draining)
		conn_drain_fresh(c);
	return c;
}

/*
 * Accepts what waits in the listeners' accept queues: a client whose
 * connect() the kernel completed sent its request to us, and closing the
 * listener would reset it unanswered.  Those are served as draining
 * connections (one request each) within the drain's deadline, over
 * --max-conns if need be: the queue is the kernel's backlog, bounded
 * already (and accept stops at the first error, EMFILE included).
 */
static void
server_drain_queue(struct evfcgi_server *srv)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sl;
	char			 peer[56];
	size_t			 i;
	int			 fd, lfd;

	for (i = 0; i < srv->srv_nlisteners; i++) {
		if (srv->srv_listeners[i].l_lev == NULL)
			continue;
		lfd = evconnlistener_get_fd(srv->srv_listeners[i].l_lev);
		for (;;) {
			sl = sizeof(ss);
			if ((fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
			    SOCK_NONBLOCK | SOCK_CLOEXEC)) == -1) {
				if (errno == EINTR || errno == ECONNABORTED)
					continue;
				break;
			}
			if (server_denied(srv, fd, (struct sockaddr *)&ss))
				continue;
			sockaddr_name((struct sockaddr *)&ss, peer,
			    sizeof(peer));
			if (server_conn_new(srv, fd, peer) == NULL)
				log_warn("%s: dropped: out of memory", peer);
			server_count_accept(srv);
		}
	}
}

void
server_close_listeners(struct evfcgi_server *srv)
{
	size_t	 i;

	for (i = 0; i < srv->srv_nlisteners; i++) {
		if (srv->srv_listeners[i].l_lev != NULL)
			evconnlistener_free(srv->srv_listeners[i].l_lev);
		srv->srv_listeners[i].l_lev = NULL;
		/* The workers' drain removes the file. */
		free(srv->srv_listeners[i].l_unix_path);
		srv->srv_listeners[i].l_unix_path = NULL;
	}
}

void
evfcgi_drain(struct evfcgi_server *srv)
{
	struct timeval	 tv = { srv->srv_lim.drain_timeout, 0 };
	struct conn	*c, *next;
	size_t		 i;
	uint64_t	 before = srv->srv_st.connections;

	if (srv->srv_draining)
		return;
	srv->srv_draining = 1;
	server_drain_queue(srv);
	log_info("draining: %" PRIu64 " connections (%" PRIu64 " from the "
	    "accept queue), %" PRIu64 " requests in flight, deadline %d s",
	    srv->srv_st.connections, srv->srv_st.connections - before,
	    srv->srv_st.requests_active, srv->srv_lim.drain_timeout);
	for (i = 0; i < srv->srv_nlisteners; i++) {
		if (srv->srv_listeners[i].l_lev != NULL)
			evconnlistener_free(srv->srv_listeners[i].l_lev);
		srv->srv_listeners[i].l_lev = NULL;
		if (srv->srv_listeners[i].l_unix_path != NULL)
			unlink(srv->srv_listeners[i].l_unix_path);
	}
	evtimer_add(srv->srv_drain_ev, &tv);
	for (c = TAILQ_FIRST(&srv->srv_conns); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		conn_end(c, CONN_FLUSHED, CONN_CLOSE, NULL);
	}
	if (TAILQ_EMPTY(&srv->srv_conns))
		event_base_loopexit(srv->srv_base, NULL);
}

/*
 * The drain's deadline: every request still in flight ends now, and its
 * connection is cut (conn_end(), CONN_RESET): the cut mark follows what is queued, and
 * the connection is reset once that is out, so that a front end reports
 * the cut to its client over a unix socket as over TCP.  Connections get
 * DRAIN_CUT_GRACE_S more for their last bytes; then every one left is
 * closed (reset, if it cut) before evfcgi_run() returns, so an application
 * that returns from main() at once cuts no answer into a whole one.
 */
#define DRAIN_CUT_GRACE_S	1
static void
server_drain_deadlinecb(evutil_socket_t fd, short what, void *arg)
{
	struct evfcgi_server	*srv = arg;
	struct timeval		 tv = { DRAIN_CUT_GRACE_S, 0 };
	struct conn		*c;

	(void)fd;
	(void)what;
	if (srv->srv_draining == 2) {
		log_warn("drain deadline: %" PRIu64 " connections still had "
		    "output after %d s more: closed", srv->srv_st.connections,
		    DRAIN_CUT_GRACE_S);
		while ((c = TAILQ_FIRST(&srv->srv_conns)) != NULL)
			conn_end(c, CONN_NOW, CONN_CLOSE, NULL);
		event_base_loopexit(srv->srv_base, NULL);
		return;
	}
	log_warn("drain deadline: cutting %" PRIu64 " connections with %"
	    PRIu64 " requests unfinished", srv->srv_st.connections,
	    srv->srv_st.requests_active);
	srv->srv_draining = 2;
	evtimer_add(srv->srv_drain_ev, &tv);
	/*
	 * Abort callbacks may close any connection: each is moved to the
	 * tail before it is cut, so the head is the next one not cut yet.
	 */
	while ((c = TAILQ_FIRST(&srv->srv_conns)) != NULL && !c->c_cut) {
		TAILQ_REMOVE(&srv->srv_conns, c, c_entry);
		TAILQ_INSERT_TAIL(&srv->srv_conns, c, c_entry);
		conn_end(c, CONN_FLUSHED, CONN_RESET, NULL);
	}
	if (TAILQ_EMPTY(&srv->srv_conns))
		event_base_loopexit(srv->srv_base, NULL);
}

static void
server_signalcb(evutil_socket_t sig, short what, void *arg)
{
	struct evfcgi_server	*srv = arg;

	(void)what;
	if (sig == SIGHUP) {
		if (log_reopen() == -1)
			log_err("SIGHUP: cannot reopen the log: %s",
			    log_file_error());
		else
			log_info("SIGHUP: log reopened");
		if (srv->srv_alog != NULL && access_log_reopen(srv->srv_alog) ==
		    -1)
			log_err("SIGHUP: cannot reopen the access log: %s",
			    strerror(errno));
		return;
	}
	log_info("%s: stop accepting, finish what is in flight",
	    sig == SIGTERM ? "SIGTERM" : "SIGINT");
	evfcgi_drain(srv);
}

int
evfcgi_handle_signals(struct evfcgi_server *srv)
{
	static const int	 sigs[] = { SIGTERM, SIGINT, SIGHUP };
	size_t			 i;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		if (srv->srv_sig[i] != NULL)
			continue;
		srv->srv_sig[i] = evsignal_new(srv->srv_base, sigs[i],
		    server_signalcb, srv);
		if (srv->srv_sig[i] == NULL ||
		    evsignal_add(srv->srv_sig[i], NULL) == -1)
			return -1;
	}
	return 0;
}

int
evfcgi_run(struct evfcgi_server *srv)
{
	int	 rc;

	rc = event_base_dispatch(srv->srv_base);
	log_info("stopped: %" PRIu64 " requests served on %" PRIu64
	    " connections", srv->srv_st.requests_total,
	    srv->srv_st.connections_total);
	return rc == -1 ? -1 : 0;
}

void
evfcgi_get_stats(struct evfcgi_server *srv, struct evfcgi_stats *st)
{
	struct conn	*c;

	*st = srv->srv_st;
	st->bytes_queued = srv->srv_budget.b_queued;
	st->peak_bytes_queued = srv->srv_budget.b_peak;
	st->bytes_input = srv->srv_input.b_queued;
	st->peak_bytes_input = srv->srv_input.b_peak;
	st->holding = srv->srv_budget.b_holders;
	st->share = budget_share(&srv->srv_budget);
	st->stalled = 0;
	TAILQ_FOREACH(c, &srv->srv_conns, c_entry)
		if (conn_stalled(c))
			st->stalled++;
}

const struct evfcgi_limits *
evfcgi_get_limits(struct evfcgi_server *srv)
{
	return &srv->srv_lim;
}
