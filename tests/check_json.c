/*
 * check_json.c: the JSON writer: documents as built, strings of any bytes
 * escaped into valid JSON (checked by a small validator here), the
 * grammar and the nesting cap enforced, and the answer it sends
 * (application/json, its length) through the test harness; a streaming
 * writer's large array sent whole while the writer and the output hold
 * a bounded part of it.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"
#include "tests/suite.h"

/* A JSON string's escapes valid and no raw control or non-ASCII byte. */
static int
string_ok(const char *s, size_t len)
{
	size_t	 i;

	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		return 0;
	for (i = 1; i < len - 1; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if (c < 0x20 || c == '"' || c == '<' || c == '>' || c == '&')
			return 0;
		if (c == '\\') {
			if (s[i + 1] == 'u') {
				if (i + 5 >= len - 1 + 1 || strspn(s + i + 2,
				    "0123456789abcdef") < 4)
					return 0;
				i += 5;
			} else if (strchr("\"\\/bfnrt", s[i + 1]) == NULL)
				return 0;
			else
				i++;
		}
	}
	return 1;
}

/* The text of one string value s (len bytes) as the writer writes it. */
static char *
quoted(const void *s, size_t len)
{
	struct evfcgi_json	*j = evfcgi_json_new();
	const char		*t;
	size_t			 n;
	char			*out;

	ck_assert_int_eq(evfcgi_json_string_len(j, s, len), 0);
	ck_assert_ptr_nonnull(t = evfcgi_json_text(j, &n));
	ck_assert_ptr_nonnull(out = strdup(t));
	evfcgi_json_free(j);
	return out;
}

START_TEST(core_document)
{
	struct evfcgi_json	*j = evfcgi_json_new();
	const char		*t;
	size_t			 n;

	ck_assert_int_eq(evfcgi_json_array(j), 0);
	ck_assert_int_eq(evfcgi_json_object(j), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "name"), 0);
	ck_assert_int_eq(evfcgi_json_string(j, "a.txt"), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "size"), 0);
	ck_assert_int_eq(evfcgi_json_int(j, -12), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "ok"), 0);
	ck_assert_int_eq(evfcgi_json_bool(j, 1), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "none"), 0);
	ck_assert_int_eq(evfcgi_json_string(j, NULL), 0);
	ck_assert_int_eq(evfcgi_json_object_end(j), 0);
	ck_assert_ptr_null(evfcgi_json_text(j, &n));	/* not complete */
	ck_assert_int_eq(evfcgi_json_object(j), 0);
	ck_assert_int_eq(evfcgi_json_object_end(j), 0);
	ck_assert_int_eq(evfcgi_json_array(j), 0);
	ck_assert_int_eq(evfcgi_json_array_end(j), 0);
	ck_assert_int_eq(evfcgi_json_bool(j, 0), 0);
	ck_assert_int_eq(evfcgi_json_array_end(j), 0);
	ck_assert_ptr_nonnull(t = evfcgi_json_text(j, &n));
	ck_assert_str_eq(t, "[{\"name\":\"a.txt\",\"size\":-12,\"ok\":true,"
	    "\"none\":null},{},[],false]");
	ck_assert_uint_eq(n, strlen(t));
	evfcgi_json_free(j);
}
END_TEST

START_TEST(core_escapes)
{
	char	*t;

	t = quoted("a\"b\\c\n\t\x01\x7f</script>&", 19);
	ck_assert_str_eq(t, "\"a\\\"b\\\\c\\u000a\\u0009\\u0001\\u007f"
	    "\\u003c/script\\u003e\\u0026\"");
	free(t);
	t = quoted("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9);	/* é € 😀 */
	ck_assert_str_eq(t, "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
	free(t);
	t = quoted("\xe2\x80\xa8\xe2\x80\xa9", 6);
	ck_assert_str_eq(t, "\"\\u2028\\u2029\"");
	free(t);
	t = quoted("a\0b", 3);
	ck_assert_str_eq(t, "\"a\\u0000b\"");
	free(t);
}
END_TEST

/* Through the harness: the type and length set, the body exact. */
static void
answer(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_json	*j = evfcgi_json_new();

	(void)arg;
	evfcgi_json_object(j);
	evfcgi_json_key(j, "path");
	evfcgi_json_string(j, evfcgi_path(req));
	if (strcmp(evfcgi_query(req), "broken") != 0)
		evfcgi_json_object_end(j);
	evfcgi_json_respond(req, 201, j);
}

START_TEST(core_respond)
{
	struct evfcgi_server	*srv = evfcgi_server_new(NULL, NULL);
	struct evfcgi_test_req	 tr = { .uri = "/j<s>" };
	struct evfcgi_test_resp	 resp;

	ck_assert_int_eq(evfcgi_route_prefix(srv, "/", answer, NULL), 0);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 201);
	ck_assert_str_eq(evfcgi_test_header(&resp, "Content-Type", 0),
	    "application/json");
	ck_assert_str_eq(resp.body, "{\"path\":\"/j\\u003cs\\u003e\"}");
	ck_assert_int_eq(atoi(evfcgi_test_header(&resp, "Content-Length", 0)),
	    (int)resp.body_len);
	evfcgi_test_free(&resp);
	tr.uri = "/x?broken";
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 500);
	evfcgi_test_free(&resp);
	tr.method = "HEAD";
	tr.uri = "/x";
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert_int_eq(resp.status, 201);
	ck_assert_uint_eq(resp.body_len, 0);
	evfcgi_test_free(&resp);
	evfcgi_server_free(srv);
}
END_TEST

/* A string of 3 chunks in one value: the writer holds none of it. */
static void
long_string(struct evfcgi_req *req, void *arg)
{
	struct evfcgi_json	*j = evfcgi_json_stream(req, 200);
	char			*s = malloc(3 * EVFCGI_JSON_CHUNK);
	size_t			 n;

	(void)arg;
	ck_assert_ptr_nonnull(s);
	memset(s, 'x', 3 * EVFCGI_JSON_CHUNK);
	ck_assert_int_eq(evfcgi_json_string_len(j, s, 3 * EVFCGI_JSON_CHUNK),
	    0);
	ck_assert_uint_le(evfcgi_json_held(j), 1);
	ck_assert_ptr_null(evfcgi_json_text(j, &n));
	ck_assert_int_eq(evfcgi_json_end(j), 0);
	free(s);
}

/* A listing streamed by a producer: its state between calls. */
struct listing {
	struct evfcgi_json	*j;
	long			 i, n;	/* items written, and in all */
	long			 cut;	/* end the answer after this many */
	size_t			 peak;	/* most text the writer held */
};

/* Item i of the listing, as both writers write it. */
static void
item(struct evfcgi_json *j, long i)
{
	char	 name[32];

	snprintf(name, sizeof(name), "file-%06ld.txt", i);
	ck_assert_int_eq(evfcgi_json_object(j), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "name"), 0);
	ck_assert_int_eq(evfcgi_json_string(j, name), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "size"), 0);
	ck_assert_int_eq(evfcgi_json_int(j, i * 1000), 0);
	ck_assert_int_eq(evfcgi_json_object_end(j), 0);
}

static void
list_abort(struct evfcgi_req *req, void *arg)
{
	struct listing	*l = arg;

	(void)req;
	evfcgi_json_free(l->j);
	l->j = NULL;
}

/* Writes about room bytes of items a call, then the end. */
static int
list_produce(struct evfcgi_req *req, size_t room, void *arg)
{
	struct listing	*l = arg;
	size_t		 start = evfcgi_json_length(l->j);

	while (l->i < l->n && l->i < l->cut &&
	    evfcgi_json_length(l->j) - start < room) {
		item(l->j, l->i++);
		if (evfcgi_json_held(l->j) > l->peak)
			l->peak = evfcgi_json_held(l->j);
	}
	if (l->i < l->n && l->i < l->cut) {
		ck_assert_int_eq(evfcgi_json_flush(l->j), 0);
		return 0;
	}
	evfcgi_on_abort(req, NULL, NULL);
	if (l->i == l->n)
		ck_assert_int_eq(evfcgi_json_array_end(l->j), 0);
	(void)evfcgi_json_end(l->j);
	l->j = NULL;
	return 0;
}

static void
list_stream(struct evfcgi_req *req, void *arg)
{
	struct listing	*l = arg;

	ck_assert_ptr_nonnull(l->j = evfcgi_json_stream(req, 200));
	ck_assert_int_eq(evfcgi_json_array(l->j), 0);
	evfcgi_on_abort(req, list_abort, l);
	ck_assert_int_eq(evfcgi_produce(req, list_produce, l), 0);
}

/*
 * 100000 items (4 MB) streamed: the body is the buffered writer's text
 * byte for byte, while the writer held at most a chunk and the output
 * queue its watermarks' worth.  Cut short, the answer is cut; HEAD sends
 * no body and frees the writer (the abort callback).
 */
START_TEST(core_stream)
{
	struct evfcgi_server	*srv = evfcgi_server_new(NULL, NULL);
	struct evfcgi_test_req	 tr = { .uri = "/list" };
	struct evfcgi_test_resp	 resp;
	struct evfcgi_stats	 st;
	struct listing		 l = { .n = 100000, .cut = 100000 };
	struct evfcgi_json	*j = evfcgi_json_new();
	const char		*t;
	size_t			 len;
	long			 i;

	ck_assert_int_eq(evfcgi_json_array(j), 0);
	for (i = 0; i < l.n; i++)
		item(j, i);
	ck_assert_int_eq(evfcgi_json_array_end(j), 0);
	ck_assert_ptr_nonnull(t = evfcgi_json_text(j, &len));
	ck_assert_uint_gt(len, 4000000);
	ck_assert_int_eq(evfcgi_route(srv, "/list", list_stream, &l), 0);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_str_eq(evfcgi_test_header(&resp, "Content-Type", 0),
	    "application/json");
	ck_assert_ptr_null(evfcgi_test_header(&resp, "Content-Length", 0));
	ck_assert_uint_eq(resp.body_len, len);
	ck_assert(memcmp(resp.body, t, len) == 0);
	ck_assert_uint_le(l.peak, EVFCGI_JSON_CHUNK);
	evfcgi_get_stats(srv, &st);
	ck_assert_uint_lt(st.peak_bytes_queued, 1024 * 1024);
	evfcgi_test_free(&resp);
	evfcgi_json_free(j);
	/* Cut short: no END_REQUEST but the cut mark (EPROTO here). */
	l = (struct listing){ .n = 100000, .cut = 1000 };
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), -1);
	ck_assert_int_eq(errno, EPROTO);
	ck_assert(!resp.ended);
	evfcgi_test_free(&resp);
	l = (struct listing){ .n = 100000, .cut = 100000 };
	tr.method = "HEAD";
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	ck_assert_uint_eq(resp.body_len, 0);
	ck_assert_ptr_null(l.j);
	evfcgi_test_free(&resp);
	evfcgi_server_free(srv);
}
END_TEST

/* One string longer than a chunk goes straight out; text is refused. */
START_TEST(core_stream_long_string)
{
	struct evfcgi_server	*srv = evfcgi_server_new(NULL, NULL);
	struct evfcgi_test_req	 tr = { .uri = "/s" };
	struct evfcgi_test_resp	 resp;

	ck_assert_int_eq(evfcgi_route(srv, "/s", long_string, NULL), 0);
	ck_assert_int_eq(evfcgi_test_request(srv, &tr, &resp), 0);
	ck_assert(resp.ended);
	ck_assert_uint_eq(resp.body_len, 3 * EVFCGI_JSON_CHUNK + 2);
	ck_assert_int_eq(resp.body[0], '"');
	ck_assert_int_eq(resp.body[resp.body_len - 1], '"');
	evfcgi_test_free(&resp);
	evfcgi_server_free(srv);
}
END_TEST

/* Every prefix of a byte string with UTF-8 in it makes a valid string. */
START_TEST(partial_prefixes)
{
	const char	*s = "x\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"\x01y";
	char		*t;
	size_t		 k;

	for (k = 0; k <= strlen(s); k++) {
		t = quoted(s, k);
		ck_assert_msg(string_ok(t, strlen(t)), "prefix %zu: %s", k, t);
		free(t);
	}
}
END_TEST

/* Every byte value, and random bytes: always a valid JSON string. */
START_TEST(malformed_bytes)
{
	static const char *const bad[] = { "\x80", "\xc0\xaf", "\xe0\x80\xaf",
	    "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xff", "\xc3", NULL };
	unsigned char	 buf[4096];
	char		*t;
	size_t		 i, k;

	for (i = 0; bad[i] != NULL; i++) {
		t = quoted(bad[i], strlen(bad[i]));
		ck_assert_ptr_nonnull(strstr(t, "\\ufffd"));
		ck_assert_msg(string_ok(t, strlen(t)), "%s", t);
		free(t);
	}
	srandom(38);
	for (k = 0; k < 200; k++) {
		for (i = 0; i < sizeof(buf); i++)
			buf[i] = (unsigned char)random();
		t = quoted(buf, sizeof(buf));
		ck_assert(string_ok(t, strlen(t)));
		free(t);
	}
}
END_TEST

START_TEST(malformed_grammar)
{
	struct evfcgi_json	*j;
	size_t			 n;
	int			 i;

	j = evfcgi_json_new();
	ck_assert_int_eq(evfcgi_json_object(j), 0);
	ck_assert_int_eq(evfcgi_json_int(j, 1), -1);	/* no key */
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(evfcgi_json_key(j, "k"), -1);	/* sticky */
	evfcgi_json_free(j);
	j = evfcgi_json_new();
	ck_assert_int_eq(evfcgi_json_key(j, "k"), -1);
	evfcgi_json_free(j);
	j = evfcgi_json_new();
	ck_assert_int_eq(evfcgi_json_array(j), 0);
	ck_assert_int_eq(evfcgi_json_object_end(j), -1);
	evfcgi_json_free(j);
	j = evfcgi_json_new();
	ck_assert_int_eq(evfcgi_json_int(j, 1), 0);
	ck_assert_int_eq(evfcgi_json_int(j, 2), -1);	/* two tops */
	evfcgi_json_free(j);
	j = evfcgi_json_new();
	ck_assert_int_eq(evfcgi_json_object(j), 0);
	ck_assert_int_eq(evfcgi_json_key(j, "k"), 0);
	ck_assert_int_eq(evfcgi_json_object_end(j), -1);	/* no value */
	evfcgi_json_free(j);
	/* The nesting cap. */
	j = evfcgi_json_new();
	for (i = 0; i < EVFCGI_JSON_MAX_DEPTH; i++)
		ck_assert_int_eq(evfcgi_json_array(j), 0);
	ck_assert_int_eq(evfcgi_json_array(j), -1);
	ck_assert_int_eq(errno, EOVERFLOW);
	ck_assert_ptr_null(evfcgi_json_text(j, &n));
	evfcgi_json_free(j);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("json");

	/*
	 * core_stream writes 100,000 objects (4.3 MB), a check on every
	 * call: seconds under ASan on a busy machine, past Check's default
	 * 4 s.  The timeout bounds a hang, not the speed.
	 */
	suite_add_case(s, "core", NULL, NULL, 60, core_document, core_escapes,
	    core_respond, core_stream, core_stream_long_string, NULL);
	suite_add_case(s, "partial", NULL, NULL, 0, partial_prefixes, NULL);
	suite_add_case(s, "malformed", NULL, NULL, 0, malformed_bytes,
	    malformed_grammar, NULL);
	return suite_run(s);
}
