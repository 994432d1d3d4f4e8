/*
 * sse.c: server-sent events on libevfcgi, the kind of work one event loop
 * is for.  GET /events holds its request open (an asynchronous handler
 * that never finishes by itself) and sends every client one event a
 * second:
 *
 *   id: 42
 *   data: {"n":42,"clients":5000,"time":1764000000}
 *
 * One timer serves all clients, not one per client; each event's text is
 * made once and queued to every client by reference (evfcgi_write_ref_free)
 * with a count, freed when the last client has sent it.  A client that goes
 * away (its connection closes, or nginx drops it) is removed by the abort
 * callback.  A client that stops reading is closed by the engine after
 * 60 s without progress (write_timeout), so a stuck stream holds at most a
 * minute of events.  On SIGTERM or SIGINT every stream
 * gets a last "event: bye" and ends, then the server drains.
 * GET /stats answers "clients N\nevents N\n".
 *
 * usage: sse [--listen ADDR] [--max-clients N] [--interval MS]
 */
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/resource.h>

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "evfcgi.h"

struct hub;

struct client {
	struct evfcgi_req	*c_req;
	struct hub		*c_hub;
	TAILQ_ENTRY(client)	 c_entry;
};

struct hub {
	TAILQ_HEAD(, client)	 h_clients;
	size_t			 h_count;
	size_t			 h_max;
	uint64_t		 h_id;		/* the last event's id */
	struct evfcgi_server	*h_srv;
};

/* One event's text, queued by reference to every client. */
struct shared {
	size_t	s_refs;
	char	s_text[192];
};

static void	route_events(struct evfcgi_req *, void *);
static void	route_stats(struct evfcgi_req *, void *);
static void	client_gone(struct evfcgi_req *, void *);
static void	tick(evutil_socket_t, short, void *);
static void	shared_unref(const void *, void *);
static void	stop(evutil_socket_t, short, void *);

static const char usage[] =
    "usage: sse [--listen ADDR] [--max-clients N] [--interval MS]\n"
    "  --listen ADDR    HOST:PORT, [V6]:PORT or unix:/path; without it,\n"
    "                   fd 0 must be a listening socket (spawn-fcgi)\n"
    "  --max-clients N  streams held at once (10000); more get 503\n"
    "  --interval MS    time between two events (1000)\n"
    "  --help           this text\n";

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "max-clients", required_argument, NULL, 'm' },
		{ "interval", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct hub		 hub = { .h_max = 10000 };
	struct evfcgi_limits	 lim;
	struct event_base	*base;
	struct event		*ev_tick, *ev_term, *ev_int;
	struct timeval		 every = { 1, 0 };
	struct rlimit		 rl;
	const char		*addr = NULL;
	char			 err[256], *end;
	long			 n;
	int			 ch, rc;

	while ((ch = getopt_long(argc, argv, "l:m:i:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			addr = optarg;
			break;
		case 'm':
		case 'i':
			n = strtol(optarg, &end, 10);
			if (*end != '\0' || n < 1 || n > 1000000) {
				fprintf(stderr, "sse: bad number '%s'\n%s",
				    optarg, usage);
				return 2;
			}
			if (ch == 'm')
				hub.h_max = (size_t)n;
			else {
				every.tv_sec = n / 1000;
				every.tv_usec = n % 1000 * 1000;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "sse: unexpected argument '%s'\n%s",
		    argv[optind], usage);
		return 2;
	}
	/* A descriptor per client: take what the hard limit allows. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	TAILQ_INIT(&hub.h_clients);
	evfcgi_limits_default(&lim);
	lim.max_conns = hub.h_max + 64;		/* and some for /stats */
	lim.write_timeout = 60;		/* a live client drains in a minute */
	if ((base = event_base_new()) == NULL ||
	    (hub.h_srv = evfcgi_server_new(base, &lim)) == NULL ||
	    evfcgi_route_methods(hub.h_srv, "/events", "GET", route_events,
	    &hub) == -1 ||
	    evfcgi_route_methods(hub.h_srv, "/stats", "GET", route_stats,
	    &hub) == -1 ||
	    (ev_tick = event_new(base, -1, EV_PERSIST, tick, &hub)) == NULL ||
	    (ev_term = evsignal_new(base, SIGTERM, stop, &hub)) == NULL ||
	    (ev_int = evsignal_new(base, SIGINT, stop, &hub)) == NULL) {
		fprintf(stderr, "sse: out of memory\n");
		return 1;
	}
	if (addr != NULL ? evfcgi_listen(hub.h_srv, addr, 0660, err,
	    sizeof(err)) == -1 : evfcgi_listen_fd(hub.h_srv, 0) == -1) {
		fprintf(stderr, "sse: %s\n%s", addr != NULL ? err :
		    "no --listen and fd 0 is not a listening socket", usage);
		return 1;
	}
	event_add(ev_tick, &every);
	event_add(ev_term, NULL);
	event_add(ev_int, NULL);
	rc = evfcgi_run(hub.h_srv);
	event_free(ev_tick);
	event_free(ev_term);
	event_free(ev_int);
	evfcgi_server_free(hub.h_srv);
	event_base_free(base);
	return rc == 0 ? 0 : 1;
}

/* GET /events: the header now, then the request waits in the hub. */
static void
route_events(struct evfcgi_req *req, void *arg)
{
	static const char	 hello[] = ": connected\nretry: 2000\n\n";
	struct hub		*hub = arg;
	struct client		*c;

	if (hub->h_count >= hub->h_max) {
		evfcgi_header_add(req, "Retry-After", "10");
		evfcgi_respond_error(req, 503, "too many clients");
		return;
	}
	if (strcmp(evfcgi_method(req), "HEAD") == 0) {
		evfcgi_header(req, 200, "text/event-stream", -1);
		evfcgi_finish(req);	/* no body will come: no stream */
		return;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	evfcgi_header_add(req, "Cache-Control", "no-store");
	evfcgi_header_add(req, "X-Accel-Buffering", "no");	/* nginx */
	if (evfcgi_header(req, 200, "text/event-stream", -1) == -1 ||
	    evfcgi_write_ref(req, hello, sizeof(hello) - 1) == -1) {
		free(c);
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	c->c_req = req;
	c->c_hub = hub;
	evfcgi_on_abort(req, client_gone, c);
	TAILQ_INSERT_TAIL(&hub->h_clients, c, c_entry);
	hub->h_count++;
}

/* The abort callback: the client went away; its request dies after this. */
static void
client_gone(struct evfcgi_req *req, void *arg)
{
	struct client	*c = arg;

	(void)req;
	TAILQ_REMOVE(&c->c_hub->h_clients, c, c_entry);
	c->c_hub->h_count--;
	free(c);
}

/* The one timer: one event, made once, queued to every client. */
static void
tick(evutil_socket_t fd, short what, void *arg)
{
	struct hub	*hub = arg;
	struct client	*c, *next;
	struct shared	*s;
	int		 len;

	(void)fd;
	(void)what;
	if (hub->h_count == 0 || (s = malloc(sizeof(*s))) == NULL)
		return;
	hub->h_id++;
	len = snprintf(s->s_text, sizeof(s->s_text), "id: %" PRIu64 "\n"
	    "data: {\"n\":%" PRIu64 ",\"clients\":%zu,\"time\":%lld}\n\n",
	    hub->h_id, hub->h_id, hub->h_count, (long long)time(NULL));
	if (len < 0 || (size_t)len >= sizeof(s->s_text)) {
		free(s);
		return;
	}
	s->s_refs = 1;		/* this loop's, so s outlives it */
	for (c = TAILQ_FIRST(&hub->h_clients); c != NULL; c = next) {
		next = TAILQ_NEXT(c, c_entry);
		s->s_refs++;
		/* On -1 the connection closes: client_gone() comes later. */
		(void)evfcgi_write_ref_free(c->c_req, s->s_text, (size_t)len,
		    shared_unref, s);
	}
	shared_unref(s->s_text, s);
}

/* A client's copy of an event has left (or died): the last frees it. */
static void
shared_unref(const void *data, void *arg)
{
	struct shared	*s = arg;

	(void)data;
	if (--s->s_refs == 0)
		free(s);
}

/* GET /stats: what the hub holds. */
static void
route_stats(struct evfcgi_req *req, void *arg)
{
	struct hub	*hub = arg;
	char		 buf[96];
	int		 n;

	n = snprintf(buf, sizeof(buf), "clients %zu\nevents %" PRIu64 "\n",
	    hub->h_count, hub->h_id);
	evfcgi_respond(req, 200, "text/plain", buf, (size_t)n);
}

/* SIGTERM, SIGINT: every stream says goodbye and ends; then the drain. */
static void
stop(evutil_socket_t sig, short what, void *arg)
{
	static const char	 bye[] = "event: bye\ndata: server stopping\n\n";
	struct hub		*hub = arg;
	struct client		*c;

	(void)what;
	fprintf(stderr, "sse: signal %d: ending %zu streams\n", (int)sig,
	    hub->h_count);
	while ((c = TAILQ_FIRST(&hub->h_clients)) != NULL) {
		TAILQ_REMOVE(&hub->h_clients, c, c_entry);
		hub->h_count--;
		evfcgi_on_abort(c->c_req, NULL, NULL);
		evfcgi_write_ref(c->c_req, bye, sizeof(bye) - 1);
		evfcgi_finish(c->c_req);
		free(c);
	}
	evfcgi_drain(hub->h_srv);
}
