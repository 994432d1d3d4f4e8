/*
 * export_app.c: an application shaped like a user's, on libevfcgi: a
 * link shortener's CSV export, streamed by a producer that pages through
 * its rows as a database cursor would (every other call has nothing ready
 * and writes nothing, so the engine calls it again on a later loop turn).
 * For tests/test_idle.sh and tests/test_cut.sh.
 *
 *   /export?N   N CSV rows "id,code,url,clicks", chunked (no length)
 *   /hello      "Hello World\n"
 *   /cut?N      N bytes of rows, chunked, then evfcgi_respond_error(500):
 *               the answer is cut after its header
 *   /short?N    a Content-Length of N and N / 2 bytes, then evfcgi_finish()
 *
 * usage: export_app --listen ADDR [--drain-timeout SECONDS]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "evfcgi.h"

#define PAGE_ROWS	200

struct export {
	long	 e_next;	/* the next row's id */
	long	 e_rows;	/* rows in all */
	int	 e_ready;	/* the cursor has a page */
};

static void	route_hello(struct evfcgi_req *, void *);
static void	route_export(struct evfcgi_req *, void *);
static void	route_cut(struct evfcgi_req *, void *);
static int	produce_rows(struct evfcgi_req *, size_t, void *);
static void	export_free(struct evfcgi_req *, void *);

static void
route_hello(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_respond(req, 200, "text/plain", "Hello World\n", 12);
}

static void
route_export(struct evfcgi_req *req, void *arg)
{
	struct export	*e;

	(void)arg;
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		evfcgi_respond_error(req, 503, NULL);
		return;
	}
	e->e_rows = atol(evfcgi_query(req));
	evfcgi_header(req, 200, "text/csv", -1);
	evfcgi_on_abort(req, export_free, e);
	evfcgi_produce(req, produce_rows, e);
}

/* /cut and /short: answers that stop before they are whole. */
static void
route_cut(struct evfcgi_req *req, void *arg)
{
	static char	 rows[1 << 16];
	size_t		 n = (size_t)atol(evfcgi_query(req));

	if (n > sizeof(rows))
		n = sizeof(rows);
	memset(rows, 'x', sizeof(rows));
	if (arg == NULL) {
		evfcgi_header(req, 200, "text/csv", -1);
		evfcgi_write(req, rows, n);
		evfcgi_respond_error(req, 500, "the database went away");
	} else {
		evfcgi_header(req, 200, "text/csv", (long long)n);
		evfcgi_write(req, rows, n / 2);
		evfcgi_finish(req);
	}
}

/* One page of rows when the cursor has one; nothing on the other calls. */
static int
produce_rows(struct evfcgi_req *req, size_t room, void *arg)
{
	struct export	*e = arg;
	char		 row[128];
	int		 n, i;

	if (!e->e_ready) {
		e->e_ready = 1;
		return 0;
	}
	e->e_ready = 0;
	for (i = 0; i < PAGE_ROWS && e->e_next < e->e_rows; i++) {
		n = snprintf(row, sizeof(row),
		    "%ld,c%06lx,https://example.org/articles/%ld,%ld\n",
		    e->e_next, e->e_next, e->e_next * 7, e->e_next % 1000);
		if ((size_t)n > room || evfcgi_write(req, row, n) == -1)
			break;
		room -= n;
		e->e_next++;
	}
	if (e->e_next < e->e_rows)
		return 0;
	evfcgi_on_abort(req, NULL, NULL);
	free(e);
	return 1;
}

static void
export_free(struct evfcgi_req *req, void *arg)
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

	if ((argc != 3 && argc != 5) || strcmp(argv[1], "--listen") != 0 ||
	    (argc == 5 && strcmp(argv[3], "--drain-timeout") != 0)) {
		fprintf(stderr, "usage: export_app --listen ADDR "
		    "[--drain-timeout SECONDS]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	if (argc == 5)
		lim.drain_timeout = atoi(argv[4]);
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL) {
		fprintf(stderr, "export_app: no server\n");
		return 1;
	}
	if (evfcgi_route(srv, "/hello", route_hello, NULL) == -1 ||
	    evfcgi_route(srv, "/export", route_export, NULL) == -1 ||
	    evfcgi_route(srv, "/cut", route_cut, NULL) == -1 ||
	    evfcgi_route(srv, "/short", route_cut, srv) == -1 ||
	    evfcgi_handle_signals(srv) == -1) {
		fprintf(stderr, "export_app: no routes\n");
		return 1;
	}
	if (evfcgi_listen(srv, argv[2], 0666, err, sizeof(err)) == -1) {
		fprintf(stderr, "export_app: %s\n", err);
		return 1;
	}
	/*
	 * main ends as README's does: whatever the drain deadline cut is
	 * cut before evfcgi_run() returns, not by evfcgi_server_free().
	 */
	return evfcgi_run(srv) == 0 ? 0 : 1;
}
