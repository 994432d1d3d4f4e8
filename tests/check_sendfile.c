/*
 * check_sendfile.c: a file as an answer: Range read as RFC 9110 says
 * (one range, else the whole body; 416 when it cannot be met), every
 * prefix of a Range value refused or read, 206 and 416 through the test
 * harness; and the URL escape.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evfcgi.h"
#include "tests/suite.h"

static struct evfcgi_server	*srv;
static char			 path[] = "/tmp/check_sendfile.XXXXXX";

static void
serve(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_send_file(req, open(path, O_RDONLY), "text/plain");
}

static void
setup(void)
{
	int	 fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123456789", 10), 10);
	close(fd);
	ck_assert_ptr_nonnull(srv = evfcgi_server_new(NULL, NULL));
	ck_assert_int_eq(evfcgi_route(srv, "/f", serve, NULL), 0);
}

static void
teardown(void)
{
	evfcgi_server_free(srv);
	unlink(path);
	strcpy(path, "/tmp/check_sendfile.XXXXXX");
}

START_TEST(core_ranges)
{
	static const struct {
		const char	*h;
		int		 rc;
		uint64_t	 off, len;
	} t[] = {
		{ NULL, 0, 0, 0 }, { "bytes=0-0", 1, 0, 1 },
		{ "bytes=2-5", 1, 2, 4 }, { "bytes=7-", 1, 7, 3 },
		{ "bytes=-3", 1, 7, 3 }, { "bytes=-30", 1, 0, 10 },
		{ "bytes=5-100", 1, 5, 5 }, { "bytes=0-1,4-5", 0, 0, 0 },
		{ "items=0-1", 0, 0, 0 }, { "bytes=10-", -1, 0, 0 },
		{ "bytes=5-2", -1, 0, 0 }, { "bytes=-0", -1, 0, 0 },
		{ "bytes=-", -1, 0, 0 }, { "bytes=a-b", -1, 0, 0 },
		{ "bytes= 1-2", -1, 0, 0 }, { "bytes=+1-2", -1, 0, 0 },
		{ "bytes=99999999999999999999-", -1, 0, 0 },
	};
	uint64_t	 off, len;
	size_t		 i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		off = len = 77;
		ck_assert_msg(evfcgi_range_parse(t[i].h, 10, &off, &len) ==
		    t[i].rc, "%s", t[i].h != NULL ? t[i].h : "(null)");
		if (t[i].rc == 1)
			ck_assert(off == t[i].off && len == t[i].len);
	}
	ck_assert_int_eq(evfcgi_range_parse("bytes=0-", 0, &off, &len), -1);
}
END_TEST

static int
get(const char *range, char *body, size_t size, char *cr, size_t crsize)
{
	char			 h[128];
	const char		*hdrs[] = { h, NULL }, *v;
	struct evfcgi_test_req	 tr = { .uri = "/f",
	    .headers = range != NULL ? hdrs : NULL };
	struct evfcgi_test_resp	 resp;
	int			 status;

	snprintf(h, sizeof(h), "Range: %s", range != NULL ? range : "");
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	snprintf(body, size, "%s", resp.body);
	v = evfcgi_test_header(&resp, "Content-Range", 0);
	snprintf(cr, crsize, "%s", v != NULL ? v : "-");
	status = resp.status;
	if (status == 200 || status == 206)
		ck_assert_int_eq(atoi(evfcgi_test_header(&resp,
		    "Content-Length", 0)), (int)resp.body_len);
	evfcgi_test_free(&resp);
	return status;
}

START_TEST(core_served)
{
	char	 b[64], cr[64];

	ck_assert_int_eq(get(NULL, b, sizeof(b), cr, sizeof(cr)), 200);
	ck_assert_str_eq(b, "0123456789");
	ck_assert_int_eq(get("bytes=3-4", b, sizeof(b), cr, sizeof(cr)), 206);
	ck_assert_str_eq(b, "34");
	ck_assert_str_eq(cr, "bytes 3-4/10");
	ck_assert_int_eq(get("bytes=-2", b, sizeof(b), cr, sizeof(cr)), 206);
	ck_assert_str_eq(b, "89");
	ck_assert_int_eq(get("bytes=20-", b, sizeof(b), cr, sizeof(cr)), 416);
	ck_assert_str_eq(cr, "bytes */10");
}
END_TEST

START_TEST(core_url_escape)
{
	char	 b[64];

	ck_assert_uint_eq(evfcgi_url_escape(b, sizeof(b), "a b/c%é~"), 19);
	ck_assert_str_eq(b, "a%20b%2Fc%25%C3%A9~");
	ck_assert_uint_eq(evfcgi_url_escape(b, 5, "ab/c"), 6);
	ck_assert_str_eq(b, "ab");
}
END_TEST

/* Every prefix of a Range value: read, whole, or 416; never more. */
START_TEST(partial_prefixes)
{
	const char	*h = "bytes=12-345";
	char		 cut[32];
	uint64_t	 off, len;
	size_t		 k;
	int		 rc;

	for (k = 0; k <= strlen(h); k++) {
		memcpy(cut, h, k);
		cut[k] = '\0';
		rc = evfcgi_range_parse(cut, 1000, &off, &len);
		ck_assert(rc >= -1 && rc <= 1);
		if (rc == 1)
			ck_assert(off + len <= 1000 && len > 0);
	}
}
END_TEST

START_TEST(malformed_served)
{
	char	 b[64], cr[64];

	ck_assert_int_eq(get("bytes=x", b, sizeof(b), cr, sizeof(cr)), 416);
	ck_assert_int_eq(get("bytes=1-2,3-4", b, sizeof(b), cr, sizeof(cr)),
	    200);
	ck_assert_str_eq(b, "0123456789");
	unlink(path);
	ck_assert_int_eq(get(NULL, b, sizeof(b), cr, sizeof(cr)), 404);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("sendfile");

	suite_add_case(s, "core", setup, teardown, 0, core_ranges, core_served,
	    core_url_escape, NULL);
	suite_add_case(s, "partial", setup, teardown, 0, partial_prefixes,
	    NULL);
	suite_add_case(s, "malformed", setup, teardown, 0, malformed_served,
	    NULL);
	return suite_run(s);
}
