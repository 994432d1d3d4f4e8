/*
 * check_conn.c: the connection layer and the demo routes over socketpairs.
 * The test plays the web server: it writes records into one end, runs the
 * daemon's loop in this process, and parses what comes back per request id.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "app.h"
#include "evfcgi.h"
#include "fcgi_proto.h"
#include "tests/fcgi_peer.h"
#include "tests/suite.h"

static struct evfcgi_limits	 lim;

static void
start(void)
{
	struct app_config	 cfg = { .max_size = 1ULL << 30 };

	ck_assert_ptr_nonnull(base = event_base_new());
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(base, &lim));
	ck_assert_int_eq(app_register(srv, &cfg), 0);
}

static void
setup(void)
{
	evfcgi_limits_default(&lim);
	/*
	 * The watermark checks count on the kernel's own buffer size for a
	 * socketpair; a test about --sndbuf sets it.
	 */
	lim.sndbuf = 0;
}

static void
teardown(void)
{
	if (srv != NULL)
		evfcgi_server_free(srv);
	app_release();
	if (base != NULL)
		event_base_free(base);
	srv = NULL;
	base = NULL;
}

/* Encodes the params for uri (query after '?') into buf; returns length. */
static size_t
encode_params(uint8_t *buf, size_t cap, const char *uri, size_t body_len)
{
	const char	*q = strchr(uri, '?');
	char		 cl[32];
	const char	*nv[] = { "REQUEST_METHOD", body_len ? "POST" : "GET",
	    "REQUEST_URI", uri, "QUERY_STRING", q != NULL ? q + 1 : "",
	    "CONTENT_LENGTH", cl, NULL };

	snprintf(cl, sizeof(cl), "%zu", body_len);
	return nv_list(buf, cap, nv);
}

/* Appends PARAMS for uri announcing body_len bytes of body, their end. */
static void
w_uri_params(struct wire *w, uint16_t id, const char *uri, size_t body_len)
{
	uint8_t	 params[2048];

	w_record(w, FCGI_PARAMS, id, params,
	    encode_params(params, sizeof(params), uri, body_len));
	w_record(w, FCGI_PARAMS, id, NULL, 0);
}

/* Appends the PARAMS of a GET for uri, their end and the empty STDIN. */
static void
w_rest(struct wire *w, uint16_t id, const char *uri)
{
	w_uri_params(w, id, uri, 0);
	w_record(w, FCGI_STDIN, id, NULL, 0);
}

/* Sends BEGIN and the PARAMS of a request for uri announcing body_len. */
static void
send_head(struct peer *p, uint16_t id, uint8_t flags, const char *uri,
    size_t body_len)
{
	struct wire	 w;

	w.len = 0;
	w_begin(&w, id, FCGI_RESPONDER, flags);
	w_uri_params(&w, id, uri, body_len);
	peer_send(p, w.b, w.len);
}

/* A whole request: BEGIN, PARAMS, empty PARAMS, body in STDIN, empty STDIN. */
static void
send_request(struct peer *p, uint16_t id, uint8_t flags, const char *uri,
    const void *body, size_t body_len)
{
	const uint8_t	*b = body;
	size_t		 chunk;

	send_head(p, id, flags, uri, body_len);
	while (body_len > 0) {
		chunk = body_len < 65535 ? body_len : 65535;
		send_record(p, FCGI_STDIN, id, b, chunk);
		b += chunk;
		body_len -= chunk;
	}
	send_record(p, FCGI_STDIN, id, NULL, 0);
}

/*
 * Sends a whole request whose PARAMS are the NULL-ended name, value list
 * nv as given (nothing added), then body as one STDIN record and its end.
 */
static void
send_request_nv(struct peer *p, uint16_t id, const char *const *nv,
    const char *body)
{
	struct wire	 w;

	w.len = 0;
	w_begin(&w, id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	w_params(&w, id, nv);
	w_stream(&w, FCGI_STDIN, id, body != NULL ? body : "");
	peer_send(p, w.b, w.len);
}

/* Runs the loop for secs without reading from the peer. */
static void
run_for(double secs)
{
	double	 end = now_s() + secs;

	while (now_s() < end) {
		event_base_loop(base, EVLOOP_NONBLOCK);
		usleep(500);
	}
}

/* The body of a response, after the CGI header block. */
static const uint8_t *
resp_body(struct resp *r, size_t *len)
{
	char	*e;

	ck_assert_ptr_nonnull(r->out);
	e = strstr(r->out, "\r\n\r\n");
	ck_assert_ptr_nonnull(e);
	*len = r->outlen - (size_t)(e + 4 - r->out);
	return (const uint8_t *)e + 4;
}

/* Whether body holds exactly the first len bytes of the demo pattern. */
static int
is_pattern(const uint8_t *body, size_t len)
{
	static const char	 line[] = APP_PATTERN_LINE;
	size_t			 i;

	for (i = 0; i < len; i++)
		if (body[i] != (uint8_t)line[i % 64])
			return 0;
	return 1;
}

/* Asserts that r's body is exactly the first want bytes of the pattern. */
static void
pattern_body(struct resp *r, size_t want)
{
	const uint8_t	*b;
	size_t		 len;

	b = resp_body(r, &len);
	ck_assert_uint_eq(len, want);
	ck_assert(is_pattern(b, len));
}

/* Whether every id from 1 has its END_REQUEST. */
static int
all_ended(const struct peer *p)
{
	int	 id;

	for (id = 1; id < PEER_MAX_ID; id++)
		if (!p->r[id].ended)
			return 0;
	return 1;
}

static struct evfcgi_stats
stats(void)
{
	struct evfcgi_stats	 st;

	evfcgi_get_stats(srv, &st);
	return st;
}

/* Starts the server with h routed at path; returns a new peer of it. */
static struct peer *
start_route(const char *path, evfcgi_handler h)
{
	start();
	ck_assert_int_eq(evfcgi_route(srv, path, h, NULL), 0);
	return peer_new();
}

START_TEST(hello_then_close)
{
	struct peer	*p;
	const uint8_t	*b;
	size_t		 len;

	start();
	p = peer_new();
	send_request(p, 1, 0, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->eof, 5));
	ck_assert(p->r[1].out_ended);
	ck_assert_int_eq(p->r[1].pstatus, FCGI_REQUEST_COMPLETE);
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	b = resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 12);
	ck_assert_int_eq(memcmp(b, "Hello World\n", 12), 0);
	/* Without FCGI_KEEP_CONN the daemon closed the connection. */
	ck_assert_uint_eq(stats().connections, 0);
	peer_free(p);
}
END_TEST

START_TEST(keep_conn_serves_many)
{
	struct peer	*p;
	int		 i;

	start();
	p = peer_new();
	for (i = 0; i < 5; i++) {
		resp_reset(p, 1);
		send_request(p, 1, FCGI_KEEP_CONN, "/size?1000", NULL, 0);
		ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
		ck_assert_int_eq(resp_status(&p->r[1]), 200);
	}
	run_for(0.05);
	peer_read(p, 0);
	ck_assert(!p->eof);
	ck_assert_uint_eq(stats().connections, 1);
	ck_assert_uint_eq(stats().requests_total, 5);
	peer_free(p);
}
END_TEST

START_TEST(sizes_at_record_boundaries)
{
	static const size_t	 sizes[] = { 0, 1, 7, 8, 9, 65527, 65528,
	    65529, 65535, 65536, 65537, 131056, 131057, 96256, 300001 };
	struct peer		*p;
	char			 uri[64];
	size_t			 i;

	start();
	p = peer_new();
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		resp_reset(p, 1);
		snprintf(uri, sizeof(uri), "/%s?%zu", i % 2 ? "size" :
		    "stream", sizes[i]);
		send_request(p, 1, FCGI_KEEP_CONN, uri, NULL, 0);
		ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
		pattern_body(&p->r[1], sizes[i]);
	}
	peer_free(p);
}
END_TEST

START_TEST(multiplexed_ids)
{
	struct peer	*p;
	uint8_t		 params[512], body[100000];
	const uint8_t	*b;
	size_t		 n, len, i;

	for (i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 7);
	start();
	p = peer_new();
	/* Three requests whose records interleave on one connection. */
	send_begin(p, 1, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_begin(p, 2, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_begin(p, 3, FCGI_RESPONDER, FCGI_KEEP_CONN);
	n = encode_params(params, sizeof(params), "/size?700000", 0);
	send_record(p, FCGI_PARAMS, 1, params, n);
	n = encode_params(params, sizeof(params), "/echo", sizeof(body));
	send_record(p, FCGI_PARAMS, 3, params, n);
	n = encode_params(params, sizeof(params), "/hello", 0);
	send_record(p, FCGI_PARAMS, 2, params, n);
	send_record(p, FCGI_PARAMS, 3, NULL, 0);
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 3, body, 60000);
	send_record(p, FCGI_PARAMS, 2, NULL, 0);
	send_record(p, FCGI_STDIN, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 3, body + 60000, sizeof(body) - 60000);
	send_record(p, FCGI_STDIN, 2, NULL, 0);
	send_record(p, FCGI_STDIN, 3, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[3].ended, 5));
	pattern_body(&p->r[1], 700000);
	b = resp_body(&p->r[2], &len);
	ck_assert_int_eq(memcmp(b, "Hello World\n", 12), 0);
	b = resp_body(&p->r[3], &len);
	ck_assert_uint_eq(len, sizeof(body));
	ck_assert_int_eq(memcmp(b, body, sizeof(body)), 0);
	peer_free(p);
}
END_TEST

/*
 * Fifteen requests in one read: their answers (about 1 MB by reference,
 * more than the stage's extents and the high mark) come out whole and in
 * order per id, and what the daemon counts as written is what arrived.
 */
START_TEST(pipelined_answers_overflow_the_stage)
{
	struct peer	*p;
	const uint8_t	*b;
	size_t		 len;
	int		 id;

	start();
	p = peer_new();
	for (id = 1; id < PEER_MAX_ID; id++)
		send_request(p, (uint16_t)id, FCGI_KEEP_CONN,
		    id % 3 == 0 ? "/hello" : "/big", NULL, 0);
	ck_assert(RUN_UNTIL(p, all_ended(p), 10));
	for (id = 1; id < PEER_MAX_ID; id++) {
		ck_assert(p->r[id].out_ended);
		ck_assert_int_eq(p->r[id].pstatus, FCGI_REQUEST_COMPLETE);
		if (id % 3 == 0) {
			b = resp_body(&p->r[id], &len);
			ck_assert_uint_eq(len, 12);
			ck_assert_int_eq(memcmp(b, "Hello World\n", 12), 0);
		} else
			pattern_body(&p->r[id], APP_BIG_SIZE);
	}
	ck_assert_uint_eq(stats().bytes_written, p->nread);
	ck_assert_uint_eq(stats().closed_on_error, 0);
	peer_free(p);
}
END_TEST

/*
 * A staged answer the kernel takes only part of: the rest is queued and
 * arrives whole as the peer reads, and the next request is staged again.
 */
START_TEST(partial_write_queues_the_rest)
{
	struct peer	*p;
	const uint8_t	*b;
	size_t		 len;

	lim.sndbuf = 4096;
	start();
	p = peer_new_tcp(4096);
	send_request(p, 1, FCGI_KEEP_CONN, "/big", NULL, 0);
	run_for(0.1);
	ck_assert_uint_gt(stats().bytes_written, 0);
	ck_assert_uint_lt(stats().bytes_written, APP_BIG_SIZE);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	pattern_body(&p->r[1], APP_BIG_SIZE);
	send_request(p, 2, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 5));
	b = resp_body(&p->r[2], &len);
	ck_assert_int_eq(memcmp(b, "Hello World\n", 12), 0);
	ck_assert_uint_eq(stats().bytes_written, p->nread);
	peer_free(p);
}
END_TEST

START_TEST(abort_request)
{
	struct peer	*p;
	double		 t0;

	start();
	p = peer_new();
	send_request(p, 5, FCGI_KEEP_CONN, "/sleep?10000", NULL, 0);
	run_for(0.05);
	ck_assert_uint_eq(stats().requests_active, 1);
	t0 = now_s();
	send_record(p, FCGI_ABORT_REQUEST, 5, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[5].ended, 2));
	ck_assert(now_s() - t0 < 1.0);
	ck_assert_uint_eq(stats().aborted, 1);
	ck_assert_uint_eq(stats().requests_active, 0);
	/* The kept connection still serves. */
	send_request(p, 5, FCGI_KEEP_CONN, "/hello", NULL, 0);
	resp_reset(p, 5);
	ck_assert(RUN_UNTIL(p, p->r[5].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[5]), 200);
	peer_free(p);
}
END_TEST

START_TEST(watermark_pause_and_resume)
{
	struct peer		*p;
	struct evfcgi_stats	 st;

	lim.high_water = 64 * 1024;
	lim.low_water = 16 * 1024;
	start();
	p = peer_new();
	send_request(p, 1, FCGI_KEEP_CONN, "/size?8000000", NULL, 0);
	run_for(0.2);
	/*
	 * The peer reads nothing: the daemon holds at most a watermark.  The
	 * kernel takes what fits as soon as the producer filled to the high
	 * mark, and the producer fills again only at the low mark: what is
	 * left lies between the two.
	 */
	st = stats();
	ck_assert_uint_le(st.bytes_queued, lim.high_water + 65536 + 64);
	ck_assert_uint_gt(st.bytes_queued, lim.low_water);
	ck_assert_uint_eq(st.stalled, 1);
	/* A request sent now is not read while the output is above the mark. */
	send_request(p, 2, FCGI_KEEP_CONN, "/hello", NULL, 0);
	run_for(0.2);
	peer_read(p, 4096);
	ck_assert(!p->r[2].ended);
	/* Reading resumes everything; both complete, the body intact. */
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 10));
	pattern_body(&p->r[1], 8000000);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	st = stats();
	ck_assert_uint_eq(st.bytes_queued, 0);
	ck_assert_uint_eq(st.stalled, 0);
	ck_assert_uint_le(st.peak_bytes_queued, lim.high_water + 65536 + 200);
	peer_free(p);
}
END_TEST

START_TEST(global_cap_answers_503)
{
	struct peer	*a, *b;

	lim.high_water = 64 * 1024;
	lim.low_water = 16 * 1024;
	/* A stuck reader holds more than the low mark: past the cap; and
	   its floor alone fills the cap, so a new request is refused. */
	lim.max_queued = 16 * 1024;
	lim.share_floor = 16 * 1024;
	start();
	a = peer_new();
	b = peer_new();
	send_request(a, 1, FCGI_KEEP_CONN, "/size?4000000", NULL, 0);
	run_for(0.2);
	ck_assert_uint_ge(stats().bytes_queued, lim.max_queued);
	ck_assert_uint_le(stats().bytes_queued, lim.high_water + 65600);
	/* A new request while the cap is passed: 503 at once. */
	send_request(b, 2, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(b, b->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&b->r[2]), 503);
	/* The reader drains; every byte still arrives. */
	ck_assert(RUN_UNTIL(a, a->r[1].ended, 10));
	ck_assert_int_eq(resp_status(&a->r[1]), 200);
	ck_assert_uint_eq(stats().bytes_queued, 0);
	peer_free(a);
	peer_free(b);
}
END_TEST

/*
 * Sends GET_VALUES as id for the names of the name, value list q (values
 * empty) and waits for the result, in p->mgmt.
 */
static void
get_values_of(struct peer *p, uint16_t id, const char *const *q)
{
	uint8_t	 b[128];

	send_record(p, FCGI_GET_VALUES, id, b, nv_list(b, sizeof(b), q));
	ck_assert(RUN_UNTIL(p, p->mgmt_type == FCGI_GET_VALUES_RESULT, 2));
}

START_TEST(get_values)
{
	struct peer	*p;
	static const char *const q[] = { "FCGI_MAX_CONNS", "",
	    "FCGI_NOT_A_NAME", "", "FCGI_MAX_REQS", "", "FCGI_MPXS_CONNS", "",
	    NULL };
	char		 got[512];

	lim.max_conns = 77;
	lim.max_reqs = 3;
	start();
	p = peer_new();
	get_values_of(p, 0, q);
	memcpy(got, p->mgmt, p->mgmtlen);
	got[p->mgmtlen] = '\0';
	/* FCGI_MAX_REQS is what one connection takes, not all of them. */
	ck_assert_uint_eq(p->mgmtlen, 2 + 14 + 2 + 2 + 13 + 1 + 2 + 15 + 1);
	ck_assert(memcmp(p->mgmt + 2, "FCGI_MAX_CONNS77", 16) == 0);
	ck_assert(memcmp(p->mgmt + 20, "FCGI_MAX_REQS3", 14) == 0);
	ck_assert(memcmp(p->mgmt + 36, "FCGI_MPXS_CONNS1", 16) == 0);
	peer_free(p);
}
END_TEST

/*
 * --max-conn-requests below --max-reqs: a connection takes no more than
 * that at once either, and with 1 it does not multiplex.
 */
START_TEST(get_values_max_conn_requests)
{
	struct peer	*p;
	static const char *const q[] = { "FCGI_MAX_REQS", "",
	    "FCGI_MPXS_CONNS", "", NULL };

	lim.max_reqs = 8;
	lim.max_conn_requests = 1;
	start();
	p = peer_new();
	get_values_of(p, 0, q);
	ck_assert_uint_eq(p->mgmtlen, 2 + 13 + 1 + 2 + 15 + 1);
	ck_assert(memcmp(p->mgmt + 2, "FCGI_MAX_REQS1", 14) == 0);
	ck_assert(memcmp(p->mgmt + 18, "FCGI_MPXS_CONNS0", 16) == 0);
	peer_free(p);
}
END_TEST

START_TEST(unknown_type_and_role)
{
	struct peer	*p;

	start();
	p = peer_new();
	send_record(p, 0x42, 0, "xy", 2);
	ck_assert(RUN_UNTIL(p, p->mgmt_type == FCGI_UNKNOWN_TYPE, 2));
	ck_assert_int_eq(p->mgmt[0], 0x42);
	send_begin(p, 3, FCGI_AUTHORIZER, FCGI_KEEP_CONN);
	ck_assert(RUN_UNTIL(p, p->r[3].ended, 2));
	ck_assert_int_eq(p->r[3].pstatus, FCGI_UNKNOWN_ROLE);
	send_request(p, 4, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[4].ended, 2));
	peer_free(p);
}
END_TEST

static struct resp *ask(struct peer *, uint16_t, const char *, const char *);
static const char *body_str(struct resp *);

/*
 * The PARAMS of a request for uri, then its empty PARAMS and empty STDIN,
 * as id: all of it but the BEGIN_REQUEST.
 */
static void
send_rest(struct peer *p, uint16_t id, const char *uri)
{
	struct wire	 w;

	w.len = 0;
	w_rest(&w, id, uri);
	peer_send(p, w.b, w.len);
}

/* Sends the BEGIN of ids 1 to last, and only then the rest of each /hello. */
static void
send_begins_first(struct peer *p, int last)
{
	int	 id;

	for (id = 1; id <= last; id++)
		send_begin(p, (uint16_t)id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	for (id = 1; id <= last; id++)
		send_rest(p, (uint16_t)id, "/hello");
}

/* Whether r was refused: END_REQUEST FCGI_OVERLOADED and no STDOUT. */
static int
overloaded(const struct resp *r)
{
	return r->ended && r->pstatus == FCGI_OVERLOADED && r->outlen == 0;
}

/*
 * Every BEGIN_REQUEST first, then the PARAMS and STDIN of each: those
 * within max_reqs are served, the rest refused at once with
 * FCGI_OVERLOADED and their records dropped; nothing waits, and the
 * connection goes on.  (A BEGIN held unread until a request ended hid
 * the records those requests needed: nothing was ever answered.)
 */
START_TEST(begin_first_beyond_max_reqs)
{
	struct peer	*p;
	int		 id;

	lim.max_reqs = 2;
	start();
	p = peer_new();
	send_begins_first(p, 6);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[6].ended, 3));
	for (id = 1; id < 3; id++) {
		ck_assert_int_eq(p->r[id].pstatus, FCGI_REQUEST_COMPLETE);
		ck_assert_str_eq(body_str(&p->r[id]), "Hello World\n");
	}
	for (id = 3; id < 7; id++)
		ck_assert_msg(overloaded(&p->r[id]), "request %d", id);
	ck_assert_uint_eq(stats().overloaded, 4);
	ck_assert_uint_eq(stats().closed_on_error, 0);
	ck_assert_uint_eq(stats().requests_active, 0);
	/* The ids are free again, on the same connection. */
	ck_assert_str_eq(body_str(ask(p, 3, "/hello", NULL)), "Hello World\n");
	ck_assert_uint_eq(stats().connections, 1);
	peer_free(p);
}
END_TEST

/* The refusal is immediate: it does not wait for the requests in flight. */
START_TEST(overloaded_at_once)
{
	struct peer	*p;
	int		 id;

	lim.max_reqs = 2;
	start();
	p = peer_new();
	send_request(p, 1, FCGI_KEEP_CONN, "/sleep?400", NULL, 0);
	send_request(p, 2, FCGI_KEEP_CONN, "/sleep?400", NULL, 0);
	for (id = 3; id < 8; id++)
		send_request(p, (uint16_t)id, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[7].ended, 2));
	ck_assert(!p->r[1].ended && !p->r[2].ended);
	for (id = 3; id < 8; id++)
		ck_assert_msg(overloaded(&p->r[id]), "request %d", id);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 3));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	peer_free(p);
}
END_TEST

/*
 * --max-conn-requests 2, four requests multiplexed: two served, the two
 * beyond refused with FCGI_OVERLOADED (not left without an END_REQUEST),
 * then the connection closes.
 */
START_TEST(max_conn_requests_refuses_beyond)
{
	struct peer	*p;
	int		 id;

	lim.max_conn_requests = 2;
	start();
	p = peer_new();
	send_begins_first(p, 4);
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	for (id = 1; id < 3; id++)
		ck_assert_str_eq(body_str(&p->r[id]), "Hello World\n");
	ck_assert(overloaded(&p->r[3]));
	ck_assert(overloaded(&p->r[4]));
	ck_assert_uint_eq(stats().closed_on_error, 0);
	peer_free(p);
}
END_TEST

/* The same one after another: the third gets its END_REQUEST too. */
START_TEST(max_conn_requests_pipelined)
{
	struct peer	*p;
	int		 id;

	lim.max_conn_requests = 2;
	start();
	p = peer_new();
	for (id = 1; id < 4; id++)
		send_request(p, (uint16_t)id, FCGI_KEEP_CONN, "/big", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	ck_assert(overloaded(&p->r[3]));
	peer_free(p);
}
END_TEST

/* Asserts that ids 1 to last were answered, each with len body bytes. */
static void
answered(struct peer *p, int last, size_t len)
{
	size_t	 got;
	int	 id;

	for (id = 1; id <= last; id++) {
		ck_assert_msg(p->r[id].ended, "request %d not answered", id);
		resp_body(&p->r[id], &got);
		ck_assert_uint_eq(got, len);
	}
}

/*
 * Requests waiting unread in the input of a connection paused above its
 * high mark are answered in a drain, and in full, before it closes.
 */
START_TEST(drain_answers_paused_input)
{
	struct peer	*p;
	int		 id;

	/* Each answer is queued whole; the second passes the high mark. */
	lim.high_water = 64 * 1024;
	lim.low_water = 16 * 1024;
	lim.sndbuf = 4096;
	start();
	p = peer_new();
	for (id = 1; id < 13; id++)
		send_request(p, (uint16_t)id, FCGI_KEEP_CONN, "/size?40000",
		    NULL, 0);
	run_for(0.1);
	ck_assert_uint_eq(stats().requests_active, 0);
	ck_assert_uint_lt(stats().requests_total, 12);
	evfcgi_drain(srv);
	ck_assert(RUN_UNTIL(p, p->eof, 10));
	answered(p, 12, 40000);
	peer_free(p);
}
END_TEST

/* A peer that sends its requests and then shuts its side gets them all. */
START_TEST(eof_after_requests_answers_them)
{
	struct peer	*p;
	int		 id;

	lim.high_water = 8 * 1024;
	lim.low_water = 2 * 1024;
	lim.sndbuf = 4096;
	lim.max_reqs = 8;
	start();
	p = peer_new();
	for (id = 1; id < 9; id++)
		send_request(p, (uint16_t)id, FCGI_KEEP_CONN, "/big", NULL, 0);
	ck_assert_int_eq(shutdown(p->fd, SHUT_WR), 0);
	ck_assert(RUN_UNTIL(p, p->eof, 10));
	answered(p, 8, 96256);
	peer_free(p);
}
END_TEST

/* A request refused without FCGI_KEEP_CONN ends its connection too. */
START_TEST(refused_without_keep_conn_closes)
{
	struct peer	*p;

	start();
	p = peer_new();
	send_begin(p, 3, FCGI_AUTHORIZER, 0);
	ck_assert(RUN_UNTIL(p, p->r[3].ended && p->eof, 2));
	ck_assert_int_eq(p->r[3].pstatus, FCGI_UNKNOWN_ROLE);
	peer_free(p);
}
END_TEST

/* GET_VALUES comes from the web server whatever its id: answered. */
START_TEST(get_values_with_an_id)
{
	struct peer	*p;
	static const char *const q[] = { "FCGI_MPXS_CONNS", "", NULL };

	start();
	p = peer_new();
	get_values_of(p, 5, q);
	send_request(p, 1, 0, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	ck_assert_uint_eq(stats().closed_on_error, 0);
	peer_free(p);
}
END_TEST

/* HEAD: the header as for GET (Content-Length too), and no body. */
START_TEST(head_has_no_body)
{
	static const char *const nv[][7] = {
		{ "REQUEST_METHOD", "HEAD", "REQUEST_URI", "/hello", NULL },
		{ "REQUEST_METHOD", "HEAD", "REQUEST_URI", "/big", NULL },
		{ "REQUEST_METHOD", "HEAD", "REQUEST_URI", "/size",
		    "QUERY_STRING", "300000", NULL },
		{ "REQUEST_METHOD", "HEAD", "REQUEST_URI", "/stream",
		    "QUERY_STRING", "100000", NULL }
	};
	struct peer	*p;
	size_t		 i, len;

	start();
	p = peer_new();
	for (i = 0; i < 4; i++)
		send_request_nv(p, (uint16_t)(i + 1), nv[i], NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[3].ended && p->r[4].ended, 5));
	for (i = 0; i < 4; i++) {
		ck_assert_int_eq(resp_status(&p->r[i + 1]), 200);
		resp_body(&p->r[i + 1], &len);
		ck_assert_msg(len == 0, "HEAD %s: %zu body bytes", nv[i][3],
		    len);
	}
	ck_assert_ptr_nonnull(strstr((char *)p->r[3].out,
	    "Content-Length: 300000\r\n"));
	peer_free(p);
}
END_TEST

/*
 * A body whose length was not known (chunked upload: CONTENT_LENGTH absent,
 * or -1 as Caddy sends it) is read to its empty STDIN record.
 */
START_TEST(body_without_length)
{
	static const char *const absent[] = { "REQUEST_METHOD", "POST",
	    "REQUEST_URI", "/echo", NULL };
	static const char *const minus[] = { "REQUEST_METHOD", "POST",
	    "REQUEST_URI", "/echo", "CONTENT_LENGTH", "-1", NULL };
	static const char *const junk[] = { "REQUEST_METHOD", "POST",
	    "REQUEST_URI", "/echo", "CONTENT_LENGTH", "12x", NULL };
	struct peer	*p;
	const uint8_t	*b;
	size_t		 len;

	start();
	p = peer_new();
	send_request_nv(p, 1, absent, "chunked body");
	send_request_nv(p, 2, minus, "another body");
	send_request_nv(p, 3, junk, "a third one");
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[3].ended, 3));
	b = resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(b, "chunked body", 12);
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	b = resp_body(&p->r[2], &len);
	ck_assert_uint_eq(len, 12);
	ck_assert_mem_eq(b, "another body", 12);
	ck_assert_int_eq(resp_status(&p->r[3]), 400);
	peer_free(p);
}
END_TEST

/*
 * What all requests hold of input is bounded: a request that would pass
 * --max-input gets 503 at once (known length) or when its body crosses it
 * (unknown length), and lets go of what it held; the rest are served.
 */
START_TEST(input_cap_answers_503)
{
	static const char *const nolen[] = { "REQUEST_METHOD", "POST",
	    "REQUEST_URI", "/echo", NULL };
	static char	 body[80000], chunk[30001];
	struct peer	*a, *b;
	size_t		 len;

	lim.max_input = 100 * 1024;
	lim.max_body = 1024 * 1024;
	memset(body, 'a', sizeof(body));
	memset(chunk, 'c', sizeof(chunk) - 1);
	start();
	a = peer_new();
	b = peer_new();
	/* a announces 80000 bytes and sends the first 10000 of them. */
	send_head(a, 1, FCGI_KEEP_CONN, "/echo", sizeof(body));
	send_record(a, FCGI_STDIN, 1, body, 10000);
	run_for(0.1);
	ck_assert_uint_ge(stats().bytes_input, sizeof(body));
	send_request(b, 2, FCGI_KEEP_CONN, "/echo", body, 50000);
	ck_assert(RUN_UNTIL(b, b->r[2].ended, 2));
	ck_assert_int_eq(resp_status(&b->r[2]), 503);
	send_request_nv(b, 3, nolen, chunk);
	ck_assert(RUN_UNTIL(b, b->r[3].ended, 2));
	ck_assert_int_eq(resp_status(&b->r[3]), 503);
	ck_assert_uint_lt(stats().bytes_input, lim.max_input);
	/* a's body completes within its charge; then b fits again. */
	send_record(a, FCGI_STDIN, 1, body + 10000, 60000);
	send_record(a, FCGI_STDIN, 1, body + 70000, 10000);
	send_record(a, FCGI_STDIN, 1, NULL, 0);
	ck_assert(RUN_UNTIL(a, a->r[1].ended, 3));
	resp_body(&a->r[1], &len);
	ck_assert_uint_eq(len, sizeof(body));
	send_request(b, 4, FCGI_KEEP_CONN, "/echo", body, 50000);
	ck_assert(RUN_UNTIL(b, b->r[4].ended, 2));
	ck_assert_int_eq(resp_status(&b->r[4]), 200);
	ck_assert_uint_le(stats().peak_bytes_input, lim.max_input);
	ck_assert_uint_eq(stats().bytes_input, 0);
	ck_assert_uint_eq(stats().overloaded, 2);
	peer_free(a);
	peer_free(b);
}
END_TEST

/* Sends the header of a record of clen bytes and the first n of them. */
static void
send_record_head(struct peer *p, uint8_t type, uint16_t id, size_t clen,
    const void *data, size_t n)
{
	uint8_t	 h[FCGI_HEADER_LEN];

	fcgi_header_encode(h, type, id, (uint16_t)clen, 0);
	peer_send(p, h, sizeof(h));
	peer_send(p, data, n);
}

/*
 * At --max-input reading pauses: a connection that would begin new
 * requests is not read while the input held (requests' charges and the
 * records read but not yet acted on, twice) is at the cap, and its
 * request is served once the input held falls, not refused with 503.
 * The connection whose record is under way reads on (finishing it is what
 * lets the input go), and output flows meanwhile.
 */
START_TEST(input_cap_pauses_reading)
{
	static char	 body[60000];
	struct peer	*a, *b, *c, *d;
	size_t		 len;

	lim.max_input = 100 * 1024;
	memset(body, 'a', sizeof(body));
	start();
	a = peer_new();
	b = peer_new();		/* reading before the cap is reached */
	c = peer_new();
	run_for(0.05);
	/* c's answer is queued before the cap is reached, read after. */
	send_request(c, 1, FCGI_KEEP_CONN, "/size?300000", NULL, 0);
	run_for(0.05);
	/* a: 60000 charged at the end of its PARAMS, and half a record of
	   its body read (counted twice): the input held passes the cap. */
	send_head(a, 1, FCGI_KEEP_CONN, "/echo", sizeof(body));
	send_record_head(a, FCGI_STDIN, 1, sizeof(body), body, 30000);
	run_for(0.1);
	ck_assert_uint_ge(stats().bytes_input, lim.max_input);
	d = peer_new();		/* comes while the cap is reached */
	send_request(b, 1, FCGI_KEEP_CONN, "/hello", NULL, 0);
	send_request(d, 1, FCGI_KEEP_CONN, "/hello", NULL, 0);
	/* Neither is read, let alone refused; c's answer flows. */
	ck_assert(RUN_UNTIL(c, c->r[1].ended, 3));
	ck_assert_int_eq(resp_status(&c->r[1]), 200);
	pattern_body(&c->r[1], 300000);
	run_for(0.2);
	peer_read(b, 0);
	peer_read(d, 0);
	ck_assert(!b->r[1].ended);
	ck_assert(!d->r[1].ended);
	ck_assert_uint_eq(stats().overloaded, 0);
	/* a's record and body end: its answer lets the input go, and b and
	   d are read and served. */
	peer_send(a, body + 30000, 30000);
	send_record(a, FCGI_STDIN, 1, NULL, 0);
	ck_assert(RUN_UNTIL(a, a->r[1].ended, 3));
	resp_body(&a->r[1], &len);
	ck_assert_uint_eq(len, sizeof(body));
	ck_assert(RUN_UNTIL(b, b->r[1].ended, 3));
	ck_assert(RUN_UNTIL(d, d->r[1].ended, 3));
	ck_assert_int_eq(resp_status(&b->r[1]), 200);
	ck_assert_int_eq(resp_status(&d->r[1]), 200);
	ck_assert_uint_eq(stats().overloaded, 0);
	ck_assert_uint_eq(stats().bytes_input, 0);
	peer_free(a);
	peer_free(b);
	peer_free(c);
	peer_free(d);
}
END_TEST

/* A record trickled a byte at a time has a deadline from its first byte. */
START_TEST(trickled_record_times_out)
{
	struct peer	*p;
	uint8_t		 rec[16];
	size_t		 i;

	lim.header_timeout = 1;
	start();
	p = peer_new();
	fcgi_begin_encode(rec, 1, FCGI_RESPONDER, 0);
	for (i = 0; i < sizeof(rec) - 1 && !p->eof; i++) {
		peer_send(p, rec + i, 1);
		RUN_UNTIL(p, p->eof, 0.25);
	}
	ck_assert_msg(p->eof, "still open after %zu bytes", i);
	ck_assert_uint_le(i, 8);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	peer_free(p);
}
END_TEST

START_TEST(stray_records_ignored)
{
	struct peer	*p;

	start();
	p = peer_new();
	send_record(p, FCGI_PARAMS, 9, "\1\1ab", 4);
	send_record(p, FCGI_STDIN, 9, "zz", 2);
	send_record(p, FCGI_DATA, 9, "zz", 2);
	send_record(p, FCGI_ABORT_REQUEST, 9, NULL, 0);
	send_request(p, 1, 0, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	peer_free(p);
}
END_TEST

/* partial: params one byte per record, records one byte per write. */
START_TEST(params_split_byte_by_byte)
{
	struct peer	*p;
	uint8_t		 params[4096], rec[16];
	char		 cookie[1000];
	size_t		 n, i;

	memset(cookie, 'c', sizeof(cookie));
	start();
	p = peer_new();
	n = encode_params(params, sizeof(params), "/size?77", 0);
	n += fcgi_nv_encode(params + n, sizeof(params) - n, "HTTP_COOKIE",
	    11, cookie, sizeof(cookie));
	send_begin(p, 1, FCGI_RESPONDER, 0);
	for (i = 0; i < n; i++) {
		/* One record per byte, its 8 + 1 + 7 bytes written singly. */
		fcgi_header_encode(rec, FCGI_PARAMS, 1, 1, 7);
		rec[8] = params[i];
		memset(rec + 9, 0, 7);
		if (i % 50 == 0) {
			size_t	 j;

			for (j = 0; j < 16; j++) {
				peer_send(p, rec + j, 1);
				event_base_loop(base, EVLOOP_NONBLOCK);
			}
		} else
			peer_send(p, rec, 16);
	}
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	pattern_body(&p->r[1], 77);
	peer_free(p);
}
END_TEST

/*
 * Requests 1 to 4 begun before any of them has its PARAMS, with max_reqs
 * 2: 3 and 4 refused, their records among the others' dropped.
 */
static void
begin_first_stream(struct wire *w)
{
	static const uint16_t	 order[] = { 3, 0, 4, 1, 2 };
	size_t			 i;
	uint16_t		 id;

	for (id = 1; id < 4; id++)
		w_begin(w, id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if ((id = order[i]) == 0)
			w_begin(w, 4, FCGI_RESPONDER, FCGI_KEEP_CONN);
		else
			w_rest(w, id, "/hello");
	}
}

/*
 * The begin-first stream cut at every byte: the rest after a loop turn
 * (the same answers), or the end of input there (what was whole is
 * answered as it should be, nothing else, and the connection closes).
 */
START_TEST(begin_first_every_prefix)
{
	struct peer	*p;
	struct wire	 w = { .len = 0 };
	size_t		 len, cut;
	int		 id, i;

	lim.max_reqs = 2;
	start();
	begin_first_stream(&w);
	len = w.len;
	for (cut = 0; cut <= len; cut++) {
		p = peer_new();
		peer_send(p, w.b, cut);
		for (i = 0; i < 3; i++)
			event_base_loop(base, EVLOOP_NONBLOCK);
		peer_send(p, w.b + cut, len - cut);
		ck_assert_msg(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
		    p->r[3].ended && p->r[4].ended, 2), "cut at %zu", cut);
		ck_assert_str_eq(body_str(&p->r[1]), "Hello World\n");
		ck_assert_str_eq(body_str(&p->r[2]), "Hello World\n");
		ck_assert_msg(overloaded(&p->r[3]) && overloaded(&p->r[4]),
		    "cut at %zu", cut);
		peer_free(p);

		p = peer_new();
		peer_send(p, w.b, cut);
		ck_assert_int_eq(shutdown(p->fd, SHUT_WR), 0);
		ck_assert_msg(RUN_UNTIL(p, p->eof, 2), "cut at %zu", cut);
		for (id = 1; id < 3; id++)
			ck_assert(!p->r[id].ended ||
			    p->r[id].pstatus == FCGI_REQUEST_COMPLETE);
		for (id = 3; id < 5; id++)
			ck_assert(!p->r[id].ended || overloaded(&p->r[id]));
		/* BEGIN 3 is the 48th byte: refused once it is whole. */
		ck_assert(p->r[3].ended == (cut >= 48));
		if (cut == len)
			ck_assert(p->r[1].ended && p->r[2].ended);
		peer_free(p);
	}
	ck_assert(RUN_UNTIL(p = peer_new(), stats().connections == 1, 2));
	ck_assert_uint_eq(stats().closed_on_error, 0);
	ck_assert_uint_eq(stats().requests_active, 0);
	peer_free(p);
}
END_TEST

/* malformed: each closes its one connection; the server goes on. */
START_TEST(bad_version_closes_one_conn)
{
	struct peer	*bad, *good;
	uint8_t		 rec[16];

	start();
	good = peer_new();
	bad = peer_new();
	fcgi_begin_encode(rec, 1, FCGI_RESPONDER, 0);
	rec[0] = 2;
	peer_send(bad, rec, sizeof(rec));
	ck_assert(RUN_UNTIL(bad, bad->eof, 2));
	send_request(good, 1, 0, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(good, good->r[1].ended, 2));
	ck_assert_uint_eq(stats().closed_on_error, 1);
	peer_free(bad);
	peer_free(good);
}
END_TEST

/* Records that must each close their connection with nothing answered. */
struct rec_spec {
	uint8_t		 type;		/* 0 ends a list */
	const char	*content;
	size_t		 len;
};

#define BEGIN_OK	{ FCGI_BEGIN_REQUEST, "\0\1\0\0\0\0\0\0", 8 }

static const struct rec_spec malformed[][3] = {
	/* BEGIN_REQUEST's body is 8 bytes. */
	{ { FCGI_BEGIN_REQUEST, "\0\1\0\0\0", 5 } },
	/* A value length that runs past the end of PARAMS. */
	{ BEGIN_OK, { FCGI_PARAMS, "\1\x50" "A", 3 }, { FCGI_PARAMS, "", 0 } },
	/* A type only applications send. */
	{ { FCGI_STDOUT, "x", 1 } },
	/* A request id already in flight. */
	{ BEGIN_OK, BEGIN_OK },
	/* STDIN before the end of PARAMS (it would be lost). */
	{ BEGIN_OK, { FCGI_STDIN, "hello", 5 } }
};

#define NMALFORMED	(int)(sizeof(malformed) / sizeof(malformed[0]))

START_TEST(malformed_closes)
{
	const struct rec_spec	*r;
	struct peer		*p;

	start();
	p = peer_new();
	for (r = malformed[_i]; r < malformed[_i] + 3 && r->type != 0; r++)
		send_record(p, r->type, 1, r->content, r->len);
	ck_assert(RUN_UNTIL(p, p->eof, 2));
	ck_assert(!p->r[1].ended);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	peer_free(p);
}
END_TEST

START_TEST(params_too_large_431)
{
	struct peer	*p;
	uint8_t		 params[4096];
	char		 big[3000];
	size_t		 n;

	lim.max_params = 2048;
	memset(big, 'b', sizeof(big));
	start();
	p = peer_new();
	n = encode_params(params, sizeof(params), "/hello", 0);
	n += fcgi_nv_encode(params + n, sizeof(params) - n, "HTTP_X", 6, big,
	    sizeof(big));
	send_begin(p, 1, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, 1, params, n);
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[1]), 431);
	/* The kept connection serves the next request. */
	send_request(p, 2, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[2]), 200);
	peer_free(p);
}
END_TEST

START_TEST(body_too_large_413)
{
	struct peer	*p;
	uint8_t		 body[5000] = { 0 };

	lim.max_body = 4096;
	start();
	p = peer_new();
	/* Announced too large. */
	send_request(p, 1, FCGI_KEEP_CONN, "/echo", body, sizeof(body));
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[1]), 413);
	/* Announced small, sent large. */
	send_head(p, 2, FCGI_KEEP_CONN, "/echo", 10);
	send_record(p, FCGI_STDIN, 2, body, sizeof(body));
	send_record(p, FCGI_STDIN, 2, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[2]), 413);
	ck_assert_uint_eq(stats().rejected, 2);
	send_request(p, 3, FCGI_KEEP_CONN, "/echo", "abc", 3);
	ck_assert(RUN_UNTIL(p, p->r[3].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[3]), 200);
	peer_free(p);
}
END_TEST

START_TEST(header_timeout_closes)
{
	struct peer	*p;
	double		 t0;

	lim.header_timeout = 1;
	start();
	p = peer_new();
	t0 = now_s();
	send_begin(p, 1, FCGI_RESPONDER, 0);
	send_record(p, FCGI_PARAMS, 1, "\1\1ab", 4);
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	ck_assert(now_s() - t0 >= 0.9);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	peer_free(p);
}
END_TEST

/*
 * Each request's PARAMS have their own deadline: a connection that keeps
 * starting new requests while older ones complete is not cut at the first
 * one's deadline, and the late one is still cut at its own.
 */
START_TEST(header_timeout_per_request)
{
	struct peer	*p;
	uint8_t		 params[2048];
	size_t		 n;
	double		 t0;

	lim.header_timeout = 1;
	start();
	p = peer_new();
	t0 = now_s();
	n = encode_params(params, sizeof(params), "/hello", 0);
	send_begin(p, 1, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, 1, params, 5);
	run_for(0.6);
	/* Request 1 completes; request 2 starts its PARAMS at 0.6 s. */
	send_record(p, FCGI_PARAMS, 1, params + 5, n - 5);
	send_record(p, FCGI_PARAMS, 1, NULL, 0);
	send_record(p, FCGI_STDIN, 1, NULL, 0);
	send_begin(p, 2, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_record(p, FCGI_PARAMS, 2, params, 5);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	run_for(1.3 - (now_s() - t0));
	/* Past request 1's deadline: still open, since request 1 is done. */
	ck_assert(!p->eof);
	ck_assert_uint_eq(stats().connections, 1);
	/* Request 2's own deadline (1.6 s) closes it. */
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	ck_assert(now_s() - t0 >= 1.5);
	ck_assert(!p->r[2].ended);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	peer_free(p);
}
END_TEST

/*
 * Requests begun together, their PARAMS sent one after another: each one
 * that ends restarts the next one's header timeout, so none is cut for
 * the time the others took.  A peer that then stops is still closed.
 */
START_TEST(header_timeout_counts_progress)
{
	struct peer	*p;
	double		 t0, t3;
	int		 id;

	lim.header_timeout = 1;
	start();
	p = peer_new();
	t0 = now_s();
	for (id = 1; id < 4; id++)
		send_begin(p, (uint16_t)id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	for (id = 1; id < 4; id++) {
		run_for(0.6 * id - (now_s() - t0));
		send_rest(p, (uint16_t)id, "/hello");
		ck_assert_msg(RUN_UNTIL(p, p->r[id].ended, 2), "request %d", id);
		ck_assert_str_eq(body_str(&p->r[id]), "Hello World\n");
	}
	/* Past 1.8 s: request 3 was begun 1.8 s before its PARAMS. */
	ck_assert(!p->eof);
	ck_assert_uint_eq(stats().timeouts_header, 0);
	t3 = now_s();
	send_begin(p, 4, FCGI_RESPONDER, FCGI_KEEP_CONN);
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	ck_assert_double_ge(now_s() - t3, 0.9);
	ck_assert_uint_eq(stats().timeouts_header, 1);
	peer_free(p);
}
END_TEST

/*
 * Paused above its high mark, a connection reads nothing: a request whose
 * PARAMS wait unread meanwhile is not timed out for it.
 */
START_TEST(header_timeout_not_while_paused)
{
	struct peer	*p;
	size_t		 len;

	lim.header_timeout = 1;
	/* Each answer is queued whole; the second passes the high mark. */
	lim.high_water = 64 * 1024;
	lim.low_water = 16 * 1024;
	lim.sndbuf = 4096;
	start();
	p = peer_new();
	send_begin(p, 2, FCGI_RESPONDER, FCGI_KEEP_CONN);
	send_request(p, 1, FCGI_KEEP_CONN, "/size?40000", NULL, 0);
	send_request(p, 3, FCGI_KEEP_CONN, "/size?40000", NULL, 0);
	run_for(0.2);
	send_rest(p, 2, "/hello");
	/* The peer reads nothing for 1.5 s: c stays paused. */
	run_for(1.5);
	ck_assert_uint_eq(stats().connections, 1);
	ck_assert(!p->r[2].ended);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[3].ended, 10));
	resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 40000);
	resp_body(&p->r[3], &len);
	ck_assert_uint_eq(len, 40000);
	ck_assert_str_eq(body_str(&p->r[2]), "Hello World\n");
	ck_assert_uint_eq(stats().timeouts_header, 0);
	peer_free(p);
}
END_TEST

START_TEST(write_timeout_closes)
{
	struct peer	*p;

	lim.write_timeout = 1;
	start();
	p = peer_new();
	send_request(p, 1, 0, "/size?20000000", NULL, 0);
	run_for(1.6);
	ck_assert_uint_eq(stats().connections, 0);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	ck_assert_uint_eq(stats().bytes_queued, 0);
	peer_free(p);
}
END_TEST

/*
 * An answer cut at the write timeout ends in a reset, not an end of
 * stream: a front end that passed on a Content-Length or chunks sees that
 * the answer is not whole, and so does its client.
 */
START_TEST(write_timeout_resets)
{
	struct peer	*p;
	char		 b[65536];
	ssize_t		 n;
	int		 err;

	lim.write_timeout = 1;
	start();
	p = peer_new_tcp(4096);
	send_request(p, 1, 0, "/size?20000000", NULL, 0);
	run_for(1.6);
	ck_assert_uint_eq(stats().timeouts_write, 1);
	ck_assert_uint_eq(stats().connections, 0);
	while ((n = read(p->fd, b, sizeof(b))) > 0)
		;
	err = n == -1 ? errno : 0;
	ck_assert_msg(n == -1 && err == ECONNRESET,
	    "after the write timeout the peer read %s, not a reset",
	    n == 0 ? "an end of stream" : strerror(err));
	peer_free(p);
}
END_TEST

/*
 * A peer that keeps reading, too slowly for the daemon's writes to go
 * through (its socket's send queue stays above the writable mark), is not
 * cut: the queue shrinks.  Once it stops reading for good, it is.
 */
START_TEST(slow_reader_not_cut)
{
	struct peer	*p;
	int		 i;

	lim.write_timeout = 1;
	lim.sndbuf = 65536;
	start();
	p = peer_new_tcp(4096);
	send_request(p, 1, 0, "/size?4000000", NULL, 0);
	run_for(0.2);
	for (i = 0; i < 10; i++) {
		peer_read(p, 2048);
		run_for(0.35);
	}
	ck_assert_uint_eq(stats().closed_on_error, 0);
	ck_assert_uint_eq(stats().connections, 1);
	run_for(2.2);
	ck_assert_uint_eq(stats().closed_on_error, 1);
	ck_assert_uint_eq(stats().connections, 0);
	peer_free(p);
}
END_TEST

START_TEST(idle_timeout_closes)
{
	struct peer	*p;

	lim.idle_timeout = 1;
	start();
	p = peer_new();
	send_request(p, 1, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert(!p->eof);
	ck_assert(RUN_UNTIL(p, p->eof, 3));
	ck_assert_uint_eq(stats().closed_on_error, 0);
	peer_free(p);
}
END_TEST

/*
 * The idle timer is lazy (armed once, checked when it fires): a request
 * 0.7 s into a 1 s idle timeout must restart the countdown, so the
 * connection is open at 1.4 s and closed by 1.7 s + 1 s.
 */
START_TEST(idle_timeout_restarts_on_activity)
{
	struct peer	*p;

	lim.idle_timeout = 1;
	start();
	p = peer_new();
	send_request(p, 1, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	run_for(0.7);
	send_request(p, 2, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 2));
	run_for(0.7);
	ck_assert(!p->eof);
	ck_assert(RUN_UNTIL(p, p->eof, 2));
	ck_assert_uint_eq(stats().closed_on_error, 0);
	peer_free(p);
}
END_TEST

/* Answers with its argument (a string) as the body. */
static void
h_tag(struct evfcgi_req *req, void *arg)
{
	evfcgi_respond(req, 200, "text/plain", arg, strlen(arg));
}

/* Sends a GET (or, with a body, POST) for uri as id and waits for it. */
static struct resp *
ask(struct peer *p, uint16_t id, const char *uri, const char *body)
{
	resp_reset(p, id);
	send_request(p, id, FCGI_KEEP_CONN, uri, body,
	    body != NULL ? strlen(body) : 0);
	ck_assert_msg(RUN_UNTIL(p, p->r[id].ended, 3), "%s unanswered", uri);
	return &p->r[id];
}

/* The body of r as a string (static). */
static const char *
body_str(struct resp *r)
{
	static char	 b[256];
	const uint8_t	*p;
	size_t		 len;

	p = resp_body(r, &len);
	ck_assert_uint_lt(len, sizeof(b));
	memcpy(b, p, len);
	b[len] = '\0';
	return b;
}

/*
 * Exact before prefix, the longest prefix, the default, 405 with Allow,
 * HEAD wherever GET goes, and the path matched decoded.
 */
START_TEST(routes_prefix_default_405)
{
	static const char *const head[] = { "REQUEST_METHOD", "HEAD",
	    "REQUEST_URI", "/redirect", NULL };
	struct peer	*p;
	struct resp	*r;

	start();
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/", h_tag, "api"), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/v2/", h_tag, "v2"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/api/exact", h_tag, "exact"), 0);
	ck_assert_int_eq(evfcgi_route_methods(srv, "/post", "POST, PUT",
	    h_tag, "post"), 0);
	ck_assert_int_eq(evfcgi_route_methods(srv, "/x", "GET,,POST", h_tag,
	    "x"), -1);
	ck_assert_int_eq(evfcgi_route_methods(srv, "/x", "G T", h_tag, "x"),
	    -1);
	ck_assert_int_eq(evfcgi_route(srv, "", h_tag, "x"), -1);
	p = peer_new();
	ck_assert_str_eq(body_str(ask(p, 1, "/api/x/y?q", NULL)), "api");
	ck_assert_str_eq(body_str(ask(p, 1, "/api/", NULL)), "api");
	ck_assert_str_eq(body_str(ask(p, 1, "/api/v2/z", NULL)), "v2");
	ck_assert_str_eq(body_str(ask(p, 1, "/api/exact", NULL)), "exact");
	ck_assert_str_eq(body_str(ask(p, 1, "/api/exac%74", NULL)), "exact");
	ck_assert_str_eq(body_str(ask(p, 1, "/api/exact/", NULL)), "api");
	ck_assert_int_eq(resp_status(ask(p, 1, "/api", NULL)), 404);
	ck_assert_str_eq(body_str(ask(p, 1, "/hel%6co", NULL)),
	    "Hello World\n");
	ck_assert_int_eq(resp_status(ask(p, 1, "/hel%6", NULL)), 400);
	ck_assert_int_eq(resp_status(ask(p, 1, "/hello%00", NULL)), 400);
	ck_assert_int_eq(resp_status(ask(p, 1, "/hel%6Go", NULL)), 400);
	r = ask(p, 1, "/post", NULL);
	ck_assert_int_eq(resp_status(r), 405);
	ck_assert_ptr_nonnull(strstr((char *)r->out,
	    "\r\nAllow: POST, PUT\r\n"));
	ck_assert_str_eq(body_str(ask(p, 1, "/post", "some body")), "post");
	/* A method list with GET also takes HEAD. */
	r = ask(p, 1, "/upload", NULL);
	ck_assert_int_eq(resp_status(r), 405);
	ck_assert_ptr_nonnull(strstr((char *)r->out, "Allow: POST, PUT\r\n"));
	resp_reset(p, 2);
	send_request_nv(p, 2, head, NULL);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 3));
	ck_assert_int_eq(resp_status(&p->r[2]), 302);
	ck_assert_uint_eq((body_str(&p->r[2]))[0], '\0');
	/* The default takes what no route does; replaced routes. */
	evfcgi_route_default(srv, h_tag, "default");
	ck_assert_str_eq(body_str(ask(p, 1, "/nothing", NULL)), "default");
	ck_assert_str_eq(body_str(ask(p, 1, "/api", NULL)), "default");
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/api/", h_tag, "api2"), 0);
	ck_assert_str_eq(body_str(ask(p, 1, "/api/x", NULL)), "api2");
	ck_assert_int_eq(stats().connections, 1);
	peer_free(p);
}
END_TEST

/* Headers through a connection: Location, Set-Cookie twice. */
START_TEST(header_lines_sent)
{
	struct peer	*p;
	struct resp	*r;

	start();
	p = peer_new();
	r = ask(p, 1, "/redirect", NULL);
	ck_assert_int_eq(resp_status(r), 302);
	ck_assert_ptr_nonnull(strstr((char *)r->out, "\r\nLocation: /hello\r\n"
	    "Set-Cookie: a=1; Path=/\r\nSet-Cookie: b=2; Path=/\r\n\r\n"));
	peer_free(p);
}
END_TEST

/* A streamed body's handler and what the test lets it take. */
static struct {
	struct evfcgi_req	*req;
	int			 take;		/* drain what comes */
	uint64_t		 got;
	int			 called;	/* the handler ran */
	int			 done;
	int			 aborted;
	uint64_t		 limit;
} sb;

static void
sb_body(struct evfcgi_req *req, struct evbuffer *body, int done, void *arg)
{
	char	 msg[32];
	int	 n;

	(void)arg;
	if (sb.take) {
		sb.got += evbuffer_get_length(body);
		evbuffer_drain(body, evbuffer_get_length(body));
	}
	if (!done)
		return;
	sb.done = 1;
	n = snprintf(msg, sizeof(msg), "%llu", (unsigned long long)sb.got);
	evfcgi_on_abort(req, NULL, NULL);
	sb.req = NULL;
	evfcgi_respond(req, 200, "text/plain", msg, (size_t)n);
}

static void
sb_abort(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	ck_assert_ptr_eq(req, sb.req);
	sb.aborted++;
	sb.req = NULL;
}

static void
sb_handler(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	sb.called = 1;
	sb.req = req;
	/* The handler runs before any of the body is in. */
	ck_assert_uint_eq(evbuffer_get_length(evfcgi_body(req)), 0);
	evfcgi_on_abort(req, sb_abort, NULL);
	if (sb.limit > 0 && evfcgi_body_limit(req, sb.limit) == -1) {
		evfcgi_on_abort(req, NULL, NULL);
		sb.req = NULL;
		evfcgi_respond_error(req, 413, "said so ahead");
		return;
	}
	ck_assert_int_eq(evfcgi_on_body(req, sb_body, NULL), 0);
}

/*
 * The records of a POST to uri with a body of len bytes (unknown length
 * unless known): BEGIN, PARAMS, STDIN in records of 65535, its end.
 */
static uint8_t *
stream_records(uint16_t id, const char *uri, size_t len, int known,
    size_t *outlen)
{
	uint8_t	*b, params[512];
	char	 cl[32];
	size_t	 n, off = 0, chunk, np = 0;

	np += fcgi_nv_encode(params + np, sizeof(params) - np,
	    "REQUEST_METHOD", 14, "POST", 4);
	np += fcgi_nv_encode(params + np, sizeof(params) - np,
	    "REQUEST_URI", 11, uri, strlen(uri));
	snprintf(cl, sizeof(cl), "%zu", len);
	if (known)
		np += fcgi_nv_encode(params + np, sizeof(params) - np,
		    "CONTENT_LENGTH", 14, cl, strlen(cl));
	ck_assert_ptr_nonnull(b = malloc(len + len / 65535 * 8 + 1024));
	fcgi_begin_encode(b, id, FCGI_RESPONDER, FCGI_KEEP_CONN);
	off = 16;
	fcgi_header_encode(b + off, FCGI_PARAMS, id, (uint16_t)np, 0);
	memcpy(b + off + 8, params, np);
	off += 8 + np;
	fcgi_header_encode(b + off, FCGI_PARAMS, id, 0, 0);
	off += 8;
	for (n = 0; n < len; n += chunk) {
		chunk = len - n < 65535 ? len - n : 65535;
		fcgi_header_encode(b + off, FCGI_STDIN, id, (uint16_t)chunk, 0);
		memset(b + off + 8, 'u', chunk);
		off += 8 + chunk;
	}
	fcgi_header_encode(b + off, FCGI_STDIN, id, 0, 0);
	*outlen = off + 8;
	return b;
}

/*
 * Writes what the socket takes of b from *off, running the loop, for at
 * most secs or until all is sent.  Returns whether all was.
 */
static int
push(struct peer *p, const uint8_t *b, size_t len, size_t *off, double secs)
{
	double	 end = now_s() + secs;
	ssize_t	 n;

	while (*off < len && now_s() < end) {
		n = write(p->fd, b + *off, len - *off);
		if (n > 0)
			*off += (size_t)n;
		event_base_loop(base, EVLOOP_NONBLOCK);
		peer_read(p, 0);
		if (n <= 0)
			usleep(500);
	}
	return *off == len;
}

/* Sends all of a streamed POST's records (stream_records) within secs. */
static void
post_stream(struct peer *p, uint16_t id, const char *uri, size_t len,
    int known, double secs)
{
	uint8_t	*b;
	size_t	 blen, off = 0;

	b = stream_records(id, uri, len, known, &blen);
	ck_assert(push(p, b, blen, &off, secs));
	free(b);
}

/*
 * What a streamed body's connection holds at most: the body up to the low
 * mark and a record, and its input buffer, two whole records counted
 * twice (its chains: conn_input_cb).
 */
#define STREAM_HELD	(lim.low_water + 65535 + 512 + 4 * (65535 + 263))

/*
 * A streamed body the handler does not take: the connection stops reading
 * at a watermark, whatever the body's size; taken, reading resumes and the
 * whole body comes.  It is not capped by max_body.
 */
START_TEST(stream_pauses_and_resumes)
{
	uint8_t		*b;
	size_t		 len, off = 0, total = 8u << 20;
	uint64_t	 held;

	memset(&sb, 0, sizeof(sb));
	lim.max_body = 1 << 20;
	start();
	ck_assert_int_eq(evfcgi_route_ex(srv, "/hold", EVFCGI_ROUTE_STREAM,
	    "POST", sb_handler, NULL), 0);
	struct peer *p = peer_new();
	b = stream_records(1, "/hold", total, 1, &len);
	ck_assert(!push(p, b, len, &off, 0.5));
	ck_assert(sb.called);
	held = stats().bytes_input;
	/* At most the low mark and a record in the body. */
	ck_assert_uint_le(held, STREAM_HELD);
	ck_assert_uint_le(stats().peak_bytes_input, STREAM_HELD);
	ck_assert_uint_gt(held, 0);
	ck_assert_uint_lt(off, len / 2);
	ck_assert_uint_eq(stats().requests_active, 1);
	/* Still held a while later: no idle timeout, no more read. */
	ck_assert(!push(p, b, len, &off, 0.3));
	ck_assert_uint_eq(stats().bytes_input, held);
	/* Taken: what waits goes, and reading resumes to the end. */
	sb.take = 1;
	sb.got = evbuffer_get_length(evfcgi_body(sb.req));
	evbuffer_drain(evfcgi_body(sb.req), sb.got);
	/* Only its params are held now, and the records read but not yet
	   handed over (counted twice). */
	ck_assert_uint_lt(stats().bytes_input, 512 + 4 * (65535 + 263));
	ck_assert(push(p, b, len, &off, 10));
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_uint_eq(sb.got, total);
	ck_assert_uint_eq(strtoull(body_str(&p->r[1]), NULL, 10), total);
	ck_assert_uint_le(stats().peak_bytes_input, STREAM_HELD);
	ck_assert_uint_eq(stats().bytes_input, 0);
	ck_assert_int_eq(sb.aborted, 0);
	free(b);
	/* The kept connection serves on. */
	ck_assert_str_eq(body_str(ask(p, 2, "/hello", NULL)), "Hello World\n");
	peer_free(p);
}
END_TEST

/*
 * 64 MiB to /upload (a streamed demo route) with max_body at 1 MiB: all
 * summed, while the daemon held at most a watermark of it.
 */
START_TEST(stream_64mib_bounded)
{
	size_t		 total = 64u << 20;
	char		 want[64];

	lim.max_body = 1 << 20;
	start();
	struct peer *p = peer_new();
	post_stream(p, 1, "/upload", total, 0, 20);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 200);
	snprintf(want, sizeof(want), " %zu\n", total);
	ck_assert_ptr_nonnull(strstr(body_str(&p->r[1]), want));
	ck_assert_uint_le(stats().peak_bytes_input, STREAM_HELD);
	peer_free(p);
}
END_TEST

/*
 * The handler's own cap: refused ahead when CONTENT_LENGTH says more,
 * else 413 from the engine once past it (the abort callback runs first).
 */
START_TEST(stream_body_limit)
{
	memset(&sb, 0, sizeof(sb));
	sb.limit = 100000;
	start();
	ck_assert_int_eq(evfcgi_route_ex(srv, "/lim", EVFCGI_ROUTE_STREAM,
	    NULL, sb_handler, NULL), 0);
	struct peer *p = peer_new();
	sb.take = 1;
	post_stream(p, 1, "/lim", 200000, 1, 5);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[1]), 413);
	ck_assert_int_eq(sb.aborted, 0);
	memset(&sb, 0, sizeof(sb));
	sb.limit = 100000;
	sb.take = 1;
	post_stream(p, 2, "/lim", 200000, 0, 5);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 5));
	ck_assert_int_eq(resp_status(&p->r[2]), 413);
	ck_assert_int_eq(sb.aborted, 1);
	ck_assert_int_eq(sb.done, 0);
	ck_assert_uint_eq(stats().bytes_input, 0);
	ck_assert_str_eq(body_str(ask(p, 3, "/hello", NULL)), "Hello World\n");
	peer_free(p);
}
END_TEST

/*
 * A streamed request aborted while its body comes, and one whose peer
 * goes away: the abort callback runs once, nothing is left held.
 */
START_TEST(stream_aborted)
{
	uint8_t		*b;
	size_t		 len, off = 0;

	memset(&sb, 0, sizeof(sb));
	start();
	ck_assert_int_eq(evfcgi_route_ex(srv, "/s", EVFCGI_ROUTE_STREAM,
	    NULL, sb_handler, NULL), 0);
	struct peer *p = peer_new();
	b = stream_records(1, "/s", 100000, 1, &len);
	/* All but the body's end. */
	ck_assert(push(p, b, len - 8, &off, 5));
	run_for(0.05);
	ck_assert_ptr_nonnull(sb.req);
	send_record(p, FCGI_ABORT_REQUEST, 1, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 2));
	ck_assert_int_eq(sb.aborted, 1);
	ck_assert_uint_eq(stats().bytes_input, 0);
	ck_assert_uint_eq(stats().requests_active, 0);
	free(b);
	off = 0;
	b = stream_records(2, "/s", 100000, 1, &len);
	ck_assert(push(p, b, len - 8, &off, 5));
	run_for(0.05);
	ck_assert_ptr_nonnull(sb.req);
	shutdown(p->fd, SHUT_WR);
	run_for(0.1);
	ck_assert_int_eq(sb.aborted, 2);
	ck_assert_uint_eq(stats().requests_active, 0);
	ck_assert_uint_eq(stats().bytes_input, 0);
	free(b);
	peer_free(p);
}
END_TEST

/* Streamed requests whose handler leaves their body for later. */
static struct evfcgi_req	*late_req[8];
static size_t			 late_got[8];
static int			 late_early = -1;

static void
late_handler(struct evfcgi_req *req, void *arg)
{
	const char	*rest = evfcgi_path_rest(req);

	(void)arg;
	late_req[atoi(rest + (*rest == '/'))] = req;
}

/*
 * Takes a late body; the first call answers another request still
 * waiting for its own at once (it leaves the kicked list unhanded).
 */
static void
late_body(struct evfcgi_req *req, struct evbuffer *b, int done, void *arg)
{
	size_t			 i = (size_t)(uintptr_t)arg, j;
	struct evfcgi_req	*o;

	late_got[i] += evbuffer_get_length(b);
	evbuffer_drain(b, evbuffer_get_length(b));
	for (j = 0; late_early == -1 && j < 8; j++)
		if (j != i && late_req[j] != NULL && late_got[j] == 0) {
			late_early = (int)j;
			o = late_req[j];
			late_req[j] = NULL;
			evfcgi_respond(o, 200, "text/plain", "early", 5);
		}
	if (done) {
		late_req[i] = NULL;
		evfcgi_respond(req, 200, "text/plain", "ok", 2);
	}
}

/*
 * evfcgi_on_body() set once the bodies are in, for several requests on
 * one connection, as a new request arrives: each is handed its whole body
 * on the next turn (from one kicked list, not a look at every request),
 * but one answered meanwhile, and the new request is served too.
 */
START_TEST(late_on_body_kicks)
{
	struct peer	*p;
	size_t		 i;
	char		 uri[32];

	memset(late_req, 0, sizeof(late_req));
	memset(late_got, 0, sizeof(late_got));
	late_early = -1;
	lim.max_reqs = 9;
	start();
	ck_assert_int_eq(evfcgi_route_ex(srv, "/late", EVFCGI_ROUTE_STREAM |
	    EVFCGI_ROUTE_PREFIX, NULL, late_handler, NULL), 0);
	p = peer_new();
	for (i = 0; i < 8; i++) {
		snprintf(uri, sizeof(uri), "/late/%zu", i);
		post_stream(p, (uint16_t)(i + 1), uri, 1000 * (i + 1), 1, 5);
	}
	run_for(0.1);
	for (i = 0; i < 8; i++) {
		ck_assert_ptr_nonnull(late_req[i]);
		ck_assert_int_eq(evfcgi_on_body(late_req[i], late_body,
		    (void *)(uintptr_t)i), 0);
	}
	/* Readable in the turn the kicks are due: both are acted on. */
	send_request(p, 9, FCGI_KEEP_CONN, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended &&
	    p->r[3].ended && p->r[4].ended && p->r[5].ended &&
	    p->r[6].ended && p->r[7].ended && p->r[8].ended &&
	    p->r[9].ended, 3));
	ck_assert_int_ge(late_early, 0);
	for (i = 0; i < 8; i++) {
		ck_assert_ptr_null(late_req[i]);
		if ((int)i == late_early) {
			ck_assert_uint_eq(late_got[i], 0);
			ck_assert_str_eq(body_str(&p->r[i + 1]), "early");
			continue;
		}
		ck_assert_uint_eq(late_got[i], 1000 * (i + 1));
		ck_assert_str_eq(body_str(&p->r[i + 1]), "ok");
	}
	ck_assert_str_eq(body_str(&p->r[9]), "Hello World\n");
	ck_assert_uint_eq(stats().requests_active, 0);
	ck_assert_uint_eq(stats().bytes_input, 0);
	peer_free(p);
}
END_TEST

static char	 fd_path[64];
static int	 fd_sent = -1;

static void
h_file(struct evfcgi_req *req, void *arg)
{
	int	 fd = open(fd_path, O_RDONLY);

	(void)arg;
	ck_assert_int_ne(fd, -1);
	fd_sent = fd;
	evfcgi_header(req, 200, "application/octet-stream", (3 << 20) - 5);
	ck_assert_int_eq(evfcgi_write_fd(req, fd, 5, (3 << 20) - 5), 0);
}

/* A body from a file: read as the socket drains, the file closed after. */
START_TEST(body_from_fd)
{
	static const char	 line[] = APP_PATTERN_LINE;
	struct peer		*p;
	const uint8_t		*body;
	size_t			 len, i;
	FILE			*f;
	int			 fd;

	snprintf(fd_path, sizeof(fd_path), "/tmp/check_conn_fd.XXXXXX");
	ck_assert_int_ne(fd = mkstemp(fd_path), -1);
	ck_assert_ptr_nonnull(f = fdopen(fd, "w"));
	for (i = 0; i < (3u << 20); i++)
		fputc(line[i % 64], f);
	fclose(f);
	p = start_route("/file", h_file);
	send_request(p, 1, FCGI_KEEP_CONN, "/file", NULL, 0);
	run_for(0.2);
	/* Unread, it holds about a watermark, not the file. */
	ck_assert_uint_le(stats().peak_bytes_queued,
	    lim.high_water + 2 * 65536);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 10));
	body = resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, (3u << 20) - 5);
	for (i = 0; i < len; i++)
		if (body[i] != (uint8_t)line[(i + 5) % 64])
			break;
	ck_assert_uint_eq(i, len);
	ck_assert_int_eq(fcntl(fd_sent, F_GETFD), -1);
	unlink(fd_path);
	peer_free(p);
}
END_TEST

/* An asynchronous answer, and its abort when the connection goes. */
static int	 async_aborted;
static struct event *async_ev;

static void
async_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	(void)arg;
	async_aborted++;
	event_free(async_ev);
	async_ev = NULL;
}

static void
async_fire(evutil_socket_t fd, short what, void *arg)
{
	struct evfcgi_req	*req = arg;

	(void)fd;
	(void)what;
	event_free(async_ev);
	async_ev = NULL;
	evfcgi_on_abort(req, NULL, NULL);
	evfcgi_respond(req, 200, "text/plain", "later", 5);
}

static void
h_async(struct evfcgi_req *req, void *arg)
{
	struct timeval	 tv = { 0, 100000 };

	(void)arg;
	ck_assert_ptr_nonnull(async_ev = evtimer_new(evfcgi_req_base(req),
	    async_fire, req));
	evfcgi_on_abort(req, async_abort, NULL);
	evtimer_add(async_ev, &tv);
}

START_TEST(async_answer_and_abort)
{
	struct peer	*p;

	async_aborted = 0;
	p = start_route("/async", h_async);
	ck_assert_str_eq(body_str(ask(p, 1, "/async", NULL)), "later");
	ck_assert_int_eq(async_aborted, 0);
	send_request(p, 2, FCGI_KEEP_CONN, "/async", NULL, 0);
	run_for(0.02);
	ck_assert_ptr_nonnull(async_ev);
	send_record(p, FCGI_ABORT_REQUEST, 2, NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[2].ended, 2));
	ck_assert_int_eq(async_aborted, 1);
	ck_assert_ptr_null(async_ev);
	ck_assert_uint_eq(stats().requests_active, 0);
	/* The server goes with a request in the handler's hands. */
	send_request(p, 3, FCGI_KEEP_CONN, "/async", NULL, 0);
	run_for(0.02);
	ck_assert_ptr_nonnull(async_ev);
	evfcgi_server_free(srv);
	srv = NULL;
	ck_assert_int_eq(async_aborted, 2);
	ck_assert_ptr_null(async_ev);
	peer_free(p);
}
END_TEST

/* Producers that misbehave: what they did, for the tests below. */
static struct {
	int	 lines;		/* whole lines to write */
	int	 need;		/* ask for a line's room first */
	int	 calls;
	int	 empty;		/* calls that wrote nothing */
	int	 short_room;	/* calls with less room than asked for */
	int	 aborts;
	size_t	 most;		/* most bytes one call wrote */
	size_t	 most_over;	/* most bytes past its room in one call */
} pb;

static char	 pb_line[4000];

/* Writes whole 4000-byte lines only: nothing when one does not fit. */
static int
pb_lines(struct evfcgi_req *req, size_t room, void *arg)
{
	(void)arg;
	pb.calls++;
	if (pb.need && room < sizeof(pb_line))
		pb.short_room++;
	if (room < sizeof(pb_line)) {
		pb.empty++;
		return 0;
	}
	ck_assert_int_eq(evfcgi_write(req, pb_line, sizeof(pb_line)), 0);
	return --pb.lines == 0;
}

/* Writes until refused (64 MB at most, for the code before the cap). */
static int
pb_endless(struct evfcgi_req *req, size_t room, void *arg)
{
	size_t	 n = 0;

	(void)arg;
	pb.calls++;
	while (n < (64u << 20) &&
	    evfcgi_write(req, pb_line, sizeof(pb_line)) == 0)
		n += sizeof(pb_line);
	if (n > pb.most)
		pb.most = n;
	if (n > room && n - room > pb.most_over)
		pb.most_over = n - room;
	return 0;
}

static void
pb_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	(void)arg;
	pb.aborts++;
}

static void
h_lines(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	pb.lines = atoi(evfcgi_query(req));
	ck_assert_int_eq(evfcgi_header(req, 200, "text/plain",
	    (long long)pb.lines * (long long)sizeof(pb_line)), 0);
	if (pb.need)
		ck_assert_int_eq(evfcgi_produce_need(req, sizeof(pb_line)), 0);
	ck_assert_int_eq(evfcgi_produce(req, pb_lines, NULL), 0);
}

static void
h_endless(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_on_abort(req, pb_abort, NULL);
	ck_assert_int_eq(evfcgi_header(req, 200, "text/plain", -1), 0);
	ck_assert_int_eq(evfcgi_produce(req, pb_endless, NULL), 0);
}

/* Writes nothing for its first 19 calls (a source not ready), then ends. */
static int
pb_poll(struct evfcgi_req *req, size_t room, void *arg)
{
	(void)room;
	(void)arg;
	if (++pb.calls < 20)
		return 0;
	ck_assert_int_eq(evfcgi_write(req, "done", 4), 0);
	return 1;
}

static void
h_poll(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	ck_assert_int_eq(evfcgi_header(req, 200, "text/plain", 4), 0);
	ck_assert_int_eq(evfcgi_produce(req, pb_poll, NULL), 0);
	/* It wrote nothing with all the room there is: not again now. */
	ck_assert_int_eq(pb.calls, 1);
}

/*
 * Declares 10 bytes and sends 3 (?short), or all of them and one more,
 * refused (?long), or just all of them.
 */
static void
h_declared(struct evfcgi_req *req, void *arg)
{
	const char	*q = evfcgi_query(req);
	int		 bad = *q != '\0';

	(void)arg;
	ck_assert_int_eq(evfcgi_header(req, 200, "text/plain", 10), 0);
	ck_assert_int_eq(evfcgi_write(req, "0123456789",
	    (strcmp(q, "short") == 0 ? 3 : 10)), 0);
	if (strcmp(q, "long") == 0)
		ck_assert_int_eq(evfcgi_write(req, "x", 1), -1);
	ck_assert_int_eq(evfcgi_finish(req), (bad ? -1 : 0));
}

/* Sends /hello on its own connection and times the answer. */
static double
hello_time(void)
{
	struct peer	*h = peer_new();
	double		 t0 = now_s();

	send_request(h, 1, 0, "/hello", NULL, 0);
	ck_assert(RUN_UNTIL(h, h->r[1].ended, 5));
	t0 = now_s() - t0;
	ck_assert_int_eq(resp_status(&h->r[1]), 200);
	peer_free(h);
	return t0;
}

/*
 * A producer that writes only whole lines and returns 0 when one does not
 * fit is not called again until the output drained to the low mark: the
 * loop goes on (a /hello is answered meanwhile), the body arrives whole.
 * Asked for its room (evfcgi_produce_need()), it never gets less.
 */
START_TEST(producer_writing_nothing_waits)
{
	struct peer	*p;
	size_t		 len;
	int		 need;

	for (need = 0; need < 2; need++) {
		memset(&pb, 0, sizeof(pb));
		pb.need = need;
		p = start_route("/lines", h_lines);
		send_request(p, 1, 0, "/lines?500", NULL, 0);
		run_for(0.05);
		ck_assert_double_lt(hello_time(), 1.0);
		ck_assert(RUN_UNTIL(p, p->r[1].ended, 10));
		resp_body(&p->r[1], &len);
		ck_assert_uint_eq(len, 500 * sizeof(pb_line));
		ck_assert_int_eq(pb.lines, 0);
		/* An empty call at most per trip to the low mark. */
		ck_assert_int_le(pb.empty, 60);
		if (need) {
			ck_assert_int_eq(pb.short_room, 0);
			ck_assert_int_eq(pb.empty, 0);
		}
		peer_free(p);
		teardown();
	}
}
END_TEST

/*
 * A body short of its Content-Length is a cut answer: no END_REQUEST, and
 * its kept connection is reset after it, so the web server reports the
 * cut.  One that meets it keeps the connection; one that would pass it is
 * refused there, ends, and closes the connection.
 */
START_TEST(short_body_closes_kept_conn)
{
	struct peer	*p;
	size_t		 len;

	p = start_route("/declared", h_declared);
	ck_assert_str_eq(body_str(ask(p, 1, "/declared", NULL)), "0123456789");
	run_for(0.05);
	peer_read(p, 0);
	ck_assert(!p->eof);
	resp_reset(p, 1);
	send_request(p, 1, FCGI_KEEP_CONN, "/declared?short", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->eof, 5));
	ck_assert(!p->r[1].ended);
	resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 3);
	ck_assert_uint_eq(stats().connections, 0);
	peer_free(p);
	/* A write past the length is refused: the connection goes too. */
	p = peer_new();
	send_request(p, 1, FCGI_KEEP_CONN, "/declared?long", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->eof, 5));
	resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 10);
	peer_free(p);
}
END_TEST

/*
 * A producer that writes nothing while the output is empty is called again
 * on a later loop turn, not in a loop of its own within one.
 */
START_TEST(producer_idle_called_next_turn)
{
	struct peer	*p;

	memset(&pb, 0, sizeof(pb));
	p = start_route("/poll", h_poll);
	send_request(p, 1, 0, "/poll", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->r[1].ended, 5));
	ck_assert_int_eq(pb.calls, 20);
	ck_assert_str_eq(body_str(&p->r[1]), "done");
	peer_free(p);
}
END_TEST

/*
 * A producer that writes without end in one call is cut at about a high
 * mark past its room; the loop serves others between its calls, and the
 * peer's close ends it (abort callback).
 */
START_TEST(producer_without_end_bounded)
{
	struct peer	*p;

	memset(&pb, 0, sizeof(pb));
	p = start_route("/endless", h_endless);
	send_request(p, 1, 0, "/endless", NULL, 0);
	ck_assert(RUN_UNTIL(p, p->nread > (4u << 20), 10));
	ck_assert_int_gt(pb.calls, 1);
	ck_assert_uint_le(pb.most_over, lim.high_water + sizeof(pb_line));
	ck_assert_double_lt(hello_time(), 1.0);
	ck_assert_int_eq(pb.aborts, 0);
	peer_free(p);
	run_for(0.05);
	ck_assert_int_eq(pb.aborts, 1);
	ck_assert_uint_eq(stats().requests_active, 0);
}
END_TEST

/*
 * HEAD runs a producer once, whatever the size: the daemon's /stream of a
 * gigabyte, and a producer that never ends, are answered at once.
 */
START_TEST(head_producer_runs_once)
{
	static const char *const stream[] = { "REQUEST_METHOD", "HEAD",
	    "REQUEST_URI", "/stream", "QUERY_STRING", "1000000000", NULL };
	static const char *const endless[] = { "REQUEST_METHOD", "HEAD",
	    "REQUEST_URI", "/endless", NULL };
	struct peer	*p;
	size_t		 len;
	double		 t0;

	memset(&pb, 0, sizeof(pb));
	p = start_route("/endless", h_endless);
	t0 = now_s();
	send_request_nv(p, 1, stream, NULL);
	send_request_nv(p, 2, endless, NULL);
	ck_assert(RUN_UNTIL(p, p->r[1].ended && p->r[2].ended, 5));
	ck_assert_double_lt(now_s() - t0, 1.0);
	ck_assert_ptr_nonnull(strstr((char *)p->r[1].out,
	    "Content-Length: 1000000000\r\n"));
	resp_body(&p->r[1], &len);
	ck_assert_uint_eq(len, 0);
	resp_body(&p->r[2], &len);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(pb.calls, 1);
	ck_assert_int_eq(pb.aborts, 1);
	ck_assert_uint_eq(stats().requests_active, 0);
	/* The connection is kept: nothing was wrong. */
	ck_assert_str_eq(body_str(ask(p, 3, "/hello", NULL)), "Hello World\n");
	peer_free(p);
}
END_TEST

static Suite *
conn_suite(void)
{
	Suite	*s = suite_create("conn");
	TCase	*tc;

	suite_add_case(s, "core", setup, teardown, 30, hello_then_close,
	    keep_conn_serves_many, sizes_at_record_boundaries, multiplexed_ids,
	    pipelined_answers_overflow_the_stage,
	    partial_write_queues_the_rest, abort_request, watermark_pause_and_resume, global_cap_answers_503,
	    get_values, get_values_max_conn_requests, unknown_type_and_role,
	    begin_first_beyond_max_reqs, overloaded_at_once,
	    max_conn_requests_refuses_beyond, max_conn_requests_pipelined,
	    stray_records_ignored, drain_answers_paused_input,
	    eof_after_requests_answers_them, refused_without_keep_conn_closes,
	    get_values_with_an_id, head_has_no_body, body_without_length,
	    input_cap_answers_503, input_cap_pauses_reading,
	    routes_prefix_default_405,
	    header_lines_sent, stream_pauses_and_resumes, stream_64mib_bounded,
	    stream_body_limit, stream_aborted, body_from_fd,
	    async_answer_and_abort, producer_writing_nothing_waits,
	    producer_without_end_bounded, head_producer_runs_once,
	    producer_idle_called_next_turn, short_body_closes_kept_conn,
	    late_on_body_kicks,
	    NULL);
	suite_add_case(s, "partial", setup, teardown, 30,
	    params_split_byte_by_byte, begin_first_every_prefix, NULL);
	tc = suite_add_case(s, "malformed", setup, teardown, 30,
	    bad_version_closes_one_conn, params_too_large_431,
	    body_too_large_413, header_timeout_closes,
	    header_timeout_per_request, header_timeout_counts_progress,
	    header_timeout_not_while_paused, write_timeout_closes,
	    write_timeout_resets,
	    idle_timeout_closes, idle_timeout_restarts_on_activity,
	    trickled_record_times_out,
	    slow_reader_not_cut, NULL);
	tcase_add_loop_test(tc, malformed_closes, 0, NMALFORMED);
	return s;
}

int
main(void)
{
	/* As evfcgi.h asks of every application. */
	signal(SIGPIPE, SIG_IGN);
	return suite_run(conn_suite());
}
