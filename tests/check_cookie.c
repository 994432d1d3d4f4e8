/*
 * check_cookie.c: the Cookie header read by name (through the test
 * harness), every truncated header read without harm, and Set-Cookie
 * lines built only from valid names, values and attributes.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"
#include "tests/suite.h"

static struct evfcgi_server	*srv;

/* Answers the cookies named in the query ("a,b"): "a=1;b=(none);". */
static void
show(struct evfcgi_req *req, void *arg)
{
	const char	*names = evfcgi_query(req), *v;
	char		 name[64], out[1024];
	size_t		 o = 0, k;
	int		 rc;

	(void)arg;
	while (*names != '\0') {
		k = strcspn(names, ",");
		snprintf(name, sizeof(name), "%.*s", (int)k, names);
		rc = evfcgi_cookie(req, name, &v);
		ck_assert_int_ge(rc, 0);
		o += (size_t)snprintf(out + o, sizeof(out) - o, "%s=%s;", name,
		    rc == 1 ? v : "(none)");
		names += k + (names[k] == ',');
	}
	evfcgi_respond(req, 200, "text/plain", out, o);
}

/* Sets two cookies, one refused in between. */
static void
set(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_cookie_opts	 o = { .path = "/", .max_age = 3600,
	    .http_only = 1, .secure = 1, .same_site = "lax" };

	(void)arg;
	ck_assert_int_eq(evfcgi_set_cookie(req, "sid", "abc", &o), 0);
	ck_assert_int_eq(evfcgi_set_cookie(req, "bad name", "x", NULL), -1);
	ck_assert_int_eq(evfcgi_set_cookie(req, "old", "", &(struct
	    evfcgi_cookie_opts){ .max_age = -1 }), 0);
	evfcgi_respond(req, 204, NULL, NULL, 0);
}

static void
setup(void)
{
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
	ck_assert_int_eq(evfcgi_route(srv, "/show", show, NULL), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/set", set, NULL), 0);
}

static void
teardown(void)
{
	evfcgi_server_free(srv);
}

/* GET /show?names with the Cookie header cookie (NULL: none). */
static void
get(const char *names, const char *cookie, char *out, size_t size)
{
	char			 uri[256], hdr[70000];
	const char		*hdrs[] = { hdr, NULL };
	struct evfcgi_test_req	 tr = { .uri = uri,
	    .headers = cookie != NULL ? hdrs : NULL };
	struct evfcgi_test_resp	 resp;

	snprintf(uri, sizeof(uri), "/show?%s", names);
	if (cookie != NULL)
		snprintf(hdr, sizeof(hdr), "Cookie: %s", cookie);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	snprintf(out, size, "%s", resp.body);
	evfcgi_test_free(&resp);
}

START_TEST(core_read)
{
	char	 out[1024];

	get("a,b,sid,c", "a=1; b=\"q r\";sid=xyz ;  c=", out, sizeof(out));
	ck_assert_str_eq(out, "a=1;b=q r;sid=xyz;c=;");
	get("a", NULL, out, sizeof(out));
	ck_assert_str_eq(out, "a=(none);");
	/* The first of a name wins; values are not decoded. */
	get("a", "a=%41; a=2", out, sizeof(out));
	ck_assert_str_eq(out, "a=%41;");
	/* Spaces around '=' are no part of the name or the value. */
	get("a,b", "a = 1;b\t=\t\"2\"", out, sizeof(out));
	ck_assert_str_eq(out, "a=1;b=2;");
}
END_TEST

START_TEST(core_format)
{
	struct evfcgi_cookie_opts	 o = { .path = "/app", .domain =
	    "example.org", .max_age = 60, .expires = 784111777, .secure = 1,
	    .http_only = 1, .same_site = "Strict" };
	char				 buf[256];

	ck_assert_int_gt(evfcgi_cookie_format(buf, sizeof(buf), "id", "a1",
	    &o), 0);
	ck_assert_str_eq(buf, "id=a1; Path=/app; Domain=example.org; "
	    "Max-Age=60; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Secure; "
	    "HttpOnly; SameSite=Strict");
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "q",
	    "\"quoted\"", NULL), 10);
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "__Host-s",
	    "1", &(struct evfcgi_cookie_opts){ .path = "/", .secure = 1 }), 26);
}
END_TEST

START_TEST(core_set)
{
	struct evfcgi_test_req	 tr = { .uri = "/set" };
	struct evfcgi_test_resp	 resp;

	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 204);
	ck_assert_str_eq(evfcgi_test_header(&resp, "Set-Cookie", 0),
	    "sid=abc; Path=/; Max-Age=3600; Secure; HttpOnly; SameSite=Lax");
	ck_assert_str_eq(evfcgi_test_header(&resp, "Set-Cookie", 1),
	    "old=; Max-Age=0");
	ck_assert_ptr_null(evfcgi_test_header(&resp, "Set-Cookie", 2));
	evfcgi_test_free(&resp);
}
END_TEST

/* Every prefix of a header: each cookie whole, cut, or absent. */
START_TEST(partial_prefixes)
{
	const char	*h = "a=1; bb=\"22\"; c=333";
	char		 cut[64], out[1024];
	size_t		 k;

	for (k = 0; k <= strlen(h); k++) {
		memcpy(cut, h, k);
		cut[k] = '\0';
		get("a,bb,c", cut, out, sizeof(out));
		if (k >= 3)
			ck_assert_msg(strncmp(out, "a=1;", 4) == 0, "%s", out);
		if (k == strlen(h))
			ck_assert_str_eq(out, "a=1;bb=22;c=333;");
	}
}
END_TEST

START_TEST(malformed_header)
{
	char	 out[1024], *big;
	size_t	 i, o = 0;

	get("b,x", "=x; ;; a; =; b=2;x", out, sizeof(out));
	ck_assert_str_eq(out, "b=2;x=(none);");
	/* 6000 pairs: read in one pass, the last one found. */
	ck_assert_ptr_nonnull(big = malloc(65536));
	for (i = 0; i < 6000; i++)
		o += (size_t)sprintf(big + o, "k%zu=v; ", i);
	strcpy(big + o, "last=yes");
	get("last,k5999", big, out, sizeof(out));
	ck_assert_str_eq(out, "last=yes;k5999=v;");
	free(big);
}
END_TEST

START_TEST(malformed_refused)
{
	static const char *const names[] = { "", "a b", "a;b", "a=b", "é",
	    "a\tb", "(x)", NULL };
	static const char *const values[] = { "a b", "a;b", "a,b", "a\"b",
	    "\"a", "a\\b", "a\x01", "\xc3\xa9", NULL };
	struct evfcgi_cookie_opts	 o = { 0 };
	char				 buf[64];
	size_t				 i;

	for (i = 0; names[i] != NULL; i++) {
		errno = 0;
		ck_assert_msg(evfcgi_cookie_format(buf, sizeof(buf), names[i],
		    "v", NULL) == -1, "name %s", names[i]);
		ck_assert_int_eq(errno, EINVAL);
	}
	for (i = 0; values[i] != NULL; i++)
		ck_assert_msg(evfcgi_cookie_format(buf, sizeof(buf), "n",
		    values[i], NULL) == -1, "value %s", values[i]);
	o.path = "/a;b";
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "n", "v", &o),
	    -1);
	o.path = NULL;
	o.domain = "a b";
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "n", "v", &o),
	    -1);
	o.domain = NULL;
	o.same_site = "Sometimes";
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "n", "v", &o),
	    -1);
	o.same_site = "None";
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "n", "v", &o),
	    -1);
	o.secure = 1;
	ck_assert_int_gt(evfcgi_cookie_format(buf, sizeof(buf), "n", "v", &o),
	    0);
	ck_assert_int_eq(evfcgi_cookie_format(buf, sizeof(buf), "__Host-n",
	    "v", &o), -1);
	ck_assert_int_eq(evfcgi_cookie_format(buf, 8, "n", "v", &o), -1);
	ck_assert_int_eq(errno, ENOSPC);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("cookie");

	suite_add_case(s, "core", setup, teardown, 0, core_read, core_format,
	    core_set, NULL);
	suite_add_case(s, "partial", setup, teardown, 0, partial_prefixes,
	    NULL);
	suite_add_case(s, "malformed", setup, teardown, 0, malformed_header,
	    malformed_refused, NULL);
	return suite_run(s);
}
