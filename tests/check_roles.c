/*
 * check_roles.c: the Authorizer and Filter roles (FastCGI 1.0 6.3, 6.4)
 * over socketpairs.  The test plays the web server: it builds a request's
 * bytes, writes them (or a prefix of them) into one end, runs the loop in
 * this process and parses what comes back.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "evfcgi.h"
#include "fcgi_proto.h"
#include "tests/fcgi_peer.h"
#include "tests/suite.h"

#define MAX_ID	4

static struct evfcgi_limits	 lim;
static int			 var_rc[14];	/* h_badvar's results */

static void
setup(void)
{
	evfcgi_limits_default(&lim);
	lim.sndbuf = 0;
	/* No test here asks for a management record, nor uses an id past 3. */
	peer_ids(1, MAX_ID);
	memset(var_rc, 0, sizeof(var_rc));
}

static void
teardown(void)
{
	if (srv != NULL)
		evfcgi_server_free(srv);
	if (base != NULL)
		event_base_free(base);
	srv = NULL;
	base = NULL;
}

/* The authorizer: lets "Bearer x" through with a variable, else 401. */
static void
h_authorize(struct evfcgi_req *req, void *arg)
{
	const char	*a = evfcgi_param(req, "HTTP_AUTHORIZATION");

	(void)arg;
	ck_assert_int_eq(evfcgi_role(req), EVFCGI_AUTHORIZER);
	ck_assert_ptr_null(evfcgi_data(req));
	if (a != NULL && strcmp(a, "Bearer x") == 0) {
		ck_assert_int_eq(evfcgi_header_add(req, "Variable-AUTH_USER",
		    "demo"), 0);
		evfcgi_respond(req, 200, NULL, NULL, 0);
		return;
	}
	ck_assert_int_eq(evfcgi_header_add(req, "WWW-Authenticate",
	    "Bearer realm=\"t\""), 0);
	evfcgi_respond(req, 401, "text/plain", "no\n", 3);
}

/* An authorizer trying malformed and reserved Variable- names; then 200. */
static void
h_badvar(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	var_rc[0] = evfcgi_header_add(req, "Variable-", "x");
	var_rc[1] = evfcgi_header_add(req, "Variable-1ST", "x");
	var_rc[2] = evfcgi_header_add(req, "Variable-A-B", "x");
	var_rc[3] = evfcgi_header_add(req, "Variable-A.B", "x");
	var_rc[4] = evfcgi_header_add(req, "Variable-OK", "a\r\nX-Evil: 1");
	var_rc[5] = evfcgi_header_add(req, "variable-Ok_2", "fine");
	/* Names the front end would hand to the program as its own. */
	var_rc[8] = evfcgi_header_add(req, "Variable-LD_PRELOAD", "/tmp/x.so");
	var_rc[9] = evfcgi_header_add(req, "Variable-SCRIPT_FILENAME", "/x");
	var_rc[10] = evfcgi_header_add(req, "Variable-HTTP_HOST", "evil");
	var_rc[11] = evfcgi_header_add(req, "Variable-REMOTE_USER", "root");
	var_rc[12] = evfcgi_header_add(req, "Variable-ld_library_path", "/x");
	var_rc[13] = evfcgi_header_add(req, "Variable-Query_String", "a");
	var_rc[6] = 1;
	evfcgi_respond(req, 200, NULL, NULL, 0);
}

/* A responder: its role, Variable- not checked, DATA not seen. */
static void
h_responder(struct evfcgi_req *req, void *arg)
{
	char	 b[64];
	int	 n;

	(void)arg;
	var_rc[7] = evfcgi_header_add(req, "Variable-A-B", "x");
	n = snprintf(b, sizeof(b), "role=%d data=%s body=%zu\n",
	    evfcgi_role(req), evfcgi_data(req) == NULL ? "none" : "some",
	    evbuffer_get_length(evfcgi_body(req)));
	evfcgi_respond(req, 200, "text/plain", b, (size_t)n);
}

/* The filter: the sizes and the last-modified time, then the DATA. */
static void
h_filter(struct evfcgi_req *req, void *arg)
{
	struct evbuffer	*d = evfcgi_data(req);
	const char	*lm = evfcgi_param(req, "FCGI_DATA_LAST_MOD");

	(void)arg;
	ck_assert_int_eq(evfcgi_role(req), EVFCGI_FILTER);
	ck_assert_ptr_nonnull(d);
	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "stdin=%zu data=%zu last=%s\n",
	    evbuffer_get_length(evfcgi_body(req)), evbuffer_get_length(d),
	    lm != NULL ? lm : "-");
	evfcgi_write_buffer(req, d, evbuffer_get_length(d));
	evfcgi_finish(req);
}

/* A server on lim; roles says which role routes it gets ("raf"). */
static void
start(const char *roles)
{
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	if (strchr(roles, 'r') != NULL)
		ck_assert_int_eq(evfcgi_route_prefix(srv, "/", h_responder,
		    NULL), 0);
	if (strchr(roles, 'a') != NULL) {
		ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX |
		    EVFCGI_ROUTE_AUTHORIZER, NULL, h_authorize, NULL), 0);
		ck_assert_int_eq(evfcgi_route_ex(srv, "/badvar",
		    EVFCGI_ROUTE_AUTHORIZER, NULL, h_badvar, NULL), 0);
	}
	if (strchr(roles, 'f') != NULL)
		ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX |
		    EVFCGI_ROUTE_FILTER, NULL, h_filter, NULL), 0);
}

static const char *const auth_ok[] = { "REQUEST_METHOD", "GET",
    "REQUEST_URI", "/file.txt", "HTTP_AUTHORIZATION", "Bearer x",
    "FCGI_ROLE", "AUTHORIZER", NULL };

/* The filter request of most tests: 3 bytes of STDIN, 5 of DATA. */
static void
w_filter(struct wire *w, uint16_t id, uint8_t flags, const char *dlen,
    const char *stdin_s, const char *data_s)
{
	const char	*nv[] = { "REQUEST_METHOD", "GET", "REQUEST_URI",
	    "/page.html", "FCGI_DATA_LAST_MOD", "1700000000",
	    "FCGI_DATA_LENGTH", dlen, NULL };

	if (dlen == NULL)
		nv[6] = NULL;
	w_begin(w, id, FCGI_FILTER, flags);
	w_params(w, id, nv);
	w_stream(w, FCGI_STDIN, id, stdin_s);
	w_stream(w, FCGI_DATA, id, data_s);
}

/* core: allowed, with its variable; no STDIN sent at all (spec 6.3). */
START_TEST(authorizer_allows)
{
	struct wire	 w = { .len = 0 };
	struct peer	*p;

	start("ra");
	w_begin(&w, 1, FCGI_AUTHORIZER, 0);
	w_params(&w, 1, auth_ok);
	p = exchange(&w, 1);
	ck_assert_int_eq(p->r[1].pstatus, FCGI_REQUEST_COMPLETE);
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_ptr_nonnull(strstr(p->r[1].out,
	    "\r\nVariable-AUTH_USER: demo\r\n"));
	/* Without KEEP_CONN the connection ends with the answer. */
	ck_assert(RUN_UNTIL(p, p->eof, 5));
	peer_free(p);
}
END_TEST

/* core: denied: the status, its header lines and body, as given. */
START_TEST(authorizer_denies)
{
	static const char *const nv[] = { "REQUEST_METHOD", "POST",
	    "REQUEST_URI", "/x", "CONTENT_LENGTH", "99999999999", NULL };
	struct wire	 w = { .len = 0 };
	struct peer	*p;

	start("a");
	w_begin(&w, 1, FCGI_AUTHORIZER, 0);
	w_params(&w, 1, nv);
	p = exchange(&w, 1);
	/* The client's CONTENT_LENGTH is not the authorizer's: no 413. */
	ck_assert_int_eq(resp_status(&p->r[1]), 401);
	ck_assert_ptr_nonnull(strstr(p->r[1].out,
	    "\r\nWWW-Authenticate: Bearer realm=\"t\"\r\n"));
	ck_assert_ptr_nonnull(strstr(p->r[1].out, "\r\n\r\nno\n"));
	/* In one record: Apache passes on only the body that came in it. */
	ck_assert_int_eq(p->r[1].nout, 1);
	peer_free(p);
}
END_TEST

/*
 * core: STDIN for an authorizer (a body, then its end) is ignored, on a
 * kept connection that then serves a Responder and an authorizer again.
 */
START_TEST(authorizer_stdin_ignored)
{
	static const char *const get[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/r", NULL };
	struct wire	 w = { .len = 0 };
	struct peer	*p;

	start("ra");
	w_begin(&w, 1, FCGI_AUTHORIZER, FCGI_KEEP_CONN);
	w_params(&w, 1, auth_ok);
	w_stream(&w, FCGI_STDIN, 1, "a body no authorizer gets");
	w_begin(&w, 2, FCGI_RESPONDER, FCGI_KEEP_CONN);
	w_params(&w, 2, get);
	w_stream(&w, FCGI_STDIN, 2, "abc");
	w_begin(&w, 3, FCGI_AUTHORIZER, FCGI_KEEP_CONN);
	w_params(&w, 3, get);
	p = exchange(&w, 3);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	ck_assert_ptr_nonnull(strstr(p->r[2].out,
	    "role=1 data=none body=3\n"));
	ck_assert_int_eq(resp_status(&p->r[3]), 401);
	ck_assert(!p->eof);
	peer_free(p);
}
END_TEST

/* core: a role no route takes, FCGI_UNKNOWN_ROLE; a routed one served. */
START_TEST(role_mismatch_unknown_role)
{
	struct wire	 w = { .len = 0 };
	struct peer	*p;
	struct evfcgi_stats st;

	start("rf");
	w_begin(&w, 1, FCGI_AUTHORIZER, FCGI_KEEP_CONN);
	w_begin(&w, 2, 7, FCGI_KEEP_CONN);
	w_filter(&w, 3, FCGI_KEEP_CONN, "5", "abc", "hello");
	p = exchange(&w, 3);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_int_eq(p->r[1].pstatus, FCGI_UNKNOWN_ROLE);
	ck_assert_int_eq(p->r[2].pstatus, FCGI_UNKNOWN_ROLE);
	ck_assert_uint_eq(p->r[1].outlen, 0);
	ck_assert_int_eq(p->r[3].pstatus, FCGI_REQUEST_COMPLETE);
	ck_assert_int_eq(resp_status(&p->r[3]), 200);
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_eq(st.requests_total, 1);
	peer_free(p);
}
END_TEST

/* core: the route flags a role takes, and those it refuses. */
START_TEST(role_route_flags)
{
	start("");
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_AUTHORIZER |
	    EVFCGI_ROUTE_FILTER, NULL, h_filter, NULL), -1);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_AUTHORIZER |
	    EVFCGI_ROUTE_STREAM, NULL, h_authorize, NULL), -1);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_FILTER |
	    EVFCGI_ROUTE_STREAM, NULL, h_filter, NULL), -1);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", 0x40, NULL, h_filter,
	    NULL), -1);
	/* The same path in two roles: two routes, neither replaced. */
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_FILTER, NULL,
	    h_filter, NULL), 0);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/", 0, NULL, h_responder,
	    NULL), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/",
	    EVFCGI_ROUTE_FILTER, 4), 0);
	ck_assert_int_eq(evfcgi_route_body_limit(srv, "/",
	    EVFCGI_ROUTE_AUTHORIZER, 4), -1);
}
END_TEST

/* core: Variable- names an authorizer may not send; a responder may. */
START_TEST(authorizer_variable_malformed)
{
	static const char *const nv[] = { "REQUEST_URI", "/badvar", NULL };
	struct wire	 w = { .len = 0 };
	struct peer	*p;
	int		 i;

	start("ra");
	w_begin(&w, 1, FCGI_AUTHORIZER, 0);
	w_params(&w, 1, nv);
	p = exchange(&w, 1);
	ck_assert_int_eq(var_rc[6], 1);
	for (i = 0; i < 14; i++)
		ck_assert_msg(var_rc[i] == -1 || i == 5 || i == 6 || i == 7,
		    "Variable- case %d taken", i);
	ck_assert_int_eq(var_rc[5], 0);
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_ptr_nonnull(strstr(p->r[1].out, "\r\nvariable-Ok_2: fine\r\n"));
	ck_assert_ptr_null(strstr(p->r[1].out, "X-Evil"));
	ck_assert_ptr_null(strstr(p->r[1].out, "Variable-A"));
	peer_free(p);
	memset(&w, 0, sizeof(w));
	w_begin(&w, 1, FCGI_RESPONDER, 0);
	w_params(&w, 1, nv);
	w_stream(&w, FCGI_STDIN, 1, "");
	p = exchange(&w, 1);
	ck_assert_int_eq(var_rc[7], 0);
	peer_free(p);
}
END_TEST

/* core: STDIN and DATA, in either order, the handler once both ended. */
START_TEST(filter_stdin_and_data)
{
	struct wire	 w = { .len = 0 };
	struct peer	*p;
	struct evfcgi_stats st;

	start("rf");
	w_filter(&w, 1, FCGI_KEEP_CONN, "5", "abc", "hello");
	/* DATA first, STDIN after; no FCGI_DATA_LENGTH. */
	w_begin(&w, 2, FCGI_FILTER, FCGI_KEEP_CONN);
	w_params(&w, 2, auth_ok);
	w_record(&w, FCGI_DATA, 2, "xy", 2);
	w_record(&w, FCGI_STDIN, 2, "s", 1);
	w_record(&w, FCGI_DATA, 2, "z", 1);
	w_record(&w, FCGI_DATA, 2, NULL, 0);
	p = exchange(&w, 1);
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_ptr_nonnull(strstr(p->r[1].out,
	    "\r\n\r\nstdin=3 data=5 last=1700000000\nhello"));
	ck_assert(!p->r[2].ended);	/* its STDIN has not ended */
	w.len = 0;
	w_record(&w, FCGI_STDIN, 2, NULL, 0);
	peer_send(p, w.b, w.len);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 5));
	ck_assert_ptr_nonnull(strstr(p->r[2].out,
	    "\r\n\r\nstdin=1 data=3 last=-\nxyz"));
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_eq(st.bytes_input, 0);
	peer_free(p);
}
END_TEST

/* core: DATA for a Responder is ignored (not held, not answered). */
START_TEST(data_for_responder_ignored)
{
	static const char *const get[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/r", NULL };
	struct wire	 w = { .len = 0 };
	struct peer	*p;

	start("r");
	w_begin(&w, 1, FCGI_RESPONDER, 0);
	w_params(&w, 1, get);
	w_stream(&w, FCGI_DATA, 1, "ignored");
	w_stream(&w, FCGI_STDIN, 1, "ab");
	p = exchange(&w, 1);
	ck_assert_ptr_nonnull(strstr(p->r[1].out,
	    "role=1 data=none body=2\n"));
	peer_free(p);
}
END_TEST

/* malformed: DATA past max_body, ahead (FCGI_DATA_LENGTH) or as it comes. */
START_TEST(filter_data_above_limit)
{
	struct wire	 w = { .len = 0 };
	struct peer	*p;
	struct evfcgi_stats st;

	lim.max_body = 8;
	start("f");
	w_filter(&w, 1, FCGI_KEEP_CONN, "9", "", "123456789");
	w_filter(&w, 2, FCGI_KEEP_CONN, NULL, "", "123456789");
	w_filter(&w, 3, FCGI_KEEP_CONN, NULL, "", "12345678");
	p = exchange(&w, 3);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 413);
	ck_assert_int_eq(resp_status(&p->r[2]), 413);
	ck_assert_int_eq(resp_status(&p->r[3]), 200);
	ck_assert_ptr_nonnull(strstr(p->r[3].out, "data=8"));
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_eq(st.rejected, 2);
	ck_assert_uint_eq(st.bytes_input, 0);
	ck_assert(!p->eof);
	peer_free(p);
}
END_TEST

/*
 * malformed: FCGI_DATA_LENGTH not a number, a stream short of it or past
 * it: 400 each, the connection kept; DATA before the end of PARAMS closes
 * the connection.
 */
START_TEST(filter_data_malformed)
{
	struct wire	 w = { .len = 0 };
	struct peer	*p;
	int		 id;

	start("f");
	w_filter(&w, 1, FCGI_KEEP_CONN, "5x", "", "hello");
	w_filter(&w, 2, FCGI_KEEP_CONN, "5", "", "hell");
	w_filter(&w, 3, FCGI_KEEP_CONN, "5", "", "hello!");
	p = exchange(&w, 3);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	for (id = 1; id <= 3; id++) {
		ck_assert_int_eq(resp_status(&p->r[id]), 400);
		ck_assert_int_eq(p->r[id].pstatus, FCGI_REQUEST_COMPLETE);
	}
	ck_assert(!p->eof);
	peer_free(p);
	w.len = 0;
	w_begin(&w, 1, FCGI_FILTER, FCGI_KEEP_CONN);
	w_record(&w, FCGI_PARAMS, 1, "\3\1URIx", 5);
	w_record(&w, FCGI_DATA, 1, "d", 1);
	p = peer_new();
	peer_send(p, w.b, w.len);
	ck_assert(RUN_UNTIL(p, p->eof, 5));
	ck_assert(!p->r[1].ended);
	peer_free(p);
}
END_TEST

/*
 * partial: every prefix of a request, then the end of input: the answer
 * comes whole once the bytes that complete the request's input are in,
 * and not before; the connection closes either way and holds nothing.
 */
static void
prefixes(const struct wire *w, size_t complete, const char *want)
{
	struct evfcgi_stats	 st;
	struct peer		*p;
	size_t			 k;

	for (k = 0; k <= w->len; k++) {
		p = peer_new();
		peer_send(p, w->b, k);
		shutdown(p->fd, SHUT_WR);
		ck_assert_msg(RUN_UNTIL(p, p->eof, 5), "prefix %zu: open", k);
		if (k >= complete) {
			ck_assert_msg(p->r[1].ended, "prefix %zu: no answer", k);
			ck_assert_ptr_nonnull(strstr(p->r[1].out, want));
		} else
			ck_assert_msg(!p->r[1].ended && p->r[1].outlen == 0,
			    "prefix %zu of %zu: answered", k, complete);
		peer_free(p);
	}
	event_base_loop(base, EVLOOP_NONBLOCK);
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_eq(st.connections, 0);
	ck_assert_uint_eq(st.requests_active, 0);
	ck_assert_uint_eq(st.bytes_input, 0);
}

START_TEST(authorizer_every_prefix)
{
	struct wire	 w = { .len = 0 };
	size_t		 complete;

	start("a");
	w_begin(&w, 1, FCGI_AUTHORIZER, 0);
	w_params(&w, 1, auth_ok);
	complete = w.len;
	w_stream(&w, FCGI_STDIN, 1, "");
	prefixes(&w, complete, "Variable-AUTH_USER: demo\r\n");
}
END_TEST

START_TEST(filter_every_prefix)
{
	struct wire	 w = { .len = 0 };

	start("f");
	w_filter(&w, 1, 0, "5", "abc", "hello");
	prefixes(&w, w.len, "stdin=3 data=5 last=1700000000\nhello");
}
END_TEST

static Suite *
roles_suite(void)
{
	Suite	*s = suite_create("roles");

	suite_add_case(s, "core", setup, teardown, 30, authorizer_allows,
	    authorizer_denies, authorizer_stdin_ignored,
	    role_mismatch_unknown_role, role_route_flags,
	    authorizer_variable_malformed, filter_stdin_and_data,
	    data_for_responder_ignored, NULL);
	suite_add_case(s, "partial", setup, teardown, 60,
	    authorizer_every_prefix, filter_every_prefix, NULL);
	suite_add_case(s, "malformed", setup, teardown, 30,
	    filter_data_above_limit, filter_data_malformed, NULL);
	return s;
}

int
main(void)
{
	/* As evfcgi.h asks of every application. */
	signal(SIGPIPE, SIG_IGN);
	return suite_run(roles_suite());
}
