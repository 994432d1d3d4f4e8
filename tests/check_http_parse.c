/*
 * check_http_parse.c: the tools' HTTP client parsers, byte by byte.  Every
 * truncated prefix of valid input is fed from the end of a buffer that
 * touches an unmapped page, so a read past the end faults even without
 * sanitizers.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/http_parse.h"
#include "tests/guard.h"

static const char sample_head[] =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "content-length:  42 \r\n"
    "Connection: keep-alive\r\n"
    "\r\n";

static const char sample_chunked[] =
    "5\r\nhello\r\n"
    "1;name=value\r\n!\r\n"
    "A \r\n0123456789\r\n"
    "0\r\n"
    "X-Trailer: yes\r\n"
    "\r\n";

/* head_end() then head_parse() over a string at the guard page. */
static int
parse_str(const char *s, struct http_head *h)
{
	const char	*p = at_guard(s, strlen(s));
	size_t		 end;

	if ((end = head_end(p, strlen(s))) == 0)
		return -2;
	return head_parse(p, end, h);
}

/*
 * Feeds len bytes of chunked body to a fresh decoder in pieces of at most
 * step bytes; the decoded data goes to out.  Returns the bytes consumed
 * when the decoder is done, -1 on bad framing, -2 if it wants more.
 */
static long
dechunk(const char *buf, size_t len, size_t step, char *out, size_t *outlen)
{
	struct chunk	 ch;
	size_t		 off = 0, n, data;
	int		 r;

	memset(&ch, 0, sizeof(ch));
	*outlen = 0;
	while (off < len && ch.ch_state != CH_DONE) {
		n = len - off < step ? len - off : step;
		r = chunk_step(&ch, at_guard(buf + off, n), n, &data);
		if (r == -1)
			return -1;
		ck_assert_int_ge(r, 0);
		ck_assert_uint_le((size_t)r, n);
		if (data > 0) {
			ck_assert_uint_eq(data, (size_t)r);
			memcpy(out + *outlen, buf + off, data);
			*outlen += data;
		}
		off += (size_t)r;
	}
	return ch.ch_state == CH_DONE ? (long)off : -2;
}

START_TEST(head_whole)
{
	struct http_head	h;
	const char		*p;

	p = at_guard(sample_head, sizeof(sample_head) - 1);
	ck_assert_uint_eq(head_end(p, sizeof(sample_head) - 1),
	    sizeof(sample_head) - 1);
	ck_assert_int_eq(head_parse(p, sizeof(sample_head) - 1, &h), 0);
	ck_assert_int_eq(h.h_status, 200);
	ck_assert_int_eq(h.h_clen, 42);
	ck_assert_int_eq(h.h_chunked, 0);
	ck_assert_int_eq(h.h_close, 0);
}
END_TEST

START_TEST(head_end_stops_at_blank_line)
{
	static const char	 two[] = "HTTP/1.1 204 No\r\n\r\nHTTP/1.1 200";
	static const char	 lf[] = "HTTP/1.1 200 OK\nA: b\n\nbody";
	const char		*p;

	p = at_guard(two, sizeof(two) - 1);
	ck_assert_uint_eq(head_end(p, sizeof(two) - 1), 19);
	p = at_guard(lf, sizeof(lf) - 1);
	ck_assert_uint_eq(head_end(p, sizeof(lf) - 1), 22);
}
END_TEST

START_TEST(head_framing_and_keepalive)
{
	struct http_head	h;

	ck_assert_int_eq(parse_str("HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: gzip, chunked\r\n\r\n", &h), 0);
	ck_assert_int_eq(h.h_chunked, 1);
	ck_assert_int_eq(h.h_clen, -1);
	ck_assert_int_eq(parse_str("HTTP/1.1 404 Not Found\r\n"
	    "Connection: close\r\nContent-Length: 0\r\n\r\n", &h), 0);
	ck_assert_int_eq(h.h_status, 404);
	ck_assert_int_eq(h.h_close, 1);
	ck_assert_int_eq(h.h_clen, 0);
	/* HTTP/1.0 closes unless it says keep-alive. */
	ck_assert_int_eq(parse_str("HTTP/1.0 200 OK\r\n\r\n", &h), 0);
	ck_assert_int_eq(h.h_close, 1);
	ck_assert_int_eq(parse_str("HTTP/1.0 200 OK\r\n"
	    "Connection: Keep-Alive\r\n\r\n", &h), 0);
	ck_assert_int_eq(h.h_close, 0);
	/* The same length twice is no conflict. */
	ck_assert_int_eq(parse_str("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n"
	    "Content-Length: 7\r\n\r\n", &h), 0);
	ck_assert_int_eq(h.h_clen, 7);
	ck_assert_int_eq(parse_str("HTTP/1.1 100 Continue\n\n", &h), 0);
	ck_assert_int_eq(h.h_status, 100);
}
END_TEST

START_TEST(chunked_whole)
{
	char	out[64];
	size_t	outlen;

	ck_assert_int_eq(dechunk(sample_chunked, sizeof(sample_chunked) - 1,
	    sizeof(sample_chunked), out, &outlen),
	    (long)sizeof(sample_chunked) - 1);
	ck_assert_uint_eq(outlen, 16);
	ck_assert(memcmp(out, "hello!0123456789", 16) == 0);
}
END_TEST

START_TEST(chunked_stops_at_end)
{
	static const char	 b[] = "3\r\nabc\r\n0\r\n\r\nHTTP/1.1";
	char			 out[8];
	size_t			 outlen;

	ck_assert_int_eq(dechunk(b, sizeof(b) - 1, sizeof(b), out, &outlen),
	    (long)sizeof(b) - 1 - 8);
	ck_assert_uint_eq(outlen, 3);
}
END_TEST

START_TEST(url_forms)
{
	struct http_url	u;
	char		hh[300];

	ck_assert_int_eq(http_url_parse("http://example.org", &u), URL_OK);
	ck_assert_str_eq(u.u_host, "example.org");
	ck_assert_int_eq(u.u_port, 80);
	ck_assert_str_eq(u.u_path, "/");
	http_host_header(&u, hh, sizeof(hh));
	ck_assert_str_eq(hh, "example.org");

	ck_assert_int_eq(http_url_parse("HTTP://127.0.0.1:8080/a/b?x=1#frag",
	    &u), URL_OK);
	ck_assert_str_eq(u.u_host, "127.0.0.1");
	ck_assert_int_eq(u.u_port, 8080);
	ck_assert_str_eq(u.u_path, "/a/b?x=1");
	http_host_header(&u, hh, sizeof(hh));
	ck_assert_str_eq(hh, "127.0.0.1:8080");

	ck_assert_int_eq(http_url_parse("http://[::1]:80?q", &u), URL_OK);
	ck_assert_str_eq(u.u_host, "::1");
	ck_assert_int_eq(u.u_v6, 1);
	ck_assert_str_eq(u.u_path, "/?q");
	http_host_header(&u, hh, sizeof(hh));
	ck_assert_str_eq(hh, "[::1]");
}
END_TEST

START_TEST(head_every_prefix)
{
	static const char	 lf[] = "HTTP/1.0 200 OK\nContent-Length: 3\n\n";
	static const char *const heads[] = { sample_head, lf };
	struct http_head	 h;
	char			 buf[256];
	const char		*p;
	size_t			 len, i, k;

	for (k = 0; k < 2; k++) {
		len = strlen(heads[k]);
		for (i = 0; i < len; i++) {
			p = at_guard(heads[k], i);
			ck_assert_msg(head_end(p, i) == 0, "%zu: %zu", k, i);
		}
		p = at_guard(heads[k], len);
		ck_assert_uint_eq(head_end(p, len), len);
		ck_assert_int_eq(head_parse(p, len, &h), 0);
		/* Body bytes after the head are not part of it. */
		snprintf(buf, sizeof(buf), "%sabc", heads[k]);
		p = at_guard(buf, len + 3);
		ck_assert_uint_eq(head_end(p, len + 3), len);
	}
}
END_TEST

START_TEST(chunked_every_prefix)
{
	size_t	len = sizeof(sample_chunked) - 1, i;
	char	out[64];
	size_t	outlen;

	for (i = 0; i < len; i++)
		ck_assert_int_eq(dechunk(sample_chunked, i, i + 1, out,
		    &outlen), -2);
}
END_TEST

START_TEST(chunked_split_anywhere)
{
	size_t	len = sizeof(sample_chunked) - 1, step;
	char	out[64];
	size_t	outlen;

	for (step = 1; step <= len; step++) {
		ck_assert_int_eq(dechunk(sample_chunked, len, step, out,
		    &outlen), (long)len);
		ck_assert_uint_eq(outlen, 16);
		ck_assert(memcmp(out, "hello!0123456789", 16) == 0);
	}
}
END_TEST

START_TEST(bad_status_lines)
{
	static const char *const bad[] = {
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1  200 OK\r\n\r\n",
		"HTTP/1.1\t200 OK\r\n\r\n",
		"http/1.1 200 OK\r\n\r\n",
		"ICY 200 OK\r\n\r\n",
		"\r\n\r\n",
		NULL
	};
	struct http_head	h;
	size_t			i;

	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(parse_str(bad[i], &h) == -1, "%s", bad[i]);
}
END_TEST

START_TEST(bad_content_lengths)
{
	static const char *const bad[] = {
		"Content-Length:\r\n",
		"Content-Length: x\r\n",
		"Content-Length: -1\r\n",
		"Content-Length: 1 2\r\n",
		"Content-Length: 12a\r\n",
		"Content-Length: 99999999999999999999\r\n",
		"Content-Length: 5\r\nContent-Length: 6\r\n",
		NULL
	};
	struct http_head	h;
	char			buf[256];
	size_t			i;

	for (i = 0; bad[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\n%s\r\n",
		    bad[i]);
		ck_assert_msg(parse_str(buf, &h) == -1, "%s", bad[i]);
	}
}
END_TEST

START_TEST(bad_chunk_sizes)
{
	static const char *const bad[] = {
		"\r\n",				/* no digits */
		"g\r\n",			/* not hex */
		";ext\r\n",			/* extension without a size */
		"5x\r\nhello\r\n",		/* junk after the size */
		"3\r\nabcX",			/* no CRLF after the data */
		"1000000000000000\r\n",		/* beyond 2^48 */
		NULL
	};
	char	out[64];
	size_t	outlen, i;

	for (i = 0; bad[i] != NULL; i++)
		ck_assert_msg(dechunk(bad[i], strlen(bad[i]), 64, out,
		    &outlen) == -1, "%s", bad[i]);
}
END_TEST

START_TEST(bad_urls)
{
	static const struct {
		const char		*url;
		enum http_url_err	 err;
	} bad[] = {
		{ "https://example.org/", URL_SCHEME },
		{ "example.org", URL_SCHEME },
		{ "http://exa mple.org/", URL_SPACE },
		{ "http://example.org/\x01", URL_SPACE },
		{ "http://[::1/", URL_BRACKET },
		{ "http:///path", URL_HOST },
		{ "http://:80/", URL_HOST },
		{ "http://user@host/", URL_USERINFO },
		{ "http://host:/", URL_PORT },
		{ "http://host:0/", URL_PORT },
		{ "http://host:65536/", URL_PORT },
		{ "http://host:8x/", URL_PORT },
		{ "http://host:12345678/", URL_PORT },
		{ "http://[::1]x/", URL_JUNK },
	};
	struct http_url	 u;
	char		*longurl;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(http_url_parse(bad[i].url, &u) == bad[i].err,
		    "%s", bad[i].url);
	longurl = malloc(HTTP_URL_MAX + 1);
	ck_assert_ptr_nonnull(longurl);
	memset(longurl, 'a', HTTP_URL_MAX);
	memcpy(longurl, "http://h/", 9);
	longurl[HTTP_URL_MAX] = '\0';
	ck_assert_int_eq(http_url_parse(longurl, &u), URL_TOO_LONG);
	longurl[HTTP_URL_MAX - 1] = '\0';
	ck_assert_int_eq(http_url_parse(longurl, &u), URL_OK);
	ck_assert_uint_eq(strlen(u.u_path), HTTP_URL_MAX - 1 - 8);
	free(longurl);
}
END_TEST

static Suite *
http_parse_suite(void)
{
	Suite	*s = suite_create("http_parse");
	TCase	*tc;

	tc = tcase_create("core");
	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	tcase_add_test(tc, head_whole);
	tcase_add_test(tc, head_end_stops_at_blank_line);
	tcase_add_test(tc, head_framing_and_keepalive);
	tcase_add_test(tc, chunked_whole);
	tcase_add_test(tc, chunked_stops_at_end);
	tcase_add_test(tc, url_forms);
	suite_add_tcase(s, tc);

	tc = tcase_create("partial");
	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	tcase_add_test(tc, head_every_prefix);
	tcase_add_test(tc, chunked_every_prefix);
	tcase_add_test(tc, chunked_split_anywhere);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	tcase_add_test(tc, bad_status_lines);
	tcase_add_test(tc, bad_content_lengths);
	tcase_add_test(tc, bad_chunk_sizes);
	tcase_add_test(tc, bad_urls);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	SRunner	*sr = srunner_create(http_parse_suite());
	int	 failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
