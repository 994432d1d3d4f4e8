/*
 * check_request.c: the request layer on its own, under a fake connection
 * (a req_link whose ops only record what they were told).  The lifecycle's
 * steps, the CGI view of the params, the answers the engine gives by
 * itself, the head/body order, and a failed output buffer.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "fcgi_proto.h"
#include "log.h"
#include "req_struct.h"
#include "tests/suite.h"

/* What the fake connection was told. */
static int			 n_done, n_produce, n_failed;
static enum req_in		 done_in;	/* r's machines at ro_done */
static enum req_out		 done_out;
static struct req_env		 fenv;
static struct req_pool		 fpool;
static struct req_link		 flink;
static struct evfcgi_limits	 lim;
static struct evfcgi_stats	 st;
static struct event_base	*base;
static struct budget		 input;
static int			 handled;

static void
fake_done(struct evfcgi_req *r, void *owner)
{
	ck_assert_ptr_eq(owner, &flink);
	n_done++;
	done_in = r->r_h.h_in;
	done_out = r->r_h.h_out;
}

/* What req_dispatch() does, with no handler to run: the app holds r. */
static int
hold(struct evfcgi_req *r)
{
	if (!req_collecting(r) || req_set_in(r, IN_DONE) == -1)
		return -1;
	r->r_h.h_app = 1;
	return 0;
}

static void
fake_produce(struct evfcgi_req *r, int on, void *owner)
{
	(void)r;
	(void)on;
	ck_assert_ptr_eq(owner, &flink);
	n_produce++;
}

static void
fake_failed(void *owner, const char *why)
{
	ck_assert_ptr_eq(owner, &flink);
	ck_assert_ptr_nonnull(why);
	n_failed++;
}

static int			 n_resume;

static void
fake_resume(struct evfcgi_req *r, void *owner)
{
	(void)r;
	ck_assert_ptr_eq(owner, &flink);
	n_resume++;
}

static const struct req_ops fake_ops = {
	.ro_done = fake_done,
	.ro_produce = fake_produce,
	.ro_failed = fake_failed,
	.ro_resume = fake_resume
};

static void
setup(void)
{
	log_init("check_request", LOG_CRIT, 0, NULL);
	evfcgi_limits_default(&lim);
	lim.max_params = 256;
	lim.max_body = 16;
	memset(&st, 0, sizeof(st));
	ck_assert_ptr_nonnull(base = event_base_new());
	memset(&fenv, 0, sizeof(fenv));
	memset(&flink, 0, sizeof(flink));
	ck_assert_ptr_nonnull(flink.rl_out.fo_queue = evbuffer_new());
	fenv.re_base = base;
	fenv.re_lim = &lim;
	fenv.re_st = &st;
	ck_assert_int_eq(budget_init(&input, base, 1 << 20), 0);
	fenv.re_input = &input;
	fenv.re_ops = &fake_ops;
	fenv.re_pool = &fpool;
	flink.rl_env = &fenv;
	flink.rl_owner = &flink;
	flink.rl_peer = "test";
	n_done = n_produce = n_failed = handled = n_resume = 0;
}

static void
teardown(void)
{
	evbuffer_free(flink.rl_out.fo_queue);
	/* Whatever the requests held of input, they gave back. */
	ck_assert_uint_eq(input.b_queued, 0);
	budget_fini(&input);
	req_pool_fini(&fpool);
	event_base_free(base);
}

/* Adds one pair to a PARAMS stream being built in buf. */
static size_t
pair(uint8_t *buf, size_t off, const char *name, const char *value)
{
	return off + fcgi_nv_encode(buf + off, 1024, name, strlen(name), value,
	    strlen(value));
}

/* A request whose PARAMS were name=value pairs (NULL-ended), ended. */
static struct evfcgi_req *
req_with(const char *const *nv)
{
	struct evfcgi_req	*r;
	uint8_t			 buf[1024];
	size_t			 len = 0;
	const char		*why = NULL;

	ck_assert_ptr_nonnull(r = req_new(&flink, 1, 1));
	for (; nv[0] != NULL; nv += 2)
		len = pair(buf, len, nv[0], nv[1]);
	if (len > 0)
		ck_assert_int_eq(req_params_add(r, buf, len), 0);
	ck_assert_int_eq(req_params_end(r, &why), 0);
	if (req_collecting(r))
		req_route(r, &(struct req_route){ .rr_fn = NULL }, 0);
	return r;
}

/* Hands r to fn as its route would have (fn NULL: none). */
static void
dispatch(struct evfcgi_req *r, evfcgi_handler fn, void *arg, int full)
{
	r->r_fn = fn;
	r->r_fn_arg = arg;
	req_dispatch(r, full);
}

/* Whether stdout_text() met the cut mark (it is the output's last bytes). */
static int	 saw_cut;

/* The STDOUT bytes in the output, NUL-ended (static). */
static const char *
stdout_text(void)
{
	static char		 text[4096];
	size_t			 len = evbuffer_get_length(flink.rl_out.fo_queue);
	size_t			 off = 0, tlen = 0;
	const uint8_t		*b = evbuffer_pullup(flink.rl_out.fo_queue, -1);
	struct fcgi_record	 rec;
	ssize_t			 n;

	saw_cut = 0;
	while (off < len) {
		if (b[off] == 0) {
			/* fcgi_out_cut(): 8 bytes of version 0, the end. */
			ck_assert_uint_eq(len - off, FCGI_HEADER_LEN);
			saw_cut = 1;
			break;
		}
		ck_assert_int_gt(n = fcgi_parse(b + off, len - off, &rec), 0);
		if (rec.hdr.type == FCGI_STDOUT) {
			ck_assert_uint_lt(tlen + rec.hdr.content_length,
			    sizeof(text));
			memcpy(text + tlen, rec.content,
			    rec.hdr.content_length);
			tlen += rec.hdr.content_length;
		}
		off += (size_t)n;
	}
	text[tlen] = '\0';
	return text;
}

static void
handler(struct evfcgi_req *r, void *arg)
{
	ck_assert_ptr_eq(arg, &handled);
	handled++;
	evfcgi_respond(r, 200, "text/plain", "ok\n", 3);
}

START_TEST(lifecycle_to_done)
{
	static const char *const nv[] = { "REQUEST_URI", "/a/b?x=1",
	    "QUERY_STRING", "x=1", NULL };
	struct evfcgi_req	*r = req_with(nv);

	ck_assert(req_collecting(r));
	ck_assert_uint_eq(st.requests_total, 1);
	ck_assert_uint_eq(st.requests_active, 1);
	dispatch(r, handler, &handled, 0);
	ck_assert_int_eq(handled, 1);
	ck_assert_int_eq(n_done, 1);
	ck_assert(done_out == OUT_ENDED && done_in == IN_DONE);
	ck_assert_uint_eq(st.requests_active, 0);
	ck_assert_str_eq(stdout_text(), "Status: 200 OK\r\nContent-Type: "
	    "text/plain\r\nContent-Length: 3\r\n\r\nok\n");
	req_free(r);
	ck_assert_uint_eq(st.requests_active, 0);
}
END_TEST

START_TEST(cgi_view)
{
	static const char *const a[] = { "REQUEST_URI", "/a/b?x=1",
	    "QUERY_STRING", "x=1", "EMPTY", "", NULL };
	static const char *const b[] = { "SCRIPT_NAME", "/s",
	    "PATH_INFO", "/p", NULL };
	static const char *const none[] = { NULL };
	struct evfcgi_req	*r = req_with(a);

	ck_assert_str_eq(evfcgi_path(r), "/a/b");
	ck_assert_str_eq(evfcgi_query(r), "x=1");
	ck_assert_str_eq(evfcgi_param(r, "EMPTY"), "");
	ck_assert_ptr_null(evfcgi_param(r, "MISSING"));
	req_free(r);
	r = req_with(b);
	ck_assert_str_eq(evfcgi_path(r), "/s/p");
	ck_assert_str_eq(evfcgi_query(r), "");
	req_free(r);
	r = req_with(none);
	ck_assert_str_eq(evfcgi_path(r), "");
	req_free(r);
}
END_TEST

START_TEST(steps_refused)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r;

	ck_assert_ptr_nonnull(r = req_new(&flink, 1, 0));
	ck_assert_uint_eq(flink.rl_nin[IN_PARAMS], 1);
	ck_assert_int_eq(req_set_in(r, IN_DONE), -1);
	ck_assert_int_eq(req_set_in(r, IN_PARAMS), -1);
	ck_assert_int_eq(req_set_out(r, OUT_NONE), -1);
	ck_assert_int_eq(r->r_h.h_in, IN_PARAMS);
	req_free(r);
	ck_assert_uint_eq(flink.rl_nin[IN_PARAMS], 0);
	r = req_with(nv);
	ck_assert_uint_eq(flink.rl_nin[IN_BODY], 1);
	ck_assert_int_eq(req_set_in(r, IN_PARAMS), -1);
	ck_assert_int_eq(req_set_in(r, IN_BODY), -1);
	ck_assert_int_eq(req_set_in(r, IN_DONE), 0);
	ck_assert_int_eq(req_set_in(r, IN_BODY), -1);
	ck_assert_uint_eq(flink.rl_nin[IN_BODY], 0);
	ck_assert_uint_eq(flink.rl_nin[IN_DONE], 1);
	ck_assert_int_eq(req_set_out(r, OUT_HEADER), 0);
	ck_assert_int_eq(req_set_out(r, OUT_NONE), -1);
	ck_assert_int_eq(req_set_out(r, OUT_HEADER), -1);
	ck_assert_int_eq(req_set_out(r, OUT_ENDED), 0);
	ck_assert_int_eq(req_set_out(r, OUT_HEADER), -1);
	ck_assert_int_eq(req_set_out(r, OUT_ENDED), -1);
	ck_assert(req_over(r));
	ck_assert_uint_eq(st.requests_active, 0);
	req_free(r);
	ck_assert_uint_eq(st.requests_active, 0);
	ck_assert_uint_eq(flink.rl_nin[IN_DONE], 0);
}
END_TEST

START_TEST(second_header_refused)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r = req_with(nv);
	size_t			 len;

	ck_assert_int_eq(hold(r), 0);
	ck_assert_int_eq(evfcgi_write(r, "early", 5), -1);
	ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "text/plain", -1), 0);
	len = evbuffer_get_length(flink.rl_out.fo_queue);
	ck_assert_int_eq(evfcgi_header(r, 500, "text/plain", -1), -1);
	ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue), len);
	ck_assert_int_eq(evfcgi_write(r, "body", 4), 0);
	/* An error after the header ends the response without a new head. */
	evfcgi_respond_error(r, 503, "late");
	ck_assert_int_eq(n_done, 1);
	ck_assert_str_eq(stdout_text(), "Status: 200 OK\r\nContent-Type: "
	    "text/plain\r\n\r\nbody");
	/* The answer is cut: the mark, and nothing after it. */
	ck_assert(saw_cut);
	ck_assert(flink.rl_cut && flink.rl_broken);
	ck_assert_int_eq(evfcgi_write(r, "more", 4), -1);
	req_free(r);
}
END_TEST

START_TEST(engine_answers)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r = req_with(nv);

	dispatch(r, NULL, NULL, 0);
	ck_assert_str_eq(stdout_text(), "Status: 404 Not Found\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 14\r\n\r\n"
	    "404 Not Found\n");
	ck_assert(done_out == OUT_ENDED && done_in == IN_DONE);
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
	r = req_with(nv);
	dispatch(r, handler, &handled, 1);
	ck_assert_int_eq(handled, 0);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 503 "));
	ck_assert_uint_eq(st.overloaded, 1);
	req_free(r);
}
END_TEST

START_TEST(producer)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r = req_with(nv);

	ck_assert_int_eq(hold(r), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "text/plain", 2), 0);
	evfcgi_produce(r, NULL, NULL);
	ck_assert_int_eq(n_produce, 1);
	req_free(r);
}
END_TEST

/* Early answers leave the request draining its STDIN. */
START_TEST(params_over_limit)
{
	struct evfcgi_req	*r;
	uint8_t			 big[300];
	const char		*why;

	memset(big, 'x', sizeof(big));
	ck_assert_ptr_nonnull(r = req_new(&flink, 2, 1));
	ck_assert_int_eq(req_params_add(r, big, 200), 0);
	ck_assert_int_eq(req_params_add(r, big, 100), 0);
	ck_assert_int_eq(req_params_end(r, &why), 0);
	ck_assert_int_eq(n_done, 1);
	ck_assert(done_out == OUT_ENDED && done_in == IN_BODY);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 431 "));
	ck_assert_uint_eq(st.rejected, 1);
	ck_assert_uint_eq(st.requests_active, 0);
	req_free(r);
	ck_assert_uint_eq(st.requests_active, 0);
}
END_TEST

START_TEST(body_length_checks)
{
	static const char *const bad[] = { "CONTENT_LENGTH", " 5", NULL };
	static const char *const unknown[] = { "CONTENT_LENGTH", "-1", NULL };
	static const char *const big[] = { "CONTENT_LENGTH", "17", NULL };
	static const char *const ok[] = { "CONTENT_LENGTH", "16", NULL };
	struct evfcgi_req	*r;

	r = req_with(bad);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 400 "));
	ck_assert(r->r_h.h_out == OUT_ENDED && r->r_h.h_in == IN_BODY);
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
	r = req_with(big);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 413 "));
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
	r = req_with(unknown);
	ck_assert(req_collecting(r));
	req_free(r);
	r = req_with(ok);
	ck_assert(req_collecting(r));
	ck_assert_int_eq(req_body_add(r, "0123456789", 10), 0);
	ck_assert(req_collecting(r));
	ck_assert_int_eq(req_body_add(r, "0123456789", 10), 0);
	ck_assert(r->r_h.h_out == OUT_ENDED && r->r_h.h_in == IN_BODY);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 413 "));
	req_free(r);
}
END_TEST

START_TEST(malformed_pairs)
{
	struct evfcgi_req	*r;
	static const uint8_t	 cut[] = { 5, 3, 'a', 'b' };
	const char		*why = NULL;

	ck_assert_ptr_nonnull(r = req_new(&flink, 3, 1));
	ck_assert_int_eq(req_params_add(r, cut, sizeof(cut)), 0);
	ck_assert_int_eq(req_params_end(r, &why), -1);
	ck_assert_ptr_nonnull(why);
	ck_assert_int_eq(n_done, 0);
	ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue), 0);
	req_free(r);
	ck_assert_uint_eq(st.requests_active, 0);
}
END_TEST

/* Output that cannot be queued breaks the flink once; finish still ends r. */
START_TEST(output_fails)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r = req_with(nv);

	ck_assert_int_eq(hold(r), 0);
	ck_assert_int_eq(evbuffer_freeze(flink.rl_out.fo_queue, 0), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "text/plain", 1), -1);
	ck_assert_int_eq(n_failed, 1);
	ck_assert(flink.rl_broken);
	ck_assert_int_eq(evfcgi_write(r, "x", 1), -1);
	ck_assert_int_eq(evfcgi_write_ref(r, "x", 1), -1);
	ck_assert_int_eq(n_failed, 1);
	evfcgi_finish(r);
	ck_assert_int_eq(n_done, 1);
	ck_assert(done_out == OUT_ENDED && done_in == IN_DONE);
	ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue), 0);
	req_free(r);
}
END_TEST

/* Header lines: names are tokens, values free of control characters. */
START_TEST(header_lines_checked)
{
	static const char *const nv[] = { NULL };
	static const char *const bad_names[] = { "", "Bad Name", "X:y",
	    "X\r\nY", "caf\xc3\xa9", "(x)", "a/b", "Status", "content-length",
	    NULL };
	static const char *const bad_values[] = { "a\rb", "a\nb", "\r\n",
	    "a\x01", "\x7f", "x\r\nSet-Cookie: evil=1", NULL };
	struct evfcgi_req	*r = req_with(nv);
	size_t			 i;

	for (i = 0; bad_names[i] != NULL; i++)
		ck_assert_msg(evfcgi_header_add(r, bad_names[i], "v") == -1,
		    "name '%s' taken", bad_names[i]);
	for (i = 0; bad_values[i] != NULL; i++)
		ck_assert_msg(evfcgi_header_add(r, "X-V", bad_values[i]) == -1,
		    "value %zu taken", i);
	ck_assert_int_eq(evfcgi_header_add(r, "X-Tab", "a\tb"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "x!#$%&'*+-.^_`|~9", ""), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "text/\r\nX: y", 0), -1);
	ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue), 0);
	ck_assert_int_eq(evfcgi_header(r, 204, NULL, -1), 0);
	ck_assert_str_eq(stdout_text(), "Status: 204 No Content\r\n"
	    "X-Tab: a\tb\r\nx!#$%&'*+-.^_`|~9: \r\n\r\n");
	/* After the header block: refused. */
	ck_assert_int_eq(evfcgi_header_add(r, "X-Late", "1"), -1);
	evfcgi_finish(r);
	req_free(r);
}
END_TEST

/* Several lines of one name go out in order; the pool forgets them. */
START_TEST(header_lines_many)
{
	static const char *const nv[] = { NULL };
	struct evfcgi_req	*r = req_with(nv);
	char			 big[70000];

	ck_assert_int_eq(evfcgi_header_add(r, "Location", "/x"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "Set-Cookie", "a=1"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "Set-Cookie", "b=2"), 0);
	evfcgi_respond(r, 302, "text/plain", "x", 1);
	ck_assert_str_eq(stdout_text(), "Status: 302 Found\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 1\r\n"
	    "Location: /x\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n\r\nx");
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
	/* The next request from the pool has none of them. */
	r = req_with(nv);
	evfcgi_respond(r, 200, "text/plain", "y", 1);
	ck_assert_str_eq(stdout_text(), "Status: 200 OK\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 1\r\n\r\ny");
	req_free(r);
	/* Past 64 KiB of lines: refused. */
	r = req_with(nv);
	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(evfcgi_header_add(r, "X-Big", big), -1);
	big[60000] = '\0';
	ck_assert_int_eq(evfcgi_header_add(r, "X-Big", big), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "X-Big", big), -1);
	req_free(r);
}
END_TEST

/* %XX decoding: every malformed escape and %00 refused, '+' kept. */
START_TEST(percent_decoding)
{
	static const struct {
		const char	*in;
		const char	*out;		/* NULL: refused */
	} t[] = {
		{ "/hel%6co", "/hello" }, { "/a%2Fb", "/a/b" },
		{ "/a+b", "/a+b" }, { "%41%42%43", "ABC" },
		{ "/%e2%82%ac", "/\xe2\x82\xac" }, { "/%7E%7e", "/~~" },
		{ "/%25", "/%" }, { "", "" },
		{ "%", NULL }, { "/%", NULL }, { "/%4", NULL }, { "/%G0", NULL },
		{ "/%0G", NULL }, { "/%00", NULL }, { "/a%00b", NULL },
		{ "/%%41", NULL }, { "/% 1", NULL }, { "/%-1", NULL },
		{ "/%x", NULL }, { "/ok%2", NULL }
	};
	char	 out[64];
	size_t	 i;
	long	 n;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		n = req_pct_decode(out, t[i].in, strlen(t[i].in));
		if (t[i].out == NULL)
			ck_assert_msg(n == -1, "'%s' decoded", t[i].in);
		else {
			ck_assert_msg(n == (long)strlen(t[i].out),
			    "'%s': %ld", t[i].in, n);
			ck_assert_str_eq(out, t[i].out);
		}
	}
}
END_TEST

/* The request's view: decoded path, raw URI, method, peer, all params. */
START_TEST(request_view)
{
	static const char *const nv[] = { "REQUEST_METHOD", "PUT",
	    "REQUEST_URI", "/hel%6co+x?q=%41", "QUERY_STRING", "q=%41",
	    "REMOTE_ADDR", "192.0.2.7", "REMOTE_PORT", "40000", NULL };
	static const char *const nv2[] = { "REQUEST_URI", "/x%0",
	    "REMOTE_PORT", "99999", NULL };
	struct evfcgi_req	*r = req_with(nv);
	const char		*name, *value;
	size_t			 i = 0, k = 0;
	int			 port = -1;

	ck_assert_str_eq(evfcgi_path(r), "/hello+x");
	ck_assert_str_eq(evfcgi_raw_uri(r), "/hel%6co+x?q=%41");
	ck_assert_str_eq(evfcgi_query(r), "q=%41");
	ck_assert_str_eq(evfcgi_method(r), "PUT");
	ck_assert_str_eq(evfcgi_remote_addr(r, &port), "192.0.2.7");
	ck_assert_int_eq(port, 40000);
	while (evfcgi_param_next(r, &i, &name, &value)) {
		ck_assert_str_eq(name, nv[2 * k]);
		ck_assert_str_eq(value, nv[2 * k + 1]);
		k++;
	}
	ck_assert_uint_eq(k, 5);
	ck_assert_int_eq(evfcgi_param_next(r, &i, &name, &value), 0);
	req_free(r);
	/* A bad escape is answered 400 before any route. */
	r = req_with(nv2);
	ck_assert(r->r_h.h_out == OUT_ENDED && r->r_h.h_in == IN_BODY);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 400 "));
	ck_assert_str_eq(evfcgi_method(r), "");
	ck_assert_ptr_null(evfcgi_remote_addr(r, &port));
	ck_assert_int_eq(port, 0);
	req_free(r);
}
END_TEST

/*
 * A name given twice (a location's fastcgi_param after `include
 * fastcgi_params`): the last is the one, for the route, the method and
 * evfcgi_param() alike, as the CGI gateway reads it; the iterator still
 * gives both.
 */
START_TEST(param_twice_last)
{
	static const char *const nv[] = { "REQUEST_METHOD", "GET",
	    "REQUEST_URI", "/first?a=1", "QUERY_STRING", "a=1",
	    "REQUEST_METHOD", "HEAD", "REQUEST_URI", "/last/one?b=2",
	    "QUERY_STRING", "b=2", NULL };
	struct evfcgi_req	*r = req_with(nv);
	const char		*name, *value;
	size_t			 i = 0, k = 0;

	ck_assert_str_eq(evfcgi_param(r, "REQUEST_URI"), "/last/one?b=2");
	ck_assert_str_eq(evfcgi_path(r), "/last/one");
	ck_assert_str_eq(evfcgi_query(r), "b=2");
	ck_assert_str_eq(evfcgi_method(r), "HEAD");
	while (evfcgi_param_next(r, &i, &name, &value))
		k++;
	ck_assert_uint_eq(k, 6);
	req_free(r);
}
END_TEST

static int	 freed;

static void
count_free(const void *data, void *arg)
{
	ck_assert_ptr_eq(arg, &freed);
	ck_assert_ptr_nonnull(data);
	freed++;
}

/* By reference with a free callback: called once, after the last slice. */
START_TEST(write_ref_free)
{
	static const char *const nv[] = { NULL };
	static const char *const head[] = { "REQUEST_METHOD", "HEAD", NULL };
	static char		 data[200000];
	struct evfcgi_req	*r = req_with(nv);

	freed = 0;
	memset(data, 'd', sizeof(data));
	ck_assert_int_eq(evfcgi_write_ref_free(r, data, 1, count_free,
	    &freed), -1);
	ck_assert_int_eq(freed, 1);
	dispatch(r, NULL, NULL, 0);
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
	freed = 0;
	r = req_with(nv);
	ck_assert_int_eq(hold(r), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "a/b", sizeof(data)), 0);
	ck_assert_int_eq(evfcgi_write_ref_free(r, data, sizeof(data),
	    count_free, &freed), 0);
	ck_assert_int_eq(freed, 0);
	ck_assert_uint_gt(evbuffer_get_length(flink.rl_out.fo_queue), sizeof(data));
	/* Drained up to the last slice's last byte: not yet. */
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue) - 8);
	ck_assert_int_eq(freed, 0);
	evbuffer_drain(flink.rl_out.fo_queue, 8);
	ck_assert_int_eq(freed, 1);
	req_free(r);
	/* HEAD: nothing queued, freed at once. */
	freed = 0;
	r = req_with(head);
	ck_assert_int_eq(hold(r), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, "a/b", 5), 0);
	ck_assert_int_eq(evfcgi_write_ref_free(r, data, 5, count_free,
	    &freed), 0);
	ck_assert_int_eq(freed, 1);
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue, evbuffer_get_length(flink.rl_out.fo_queue));
}
END_TEST

/* The reason phrases: every status of RFC 9110, none made up. */
START_TEST(status_texts)
{
	ck_assert_str_eq(req_status_text(206), "Partial Content");
	ck_assert_str_eq(req_status_text(415), "Unsupported Media Type");
	ck_assert_str_eq(req_status_text(416), "Range Not Satisfiable");
	ck_assert_str_eq(req_status_text(502), "Bad Gateway");
	ck_assert_str_eq(req_status_text(504), "Gateway Timeout");
	ck_assert_str_eq(req_status_text(429), "Too Many Requests");
	ck_assert_str_eq(req_status_text(299), "Unknown");
	ck_assert_str_eq(req_status_text(0), "Unknown");
}
END_TEST

/* The text of the output so far, then forgets it. */
static const char *
stdout_take(void)
{
	const char	*t = stdout_text();

	evbuffer_drain(flink.rl_out.fo_queue,
	    evbuffer_get_length(flink.rl_out.fo_queue));
	return t;
}

/* A request in its handler's hands; method NULL: GET. */
static struct evfcgi_req *
req_handled(const char *method)
{
	const char *const	 nv[] = { "REQUEST_METHOD",
	    method != NULL ? method : "GET", NULL };
	struct evfcgi_req	*r = req_with(nv);

	ck_assert_int_eq(hold(r), 0);
	return r;
}

/* No Content-Length and no body on 1xx, 204 and 304 (RFC 9110). */
START_TEST(bodyless_statuses)
{
	static const int	 sts[] = { 204, 304, 103 };
	struct evfcgi_req	*r;
	char			 want[128];
	size_t			 i;

	for (i = 0; i < 3; i++) {
		r = req_handled(NULL);
		ck_assert_int_eq(evfcgi_respond(r, sts[i], "text/plain",
		    "body", 4), 0);
		snprintf(want, sizeof(want), "Status: %d %s\r\nContent-Type: "
		    "text/plain\r\n\r\n", sts[i], req_status_text(sts[i]));
		ck_assert_str_eq(stdout_take(), want);
		ck_assert_int_eq(r->r_h.h_keep, 1);
		req_free(r);
	}
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_header(r, 304, NULL, 10), 0);
	ck_assert_int_eq(evfcgi_write(r, "0123456789", 10), 0);
	ck_assert_int_eq(evfcgi_finish(r), 0);
	ck_assert_str_eq(stdout_take(), "Status: 304 Not Modified\r\n\r\n");
	req_free(r);
}
END_TEST

/* Only 100-599: others refused (-1, nothing queued); respond puts a 500. */
START_TEST(status_range)
{
	static const int	 bad[] = { 0, 99, 600, 999, -200 };
	struct evfcgi_req	*r;
	size_t			 i;

	for (i = 0; i < 5; i++) {
		r = req_handled(NULL);
		ck_assert_int_eq(evfcgi_header(r, bad[i], "text/plain", 0), -1);
		ck_assert_uint_eq(evbuffer_get_length(flink.rl_out.fo_queue),
		    0);
		ck_assert_int_eq(n_done, 0);
		ck_assert_int_eq(evfcgi_respond(r, bad[i], "text/plain",
		    "x", 1), -1);
		ck_assert_int_eq(n_done, 1);
		ck_assert_str_eq(stdout_take(), "Status: 500 Internal Server "
		    "Error\r\nContent-Type: text/plain\r\nContent-Length: 26"
		    "\r\n\r\n500 Internal Server Error\n");
		req_free(r);
		n_done = 0;
	}
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_respond_error(r, 999, "x"), -1);
	ck_assert_ptr_nonnull(strstr(stdout_take(), "Status: 500 "));
	req_free(r);
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_respond(r, 599, NULL, NULL, 0), 0);
	ck_assert_str_eq(stdout_take(), "Status: 599 Unknown\r\n"
	    "Content-Length: 0\r\n\r\n");
	req_free(r);
}
END_TEST

/* A content type with CR or LF: refused, told, and a 500 instead. */
START_TEST(ctype_refused)
{
	struct evfcgi_req	*r = req_handled(NULL);

	ck_assert_int_eq(evfcgi_respond(r, 200, "text/plain\r\nX-Evil: 1",
	    "hi", 2), -1);
	ck_assert_int_eq(n_done, 1);
	ck_assert_ptr_nonnull(strstr(stdout_text(), "Status: 500 "));
	ck_assert_ptr_null(strstr(stdout_take(), "X-Evil"));
	req_free(r);
}
END_TEST

/* One Content-Type, the last given, whatever the order of the calls. */
START_TEST(one_content_type)
{
	struct evfcgi_req	*r = req_handled(NULL);

	ck_assert_int_eq(evfcgi_header_add(r, "Content-Type",
	    "application/json"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "X-A", "1"), 0);
	ck_assert_int_eq(evfcgi_respond(r, 200, "text/plain", "ok", 2), 0);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\nContent-Type: "
	    "text/plain\r\nContent-Length: 2\r\nX-A: 1\r\n\r\nok");
	req_free(r);
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_header_add(r, "content-type", "a/b"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "X-A", "1"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "CONTENT-TYPE", "c/d"), 0);
	ck_assert_int_eq(evfcgi_header_add(r, "Content-Typo", "e/f"), 0);
	ck_assert_int_eq(evfcgi_header(r, 200, NULL, -1), 0);
	ck_assert_int_eq(evfcgi_finish(r), 0);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\nX-A: 1\r\n"
	    "CONTENT-TYPE: c/d\r\nContent-Typo: e/f\r\n\r\n");
	req_free(r);
}
END_TEST

/*
 * A body that does not meet its Content-Length: writes past it refused,
 * a short one an error at the end; either way the connection is not kept.
 */
START_TEST(declared_length_kept)
{
	struct evfcgi_req	*r = req_handled(NULL);

	ck_assert_int_eq(evfcgi_header(r, 200, "text/plain", 5), 0);
	ck_assert_int_eq(evfcgi_write(r, "abc", 3), 0);
	ck_assert_int_eq(evfcgi_finish(r), -1);
	ck_assert_int_eq(r->r_h.h_keep, 0);
	ck_assert_int_eq(n_done, 1);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\nContent-Type: "
	    "text/plain\r\nContent-Length: 5\r\n\r\nabc");
	ck_assert(saw_cut);
	req_free(r);
	/* A cut link takes nothing more: the next request as on a new one. */
	flink.rl_cut = flink.rl_broken = 0;
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_header(r, 200, NULL, 3), 0);
	ck_assert_int_eq(evfcgi_write(r, "ab", 2), 0);
	ck_assert_int_eq(evfcgi_write(r, "cd", 2), -1);
	ck_assert_int_eq(evfcgi_write_ref(r, "cd", 2), -1);
	ck_assert_int_eq(evfcgi_write(r, "c", 1), 0);
	ck_assert_int_eq(evfcgi_finish(r), -1);
	ck_assert_int_eq(r->r_h.h_keep, 0);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\n"
	    "Content-Length: 3\r\n\r\nabc");
	/* Writes past the length refused: whole as told, not cut. */
	ck_assert(!saw_cut);
	req_free(r);
	r = req_handled(NULL);
	ck_assert_int_eq(evfcgi_respond(r, 200, NULL, "abc", 3), 0);
	ck_assert_int_eq(r->r_h.h_keep, 1);
	(void)stdout_take();
	req_free(r);
	/* HEAD: the length told, no body, nothing wrong. */
	r = req_handled("HEAD");
	ck_assert(evfcgi_is_head(r));
	ck_assert_int_eq(evfcgi_respond(r, 200, NULL, "abc", 3), 0);
	ck_assert_int_eq(r->r_h.h_keep, 1);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\n"
	    "Content-Length: 3\r\n\r\n");
	req_free(r);
	r = req_handled(NULL);
	ck_assert(!evfcgi_is_head(r));
	req_free(r);
}
END_TEST

static int	 prod_calls, prod_aborts;
static size_t	 prod_wrote, prod_room;

static void
prod_abort(struct evfcgi_req *r, void *arg)
{
	(void)r;
	(void)arg;
	prod_aborts++;
}

/* Writes 4000-byte lines until refused (at most 64 MB); never done. */
static int
prod_endless(struct evfcgi_req *r, size_t room, void *arg)
{
	static char	 line[4000];

	(void)arg;
	prod_calls++;
	prod_room = room;
	prod_wrote = 0;
	while (prod_wrote < (64u << 20) &&
	    evfcgi_write(r, line, sizeof(line)) == 0)
		prod_wrote += sizeof(line);
	return 0;
}

/* Writes nothing, ever. */
static int
prod_nothing(struct evfcgi_req *r, size_t room, void *arg)
{
	(void)r;
	(void)room;
	(void)arg;
	prod_calls++;
	return 0;
}

/*
 * A producer's call is bounded: about room plus a high mark, then its
 * writes are refused; one that wrote nothing is told idle; a HEAD answer
 * runs its producer once, then ends (the abort callback lets go).
 */
START_TEST(producer_bounded)
{
	struct evfcgi_req	*r = req_handled(NULL);

	prod_calls = prod_aborts = 0;
	ck_assert_int_eq(evfcgi_header(r, 200, NULL, -1), 0);
	ck_assert_int_eq(evfcgi_produce(r, prod_endless, NULL), 0);
	ck_assert_int_eq(req_produce(r, 10000), 0);
	ck_assert_int_eq(prod_calls, 1);
	ck_assert_uint_le(prod_wrote, 10000 + lim.high_water + 4000);
	ck_assert_uint_ge(prod_wrote, 10000);
	ck_assert(!r->r_h.h_prod_idle);
	/* Outside a producer's call, writes are not capped. */
	ck_assert_int_eq(evfcgi_write(r, "x", 1), 0);
	ck_assert_int_eq(evfcgi_produce(r, prod_nothing, NULL), 0);
	ck_assert_int_eq(req_produce(r, 100), 0);
	ck_assert(r->r_h.h_prod_idle);
	ck_assert_int_eq(evfcgi_produce_need(r, 4000), 0);
	ck_assert_uint_eq(r->r_h.h_prod_need, 4000);
	ck_assert_int_eq(evfcgi_finish(r), 0);
	ck_assert_int_eq(evfcgi_produce(r, prod_nothing, NULL), -1);
	ck_assert_int_eq(evfcgi_produce_need(r, 1), -1);
	req_free(r);
	evbuffer_drain(flink.rl_out.fo_queue,
	    evbuffer_get_length(flink.rl_out.fo_queue));

	r = req_handled("HEAD");
	prod_calls = 0;
	n_done = 0;
	evfcgi_on_abort(r, prod_abort, NULL);
	ck_assert_int_eq(evfcgi_header(r, 200, NULL, -1), 0);
	ck_assert_int_eq(evfcgi_produce(r, prod_endless, NULL), 0);
	ck_assert_int_eq(req_produce(r, 1000), 1);
	ck_assert_int_eq(prod_calls, 1);
	ck_assert_uint_le(prod_wrote, 1000 + lim.high_water + 4000);
	ck_assert_int_eq(prod_aborts, 1);
	ck_assert_int_eq(n_done, 1);
	ck_assert(done_out == OUT_ENDED && done_in == IN_DONE);
	ck_assert_str_eq(stdout_take(), "Status: 200 OK\r\n\r\n");
	req_free(r);
}
END_TEST

/*
 * The error log escapes bytes from 0x7f up as the access log does: UTF-8
 * for U+0085 (NEL), U+2028 (LINE SEPARATOR) and U+009B (CSI) arrives as
 * \xHH, never raw.
 */
START_TEST(error_log_escapes_high_bytes)
{
	char	 path[] = "/tmp/check_request.log.XXXXXX", line[512];
	FILE	*f;
	int	 fd;

	ck_assert_int_ne(fd = mkstemp(path), -1);
	close(fd);
	ck_assert_int_eq(log_init("check", LOG_INFO, 0, path), 0);
	log_info("peer: %s", "a\xc2\x85" "b\xe2\x80\xa8" "c\xc2\x9b" "d\x7f\xff"
	    "e");
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	ck_assert_msg(strstr(line, "peer: a\\xc2\\x85b\\xe2\\x80\\xa8c"
	    "\\xc2\\x9bd\\x7f\\xffe\n") != NULL, "logged: %s", line);
}
END_TEST

/* Paths cleaned as nginx cleans them before routes match. */
START_TEST(path_cleaning)
{
	static const struct {
		const char	*in;
		const char	*out;		/* NULL: refused */
	} t[] = {
		{ "/", "/" }, { "//", "/" }, { "//l/1", "/l/1" },
		{ "/l//1", "/l/1" }, { "/l/../links/1", "/links/1" },
		{ "/a/./b", "/a/b" }, { "/a/.", "/a/" }, { "/a/b/..", "/a/" },
		{ "/a/..", "/" }, { "/.", "/" }, { "/a/...", "/a/..." },
		{ "/a/..b/.c", "/a/..b/.c" }, { "/a/b/../../c//", "/c/" },
		{ "/a/", "/a/" }, { "", "" }, { "a/../..", "a/../.." },
		{ "/..", NULL }, { "/../x", NULL }, { "/a/../..", NULL },
		{ "//../a", NULL }, { "/a/./../../b", NULL }
	};
	char	 p[64];
	size_t	 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(p, sizeof(p), "%s", t[i].in);
		if (t[i].out == NULL)
			ck_assert_msg(req_path_clean(p) == -1, "'%s' taken as "
			    "'%s'", t[i].in, p);
		else {
			ck_assert_msg(req_path_clean(p) == 0, "'%s' refused",
			    t[i].in);
			ck_assert_msg(strcmp(p, t[i].out) == 0, "'%s' -> '%s'",
			    t[i].in, p);
		}
	}
}
END_TEST

/* A request's path is cleaned after %-decoding; above the root is 400. */
START_TEST(path_cleaned_in_request)
{
	static const char *const nv[] = { "REQUEST_URI",
	    "//l/%2e%2e/links//1/.?q", NULL };
	static const char *const nv2[] = { "REQUEST_URI", "/a/%2e%2e/..", NULL };
	static const char *const nv3[] = { "SCRIPT_NAME", "/l", "PATH_INFO",
	    "/../../etc", NULL };
	struct evfcgi_req	*r;

	r = req_with(nv);
	ck_assert_str_eq(evfcgi_path(r), "/links/1/");
	req_free(r);
	r = req_with(nv2);
	ck_assert(!req_collecting(r));
	ck_assert_ptr_nonnull(strstr(stdout_take(), "Status: 400 "));
	req_free(r);
	r = req_with(nv3);
	ck_assert_ptr_nonnull(strstr(stdout_take(), "Status: 400 "));
	req_free(r);
}
END_TEST

static Suite *
request_suite(void)
{
	Suite	*s = suite_create("request");

	suite_add_case(s, "core", setup, teardown, 0, lifecycle_to_done, cgi_view,
	    steps_refused, second_header_refused, engine_answers, producer,
	    header_lines_many, request_view, param_twice_last, write_ref_free,
	    status_texts, bodyless_statuses, one_content_type,
	    declared_length_kept, producer_bounded, NULL);
	suite_add_case(s, "partial", setup, teardown, 0, params_over_limit,
	    body_length_checks, NULL);
	suite_add_case(s, "malformed", setup, teardown, 0, malformed_pairs,
	    output_fails, header_lines_checked, percent_decoding,
	    status_range, ctype_refused, error_log_escapes_high_bytes,
	    path_cleaning, path_cleaned_in_request, NULL);
	return s;
}

int
main(void)
{
	return suite_run(request_suite());
}
