/*
 * check_http_parse.c: the tools' HTTP client parsers, byte by byte: URLs,
 * the chunked decoder and the response framer.  Every truncated prefix and
 * every split of valid input is fed from the end of a buffer that touches
 * an unmapped page, so a read past the end faults even without sanitizers.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/http_parse.h"
#include "tests/guard.h"

static const char sample_chunked[] =
    "5\r\nhello\r\n"
    "1;name=value\r\n!\r\n"
    "A \r\n0123456789\r\n"
    "0\r\n"
    "X-Trailer: yes\r\n"
    "\r\n";

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

/* Whole responses, each with what the framer must make of it. */
static const struct sample {
	const char	*s_resp;
	int		 s_nobody;	/* answers a HEAD request */
	int		 s_status;
	const char	*s_body;
	int		 s_close;	/* ended by the server's close */
} samples[] = {
	{ "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	  "content-length:  10 \r\nConnection: keep-alive\r\n\r\n0123456789",
	  0, 200, "0123456789", 0 },
	{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhello\r\n1;name=value\r\n!\r\nA \r\n0123456789\r\n0\r\n"
	  "X-Trailer: yes\r\n\r\n", 0, 200, "hello!0123456789", 0 },
	{ "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX: y\r\n"
	  "\r\nHTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nabc",
	  0, 201, "abc", 0 },
	{ "HTTP/1.0 200 OK\nContent-Length: 3\n\nabc", 0, 200, "abc", 0 },
	{ "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
	  0, 204, "", 0 },
	{ "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
	  0, 304, "", 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n", 1, 200, "", 0 },
	{ "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
	  "Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	  0, 200, "abc", 0 },
	{ "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nbody until close", 0, 200,
	  "body until close", 1 },
};
#define NSAMPLES	(sizeof(samples) / sizeof(samples[0]))

/* Body bytes handed out by http_frame_feed(). */
struct got {
	char	 g_buf[256];
	size_t	 g_len;
};

/* Appends a piece of body to the struct got at arg. */
static void
got_body(void *arg, const char *p, size_t n)
{
	struct got	*g = arg;

	ck_assert_uint_le(g->g_len + n, sizeof(g->g_buf));
	memcpy(g->g_buf + g->g_len, p, n);
	g->g_len += n;
}

/*
 * Feeds len bytes of s to f from the guard page; the body goes to g.
 * Returns what http_frame_feed() consumed, checked against the body count.
 */
static size_t
feed(struct http_frame *f, const char *s, size_t len, struct got *g)
{
	uint64_t	 before = f->hf_body;
	size_t		 n, had = g->g_len;

	n = http_frame_feed(f, at_guard(s, len), len, got_body, g);
	ck_assert_uint_le(n, len);
	ck_assert_uint_eq(f->hf_body - before, g->g_len - had);
	return n;
}

/* Frames the head (and any body) in s in one feed. */
static enum http_frame_state
frame_str(const char *s, struct http_frame *f)
{
	struct got	g = { .g_len = 0 };

	http_frame_init(f, 0);
	(void)feed(f, s, strlen(s), &g);
	return f->hf_state;
}

/* Checks f and g against the complete response of sample k. */
static void
check_done(const struct http_frame *f, const struct got *g, size_t k)
{
	const struct sample	*sm = &samples[k];

	ck_assert_msg(f->hf_state == HF_DONE, "sample %zu: state %d", k,
	    f->hf_state);
	ck_assert_int_eq(f->hf_status, sm->s_status);
	ck_assert_uint_eq(g->g_len, strlen(sm->s_body));
	ck_assert(memcmp(g->g_buf, sm->s_body, g->g_len) == 0);
	ck_assert_uint_eq(f->hf_body, g->g_len);
}


START_TEST(frame_whole)
{
	struct http_frame	 f;
	struct got		 g;
	char			 buf[512];
	size_t			 k, len, n;

	for (k = 0; k < NSAMPLES; k++) {
		/* What follows a response is not part of it. */
		len = strlen(samples[k].s_resp);
		snprintf(buf, sizeof(buf), "%sHTTP/1.1 500", samples[k].s_resp);
		http_frame_init(&f, samples[k].s_nobody);
		g.g_len = 0;
		n = feed(&f, buf, samples[k].s_close ? len : strlen(buf), &g);
		ck_assert_uint_eq(n, len);
		if (samples[k].s_close) {
			ck_assert_int_eq(f.hf_state, HF_CLOSE);
			ck_assert_int_eq(http_frame_eof(&f), 1);
		}
		check_done(&f, &g, k);
		/* Done is done: nothing more is taken. */
		ck_assert_uint_eq(feed(&f, "x", 1, &g), 0);
		ck_assert_int_eq(http_frame_eof(&f), 1);
	}
}
END_TEST

START_TEST(frame_head_fields)
{
	struct http_frame	f;

	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\n"
	    "Content-Length: 5\r\nConnection: keep-alive\r\n\r\n", &f),
	    HF_LENGTH);
	ck_assert_int_eq(f.hf_clen, 5);
	ck_assert_int_eq(f.hf_chunked, 0);
	ck_assert_int_eq(f.hf_close, 0);
	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: gzip, chunked\r\n\r\n", &f), HF_CHUNKED);
	ck_assert_int_eq(f.hf_chunked, 1);
	ck_assert_int_eq(f.hf_clen, -1);
	ck_assert_int_eq(frame_str("HTTP/1.1 404 Not Found\r\n"
	    "Connection: close\r\nContent-Length: 0\r\n\r\n", &f), HF_DONE);
	ck_assert_int_eq(f.hf_status, 404);
	ck_assert_int_eq(f.hf_close, 1);
	ck_assert_int_eq(f.hf_clen, 0);
	/* HTTP/1.0 closes unless it says keep-alive. */
	ck_assert_int_eq(frame_str("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n"
	    "\r\n", &f), HF_LENGTH);
	ck_assert_int_eq(f.hf_close, 1);
	ck_assert_int_eq(frame_str("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n"
	    "Connection: Keep-Alive\r\n\r\n", &f), HF_LENGTH);
	ck_assert_int_eq(f.hf_close, 0);
	/* The same length twice is no conflict. */
	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n"
	    "Content-Length: 7\r\n\r\n", &f), HF_LENGTH);
	ck_assert_int_eq(f.hf_clen, 7);
	/* A body ended by the close means the connection closes. */
	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\n\r\n", &f), HF_CLOSE);
	ck_assert_int_eq(f.hf_close, 1);
	/* The status is bytes 9 to 11 of the head, whatever the lines. */
	ck_assert_int_eq(frame_str("HTTP/1.\n 200\n\n", &f), HF_CLOSE);
	ck_assert_int_eq(f.hf_status, 200);
	/* The words are found anywhere in a value, after a false start too. */
	ck_assert_int_eq(frame_str("HTTP/1.0 200 OK\r\nConnection: kkeep-alive"
	    "\r\nTransfer-Encoding: cchunked\r\n\r\n", &f), HF_CHUNKED);
	ck_assert_int_eq(f.hf_close, 0);
	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\nConnection: x,cclose"
	    "\r\nContent-Length: 1\r\n\r\n", &f), HF_LENGTH);
	ck_assert_int_eq(f.hf_close, 1);
	/* Header names match whole and case-blind; others are skipped. */
	ck_assert_int_eq(frame_str("HTTP/1.1 200 OK\r\nX-Content-Length: 5"
	    "\r\nCONTENT-LENGTH: 2\r\nContent-Lengthy: 9\r\n\r\n", &f),
	    HF_LENGTH);
	ck_assert_int_eq(f.hf_clen, 2);
}
END_TEST

START_TEST(frame_interim_only)
{
	struct http_frame	f;

	/* An interim head alone: its status is not the answer's. */
	ck_assert_int_eq(frame_str("HTTP/1.1 100 Continue\n\n", &f), HF_HEAD);
	ck_assert_int_eq(f.hf_status, 0);
	ck_assert_int_eq(http_frame_eof(&f), 0);
}
END_TEST

START_TEST(frame_step_pieces)
{
	static const char	 r[] = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n";
	struct http_frame	 f;
	size_t			 off = 0, n, data, head = sizeof(r) - 1 - 12;

	/* The head alone, then framing and data in separate steps. */
	http_frame_init(&f, 0);
	n = http_frame_step(&f, at_guard(r, sizeof(r) - 1), sizeof(r) - 1,
	    &data);
	ck_assert_uint_eq(n, head);
	ck_assert_uint_eq(data, 0);
	for (off = n; f.hf_state == HF_CHUNKED; off += n) {
		n = http_frame_step(&f, at_guard(r + off, sizeof(r) - 1 - off),
		    sizeof(r) - 1 - off, &data);
		ck_assert(data == 0 || data == n);
		ck_assert(data == 0 || memcmp(r + off, "ab", 2) == 0);
	}
	ck_assert_uint_eq(off, sizeof(r) - 1);
	ck_assert_int_eq(f.hf_state, HF_DONE);
	ck_assert_uint_eq(f.hf_body, 2);
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

START_TEST(frame_every_prefix)
{
	const struct sample	*sm;
	struct http_frame	 f;
	struct got		 g;
	size_t			 k, i, len;

	for (k = 0; k < NSAMPLES; k++) {
		sm = &samples[k];
		len = strlen(sm->s_resp);
		for (i = 0; i < len + (size_t)sm->s_close; i++) {
			http_frame_init(&f, sm->s_nobody);
			g.g_len = 0;
			ck_assert_uint_eq(feed(&f, sm->s_resp, i, &g), i);
			ck_assert_msg(f.hf_state < HF_DONE, "sample %zu: %zu: "
			    "state %d", k, i, f.hf_state);
			ck_assert(memcmp(g.g_buf, sm->s_body, g.g_len) == 0);
			/* A close completes only a close-delimited body. */
			ck_assert_int_eq(http_frame_eof(&f),
			    f.hf_state == HF_DONE && sm->s_close);
			if (f.hf_state == HF_DONE)
				ck_assert_int_eq(f.hf_status, sm->s_status);
		}
	}
}
END_TEST

START_TEST(frame_split_anywhere)
{
	const struct sample	*sm;
	struct http_frame	 f;
	struct got		 g;
	size_t			 k, i, len, n;

	for (k = 0; k < NSAMPLES; k++) {
		sm = &samples[k];
		len = strlen(sm->s_resp);
		for (i = 0; i <= len; i++) {
			http_frame_init(&f, sm->s_nobody);
			g.g_len = 0;
			n = feed(&f, sm->s_resp, i, &g);
			n += feed(&f, sm->s_resp + i, len - i, &g);
			ck_assert_uint_eq(n, len);
			if (sm->s_close)
				ck_assert_int_eq(http_frame_eof(&f), 1);
			check_done(&f, &g, k);
		}
	}
}
END_TEST

START_TEST(frame_byte_at_a_time)
{
	const struct sample	*sm;
	struct http_frame	 f;
	struct got		 g;
	size_t			 k, i, len;

	for (k = 0; k < NSAMPLES; k++) {
		sm = &samples[k];
		len = strlen(sm->s_resp);
		http_frame_init(&f, sm->s_nobody);
		g.g_len = 0;
		for (i = 0; i < len; i++)
			ck_assert_uint_eq(feed(&f, sm->s_resp + i, 1, &g), 1);
		if (sm->s_close)
			ck_assert_int_eq(http_frame_eof(&f), 1);
		check_done(&f, &g, k);
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
		"HTTP/1.\n\n",
		"HTTP/1.\n close\n\n",	/* the status bytes run on */
		"\r\n\r\n",
		"\n\n",
		NULL
	};
	struct http_frame	f;
	size_t			i;

	for (i = 0; bad[i] != NULL; i++) {
		ck_assert_msg(frame_str(bad[i], &f) == HF_ERROR, "%s", bad[i]);
		ck_assert_int_eq(f.hf_err, HF_BAD_HEAD);
		ck_assert_int_eq(f.hf_status, 0);
	}
	/* Said when the head ends, not before. */
	ck_assert_int_eq(frame_str("ICY 200 OK\r\n", &f), HF_HEAD);
}
END_TEST

START_TEST(bad_content_lengths)
{
	static const char *const bad[] = {
		"Content-Length:\r\n",
		"Content-Length: \r\n",
		"Content-Length: x\r\n",
		"Content-Length: -1\r\n",
		"Content-Length: 1 2\r\n",
		"Content-Length: 12a\r\n",
		"Content-Length:\r5\r\n",
		"Content-Length: 99999999999999999999\r\n",
		"Content-Length: 5\r\nContent-Length: 6\r\n",
		NULL
	};
	struct http_frame	f;
	char			buf[256];
	size_t			i;

	for (i = 0; bad[i] != NULL; i++) {
		snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\n%s\r\n",
		    bad[i]);
		ck_assert_msg(frame_str(buf, &f) == HF_ERROR, "%s", bad[i]);
		ck_assert_int_eq(f.hf_err, HF_BAD_HEAD);
	}
}
END_TEST

START_TEST(bad_chunked_response)
{
	static const char	 r[] = "HTTP/1.1 200 OK\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n";
	struct http_frame	 f;
	struct got		 g = { .g_len = 0 };
	size_t			 n;

	http_frame_init(&f, 0);
	n = feed(&f, r, sizeof(r) - 1, &g);
	ck_assert_int_eq(f.hf_state, HF_ERROR);
	ck_assert_int_eq(f.hf_err, HF_BAD_CHUNK);
	ck_assert_int_eq(f.hf_status, 200);
	ck_assert_uint_eq(g.g_len, 3);
	ck_assert_uint_eq(n, sizeof(r) - 1 - 8);	/* up to the X */
	/* An error sticks. */
	ck_assert_uint_eq(feed(&f, "0\r\n\r\n", 5, &g), 0);
	ck_assert_int_eq(http_frame_eof(&f), 0);
}
END_TEST

/* Feeds len bytes of s in guarded pieces of 4096; returns bytes consumed. */
static size_t
feed_pieces(struct http_frame *f, const char *s, size_t len, struct got *g)
{
	size_t	off = 0, n, piece;

	while (off < len) {
		piece = len - off < 4096 ? len - off : 4096;
		n = feed(f, s + off, piece, g);
		off += n;
		if (n < piece)
			break;
	}
	return off;
}

START_TEST(big_heads)
{
	static char		 buf[HTTP_HEAD_MAX + 64];
	static const char	 start[] = "HTTP/1.1 200 OK\r\nX: ";
	struct http_frame	 f;
	struct got		 g = { .g_len = 0 };

	/* Exactly HTTP_HEAD_MAX bytes is a head; one more is not. */
	memset(buf, 'a', sizeof(buf));
	memcpy(buf, start, sizeof(start) - 1);
	memcpy(buf + HTTP_HEAD_MAX - 4, "\r\n\r\nab", 6);
	http_frame_init(&f, 0);
	ck_assert_uint_eq(feed_pieces(&f, buf, HTTP_HEAD_MAX + 2, &g),
	    HTTP_HEAD_MAX + 2);
	ck_assert_int_eq(f.hf_state, HF_CLOSE);
	ck_assert_uint_eq(f.hf_body, 2);
	memcpy(buf + HTTP_HEAD_MAX - 4, "a\r\n\r\nb", 6);
	http_frame_init(&f, 0);
	ck_assert_uint_eq(feed_pieces(&f, buf, HTTP_HEAD_MAX + 2, &g),
	    HTTP_HEAD_MAX);
	ck_assert_int_eq(f.hf_state, HF_ERROR);
	ck_assert_int_eq(f.hf_err, HF_BIG_HEAD);
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

/* Adds the NULL-terminated tests to a new TCase called name in s. */
static void
add_tcase(Suite *s, const char *name, const TTest *const *tests)
{
	TCase	*tc = tcase_create(name);

	tcase_add_checked_fixture(tc, guard_setup, guard_teardown);
	for (; *tests != NULL; tests++)
		tcase_add_test(tc, *tests);
	suite_add_tcase(s, tc);
}

/* The suite: core, partial (prefixes and splits) and malformed cases. */
static Suite *
http_parse_suite(void)
{
	Suite		*s = suite_create("http_parse");
	const TTest	*core[] = { frame_whole, frame_head_fields,
	    frame_interim_only, frame_step_pieces, chunked_whole,
	    chunked_stops_at_end, url_forms, NULL };
	const TTest	*partial[] = { frame_every_prefix,
	    frame_split_anywhere, frame_byte_at_a_time, chunked_every_prefix,
	    chunked_split_anywhere, NULL };
	const TTest	*malformed[] = { bad_status_lines, bad_content_lengths,
	    bad_chunked_response, big_heads, bad_chunk_sizes, bad_urls, NULL };

	add_tcase(s, "core", core);
	add_tcase(s, "partial", partial);
	add_tcase(s, "malformed", malformed);
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
