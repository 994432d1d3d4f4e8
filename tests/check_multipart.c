/*
 * check_multipart.c: the streaming multipart/form-data parser: a form
 * read whole, split at every byte, fed a byte at a time, every truncated
 * body refused; the shapes of Go's multipart CVEs (many tiny parts, huge
 * part headers, no boundary, a boundary never closed, a header without
 * CRLF) answered 400 or 413 in bounded memory; and through the test
 * harness, an upload streamed with backpressure.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "multipart.h"
#include "tests/suite.h"

/* What the ops saw, as text: "P name file type|D len|E value|". */
struct seen {
	char	 log[8192];
	size_t	 len;
	char	 cur[4096];	/* the part's data so far */
	size_t	 data;		/* its bytes */
	int	 pause;		/* data ops return EVFCGI_MP_PAUSE */
};

static void
logf_(struct seen *s, const char *fmt, const char *a, const char *b,
    const char *c)
{
	/* A long run (the many-parts shape) keeps its beginning. */
	if (s->len + 1 >= sizeof(s->log))
		return;
	s->len += (size_t)snprintf(s->log + s->len, sizeof(s->log) - s->len,
	    fmt, a, b, c);
	if (s->len >= sizeof(s->log))
		s->len = sizeof(s->log) - 1;
}

static int
op_part(struct mp *m, const struct evfcgi_part *p)
{
	logf_(m->m_ctx, "P %s %s %s|", p->name, p->filename != NULL ?
	    p->filename : "-", p->ctype != NULL ? p->ctype : "-");
	return 0;
}

static int
op_data(struct mp *m, const struct evfcgi_part *p, const void *d, size_t len)
{
	struct seen	*s = m->m_ctx;

	(void)p;
	ck_assert_uint_gt(len, 0);
	if (s->data + len < sizeof(s->cur))
		memcpy(s->cur + s->data, d, len);
	s->data += len;
	return s->pause ? EVFCGI_MP_PAUSE : 0;
}

static int
op_end(struct mp *m, const struct evfcgi_part *p)
{
	struct seen	*s = m->m_ctx;

	if (s->data > 0 && s->data < sizeof(s->cur)) {
		s->cur[s->data] = '\0';
		logf_(s, "D %s%s%s|", s->cur, "", "");
	}
	s->data = 0;
	logf_(s, "E %s%s%s|", p->value != NULL ? p->value : "(file)", "", "");
	return 0;
}

static const struct mp_ops ops = { op_part, op_data, op_end };

#define B	"----xYz"
static const char form[] =
	"preamble\r\n"
	"------xYz\r\n"
	"Content-Disposition: form-data; name=\"title\"\r\n"
	"\r\n"
	"hello \r\n--- world\r\n"
	"------xYz  \r\n"
	"Content-Disposition: form-data; name=\"file\"; filename=\"a b.txt\"\r\n"
	"Content-Type: text/plain\r\n"
	"\r\n"
	"line1\r\n------xY\r\nline2\r\n"
	"------xYz\r\n"
	"content-disposition: form-data; name=file; filename=\"\\\"q\\\".bin\"\r\n"
	"\r\n"
	"\r\n"
	"------xYz--\r\n"
	"epilogue";

static const char expect[] =
	"P title - -|E hello \r\n--- world|"
	"P file a b.txt text/plain|D line1\r\n------xY\r\nline2|E (file)|"
	"P file \"q\".bin -|E (file)|";

/*
 * Feeds body (len bytes) to a parser in pieces of the sizes cuts gives
 * (ncuts, then the rest), pausing and resuming when s->pause.  Returns
 * what the last feed came to.
 */
static int
feed(struct seen *s, const char *body, size_t len, const size_t *cuts,
    size_t ncuts, const struct evfcgi_multipart_limits *lim)
{
	struct mp	 m;
	struct evbuffer	*in = evbuffer_new();
	size_t		 off = 0, i, k;
	int		 rc = MP_MORE;

	ck_assert_int_eq(mp_init(&m, B, &ops, s, lim), 0);
	for (i = 0; i <= ncuts && rc != MP_END && rc < 100; i++) {
		k = i < ncuts ? cuts[i] : len - off;
		if (k > len - off)
			k = len - off;
		evbuffer_add(in, body + off, k);
		off += k;
		while ((rc = mp_feed(&m, in)) == MP_PAUSED)
			;
	}
	evbuffer_free(in);
	mp_fini(&m);
	return rc;
}

START_TEST(core_whole)
{
	struct seen	 s = { .len = 0 };
	char		 b[80];

	ck_assert_int_eq(feed(&s, form, strlen(form), NULL, 0, NULL), MP_END);
	ck_assert_str_eq(s.log, expect);
	ck_assert_int_eq(mp_boundary("multipart/form-data; boundary=" B, b),
	    7);
	ck_assert_str_eq(b, B);
	ck_assert_int_eq(mp_boundary("Multipart/Form-Data; charset=x; "
	    "boundary=\"a b:c\"", b), 5);
	ck_assert_str_eq(b, "a b:c");
}
END_TEST

/* Paused after every data piece: the same parts, the same bytes. */
START_TEST(core_paused)
{
	struct seen	 s = { .pause = 1 };

	ck_assert_int_eq(feed(&s, form, strlen(form), NULL, 0, NULL), MP_END);
	ck_assert_str_eq(s.log, expect);
}
END_TEST

/* Split at every byte, in two pieces: the same log each time. */
START_TEST(partial_every_split)
{
	size_t	 k, len = strlen(form);
	struct seen	 s;

	for (k = 0; k <= len; k++) {
		memset(&s, 0, sizeof(s));
		ck_assert_int_eq(feed(&s, form, len, &k, 1, NULL), MP_END);
		ck_assert_msg(strcmp(s.log, expect) == 0, "split %zu: %s", k,
		    s.log);
	}
}
END_TEST

/* Every pair of split points, and one byte at a time. */
START_TEST(partial_three_pieces)
{
	size_t	 cuts[2], len = strlen(form), ones[600];
	struct seen	 s;

	for (cuts[0] = 0; cuts[0] <= len; cuts[0] += 3)
		for (cuts[1] = 0; cuts[0] + cuts[1] <= len; cuts[1]++) {
			memset(&s, 0, sizeof(s));
			ck_assert_int_eq(feed(&s, form, len, cuts, 2, NULL),
			    MP_END);
			ck_assert_str_eq(s.log, expect);
		}
	for (cuts[0] = 0; cuts[0] < len; cuts[0]++)
		ones[cuts[0]] = 1;
	memset(&s, 0, sizeof(s));
	s.pause = 1;
	ck_assert_int_eq(feed(&s, form, len, ones, len, NULL), MP_END);
	ck_assert_str_eq(s.log, expect);
}
END_TEST

/* Every truncated body: never the end; more wanted, or malformed. */
START_TEST(partial_truncated)
{
	size_t	 k, len = strlen(form) - strlen("--\r\nepilogue");
	struct seen	 s;
	int	 rc;

	for (k = 0; k < len; k++) {
		memset(&s, 0, sizeof(s));
		rc = feed(&s, form, k, NULL, 0, NULL);
		ck_assert_msg(rc == MP_MORE, "prefix %zu: %d", k, rc);
	}
}
END_TEST

/* The shapes of CVE-2023-24536 and kin, with the parser alone. */
START_TEST(malformed_shapes)
{
	struct seen	 s;
	struct evfcgi_multipart_limits lim = { .max_parts = 10 };
	char		*big;
	size_t		 i, o = 0;

	ck_assert_ptr_nonnull(big = malloc(8 << 20));
	/* 100,000 tiny parts: 413 at the cap, not 100,000 callbacks. */
	for (i = 0; i < 100000; i++)
		o += (size_t)sprintf(big + o, "--" B "\r\nContent-Disposition:"
		    " form-data; name=a\r\n\r\nx\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 413);
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, &lim), 413);
	/* A 200 KB part header: 413 before its end. */
	o = (size_t)sprintf(big, "--" B "\r\nContent-Disposition: form-data;"
	    " name=a\r\nX-Pad: ");
	memset(big + o, 'a', 200000);
	o += 200000;
	o += (size_t)sprintf(big + o, "\r\n\r\nx\r\n--" B "--\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 413);
	/* ... and the same arriving in 1 KiB pieces. */
	{
		size_t	 cuts[300];

		for (i = 0; i < 300; i++)
			cuts[i] = 1024;
		memset(&s, 0, sizeof(s));
		ck_assert_int_eq(feed(&s, big, o, cuts, 300, NULL), 413);
	}
	/* A header line ended by LF alone, or by nothing. */
	o = (size_t)sprintf(big, "--" B "\r\nContent-Disposition: form-data;"
	    " name=a\n\r\n\r\nx\r\n--" B "--\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 400);
	o = (size_t)sprintf(big, "--" B "\r\nContent-Disposition: form-data;"
	    " name=a\rX: y\r\n\r\nx\r\n--" B "--\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 400);
	/* No Content-Disposition; a delimiter without CRLF after it. */
	o = (size_t)sprintf(big, "--" B "\r\nContent-Type: text/plain\r\n"
	    "\r\nx\r\n--" B "--\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 400);
	o = (size_t)sprintf(big, "--" B "junk\r\n");
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 400);
	/* Non-file values past their cap (CVE-2023-45290's shape). */
	o = (size_t)sprintf(big, "--" B "\r\nContent-Disposition: form-data;"
	    " name=a\r\n\r\n");
	memset(big + o, 'v', EVFCGI_MP_MAX_FIELD + 100);
	o += EVFCGI_MP_MAX_FIELD + 100;
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(feed(&s, big, o, NULL, 0, NULL), 413);
	free(big);
	/* No boundary, or a bad one. */
	ck_assert_int_eq(mp_boundary("multipart/form-data", NULL), -1);
	ck_assert_int_eq(mp_boundary("multipart/form-data; boundary=", NULL),
	    -1);
	ck_assert_int_eq(mp_boundary("multipart/form-data; boundary=\"a \"",
	    NULL), -1);
	ck_assert_int_eq(mp_boundary("multipart/form-data; boundary=a{b",
	    NULL), -1);
	ck_assert_int_eq(mp_boundary("multipart/form-data; boundary="
	    "12345678901234567890123456789012345678901234567890123456789012345"
	    "678901", NULL), -1);
	ck_assert_int_eq(mp_boundary("text/plain; boundary=a", NULL), -1);
}
END_TEST

/* ---- Through the server, with the test harness. */

static struct evfcgi_server	*srv;

struct upload {
	struct evfcgi_multipart	*mp;
	size_t			 bytes;		/* file bytes taken */
	unsigned long		 sum;		/* of them, to compare */
	int			 parts;
	int			 pause;
	struct event		*ev;
};

static void
up_resume(evutil_socket_t fd, short what, void *arg)
{
	struct upload	*u = arg;

	(void)fd;
	(void)what;
	evfcgi_multipart_resume(u->mp);
}

static int
up_part(struct evfcgi_req *req, const struct evfcgi_part *p, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	(void)p;
	u->parts++;
	return 0;
}

static int
up_data(struct evfcgi_req *req, const struct evfcgi_part *p,
    const void *d, size_t len, void *arg)
{
	struct upload	*u = arg;
	struct timeval	 tv = { 0, 0 };
	size_t		 i;

	(void)req;
	(void)p;
	for (i = 0; i < len; i++)
		u->sum = u->sum * 31 + ((const unsigned char *)d)[i];
	u->bytes += len;
	if (!u->pause)
		return 0;
	/* A slow consumer: resumed from a timer, on a later turn. */
	evtimer_add(u->ev, &tv);
	return EVFCGI_MP_PAUSE;
}

static void
up_done(struct evfcgi_req *req, int status, void *arg)
{
	struct upload	*u = arg;

	evfcgi_on_abort(req, NULL, NULL);
	if (status != 0)
		evfcgi_respond_error(req, status, NULL);
	else {
		evfcgi_header(req, 200, "text/plain", -1);
		evfcgi_printf(req, "%d %zu %lu", u->parts, u->bytes, u->sum);
		evfcgi_finish(req);
	}
	evfcgi_multipart_free(u->mp);
	event_free(u->ev);
	free(u);
}

static void
up_abort(struct evfcgi_req *req, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	evfcgi_multipart_free(u->mp);
	event_free(u->ev);
	free(u);
}

static void
up_handler(struct evfcgi_req *req, void *arg)
{
	static const struct evfcgi_multipart_cbs cbs = { up_part, up_data,
	    NULL, up_done };
	struct upload	*u = calloc(1, sizeof(*u));

	u->pause = arg != NULL;
	u->ev = evtimer_new(evfcgi_req_base(req), up_resume, u);
	if ((u->mp = evfcgi_multipart_new(req, &cbs, NULL, u)) == NULL) {
		evfcgi_respond_error(req, errno == EINVAL ? 400 : 500, NULL);
		event_free(u->ev);
		free(u);
		return;
	}
	evfcgi_on_abort(req, up_abort, u);
}

static void
setup(void)
{
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
	ck_assert_int_eq(evfcgi_route_ex(srv, "/up", EVFCGI_ROUTE_STREAM,
	    "POST", up_handler, NULL), 0);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/slow", EVFCGI_ROUTE_STREAM,
	    "POST", up_handler, "slow"), 0);
}

static void
teardown(void)
{
	evfcgi_server_free(srv);
}

static int
upload(const char *uri, const char *ctype, const char *body, size_t len,
    size_t chunk, char *out, size_t size)
{
	char			 h[256];
	const char		*hdrs[] = { h, NULL };
	struct evfcgi_test_req	 tr = { .method = "POST", .uri = uri,
	    .headers = hdrs, .body = body, .body_len = len, .chunk = chunk,
	    .timeout_ms = 120000 };
	struct evfcgi_test_resp	 resp;
	int			 status;

	snprintf(h, sizeof(h), "Content-Type: %s", ctype);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	snprintf(out, size, "%s", resp.body);
	status = resp.status;
	evfcgi_test_free(&resp);
	return status;
}

/* A 24 MiB file in 8 KiB records, paused each piece: held a watermark. */
START_TEST(core_served_streamed)
{
	static const char	 head[] = "--" B "\r\nContent-Disposition: "
	    "form-data; name=f; filename=big\r\n\r\n";
	static const char	 tail[] = "\r\n--" B "--\r\n";
	size_t			 n = 24 << 20, len, i;
	char			*body, out[128], want[128];
	unsigned long		 sum = 0;
	struct evfcgi_stats	 st;

	len = strlen(head) + n + strlen(tail);
	ck_assert_ptr_nonnull(body = malloc(len));
	memcpy(body, head, strlen(head));
	for (i = 0; i < n; i++) {
		body[strlen(head) + i] = (char)(i * 7 + (i >> 9));
		sum = sum * 31 + (unsigned char)body[strlen(head) + i];
	}
	memcpy(body + strlen(head) + n, tail, strlen(tail));
	snprintf(want, sizeof(want), "1 %zu %lu", n, sum);
	ck_assert_int_eq(upload("/slow", "multipart/form-data; boundary=" B,
	    body, len, 8192, out, sizeof(out)), 200);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(upload("/up", "multipart/form-data; boundary=" B,
	    body, len, 0, out, sizeof(out)), 200);
	ck_assert_str_eq(out, want);
	/* What the engine held of those bodies: about a watermark, not 24 MiB. */
	evfcgi_get_stats(srv, &st);
	ck_assert_msg(st.peak_bytes_input < 1024 * 1024, "peak input %ju",
	    (uintmax_t)st.peak_bytes_input);
	free(body);
}
END_TEST

/* The CVE shapes through the server: 400 and 413, the server intact. */
START_TEST(malformed_served)
{
	char	 out[256], *big;
	size_t	 o = 0, i;

	ck_assert_int_eq(upload("/up", "multipart/form-data", "x", 1, 0, out,
	    sizeof(out)), 400);
	ck_assert_int_eq(upload("/up", "multipart/form-data; boundary=" B,
	    form, strlen(form) - 14, 0, out, sizeof(out)), 400);
	ck_assert_ptr_nonnull(big = malloc(8 << 20));
	for (i = 0; i < 100000; i++)
		o += (size_t)sprintf(big + o, "--" B "\r\nContent-Disposition:"
		    " form-data; name=a\r\n\r\nx\r\n");
	o += (size_t)sprintf(big + o, "--" B "--\r\n");
	ck_assert_int_eq(upload("/up", "multipart/form-data; boundary=" B,
	    big, o, 0, out, sizeof(out)), 413);
	o = (size_t)sprintf(big, "--" B "\r\nContent-Disposition: form-data;"
	    " name=a\r\nX: ");
	memset(big + o, 'h', 200000);
	o += 200000;
	o += (size_t)sprintf(big + o, "\r\n\r\nx\r\n--" B "--\r\n");
	ck_assert_int_eq(upload("/up", "multipart/form-data; boundary=" B,
	    big, o, 0, out, sizeof(out)), 413);
	free(big);
	ck_assert_int_eq(upload("/up", "multipart/form-data; boundary=" B,
	    form, strlen(form), 0, out, sizeof(out)), 200);
	ck_assert_int_eq(strncmp(out, "3 22 ", 5), 0);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("multipart");

	suite_add_case(s, "core", setup, teardown, 120, core_whole,
	    core_paused, core_served_streamed, NULL);
	suite_add_case(s, "partial", NULL, NULL, 120, partial_every_split,
	    partial_three_pieces, partial_truncated, NULL);
	suite_add_case(s, "malformed", setup, teardown, 120, malformed_shapes,
	    malformed_served, NULL);
	return suite_run(s);
}
