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
 *   /report?N   N bytes in one evfcgi_respond(), as a report made whole
 *               in memory is sent (tests/test_output_cap.sh)
 *   /written?N  a Content-Length of N, then N bytes in one evfcgi_write()
 *   /status     the server's counters: bytes_queued, peak_bytes_queued,
 *               2xx, 503, requests_total, holding_sockets (evfcgid's
 *               names)
 *
 * usage: export_app --listen ADDR [--drain-timeout SECONDS]
 *            [--max-queued BYTES]
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
static void	route_report(struct evfcgi_req *, void *);
static void	route_status(struct evfcgi_req *, void *);
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

/*
 * /report and /written: N bytes (at most 64 MiB) written in one call, a
 * copy each: past the output cap the first is refused with 503, the
 * second cut.
 */
static void
route_report(struct evfcgi_req *req, void *arg)
{
	static char	*rows;
	static size_t	 have;
	size_t		 n = (size_t)atol(evfcgi_query(req));

	if (n > 64 << 20)
		n = 64 << 20;
	if (n > have) {
		free(rows);
		if ((rows = malloc(n)) == NULL) {
			have = 0;
			evfcgi_respond_error(req, 503, NULL);
			return;
		}
		memset(rows, 'r', n);
		have = n;
	}
	if (arg == NULL) {
		evfcgi_respond(req, 200, "text/csv", rows, n);
		return;
	}
	if (evfcgi_header(req, 200, "text/csv", (long long)n) == 0)
		(void)evfcgi_write(req, rows, n);
	evfcgi_finish(req);
}

static void
route_status(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_stats	 st;

	evfcgi_get_stats(arg, &st);
	evfcgi_header(req, 200, "application/json", -1);
	evfcgi_printf(req, "{\"bytes_queued\":%llu,\"peak_bytes_queued\":%llu,"
	    "\"2xx\":%llu,\"503\":%llu,\"requests_total\":%llu,"
	    "\"holding_sockets\":%llu}\n",
	    (unsigned long long)st.bytes_queued,
	    (unsigned long long)st.peak_bytes_queued,
	    (unsigned long long)st.answered_2xx,
	    (unsigned long long)st.status_503,
	    (unsigned long long)st.requests_total,
	    (unsigned long long)st.holding);
	evfcgi_finish(req);
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
	int			 i;

	evfcgi_limits_default(&lim);
	for (i = 3; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--drain-timeout") == 0)
			lim.drain_timeout = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--max-queued") == 0)
			lim.max_queued = (size_t)atol(argv[i + 1]);
		else
			break;
	}
	if (argc < 3 || strcmp(argv[1], "--listen") != 0 || i != argc) {
		fprintf(stderr, "usage: export_app --listen ADDR "
		    "[--drain-timeout SECONDS] [--max-queued BYTES]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL) {
		fprintf(stderr, "export_app: no server\n");
		return 1;
	}
	if (evfcgi_route(srv, "/hello", route_hello, NULL) == -1 ||
	    evfcgi_route(srv, "/export", route_export, NULL) == -1 ||
	    evfcgi_route(srv, "/cut", route_cut, NULL) == -1 ||
	    evfcgi_route(srv, "/short", route_cut, srv) == -1 ||
	    evfcgi_route(srv, "/report", route_report, NULL) == -1 ||
	    evfcgi_route(srv, "/written", route_report, srv) == -1 ||
	    evfcgi_route(srv, "/status", route_status, srv) == -1 ||
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
