/*
 * bad_producer.c: an application on libevfcgi whose producers misbehave,
 * for tests/test_producer.sh.  The engine must keep its loop turning for
 * the other requests (/hello) and for SIGTERM whatever they do.
 *
 *   /hello      "Hello World\n"
 *   /lines?N    N lines of 4000 bytes, written only whole: a call whose
 *               room is short of a line writes nothing and returns 0
 *   /endless    writes 4000-byte chunks in one call until a write is
 *               refused (64 MB at most a call), forever
 *
 * On its way out it says on stderr the most bytes one /endless call wrote
 * ("endless: most N bytes in one call").
 *
 * It uses only what the library had before producers were bounded, so it
 * builds against that code too (to show the test fails there).
 *
 * usage: bad_producer --listen ADDR
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "evfcgi.h"

#define LINE		4000
#define CALL_MAX	(64u << 20)

static char	 line[LINE];
static size_t	 most;		/* bytes, in one /endless call */

static int	produce_lines(struct evfcgi_req *, size_t, void *);
static int	produce_endless(struct evfcgi_req *, size_t, void *);
static void	state_free(struct evfcgi_req *, void *);

static void
route_hello(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_respond(req, 200, "text/plain", "Hello World\n", 12);
}

static void
route_lines(struct evfcgi_req *req, void *arg)
{
	long	*left;

	(void)arg;
	if ((left = malloc(sizeof(*left))) == NULL) {
		evfcgi_respond_error(req, 503, NULL);
		return;
	}
	*left = atol(evfcgi_query(req));
	if (*left <= 0)
		*left = 1;
	evfcgi_header(req, 200, "text/plain", (long long)*left * LINE);
	evfcgi_on_abort(req, state_free, left);
	evfcgi_produce(req, produce_lines, left);
}

/* Whole lines or nothing. */
static int
produce_lines(struct evfcgi_req *req, size_t room, void *arg)
{
	long	*left = arg;

	if (room < LINE)
		return 0;
	if (evfcgi_write(req, line, LINE) == -1)
		return 0;
	if (--*left > 0)
		return 0;
	evfcgi_on_abort(req, NULL, NULL);
	free(left);
	return 1;
}

static void
route_endless(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_header(req, 200, "application/octet-stream", -1);
	evfcgi_produce(req, produce_endless, NULL);
}

/* As long as writes are taken, in one call. */
static int
produce_endless(struct evfcgi_req *req, size_t room, void *arg)
{
	size_t	 n = 0;

	(void)room;
	(void)arg;
	while (n < CALL_MAX && evfcgi_write(req, line, LINE) == 0)
		n += LINE;
	if (n > most)
		most = n;
	return 0;
}

static void
state_free(struct evfcgi_req *req, void *arg)
{
	(void)req;
	free(arg);
}

int
main(int argc, char **argv)
{
	struct event_base	*base;
	struct evfcgi_server	*srv;
	struct evfcgi_limits	 lim;
	char			 err[256];

	if (argc != 3 || strcmp(argv[1], "--listen") != 0) {
		fprintf(stderr, "usage: bad_producer --listen ADDR\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	memset(line, 'x', sizeof(line));
	line[LINE - 1] = '\n';
	evfcgi_limits_default(&lim);
	lim.drain_timeout = 2;
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL) {
		fprintf(stderr, "bad_producer: no server\n");
		return 1;
	}
	if (evfcgi_route(srv, "/hello", route_hello, NULL) == -1 ||
	    evfcgi_route(srv, "/lines", route_lines, NULL) == -1 ||
	    evfcgi_route(srv, "/endless", route_endless, NULL) == -1 ||
	    evfcgi_handle_signals(srv) == -1) {
		fprintf(stderr, "bad_producer: no routes\n");
		return 1;
	}
	if (evfcgi_listen(srv, argv[2], 0, err, sizeof(err)) == -1) {
		fprintf(stderr, "bad_producer: %s\n", err);
		return 1;
	}
	evfcgi_run(srv);
	fprintf(stderr, "endless: most %zu bytes in one call\n", most);
	evfcgi_server_free(srv);
	event_base_free(base);
	return 0;
}
