/*
 * check_router.c: route patterns (router.c) as pure functions, then
 * through a server with the test harness (evfcgi_test_request()): the
 * raw path split before it is decoded, the most specific route winning,
 * 405 with Allow kept, and bad patterns and paths refused.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"
#include "router.h"
#include "tests/suite.h"

static struct evfcgi_server	*srv;

static void
setup(void)
{
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
}

static void
teardown(void)
{
	evfcgi_server_free(srv);
}

/* Answers "TAG name=VALUE rest=VALUE" from the route's parameters. */
static void
echo(struct evfcgi_req *req, void *arg)
{
	const char	*n = evfcgi_path_param(req, "name");
	const char	*r = evfcgi_path_param(req, "rest");

	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "%s name=%s rest=%s", (const char *)arg,
	    n != NULL ? n : "(null)", r != NULL ? r : "(null)");
	evfcgi_finish(req);
}

/* Answers "TAG a=VALUE b=VALUE" from a "/{a}/{b}" route's parameters. */
static void
pair(struct evfcgi_req *req, void *arg)
{
	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "%s a=%s b=%s", (const char *)arg,
	    evfcgi_path_param(req, "a"), evfcgi_path_param(req, "b"));
	evfcgi_finish(req);
}

/* GET uri against srv: the status, the body into body (size bytes). */
static int
get(const char *method, const char *uri, char *body, size_t size)
{
	struct evfcgi_test_req	 tr = { .method = method, .uri = uri };
	struct evfcgi_test_resp	 resp;
	int			 status;

	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	snprintf(body, size, "%s", resp.body != NULL ? resp.body : "");
	status = resp.status;
	evfcgi_test_free(&resp);
	return status;
}

/* Splits raw (all of it) and joins the segments with '|'. */
static int
split_raw(const char *raw, char *out, size_t size)
{
	struct rseg	 segs[RPAT_MAX_SEGS];
	char		 mem[256];
	int		 n, i;
	size_t		 o = 0;

	n = rseg_split_raw(raw, strlen(raw), mem, segs, RPAT_MAX_SEGS);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		o += (size_t)snprintf(out + o, size - o, "%s%.*s",
		    i > 0 ? "|" : "", (int)segs[i].len, segs[i].s);
	return n;
}

START_TEST(core_compile_match)
{
	struct rpat	 p;
	struct rseg	 segs[RPAT_MAX_SEGS], vals[4];
	int		 n;

	ck_assert_int_eq(rpat_compile("/files/{name}/{rest...}", &p), 0);
	ck_assert_uint_eq(p.p_nparams, 2);
	ck_assert_int_eq(rpat_param(&p, "rest"), 1);
	ck_assert_str_eq(rpat_param_name(&p, 0), "name");
	n = rseg_split("/files/a/b/c", segs, RPAT_MAX_SEGS);
	ck_assert_int_eq(n, 4);
	ck_assert_int_eq(rpat_match(&p, segs, n, vals), 1);
	ck_assert_int_eq((int)vals[0].len, 1);
	ck_assert_int_eq(strncmp(vals[1].s, "b/c", vals[1].len), 0);
	ck_assert_uint_eq(vals[1].len, 3);
	n = rseg_split("/files/a/", segs, RPAT_MAX_SEGS);
	ck_assert_int_eq(rpat_match(&p, segs, n, vals), 1);
	ck_assert_uint_eq(vals[1].len, 0);
	n = rseg_split("/files/a", segs, RPAT_MAX_SEGS);
	ck_assert_int_eq(rpat_match(&p, segs, n, vals), 0);
	n = rseg_split("/files//x", segs, RPAT_MAX_SEGS);
	ck_assert_int_eq(rpat_match(&p, segs, n, vals), 0);
	rpat_free(&p);
}
END_TEST

START_TEST(core_split_raw)
{
	char	 out[256];

	ck_assert_int_eq(split_raw("/files/a%2Fb", out, sizeof(out)), 2);
	ck_assert_str_eq(out, "files|a/b");
	ck_assert_int_eq(split_raw("/a/./b/../c", out, sizeof(out)), 2);
	ck_assert_str_eq(out, "a|c");
	ck_assert_int_eq(split_raw("/a//b/", out, sizeof(out)), 3);
	ck_assert_str_eq(out, "a|b|");
	ck_assert_int_eq(split_raw("/a/%2e%2E/b", out, sizeof(out)), 1);
	ck_assert_str_eq(out, "b");
	ck_assert_int_eq(split_raw("/", out, sizeof(out)), 1);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(split_raw("/a/b/..", out, sizeof(out)), 2);
	ck_assert_str_eq(out, "a|");
}
END_TEST

START_TEST(core_specific_wins)
{
	struct rpat	 a, b, c;

	ck_assert_int_eq(rpat_compile("/files/new", &a), 0);
	ck_assert_int_eq(rpat_compile("/files/{name}", &b), 0);
	ck_assert_int_eq(rpat_compile("/files/{rest...}", &c), 0);
	ck_assert_int_gt(rpat_cmp(&a, &b), 0);
	ck_assert_int_gt(rpat_cmp(&b, &c), 0);
	ck_assert_int_lt(rpat_cmp(&c, &a), 0);
	rpat_free(&a);
	rpat_free(&b);
	rpat_free(&c);
}
END_TEST

/* Through the server: %2F stays in its segment, escapes decoded. */
START_TEST(core_served)
{
	char	 body[256];

	ck_assert_int_eq(evfcgi_route_methods(srv, "/files/{name}", "GET",
	    echo, "one"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/files/{name}/{rest...}", echo,
	    "deep"), 0);
	ck_assert_int_eq(get("GET", "/files/a%20b?x=1", body, sizeof(body)),
	    200);
	ck_assert_str_eq(body, "one name=a b rest=(null)");
	ck_assert_int_eq(get("GET", "/files/a%2Fb", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "one name=a/b rest=(null)");
	ck_assert_int_eq(get("HEAD", "/files/x", body, sizeof(body)), 200);
	ck_assert_int_eq(get("GET", "/files/a/b/c", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "deep name=a rest=b/c");
	ck_assert_int_eq(get("GET", "/files/a%2Fb/c%2Fd", body, sizeof(body)),
	    200);
	ck_assert_str_eq(body, "deep name=a/b rest=c/d");
	ck_assert_int_eq(get("GET", "/files/", body, sizeof(body)), 404);
	ck_assert_int_eq(get("GET", "/files", body, sizeof(body)), 404);
}
END_TEST

/* Exact before pattern before prefix; the most specific pattern. */
START_TEST(core_precedence)
{
	char	 body[256];

	ck_assert_int_eq(evfcgi_route(srv, "/files/{name}", echo, "pat"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/files/new", echo, "exact"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/files/{name}/meta", echo,
	    "meta"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/{rest...}", echo, "all"), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/files/", echo, "prefix"),
	    0);
	ck_assert_int_eq(get("GET", "/files/new", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "exact name=(null) rest=(null)");
	ck_assert_int_eq(get("GET", "/files/x", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "pat name=x rest=(null)");
	ck_assert_int_eq(get("GET", "/files/x/meta", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "meta name=x rest=(null)");
	ck_assert_int_eq(get("GET", "/files/x/y", body, sizeof(body)), 200);
	/* "/files/" is "/files/{rest...}": more specific than "/{rest...}". */
	ck_assert_str_eq(body, "prefix name=(null) rest=(null)");
	ck_assert_int_eq(get("GET", "/other/z", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "all name=(null) rest=other/z");
}
END_TEST

/*
 * %2F beside a prefix route and a two-segment pattern: the raw path is
 * split before it is decoded, so "/files/a%2Fb" is two segments whatever
 * else is registered, and goes where "/files/ab" goes.
 */
START_TEST(core_escaped_slash)
{
	char	 body[256];

	ck_assert_int_eq(evfcgi_route(srv, "/files/{name}", echo, "one"), 0);
	ck_assert_int_eq(evfcgi_route(srv, "/files/{a}/{b}", pair, "two"), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/files/", echo, "prefix"),
	    0);
	ck_assert_int_eq(get("GET", "/files/a%2Fb", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "one name=a/b rest=(null)");
	ck_assert_int_eq(get("GET", "/files/ab", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "one name=ab rest=(null)");
	ck_assert_int_eq(get("GET", "/files/a/b", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "two a=a b=b");
	ck_assert_int_eq(get("GET", "/files/a%2Fb/c", body, sizeof(body)),
	    200);
	ck_assert_str_eq(body, "two a=a/b b=c");
	ck_assert_int_eq(get("GET", "/files/a/b/c", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "prefix name=(null) rest=(null)");
}
END_TEST

/* Without "/files/{name}", "/files/a%2Fb" is the prefix route's. */
START_TEST(core_escaped_slash_prefix)
{
	char	 body[256];

	ck_assert_int_eq(evfcgi_route(srv, "/files/{a}/{b}", pair, "two"), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/files/", echo, "prefix"),
	    0);
	ck_assert_int_eq(get("GET", "/files/a%2Fb", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "prefix name=(null) rest=(null)");
	ck_assert_int_eq(get("GET", "/files/a/b", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "two a=a b=b");
}
END_TEST

/* Beside a prefix route alone, "/files/{name}" still takes a%2Fb. */
START_TEST(core_escaped_slash_name)
{
	char	 body[256];

	ck_assert_int_eq(evfcgi_route(srv, "/files/{name}", echo, "one"), 0);
	ck_assert_int_eq(evfcgi_route_prefix(srv, "/files/", echo, "prefix"),
	    0);
	ck_assert_int_eq(get("GET", "/files/a%2Fb", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "one name=a/b rest=(null)");
	ck_assert_int_eq(get("GET", "/files/a/b", body, sizeof(body)), 200);
	ck_assert_str_eq(body, "prefix name=(null) rest=(null)");
	/* Alone, "/files/{a}/{b}" does not split a%2Fb: 404. */
	evfcgi_server_free(srv);
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
	ck_assert_int_eq(evfcgi_route(srv, "/files/{a}/{b}", pair, "two"), 0);
	ck_assert_int_eq(get("GET", "/files/a%2Fb", body, sizeof(body)), 404);
}
END_TEST

/* A method the matched pattern does not list: 405 with its Allow. */
START_TEST(core_method_allow)
{
	struct evfcgi_test_req	 tr = { .method = "DELETE",
	    .uri = "/files/a" };
	struct evfcgi_test_resp	 resp;

	ck_assert_int_eq(evfcgi_route_methods(srv, "/files/{name}",
	    "GET,POST", echo, "x"), 0);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 405);
	ck_assert_ptr_nonnull(evfcgi_test_header(&resp, "Allow", 0));
	ck_assert_ptr_nonnull(strstr(evfcgi_test_header(&resp, "Allow", 0),
	    "POST"));
	evfcgi_test_free(&resp);
	/* The same through the raw match: %2F makes the decoded path differ. */
	tr.uri = "/files/a%2Fb";
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 405);
	evfcgi_test_free(&resp);
}
END_TEST

/* The harness passes headers as a web server does: HTTP_*, CONTENT_TYPE. */
static void
params(struct evfcgi_req *req, void *arg)
{
	const char	*a = evfcgi_param(req, "HTTP_X_A1_B");
	const char	*t = evfcgi_param(req, "CONTENT_TYPE");

	(void)arg;
	evfcgi_header(req, 200, "text/plain", -1);
	evfcgi_printf(req, "%s|%s|%s", a != NULL ? a : "-", t != NULL ? t :
	    "-", evfcgi_param(req, "CONTENT_LENGTH"));
	evfcgi_finish(req);
}

START_TEST(core_harness_params)
{
	static const char *const h[] = { "x-a1-b:  v 1", "Content-Type: t/x",
	    NULL };
	struct evfcgi_test_req	 tr = { .method = "POST", .uri = "/p",
	    .headers = h, .body = "abc", .body_len = 3 };
	struct evfcgi_test_resp	 resp;

	ck_assert_int_eq(evfcgi_route(srv, "/p", params, NULL), 0);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_str_eq(resp.body, "v 1|t/x|3");
	evfcgi_test_free(&resp);
}
END_TEST

/* Every prefix of a raw path splits or is refused, never more. */
START_TEST(partial_prefixes)
{
	static const char *const paths[] = { "/files/a%2Fb/../c%20d/",
	    "/a/%2e%2e/b/./%41", "//x///y", NULL };
	struct rseg	 segs[RPAT_MAX_SEGS];
	char		 mem[64];
	size_t		 i, k;
	int		 n;

	for (i = 0; paths[i] != NULL; i++)
		for (k = 0; k <= strlen(paths[i]); k++) {
			n = rseg_split_raw(paths[i], k, mem, segs,
			    RPAT_MAX_SEGS);
			ck_assert_int_ge(n, -1);
			ck_assert(k > 0 || n == -1);
			if (n > 0)
				ck_assert(strlen(mem) <= k);
		}
}
END_TEST

/* Every prefix of a pattern compiles or is refused, and frees. */
START_TEST(partial_pattern_prefixes)
{
	const char	*pat = "/a/{name}/b/{rest...}";
	char		 buf[64];
	struct rpat	 p;
	size_t		 k;
	int		 ok = 0;

	for (k = 0; k <= strlen(pat); k++) {
		memcpy(buf, pat, k);
		buf[k] = '\0';
		if (rpat_compile(buf, &p) == 0) {
			ok++;
			rpat_free(&p);
		} else
			ck_assert_int_eq(errno, EINVAL);
	}
	ck_assert_int_ge(ok, 4);
}
END_TEST

START_TEST(malformed_patterns)
{
	static const char *const bad[] = { "files/{x}", "/a/{", "/a/{}",
	    "/{x}/{x}", "/{r...}/a", "/a{b}", "/{bad-name}", "/{x}}", NULL };
	struct rpat	 p;
	size_t		 i;

	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_msg(rpat_compile(bad[i], &p) == -1, "%s", bad[i]);
		ck_assert_int_eq(evfcgi_route(srv, bad[i], echo, NULL), -1);
	}
	ck_assert_int_eq(evfcgi_route_ex(srv, "/a/{x}", EVFCGI_ROUTE_PREFIX,
	    NULL, echo, NULL), -1);
}
END_TEST

START_TEST(malformed_paths)
{
	char	 body[256], many[400];
	size_t	 i;

	ck_assert_int_eq(split_raw("/%", body, sizeof(body)), -1);
	ck_assert_int_eq(split_raw("/a%zz", body, sizeof(body)), -1);
	ck_assert_int_eq(split_raw("/a%00b", body, sizeof(body)), -1);
	ck_assert_int_eq(split_raw("/..", body, sizeof(body)), -1);
	ck_assert_int_eq(split_raw("x/a", body, sizeof(body)), -1);
	ck_assert_int_eq(evfcgi_route(srv, "/{rest...}", echo, "all"), 0);
	ck_assert_int_eq(get("GET", "/a%zz", body, sizeof(body)), 400);
	ck_assert_int_eq(get("GET", "/%2e%2e/x", body, sizeof(body)), 400);
	/* More segments than a pattern looks at: no match, 404. */
	for (i = 0; i < 70; i++)
		memcpy(many + 2 * i, "/a", 2);
	many[140] = '\0';
	ck_assert_int_eq(get("GET", many, body, sizeof(body)), 404);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("router");

	suite_add_case(s, "core", setup, teardown, 0, core_compile_match,
	    core_split_raw, core_specific_wins, core_served, core_precedence,
	    core_escaped_slash, core_escaped_slash_prefix,
	    core_escaped_slash_name, core_method_allow, core_harness_params, NULL);
	suite_add_case(s, "partial", setup, teardown, 0, partial_prefixes,
	    partial_pattern_prefixes, NULL);
	suite_add_case(s, "malformed", setup, teardown, 0, malformed_patterns,
	    malformed_paths, NULL);
	return suite_run(s);
}
