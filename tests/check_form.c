/*
 * check_form.c: form values from an urlencoded body and the query, typed
 * integers read whatever the locale, and the HTML escape, through the
 * test harness: caps answered 413, malformed input 400, every truncated
 * body decoded or refused.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"
#include "tests/suite.h"

static struct evfcgi_server	*srv;

/* Answers the form's pairs "n=v;" in order, or the status errno says. */
static void
dump(struct evfcgi_req *req, void *arg)
{
	const char	*n, *v;
	char		 out[4096];
	size_t		 i = 0, o = 0;
	int		 rc;

	(void)arg;
	while ((rc = evfcgi_form_next(req, &i, &n, &v)) == 1)
		o += (size_t)snprintf(out + o, o < sizeof(out) ?
		    sizeof(out) - o : 0, "%s=%s;", n, v);
	if (rc == -1) {
		evfcgi_respond_error(req, errno == EMSGSIZE ? 413 :
		    errno == ENOTSUP ? 415 : 400, NULL);
		return;
	}
	evfcgi_respond(req, 200, "text/plain", out, o < sizeof(out) ? o :
	    sizeof(out) - 1);
}

/* Answers the form's "n" read as an integer in 1..100, and how. */
static void
number(struct evfcgi_req *req, void *arg)
{
	long long	 v = 0;
	int		 rc;

	(void)arg;
	rc = evfcgi_form_int(req, "n", 1, 100, &v);
	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "%d %lld %s", rc, v, rc == -1 ? (errno == ERANGE ?
	    "range" : "inval") : "");
	evfcgi_finish(req);
}

static void
stream_handler(struct evfcgi_req *req, void *arg)
{
	dump(req, arg);
}

static void
setup(void)
{
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
	ck_assert_int_eq(evfcgi_route(srv, "/form", dump, NULL), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/n", number, NULL), 0);
	ck_assert_int_eq(evfcgi_route_ex(srv, "/stream", EVFCGI_ROUTE_STREAM,
	    NULL, stream_handler, NULL), 0);
}

static void
teardown(void)
{
	evfcgi_server_free(srv);
}

static const char *const form_type[] = {
	"Content-Type: application/x-www-form-urlencoded; charset=UTF-8",
	NULL
};

/* POSTs body (len bytes) to uri as a form; returns status, body in out. */
static int
post(const char *uri, const char *const *hdrs, const void *body, size_t len,
    char *out, size_t size)
{
	struct evfcgi_test_req	 tr = { .method = "POST", .uri = uri,
	    .headers = hdrs, .body = body, .body_len = len };
	struct evfcgi_test_resp	 resp;
	int			 status;

	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	snprintf(out, size, "%s", resp.body);
	status = resp.status;
	evfcgi_test_free(&resp);
	return status;
}

START_TEST(core_body_then_query)
{
	const char	*b = "a=1&b=x+y&&c=%41%62&e";
	char		 out[512];

	ck_assert_int_eq(post("/form?a=q&d=4", form_type, b, strlen(b), out,
	    sizeof(out)), 200);
	ck_assert_str_eq(out, "a=1;b=x y;c=Ab;e=;a=q;d=4;");
	/* A body of another type is no form: the query alone. */
	ck_assert_int_eq(post("/form?d=4", NULL, b, strlen(b), out,
	    sizeof(out)), 200);
	ck_assert_str_eq(out, "d=4;");
}
END_TEST

START_TEST(core_ints)
{
	static const struct {
		const char	*s;
		int		 rc;
		long long	 v;
		int		 err;
	} t[] = {
		{ "0", 0, 0, 0 }, { "-0", 0, 0, 0 }, { "42", 0, 42, 0 },
		{ "007", 0, 7, 0 },
		{ "9223372036854775807", 0, LLONG_MAX, 0 },
		{ "-9223372036854775808", 0, LLONG_MIN, 0 },
		{ "9223372036854775808", -1, 0, ERANGE },
		{ "-9223372036854775809", -1, 0, ERANGE },
		{ "99999999999999999999999", -1, 0, ERANGE },
		{ "", -1, 0, EINVAL }, { "-", -1, 0, EINVAL },
		{ "+1", -1, 0, EINVAL }, { " 1", -1, 0, EINVAL },
		{ "1 ", -1, 0, EINVAL }, { "0x10", -1, 0, EINVAL },
		{ "1e3", -1, 0, EINVAL }, { "1,000", -1, 0, EINVAL },
		{ "1.5", -1, 0, EINVAL }, { "٣", -1, 0, EINVAL },
	};
	long long	 v;
	size_t		 i;
	int		 loc;

	/* A locale with other digits' grouping changes nothing. */
	for (loc = 0; loc < 2; loc++) {
		if (loc == 1 && setlocale(LC_ALL, "de_DE.UTF-8") == NULL &&
		    setlocale(LC_ALL, "C.UTF-8") == NULL)
			break;
		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
			v = 12345;
			errno = 0;
			ck_assert_msg(evfcgi_parse_int(t[i].s, LLONG_MIN,
			    LLONG_MAX, &v) == t[i].rc, "%s", t[i].s);
			if (t[i].rc == 0)
				ck_assert(v == t[i].v);
			else
				ck_assert_int_eq(errno, t[i].err);
		}
	}
	setlocale(LC_ALL, "C");
	ck_assert_int_eq(evfcgi_parse_int("5", 6, 10, &v), -1);
	ck_assert_int_eq(errno, ERANGE);
}
END_TEST

START_TEST(core_form_int)
{
	char	 out[128];

	ck_assert_int_eq(post("/n", form_type, "n=7", 3, out, sizeof(out)),
	    200);
	ck_assert_str_eq(out, "1 7 ");
	ck_assert_int_eq(post("/n?n=9", NULL, "", 0, out, sizeof(out)), 200);
	ck_assert_str_eq(out, "1 9 ");
	ck_assert_int_eq(post("/n", form_type, "n=700", 5, out, sizeof(out)),
	    200);
	ck_assert_str_eq(out, "-1 0 range");
	ck_assert_int_eq(post("/n", form_type, "n=7x", 4, out, sizeof(out)),
	    200);
	ck_assert_str_eq(out, "-1 0 inval");
	ck_assert_int_eq(post("/n", form_type, "m=7", 3, out, sizeof(out)),
	    200);
	ck_assert_str_eq(out, "0 0 ");
}
END_TEST

START_TEST(core_html)
{
	char	 buf[64];
	size_t	 n;

	n = evfcgi_html_escape(buf, sizeof(buf), "<a href='x'>&\"\0", 15);
	ck_assert_str_eq(buf,
	    "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&#xFFFD;");
	ck_assert_uint_eq(n, strlen(buf));
	/* Too small: cut before an entity, never inside one. */
	n = evfcgi_html_escape(buf, 6, "ab<cd", 5);
	ck_assert_uint_eq(n, 8);
	ck_assert_str_eq(buf, "ab");
	n = evfcgi_html_escape(buf, 0, "x", 1);
	ck_assert_uint_eq(n, 1);
}
END_TEST

/* Every prefix of a form body: decoded, or refused 400 when cut in %XX. */
START_TEST(partial_prefixes)
{
	const char	*b = "a=1&bb=%41%42&c=+";
	char		 out[512];
	size_t		 k;
	int		 st;

	for (k = 0; k <= strlen(b); k++) {
		st = post("/form", form_type, b, k, out, sizeof(out));
		if (k == 8 || k == 9 || k == 11 || k == 12)
			ck_assert_msg(st == 400, "prefix %zu: %d", k, st);
		else
			ck_assert_msg(st == 200, "prefix %zu: %d", k, st);
	}
	ck_assert_str_eq(out, "a=1;bb=AB;c= ;");
}
END_TEST

/* HTML escaping of every prefix fits exactly what the count says. */
START_TEST(partial_html_sizes)
{
	const char	*s = "<&'\">x";
	char		 buf[64], ref[64];
	size_t		 size, full;

	full = evfcgi_html_escape(ref, sizeof(ref), s, strlen(s));
	for (size = 1; size <= full + 1; size++) {
		evfcgi_html_escape(buf, size, s, strlen(s));
		ck_assert(strlen(buf) < size);
		ck_assert(strncmp(buf, ref, strlen(buf)) == 0);
	}
	ck_assert_str_eq(buf, ref);
}
END_TEST

START_TEST(malformed_forms)
{
	char	 out[512], *big;
	size_t	 i;

	ck_assert_int_eq(post("/form", form_type, "a=%zz", 5, out,
	    sizeof(out)), 400);
	ck_assert_int_eq(post("/form", form_type, "a=%00", 5, out,
	    sizeof(out)), 400);
	ck_assert_int_eq(post("/form?%", NULL, "", 0, out, sizeof(out)), 400);
	/* Past the caps: 413 (fields, bytes). */
	ck_assert_ptr_nonnull(big = malloc(EVFCGI_FORM_MAX_BYTES + 2));
	for (i = 0; i < 2 * (EVFCGI_FORM_MAX_FIELDS + 1); i += 2)
		memcpy(big + i, "a&", 2);
	ck_assert_int_eq(post("/form", form_type, big, i - 1, out,
	    sizeof(out)), 413);
	ck_assert_int_eq(post("/form", form_type, big,
	    2 * EVFCGI_FORM_MAX_FIELDS - 1, out, sizeof(out)), 200);
	memset(big, 'a', EVFCGI_FORM_MAX_BYTES + 1);
	ck_assert_int_eq(post("/form", form_type, big,
	    EVFCGI_FORM_MAX_BYTES + 1, out, sizeof(out)), 413);
	free(big);
	/* A streamed body is not read as a form. */
	ck_assert_int_eq(post("/stream", form_type, "a=1", 3, out,
	    sizeof(out)), 415);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("form");

	suite_add_case(s, "core", setup, teardown, 0, core_body_then_query,
	    core_ints, core_form_int, core_html, NULL);
	suite_add_case(s, "partial", setup, teardown, 0, partial_prefixes,
	    partial_html_sizes, NULL);
	suite_add_case(s, "malformed", setup, teardown, 0, malformed_forms,
	    NULL);
	return suite_run(s);
}
