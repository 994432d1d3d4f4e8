/*
 * check_api.c: the library's conveniences through its public API, over a
 * socketpair: the query read as form data, the path below a prefix route,
 * a body cap per route, the application's error pages, evfcgi_printf(),
 * the log hook (and how a peer's disconnect is logged).  The test plays
 * the web server (tests/fcgi_peer.c) and runs the loop in this process.
 */
#include <sys/types.h>

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "evfcgi.h"
#include "fcgi_proto.h"
#include "tests/fcgi_peer.h"
#include "tests/suite.h"

static struct evfcgi_limits	 lim;
static struct peer		*web;	/* the web server */

/* What came back for request 1, after answer(): web->r[1].out. */
static const char	*out;

/* What the handlers saw. */
static int	 handled;
static size_t	 body_seen;

/* Lines the log hook took. */
#define MAX_LINES	64
static struct {
	int	 prio;
	char	 msg[256];
} lines[MAX_LINES];
static size_t	 nlines;

static void
setup(void)
{
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	lim.sndbuf = 0;
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	web = peer_new();
	handled = 0;
	body_seen = 0;
	nlines = 0;
}

static void
teardown(void)
{
	if (web != NULL)
		peer_free(web);
	web = NULL;
	out = NULL;
	evfcgi_server_free(srv);
	event_base_free(base);
	srv = NULL;
	base = NULL;
	ck_assert_int_eq(evfcgi_set_log("evfcgid", LOG_INFO, NULL, NULL), 0);
}

/*
 * Sends request 1: the NULL-ended name, value list nv as PARAMS, then
 * blen bytes of body in STDIN records of at most step bytes (0: one).
 */
static void
send_req(const char *const *nv, const char *body, size_t blen, size_t step)
{
	uint8_t	 params[8192];
	size_t	 n, k;

	n = nv_list(params, sizeof(params), nv);
	send_begin(web, 1, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(web, FCGI_PARAMS, 1, params, n);
	send_record(web, FCGI_PARAMS, 1, NULL, 0);
	if (step == 0)
		step = 65535;
	for (; blen > 0; body += k, blen -= k) {
		k = blen < step ? blen : step;
		send_record(web, FCGI_STDIN, 1, body, k);
	}
	send_record(web, FCGI_STDIN, 1, NULL, 0);
}

/* Runs the loop until request 1 has ended; returns its status. */
static int
answer(void)
{
	resp_reset(web, 1);
	ck_assert_msg(RUN_UNTIL(web, web->r[1].ended, 5), "no END_REQUEST");
	out = web->r[1].out;
	return resp_status(&web->r[1]);
}

/* A GET of uri (query after '?'): its status, the answer in out. */
static int
get(const char *method, const char *uri)
{
	const char	*q = strchr(uri, '?');
	const char	*nv[] = { "REQUEST_METHOD", method, "REQUEST_URI", uri,
	    "QUERY_STRING", q != NULL ? q + 1 : "", NULL };

	send_req(nv, NULL, 0, 0);
	return answer();
}

/* A request with the query string q as it is (no REQUEST_URI query). */
static int
get_query(const char *q)
{
	const char	*nv[] = { "REQUEST_METHOD", "GET", "REQUEST_URI",
	    "/q", "QUERY_STRING", q, NULL };

	send_req(nv, NULL, 0, 0);
	return answer();
}

/* A POST of len bytes to uri, with CONTENT_LENGTH when clen. */
static int
post(const char *uri, size_t len, int clen, size_t step)
{
	char		 cl[32], *body = malloc(len + 1);
	const char	*nv[] = { "REQUEST_METHOD", "POST", "REQUEST_URI", uri,
	    clen ? "CONTENT_LENGTH" : NULL, cl, NULL };
	int		 st;

	ck_assert_ptr_nonnull(body);
	memset(body, 'x', len);
	snprintf(cl, sizeof(cl), "%zu", len);
	send_req(nv, body, len, step);
	free(body);
	st = answer();
	return st;
}

/* The answer's body, after the header block. */
static const char *
body_of(void)
{
	const char	*e = strstr(out, "\r\n\r\n");

	ck_assert_ptr_nonnull(e);
	return e + 4;
}

/* Whether the header block has the line l. */
static int
has_line(const char *l)
{
	const char	*e = strstr(out, "\r\n\r\n");
	const char	*p = strstr(out, l);

	return p != NULL && p < e && (p == out || p[-1] == '\n') &&
	    strncmp(p + strlen(l), "\r\n", 2) == 0;
}

/* ---- Handlers. */

/* Every pair as "[name]=[value]\n", then "rc N" of the iteration. */
static void
h_query(struct evfcgi_req *req, void *arg)
{
	const char	*n, *v;
	size_t		 i = 0;
	int		 rc;

	(void)arg;
	handled++;
	evfcgi_header(req, 200, "text/plain", -1);
	while ((rc = evfcgi_query_next(req, &i, &n, &v)) == 1)
		evfcgi_printf(req, "[%s]=[%s]\n", n, v);
	evfcgi_printf(req, "rc %d%s\n", rc, rc == -1 && errno == EINVAL ?
	    " EINVAL" : "");
	evfcgi_finish(req);
}

/* "rc N [value]" for the name in the path's rest. */
static void
h_param(struct evfcgi_req *req, void *arg)
{
	const char	*v = "unset";
	int		 rc;

	(void)arg;
	rc = evfcgi_query_param(req, evfcgi_path_rest(req), &v);
	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "rc %d [%s]", rc, v != NULL ? v : "NULL");
	evfcgi_finish(req);
}

static void
h_rest(struct evfcgi_req *req, void *arg)
{
	const char	*rest = evfcgi_path_rest(req);

	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "%s:[%s]", (const char *)arg, rest);
	evfcgi_finish(req);
}

/* Counts the body it got. */
static void
h_body(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	handled++;
	body_seen = evbuffer_get_length(evfcgi_body(req));
	evfcgi_respond(req, 200, "text/plain", "ok", 2);
}

static void
stream_body(struct evfcgi_req *req, struct evbuffer *b, int done, void *arg)
{
	(void)arg;
	body_seen += evbuffer_get_length(b);
	evbuffer_drain(b, evbuffer_get_length(b));
	if (done)
		evfcgi_respond(req, 200, "text/plain", "ok", 2);
}

static void
h_stream(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	handled++;
	evfcgi_on_body(req, stream_body, NULL);
}

/* An error answer of the application's own. */
static void
h_fail(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_respond_error(req, 409, "taken");
}

/* evfcgi_printf() of arg's length, before and after the header. */
static void
h_printf(struct evfcgi_req *req, void *arg)
{
	const char	*s = arg;
	int		 before, n;

	before = evfcgi_printf(req, "x");
	evfcgi_header(req, 200, "text/plain", -1);
	n = evfcgi_printf(req, "%s", s);
	evfcgi_printf(req, "|%d|%d", before, n);
	evfcgi_finish(req);
}

/* A header line refused: a warning in the log. */
static void
h_warn(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	ck_assert_int_eq(evfcgi_header_add(req, "Bad Name", "v"), -1);
	evfcgi_respond(req, 200, "text/plain", "ok", 2);
}

/* 4 MiB, more than the socketpair holds. */
static void
h_big(struct evfcgi_req *req, void *arg)
{
	static char	 chunk[65536];
	int		 i;

	(void)arg;
	evfcgi_header(req, 200, "application/octet-stream", 64 * 65536);
	for (i = 0; i < 64; i++)
		evfcgi_write_ref(req, chunk, sizeof(chunk));
	evfcgi_finish(req);
}

/*
 * arg bytes in one evfcgi_respond(); or, arg odd, a header for arg - 1
 * and one evfcgi_write() of them.  What the call returned in cap_rc.
 */
static int	 cap_rc;
static void
h_cap(struct evfcgi_req *req, void *arg)
{
	static char	 body[1 << 20];
	size_t		 n = (size_t)(uintptr_t)arg;

	memset(body, 'c', sizeof(body));
	if (n & 1) {
		n--;
		ck_assert_int_eq(evfcgi_header(req, 200, "text/plain",
		    (long long)n), 0);
		cap_rc = evfcgi_write(req, body, n);
		/* No gap: a small write after a refused one is refused. */
		if (cap_rc == -1 && evfcgi_write(req, body, 10) != -1)
			cap_rc = -2;
		evfcgi_finish(req);
	} else
		cap_rc = evfcgi_respond(req, 200, "text/plain", body, n);
}

/* JSON for every error; declines 418 (and says too much for 402). */
static int
page_json(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	(void)req;
	(void)arg;
	if (status == 418)
		return -1;
	if (status == 402)
		return (int)size + 1;
	*ctype = "application/json";
	return snprintf(buf, size, "{\"status\":%d,\"detail\":\"%s\"}",
	    status, detail != NULL ? detail : "");
}

static void
log_take(int prio, const char *msg, void *arg)
{
	(void)arg;
	if (nlines == MAX_LINES)
		return;
	lines[nlines].prio = prio;
	snprintf(lines[nlines].msg, sizeof(lines[nlines].msg), "%s", msg);
	nlines++;
}

/* The first line the hook took that holds s, or -1. */
static int
logged(const char *s)
{
	size_t	 i;

	for (i = 0; i < nlines; i++)
		if (strstr(lines[i].msg, s) != NULL)
			return (int)i;
	return -1;
}

/* ---- core */

START_TEST(query_pairs)
{
	ck_assert_int_eq(evfcgi_route(srv, "/q", h_query, NULL), 0);
	ck_assert_int_eq(get_query("a=1&b=x+y&c=%41%2b%7e&d&=e&&f=&g=h=i"),
	    200);
	ck_assert_str_eq(body_of(), "[a]=[1]\n[b]=[x y]\n[c]=[A+~]\n"
	    "[d]=[]\n[]=[e]\n[f]=[]\n[g]=[h=i]\nrc 0\n");
	ck_assert_int_eq(get_query(""), 200);
	ck_assert_str_eq(body_of(), "rc 0\n");
	ck_assert_int_eq(get_query("&&&"), 200);
	ck_assert_str_eq(body_of(), "rc 0\n");
	/* Names decode too, and the path's '?' part is not what counts. */
	ck_assert_int_eq(get_query("na%6De=caf%C3%A9"), 200);
	ck_assert_str_eq(body_of(), "[name]=[caf\xc3\xa9]\nrc 0\n");
	ck_assert_int_eq(handled, 4);
}
END_TEST

START_TEST(query_param_lookup)
{
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/p/", h_param, NULL), 0);
	ck_assert_int_eq(get("GET", "/p/n?n=42&m=x&n=43"), 200);
	ck_assert_str_eq(body_of(), "rc 1 [42]");
	ck_assert_int_eq(get("GET", "/p/m?n=42&m=a+b%26c&n=43"), 200);
	ck_assert_str_eq(body_of(), "rc 1 [a b&c]");
	ck_assert_int_eq(get("GET", "/p/z?n=42"), 200);
	ck_assert_str_eq(body_of(), "rc 0 [NULL]");
	ck_assert_int_eq(get("GET", "/p/flag?flag"), 200);
	ck_assert_str_eq(body_of(), "rc 1 []");
	/* Asked by its decoded name. */
	ck_assert_int_eq(get("GET", "/p/a%20b?a+b=1"), 200);
	ck_assert_str_eq(body_of(), "rc 1 [1]");
}
END_TEST

START_TEST(path_rest_routes)
{
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/", h_rest, "prefix"),
	    0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/v2/", h_rest, "v2"),
	    0);
	ck_assert_int_eq(evfcgi_route(srv, "/api/items", h_rest, "exact"), 0);
	evfcgi_route_default(srv, h_rest, "default");
	ck_assert_int_eq(get("GET", "/api/items/7?x=1"), 200);
	ck_assert_str_eq(body_of(), "prefix:[items/7]");
	ck_assert_int_eq(get("GET", "/api/"), 200);
	ck_assert_str_eq(body_of(), "prefix:[]");
	ck_assert_int_eq(get("GET", "/api/v2/x/y"), 200);
	ck_assert_str_eq(body_of(), "v2:[x/y]");
	ck_assert_int_eq(get("GET", "/api/items"), 200);
	ck_assert_str_eq(body_of(), "exact:[]");
	ck_assert_int_eq(get("GET", "/api/a%20b%2Fc"), 200);
	ck_assert_str_eq(body_of(), "prefix:[a b/c]");
	ck_assert_int_eq(get("GET", "/else/where"), 200);
	ck_assert_str_eq(body_of(), "default:[/else/where]");
}
END_TEST

START_TEST(route_body_cap)
{
	ck_assert_int_eq(evfcgi_route(srv, "/small", h_body, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/small", 0, 10), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/other", h_body, NULL), 0);
	ck_assert_int_eq(post("/small", 10, 1, 0), 200);
	ck_assert_uint_eq(body_seen, 10);
	ck_assert_int_eq(post("/small", 11, 1, 0), 413);
	ck_assert_int_eq(post("/small", 11, 0, 0), 413);
	ck_assert_int_eq(handled, 1);
	/* Other routes keep max_body (64 MiB). */
	ck_assert_int_eq(post("/other", 100000, 1, 0), 200);
	ck_assert_uint_eq(body_seen, 100000);
	/* 0 lifts it; registering the route again does too. */
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/small", 0, 0), 0);
	ck_assert_int_eq(post("/small", 11, 1, 0), 200);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/small", 0, 5), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/small", h_body, NULL), 0);
	ck_assert_int_eq(post("/small", 11, 1, 0), 200);
	ck_assert_int_eq(handled, 4);
}
END_TEST

START_TEST(route_body_cap_above_max_body)
{
	evfcgi_server_free(srv);
	peer_free(web);
	lim.max_body = 8;
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	web = peer_new();
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/up/", h_body, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/up/",
	    EVFCGI_ROUTE_PREFIX, 100), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/other", h_body, NULL), 0);
	ck_assert_int_eq(post("/up/x", 100, 1, 0), 200);
	ck_assert_uint_eq(body_seen, 100);
	ck_assert_int_eq(post("/up/x", 100, 0, 0), 200);
	ck_assert_int_eq(post("/up/x", 101, 0, 0), 413);
	ck_assert_int_eq(post("/other", 9, 1, 0), 413);
	ck_assert_int_eq(handled, 2);
}
END_TEST

START_TEST(route_body_cap_streamed)
{
	ck_assert_int_eq(evfcgi_route_ex(srv, "/s", EVFCGI_ROUTE_STREAM, NULL,
	    h_stream, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/s", 0, 1000), 0);
	ck_assert_int_eq(post("/s", 1000, 1, 300), 200);
	ck_assert_uint_eq(body_seen, 1000);
	/* Known to be longer: 413, the handler never runs. */
	ck_assert_int_eq(post("/s", 1001, 1, 0), 413);
	ck_assert_int_eq(handled, 1);
	/* Unknown length: the engine ends it past the cap. */
	ck_assert_int_eq(post("/s", 1001, 0, 300), 413);
	ck_assert_int_eq(handled, 2);
}
END_TEST

START_TEST(error_pages)
{
	ck_assert_int_eq(evfcgi_set_error_page(srv, page_json, NULL), 0);
	ck_assert_int_eq(evfcgi_route_methods(srv, "/m", "GET", h_body, NULL),
	    0);
	ck_assert_int_eq(evfcgi_route(srv, "/small", h_body, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/small", 0, 1), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/fail", h_fail, NULL), 0);
	ck_assert_int_eq(get("GET", "/nowhere"), 404);
	ck_assert(has_line("Content-Type: application/json"));
	ck_assert_str_eq(body_of(), "{\"status\":404,\"detail\":\"\"}");
	ck_assert_msg(has_line("Content-Length: 26"), "%s", out);
	ck_assert_int_eq(get("DELETE", "/m"), 405);
	ck_assert(has_line("Allow: GET, HEAD"));
	ck_assert_str_eq(body_of(), "{\"status\":405,\"detail\":\"\"}");
	ck_assert_int_eq(post("/small", 2, 1, 0), 413);
	ck_assert_str_eq(body_of(), "{\"status\":413,\"detail\":"
	    "\"request body above the limit of 1 bytes\"}");
	ck_assert_int_eq(get("GET", "/bad%zz"), 400);
	ck_assert(has_line("Content-Type: application/json"));
	ck_assert_int_eq(get("GET", "/fail"), 409);
	ck_assert_str_eq(body_of(), "{\"status\":409,\"detail\":\"taken\"}");
	/* HEAD: the header says the length, no body. */
	ck_assert_int_eq(get("HEAD", "/nowhere"), 404);
	ck_assert(has_line("Content-Length: 26"));
	ck_assert_str_eq(body_of(), "");
	/* Without the hook: the engine's text/plain again. */
	ck_assert_int_eq(evfcgi_set_error_page(srv, NULL, NULL), 0);
	ck_assert_int_eq(get("GET", "/nowhere"), 404);
	ck_assert(has_line("Content-Type: text/plain"));
	ck_assert_str_eq(body_of(), "404 Not Found\n");
}
END_TEST

START_TEST(printf_body)
{
	static char	 big[20000];

	memset(big, 'b', sizeof(big) - 1);
	ck_assert_int_eq(evfcgi_route(srv, "/small", h_printf, "hello"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/big", h_printf, big), 0);
	ck_assert_int_eq(get("GET", "/small"), 200);
	ck_assert_str_eq(body_of(), "hello|-1|5");
	ck_assert_int_eq(get("GET", "/big"), 200);
	ck_assert_uint_eq(strlen(body_of()), sizeof(big) - 1 + 9);
	ck_assert(strncmp(body_of(), big, sizeof(big) - 1) == 0);
	ck_assert_str_eq(body_of() + sizeof(big) - 1, "|-1|19999");
	/* HEAD: the count, no bytes. */
	ck_assert_int_eq(get("HEAD", "/small"), 200);
	ck_assert_str_eq(body_of(), "");
}
END_TEST

START_TEST(log_hook)
{
	ck_assert_int_eq(evfcgi_route(srv, "/w", h_warn, NULL), 0);
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_INFO, log_take, NULL), 0);
	ck_assert_int_eq(get("GET", "/w"), 200);
	ck_assert_int_ge(logged("header line refused"), 0);
	ck_assert_int_eq(lines[logged("header line refused")].prio,
	    LOG_WARNING);
	/* The bare text: no time, name or newline. */
	ck_assert_ptr_null(strchr(lines[0].msg, '\n'));
	ck_assert_ptr_null(strstr(lines[0].msg, "evfcgid["));
	/* Above the level: dropped; -1: all dropped. */
	nlines = 0;
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_ERR, log_take, NULL), 0);
	ck_assert_int_eq(get("GET", "/w"), 200);
	ck_assert_uint_eq(nlines, 0);
	ck_assert_int_eq(evfcgi_set_log(NULL, -1, log_take, NULL), 0);
	ck_assert_int_eq(get("GET", "/w"), 200);
	ck_assert_uint_eq(nlines, 0);
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_DEBUG, log_take, NULL), 0);
	ck_assert_int_eq(get("GET", "/w"), 200);
	ck_assert_int_ge(logged("request 1: answer ended, input done"), 0);
	ck_assert_int_ge(logged("request 1: to its handler"), 0);
	ck_assert_int_eq(lines[logged("to its handler")].prio, LOG_DEBUG);
}
END_TEST

/* The default writer, named: the line on stderr carries the new name. */
START_TEST(log_ident)
{
	char	 buf[4096];
	int	 p[2], saved;
	ssize_t	 n;

	ck_assert_int_eq(evfcgi_route(srv, "/w", h_warn, NULL), 0);
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_ne(saved = dup(STDERR_FILENO), -1);
	ck_assert_int_eq(dup2(p[1], STDERR_FILENO), STDERR_FILENO);
	ck_assert_int_eq(evfcgi_set_log("notes-api", LOG_INFO, NULL, NULL), 0);
	ck_assert_int_eq(get("GET", "/w"), 200);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_msg(strstr(buf, " notes-api[") != NULL, "got: %s", buf);
	ck_assert_msg(strstr(buf, "warning: ") != NULL, "got: %s", buf);
	ck_assert_ptr_null(strstr(buf, "evfcgid["));
}
END_TEST

/*
 * The web server closes its end in the middle of an answer (its client
 * left): routine, so nothing at info or above, and no "socket error".
 */
START_TEST(peer_gone_quiet)
{
	size_t	 i;

	ck_assert_int_eq(evfcgi_route(srv, "/big", h_big, NULL), 0);
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_DEBUG, log_take, NULL), 0);
	{
		const char	*nv[] = { "REQUEST_METHOD", "GET",
		    "REQUEST_URI", "/big", NULL };

		send_req(nv, NULL, 0, 0);
	}
	for (i = 0; i < 50; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		peer_read(web, 4096);
	}
	peer_free(web);
	web = NULL;
	for (i = 0; i < 200 && logged("closed") == -1; i++) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(1000);
	}
	ck_assert_int_ge(logged("the peer closed the connection"), 0);
	ck_assert_int_eq(lines[logged("the peer closed the connection")].prio,
	    LOG_DEBUG);
	for (i = 0; i < nlines; i++) {
		ck_assert_msg(lines[i].prio == LOG_DEBUG,
		    "logged above debug: %s", lines[i].msg);
		ck_assert_ptr_null(strstr(lines[i].msg, "socket error"));
	}
}
END_TEST

/* Answers, then drains its server: evfcgi_run() returns. */
static void
h_bye(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_server	*s = evfcgi_req_server(req);

	*(int *)arg = evfcgi_req_base(req) != NULL;
	evfcgi_respond(req, 200, "text/plain", "bye", 3);
	evfcgi_drain(s);
}

/* No base, no limits: the server's own loop, freed with it (ASan). */
START_TEST(own_base)
{
	struct evfcgi_server	*own, *suite_srv = srv;
	const char		*nv[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/bye", NULL };
	int			 had_base = 0;

	ck_assert_ptr_nonnull(own = evfcgi_server_new(NULL, NULL));
	ck_assert_uint_eq(evfcgi_get_limits(own)->max_body, lim.max_body);
	ck_assert_int_eq(evfcgi_route(own, "/bye", h_bye, &had_base), 0);
	/* The peer joins the server that srv names when it is made. */
	peer_free(web);
	srv = own;
	web = peer_new();
	srv = suite_srv;
	send_req(nv, NULL, 0, 0);
	ck_assert_int_eq(evfcgi_run(own), 0);
	ck_assert_int_eq(had_base, 1);
	evfcgi_server_free(own);
	peer_read(web, 0);
	ck_assert(web->r[1].ended);
	out = web->r[1].out;
	ck_assert_str_eq(body_of(), "bye");
}
END_TEST

/* ---- partial */

/*
 * Every prefix of a query: malformed exactly when it ends inside an
 * escape; otherwise each pair but the last whole, the last one cut.
 */
/*
 * An answer written in one call past max_queued (64 KiB, 9/8 of it with
 * no holder) is refused before any of it is queued: evfcgi_respond()
 * answers 503 instead, a write after the header returns -1 and the answer
 * is cut (no END_REQUEST; the connection ends).
 */
START_TEST(output_cap)
{
	peer_free(web);
	evfcgi_server_free(srv);
	lim.max_queued = 64 * 1024;
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	web = peer_new();
	ck_assert_int_eq(evfcgi_route(srv, "/fits", h_cap,
	    (void *)(uintptr_t)(32 * 1024)), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/large", h_cap,
	    (void *)(uintptr_t)(1 << 20)), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/written", h_cap,
	    (void *)(uintptr_t)((1 << 20) + 1)), 0);
	ck_assert_int_eq(get("GET", "/fits"), 200);
	ck_assert_int_eq(cap_rc, 0);
	ck_assert_uint_eq(strlen(body_of()), 32 * 1024);
	ck_assert_int_eq(get("GET", "/large"), 503);
	ck_assert_int_eq(cap_rc, -1);
	ck_assert_str_eq(body_of(),
	    "503 Service Unavailable: output queues are full\n");
	resp_reset(web, 1);
	send_req((const char *const[]){ "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/written", NULL }, NULL, 0, 0);
	ck_assert(RUN_UNTIL(web, web->eof, 5));
	ck_assert_int_eq(cap_rc, -1);
	ck_assert(!web->r[1].ended);
}
END_TEST

START_TEST(query_every_prefix)
{
	static const char	 full[] = "na+me=v%41l%2Bue&x=%7e&&y&z=1+2";
	static const char	 whole[] = "[na me]=[vAl+ue]\n[x]=[~]\n[y]=[]\n"
	    "[z]=[1 2]\nrc 0\n";
	char			 q[sizeof(full)];
	const char		*pct;
	size_t			 len;

	ck_assert_int_eq(evfcgi_route(srv, "/q", h_query, NULL), 0);
	for (len = 0; len < sizeof(full); len++) {
		memcpy(q, full, len);
		q[len] = '\0';
		ck_assert_int_eq(get_query(q), 200);
		pct = strrchr(q, '%');
		if (pct != NULL && q + len - pct < 3) {
			ck_assert_msg(strcmp(body_of(), "rc -1 EINVAL\n") == 0,
			    "prefix '%s': %s", q, body_of());
			continue;
		}
		ck_assert_msg(strstr(body_of(), "rc 0\n") != NULL,
		    "prefix '%s': %s", q, body_of());
		/* The pairs it has are the whole answer's, cut at the last. */
		if (len > 0 && q[len - 1] == '&')
			ck_assert_msg(strncmp(whole, body_of(),
			    strlen(body_of()) - 5) == 0, "prefix '%s': %s", q,
			    body_of());
	}
	ck_assert_str_eq(body_of(), whole);
	ck_assert_int_eq(handled, (int)sizeof(full));
}
END_TEST

/* The path's every prefix against a prefix route, the default else. */
START_TEST(path_rest_every_prefix)
{
	static const char	 full[] = "/api/items/7";
	char			 path[sizeof(full)], want[64];
	size_t			 len;

	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/", h_rest, "p"), 0);
	evfcgi_route_default(srv, h_rest, "d");
	for (len = 1; len < sizeof(full); len++) {
		memcpy(path, full, len);
		path[len] = '\0';
		ck_assert_int_eq(get("GET", path), 200);
		if (len < 5)
			snprintf(want, sizeof(want), "d:[%s]", path);
		else
			snprintf(want, sizeof(want), "p:[%s]", path + 5);
		ck_assert_str_eq(body_of(), want);
	}
}
END_TEST

/* A body at the cap or one past it, in records of every size. */
START_TEST(body_cap_every_split)
{
	size_t	 step;

	ck_assert_int_eq(evfcgi_route(srv, "/c", h_body, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/c", 0, 40), 0);
	for (step = 1; step <= 41; step++) {
		ck_assert_int_eq(post("/c", 40, 0, step), 200);
		ck_assert_uint_eq(body_seen, 40);
		ck_assert_int_eq(post("/c", 41, 0, step), 413);
	}
	ck_assert_int_eq(handled, 41);
}
END_TEST

/* ---- malformed */

START_TEST(query_malformed)
{
	static const char *const bad[] = { "%", "a=%", "a=%4", "%G0=1",
	    "a=%0g", "a=%00", "%00", "a=1&b=%zz", "a=1&%", NULL };
	size_t	 i;

	ck_assert_int_eq(evfcgi_route(srv, "/q", h_query, NULL), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/p/", h_param, NULL), 0);
	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_int_eq(get_query(bad[i]), 200);
		ck_assert_msg(strcmp(body_of(), "rc -1 EINVAL\n") == 0,
		    "%s: %s", bad[i], body_of());
	}
	/* A pair before the bad one is not handed out either. */
	ck_assert_int_eq(get("GET", "/p/a?a=1&b=%zz"), 200);
	ck_assert_str_eq(body_of(), "rc -1 [NULL]");
	/* A literal '%' is "%25"; '+' is "%2B". */
	ck_assert_int_eq(get_query("p=100%25&s=%2B"), 200);
	ck_assert_str_eq(body_of(), "[p]=[100%]\n[s]=[+]\nrc 0\n");
}
END_TEST

START_TEST(bad_arguments)
{
	char	 longname[65];

	memset(longname, 'n', 64);
	longname[64] = '\0';
	ck_assert_int_eq(evfcgi_route(srv, "/r", h_body, NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/none", 0, 1), -1);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/r",
	    EVFCGI_ROUTE_PREFIX, 1), -1);
	ck_assert_int_eq(evfcgi_set_error_page(NULL, page_json, NULL), -1);
	ck_assert_int_eq(evfcgi_set_log(NULL, 8, NULL, NULL), -1);
	ck_assert_int_eq(evfcgi_set_log(NULL, -2, NULL, NULL), -1);
	ck_assert_int_eq(evfcgi_set_log(longname, LOG_INFO, NULL, NULL), -1);
	longname[63] = '\0';
	ck_assert_int_eq(evfcgi_set_log(longname, LOG_INFO, NULL, NULL), 0);
}
END_TEST

/* A page maker that declines (418) or says too much (402): the engine's. */
static void
h_418(struct evfcgi_req *req, void *arg)
{
	evfcgi_respond_error(req, *(int *)arg, NULL);
}

START_TEST(error_page_fallback)
{
	static int	 s418 = 418, s402 = 402;

	ck_assert_int_eq(evfcgi_set_error_page(srv, page_json, NULL), 0);
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_INFO, log_take, NULL), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/418", h_418, &s418), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/402", h_418, &s402), 0);
	ck_assert_int_eq(get("GET", "/418"), 418);
	ck_assert(has_line("Content-Type: text/plain"));
	ck_assert_uint_eq(nlines, 0);
	ck_assert_int_eq(get("GET", "/402"), 402);
	ck_assert(has_line("Content-Type: text/plain"));
	ck_assert_str_eq(body_of(), "402 Payment Required\n");
	ck_assert_int_ge(logged("error page of 4097 bytes refused"), 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("api");

	suite_add_case(s, "core", setup, teardown, 30,
	    query_pairs, query_param_lookup, path_rest_routes, route_body_cap,
	    route_body_cap_above_max_body, route_body_cap_streamed,
	    error_pages, printf_body, log_hook, log_ident, peer_gone_quiet,
	    own_base, output_cap, NULL);
	suite_add_case(s, "partial", setup, teardown, 60,
	    query_every_prefix, path_rest_every_prefix, body_cap_every_split,
	    NULL);
	suite_add_case(s, "malformed", setup, teardown, 30,
	    query_malformed, bad_arguments, error_page_fallback, NULL);
	return suite_run(s);
}
