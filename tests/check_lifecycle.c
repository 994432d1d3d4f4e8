/*
 * check_lifecycle.c: a request's end, whatever the application calls
 * while the engine ends it.  An abort callback and an error page maker
 * run inside the engine's own end or answer of a request: every public
 * call they make on it must be safe (at worst -1), and the peer must see
 * at most one END_REQUEST an id, nothing for it after that, and a
 * connection that goes on serving.  The suite plays the web server over a
 * socketpair (tests/fcgi_peer.c, which fails a test on a second
 * END_REQUEST or a record after it); its ASan build catches what a wrong
 * order would free under the caller.
 */
#include <sys/types.h>

#include <check.h>
#include <fcntl.h>
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

/* What an abort callback or a page maker tries on its request. */
enum act {
	ACT_NOTHING,
	ACT_RESPOND,
	ACT_RESPOND_ERROR,
	ACT_HEADER_WRITE_FINISH,
	ACT_HEADER_ADD,
	ACT_WRITE_REF_FREE,
	ACT_WRITE_FD,
	ACT_WRITE_BUFFER,
	ACT_PRINTF,
	ACT_PRODUCE,
	ACT_FINISH,
	ACT_ON_BODY,
	ACT_ON_ABORT,
	ACT_N
};

static enum act	 act;		/* this run's */
static int	 calls_ok;	/* calls that returned 0 or more */
static int	 aborts;	/* abort callbacks run */
static int	 freed;		/* write_ref_free's freefn calls */
static int	 fd_seen = -1;	/* write_fd's descriptor */
static struct evfcgi_req *held[4];	/* requests a handler kept */

/* Lines the log hook took. */
#define MAX_LINES	64
static char	 lines[MAX_LINES][256];
static size_t	 nlines;

static void
log_take(int prio, const char *msg, void *arg)
{
	(void)prio;
	(void)arg;
	if (nlines < MAX_LINES)
		snprintf(lines[nlines++], sizeof(lines[0]), "%s", msg);
}

/* Whether a logged line holds s. */
static int
logged(const char *s)
{
	size_t	 i;

	for (i = 0; i < nlines; i++)
		if (strstr(lines[i], s) != NULL)
			return 1;
	return 0;
}

static void
setup(void)
{
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	lim.sndbuf = 0;
	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	peer_ids(1, 4);
	calls_ok = aborts = freed = 0;
	fd_seen = -1;
	memset(held, 0, sizeof(held));
	nlines = 0;
	ck_assert_int_eq(evfcgi_set_log(NULL, LOG_DEBUG, log_take, NULL), 0);
}

static void
teardown(void)
{
	if (srv != NULL)
		evfcgi_server_free(srv);
	event_base_free(base);
	srv = NULL;
	base = NULL;
	ck_assert_int_eq(evfcgi_set_log("evfcgid", LOG_INFO, NULL, NULL), 0);
}

static void
ref_free(const void *data, void *arg)
{
	(void)data;
	(void)arg;
	freed++;
}

static int
produce_some(struct evfcgi_req *req, size_t room, void *arg)
{
	(void)room;
	(void)arg;
	(void)evfcgi_write(req, "x", 1);
	return 1;
}

static void
on_body(struct evfcgi_req *req, struct evbuffer *body, int done, void *arg)
{
	(void)req;
	(void)arg;
	(void)done;
	evbuffer_drain(body, evbuffer_get_length(body));
}

static void	nop_abort(struct evfcgi_req *, void *);

/* Makes the call a of the run on req, counting those that succeed. */
static void
try_act(struct evfcgi_req *req, enum act a)
{
	static const char	 ref[] = "by reference";
	struct evbuffer		*b;
	int			 p[2], rc = -1;

	switch (a) {
	case ACT_NOTHING:
		return;
	case ACT_RESPOND:
		rc = evfcgi_respond(req, 200, "text/plain", "late\n", 5);
		break;
	case ACT_RESPOND_ERROR:
		rc = evfcgi_respond_error(req, 409, "late");
		break;
	case ACT_HEADER_WRITE_FINISH:
		rc = evfcgi_header(req, 200, "text/plain", -1);
		rc |= evfcgi_write(req, "late", 4);
		rc |= evfcgi_finish(req);
		break;
	case ACT_HEADER_ADD:
		rc = evfcgi_header_add(req, "X-Late", "1");
		break;
	case ACT_WRITE_REF_FREE:
		(void)evfcgi_header(req, 200, "text/plain", -1);
		rc = evfcgi_write_ref_free(req, ref, sizeof(ref) - 1, ref_free,
		    NULL);
		break;
	case ACT_WRITE_FD:
		ck_assert_int_eq(pipe(p), 0);
		close(p[1]);
		fd_seen = p[0];
		(void)evfcgi_header(req, 200, "text/plain", 10);
		rc = evfcgi_write_fd(req, p[0], 0, 10);
		break;
	case ACT_WRITE_BUFFER:
		ck_assert_ptr_nonnull(b = evbuffer_new());
		evbuffer_add(b, "abc", 3);
		(void)evfcgi_header(req, 200, "text/plain", -1);
		rc = evfcgi_write_buffer(req, b, 3);
		evbuffer_free(b);
		break;
	case ACT_PRINTF:
		(void)evfcgi_header(req, 200, "text/plain", -1);
		rc = evfcgi_printf(req, "%d", 42) < 0 ? -1 : 0;
		break;
	case ACT_PRODUCE:
		(void)evfcgi_header(req, 200, "text/plain", -1);
		rc = evfcgi_produce(req, produce_some, NULL);
		break;
	case ACT_FINISH:
		rc = evfcgi_finish(req);
		break;
	case ACT_ON_BODY:
		rc = evfcgi_on_body(req, on_body, NULL);
		break;
	case ACT_ON_ABORT:
		evfcgi_on_abort(req, nop_abort, NULL);
		rc = -1;
		break;
	default:
		ck_abort_msg("no such act %d", a);
	}
	if (rc >= 0)
		calls_ok++;
}

static void
nop_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	(void)arg;
	aborts += 100;	/* must never run: set inside the callback */
}

/* The abort callback: tries the run's call on its own request. */
static void
act_abort(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	aborts++;
	try_act(req, act);
}

/* Keeps the request unanswered, with the abort callback set. */
static void
h_hold(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	held[0] = req;
	evfcgi_on_abort(req, act_abort, NULL);
}

/* A streamed route: holds the request, body capped at 4 bytes. */
static void
h_hold_stream(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_on_abort(req, act_abort, NULL);
	ck_assert_int_eq(evfcgi_on_body(req, on_body, NULL), 0);
	ck_assert_int_eq(evfcgi_body_limit(req, 4), 0);
}

static void
h_hello(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_respond(req, 200, "text/plain", "hi\n", 3);
}

/* Sends id's request for path, its body (may be NULL) and its end. */
static void
send_req(struct peer *p, uint16_t id, const char *path, const char *body)
{
	/* A body of no declared length: read to its empty STDIN. */
	const char *const	 nv[] = { "REQUEST_METHOD", body ? "POST" : "GET",
	    "REQUEST_URI", path, NULL };
	uint8_t			 params[512];
	size_t			 n = nv_list(params, sizeof(params), nv);

	send_begin(p, id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, id, params, n);
	send_record(p, FCGI_PARAMS, id, NULL, 0);
	if (body != NULL)
		send_record(p, FCGI_STDIN, id, body, strlen(body));
	else
		send_record(p, FCGI_STDIN, id, NULL, 0);
}

/* Runs the loop a little while (the answers that may come, come). */
static void
settle(struct peer *p)
{
	double	 end = now_s() + 0.05;

	while (now_s() < end) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		peer_read(p, 0);
		usleep(200);
	}
}

/* The calls the callback made were all refused, and what they lent freed. */
static void
check_refused(void)
{
	ck_assert_int_eq(aborts, 1);
	ck_assert_msg(calls_ok == 0, "act %d: a call inside the abort "
	    "callback succeeded", act);
	if (act == ACT_WRITE_REF_FREE)
		ck_assert_int_eq(freed, 1);
	if (act == ACT_WRITE_FD)
		ck_assert_int_eq(fcntl(fd_seen, F_GETFD), -1);
}

/* The peer aborts a held request: one END_REQUEST, the connection goes on. */
START_TEST(abort_by_peer)
{
	struct peer	*p;

	act = (enum act)_i;
	ck_assert_int_eq(evfcgi_route(srv, "/hold", h_hold, NULL), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/hello", h_hello, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/hold", NULL);
	ck_assert(RUN_UNTIL(p, held[0] != NULL, 5));
	send_record(p, FCGI_ABORT_REQUEST, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	settle(p);
	check_refused();
	ck_assert_ptr_null(p->r[1].out);
	/* The same id, then another, on the kept connection. */
	resp_reset(p, 1);
	send_req(p, 1, "/hello", NULL);
	send_req(p, 2, "/hello", NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	peer_free(p);
}
END_TEST

/*
 * The connection closes under a held request (the server is freed, as an
 * application does after evfcgi_run()): nothing the callback does goes.
 */
START_TEST(abort_by_close)
{
	struct peer	*p;

	act = (enum act)_i;
	ck_assert_int_eq(evfcgi_route(srv, "/hold", h_hold, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/hold", NULL);
	ck_assert(RUN_UNTIL(p, held[0] != NULL, 5));
	evfcgi_server_free(srv);
	srv = NULL;
	check_refused();
	peer_read(p, 0);
	ck_assert(!p->r[1].ended);
	ck_assert_ptr_null(p->r[1].out);
	peer_free(p);
}
END_TEST

/* The engine ends a streamed body past its cap: its 413, once. */
START_TEST(abort_by_engine)
{
	struct peer	*p;

	act = (enum act)_i;
	ck_assert_int_eq(evfcgi_route_ex(srv, "/up", EVFCGI_ROUTE_STREAM, NULL,
	    h_hold_stream, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/up", "12345678");
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	settle(p);
	check_refused();
	ck_assert_int_eq(resp_status(&p->r[1]), 413);
	peer_free(p);
}
END_TEST

/* Request 1's abort callback answers request 2 as its connection dies. */
static void
other_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	(void)arg;
	aborts++;
	if (held[1] != NULL && evfcgi_respond(held[1], 200, "text/plain",
	    "x", 1) == 0)
		calls_ok++;
}

static void
h_hold_two(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	if (held[0] == NULL) {
		held[0] = req;
		evfcgi_on_abort(req, other_abort, NULL);
	} else
		held[1] = req;
}

START_TEST(abort_answers_another)
{
	struct peer	*p;

	ck_assert_int_eq(evfcgi_route(srv, "/hold", h_hold_two, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/hold", NULL);
	send_req(p, 2, "/hold", NULL);
	ck_assert(RUN_UNTIL(p, held[1] != NULL, 5));
	evfcgi_server_free(srv);
	srv = NULL;
	ck_assert_int_eq(aborts, 1);
	/* The connection is gone: nothing could be queued on it. */
	ck_assert_int_eq(calls_ok, 0);
	peer_read(p, 0);
	ck_assert(!p->r[1].ended && !p->r[2].ended);
	peer_free(p);
}
END_TEST

/*
 * A request whose connection's stream broke (another answer on it was
 * cut) ends when the application answers it, though nothing can go out:
 * evfcgi_respond_error() returned -1 and left it held, so its abort
 * callback ran later for a request the application had let go.
 */
static void
h_cut_or_hold(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	if (held[0] == NULL) {
		held[0] = req;
		evfcgi_on_abort(req, act_abort, NULL);
		return;
	}
	ck_assert_int_eq(evfcgi_header(req, 200, "text/plain", -1), 0);
	ck_assert_int_eq(evfcgi_write(req, "part", 4), 0);
	/* An error after the header: the answer, and the stream, are cut. */
	ck_assert_int_eq(evfcgi_respond_error(req, 500, NULL), -1);
}

START_TEST(answer_on_a_cut_stream_ends)
{
	struct evfcgi_stats	 st;
	struct peer		*p;

	act = ACT_NOTHING;
	ck_assert_int_eq(evfcgi_route(srv, "/x", h_cut_or_hold, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/x", NULL);
	ck_assert(RUN_UNTIL(p, held[0] != NULL, 5));
	send_req(p, 2, "/x", NULL);
	ck_assert(RUN_UNTIL(p, p->cut, 5));
	/* The application answers what it held: refused, but ended. */
	evfcgi_on_abort(held[0], NULL, NULL);
	ck_assert_int_eq(evfcgi_respond_error(held[0], 503, "late"), -1);
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_eq(st.requests_active, 0);
	evfcgi_server_free(srv);
	srv = NULL;
	ck_assert_int_eq(aborts, 0);
	peer_free(p);
}
END_TEST

/* Error page makers: a bad Content-Type, and one that answers itself. */
static int
page_crlf(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	(void)req;
	(void)detail;
	(void)arg;
	*ctype = "text/html\r\nX-Injected: 1";
	return snprintf(buf, size, "<p>%d</p>", status);
}

static int
page_long(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	static char	 big[2000];

	(void)req;
	(void)detail;
	(void)arg;
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "text/", 5);
	*ctype = big;
	return snprintf(buf, size, "<p>%d</p>", status);
}

static int
page_answers(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	(void)detail;
	(void)arg;
	try_act(req, act);
	*ctype = "text/html";
	return snprintf(buf, size, "<p>%d</p>", status);
}

START_TEST(error_page_bad_ctype)
{
	struct peer	*p;
	int		 i;

	for (i = 0; i < 2; i++) {
		ck_assert_int_eq(evfcgi_set_error_page(srv, i == 0 ? page_crlf :
		    page_long, NULL), 0);
		p = peer_new();
		send_req(p, 1, "/nowhere", NULL);
		ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
		settle(p);
		ck_assert_int_eq(resp_status(&p->r[1]), 404);
		ck_assert_msg(strstr(p->r[1].out, "Content-Type: text/plain\r\n")
		    != NULL, "%s", p->r[1].out);
		ck_assert_ptr_null(strstr(p->r[1].out, "X-Injected"));
		ck_assert(strstr(p->r[1].out, "404 Not Found\n") != NULL);
		peer_free(p);
	}
	ck_assert(logged("error page refused (a control character"));
	ck_assert(logged("error page refused (a Content-Type above 256"));
}
END_TEST

START_TEST(error_page_answers)
{
	struct peer	*p;

	act = (enum act)_i;
	ck_assert_int_eq(evfcgi_set_error_page(srv, page_answers, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/nowhere", NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	settle(p);
	ck_assert_msg(calls_ok == 0, "act %d: a call inside the page maker "
	    "succeeded", act);
	ck_assert_int_eq(resp_status(&p->r[1]), 404);
	ck_assert(strstr(p->r[1].out, "<p>404</p>") != NULL);
	if (act == ACT_WRITE_REF_FREE)
		ck_assert_int_eq(freed, 1);
	if (act == ACT_WRITE_FD)
		ck_assert_int_eq(fcntl(fd_seen, F_GETFD), -1);
	peer_free(p);
}
END_TEST

/* A Content-Type that makes the header block too long: 500, and why. */
static void
h_long_ctype(struct evfcgi_req *req, void *arg)
{
	static char	 ct[1100];

	(void)arg;
	memset(ct, 'a', sizeof(ct) - 1);
	ck_assert_int_eq(evfcgi_respond(req, 200, ct, "x", 1), -1);
}

START_TEST(long_header_block)
{
	struct peer	*p;

	ck_assert_int_eq(evfcgi_route(srv, "/long", h_long_ctype, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/long", NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 500);
	ck_assert(logged("status line and Content-Type above 1022 bytes"));
	peer_free(p);
}
END_TEST

/* Finished with no header: the engine's 500, not an empty answer. */
static void
h_finish_bare(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	ck_assert_int_eq(evfcgi_finish(req), -1);
}

START_TEST(finish_without_header)
{
	struct peer	*p;

	ck_assert_int_eq(evfcgi_route(srv, "/bare", h_finish_bare, NULL), 0);
	p = peer_new();
	send_req(p, 1, "/bare", NULL);
	send_req(p, 2, "/bare", NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 500);
	ck_assert_int_eq(resp_status(&p->r[2]), 500);
	ck_assert(logged("finished with no header: 500 sent"));
	peer_free(p);
}
END_TEST

/* An authorizer's own short header names pass; Variable- ones are read. */
static int	 auth_rc[4];

static void
h_auth(struct evfcgi_req *req, void *arg)
{
	/* Heap copies, so that a read past a name's end is caught. */
	char	*a = strdup("X-A"), *b = strdup("X-Origin-Https"),
		*c = strdup("Variable-HTTPS"), *d = strdup("Variable-USER");

	(void)arg;
	auth_rc[0] = evfcgi_header_add(req, a, "1");
	auth_rc[1] = evfcgi_header_add(req, b, "1");
	auth_rc[2] = evfcgi_header_add(req, c, "on");
	auth_rc[3] = evfcgi_header_add(req, d, "bob");
	free(a);
	free(b);
	free(c);
	free(d);
	evfcgi_respond(req, 200, NULL, "", 0);
}

START_TEST(authorizer_header_names)
{
	const char *const	 nv[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/x", NULL };
	uint8_t			 params[256];
	size_t			 n = nv_list(params, sizeof(params), nv);
	struct peer		*p;

	ck_assert_int_eq(evfcgi_route_ex(srv, "/x", EVFCGI_ROUTE_AUTHORIZER,
	    NULL, h_auth, NULL), 0);
	p = peer_new();
	send_begin(p, 1, FCGI_AUTHORIZER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, 1, params, n);
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(auth_rc[0], 0);
	ck_assert_int_eq(auth_rc[1], 0);
	ck_assert_int_eq(auth_rc[2], -1);
	ck_assert_int_eq(auth_rc[3], 0);
	ck_assert(strstr(p->r[1].out, "X-Origin-Https: 1\r\n") != NULL);
	peer_free(p);
}
END_TEST

/* A param name with a NUL byte: no reader sees it, every reader agrees. */
static char	 seen_method[16];
static int	 seen_pairs, seen_nul;

static void
h_params(struct evfcgi_req *req, void *arg)
{
	const char	*name, *value, *m = evfcgi_param(req, "REQUEST_METHOD");
	size_t		 i = 0;

	(void)arg;
	snprintf(seen_method, sizeof(seen_method), "%s", m ? m : "(none)");
	seen_pairs = 0;
	while (evfcgi_param_next(req, &i, &name, &value)) {
		seen_pairs++;
		if (strcmp(name, "REQUEST_METHOD") == 0 &&
		    strcmp(value, "GET") != 0)
			seen_nul++;
	}
	evfcgi_respond(req, 200, "text/plain", "ok\n", 3);
}

START_TEST(param_name_with_nul)
{
	static const char	 hostile[] = "REQUEST_METHOD\0X";
	uint8_t			 params[512];
	size_t			 n;
	struct peer		*p;
	const char *const	 nv[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/p", NULL };

	ck_assert_int_eq(evfcgi_route(srv, "/p", h_params, NULL), 0);
	n = nv_list(params, sizeof(params), nv);
	/* The hostile pair after the good one: last-wins would take it. */
	n += fcgi_nv_encode(params + n, sizeof(params) - n, hostile,
	    sizeof(hostile) - 1, "HEAD", 4);
	p = peer_new();
	send_begin(p, 1, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, 1, params, n);
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	/* The engine answered a GET with a body: not a HEAD. */
	ck_assert(strstr(p->r[1].out, "ok\n") != NULL);
	ck_assert_str_eq(seen_method, "GET");
	ck_assert_int_eq(seen_pairs, 2);
	ck_assert_int_eq(seen_nul, 0);
	peer_free(p);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("lifecycle");
	TCase	*tc;

	tc = suite_add_case(s, "core", setup, teardown, 60,
	    abort_answers_another, long_header_block, authorizer_header_names,
	    answer_on_a_cut_stream_ends, finish_without_header, NULL);
	tcase_add_loop_test(tc, abort_by_peer, 0, ACT_N);
	tcase_add_loop_test(tc, abort_by_close, 0, ACT_N);
	tcase_add_loop_test(tc, abort_by_engine, 0, ACT_N);
	tc = suite_add_case(s, "malformed", setup, teardown, 60,
	    error_page_bad_ctype, param_name_with_nul, NULL);
	tcase_add_loop_test(tc, error_page_answers, 0, ACT_N);
	return suite_run(s);
}
