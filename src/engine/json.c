/*
 * json.c: a small JSON writer: values appended in order into one buffer,
 * with the grammar checked as they come (a key only where an object
 * wants one, a nesting cap), strings escaped so that any bytes make valid
 * JSON (control characters, invalid UTF-8 as U+FFFD) that is also safe
 * inside HTML and JavaScript.  evfcgi_json_respond() sends it whole, as
 * application/json, with its length, without a copy; a writer made by
 * evfcgi_json_stream() instead writes its text to the request a chunk at
 * a time as it is made, so a document of any size costs one chunk.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"

struct evfcgi_json {
	char		*j_buf;
	size_t		 j_len;
	size_t		 j_cap;
	struct evfcgi_req *j_req;	/* streams to it, or NULL: holds all */
	size_t		 j_sent;	/* bytes written to j_req */
	int		 j_err;		/* a call failed: the text is void */
	int		 j_done;	/* the top value is complete */
	int		 j_depth;
	/* Per open container: 'o' or 'a', values so far, a key given. */
	char		 j_kind[EVFCGI_JSON_MAX_DEPTH];
	size_t		 j_count[EVFCGI_JSON_MAX_DEPTH];
	unsigned char	 j_keyed[EVFCGI_JSON_MAX_DEPTH];
};

static int	json_put(struct evfcgi_json *, const char *, size_t);
static int	json_send(struct evfcgi_json *, const char *, size_t);
static int	json_value(struct evfcgi_json *);
static int	json_fail(struct evfcgi_json *, int);
static int	json_quote(struct evfcgi_json *, const unsigned char *, size_t);
static size_t	json_utf8(const unsigned char *, size_t);
static void	json_release(const void *, void *);
static int	json_open(struct evfcgi_json *, char);
static int	json_close(struct evfcgi_json *, char);

struct evfcgi_json *
evfcgi_json_new(void)
{
	return calloc(1, sizeof(struct evfcgi_json));
}

void
evfcgi_json_free(struct evfcgi_json *j)
{
	if (j == NULL)
		return;
	free(j->j_buf);
	free(j);
}

/* Marks j failed (sticky) with errno err; returns -1. */
static int
json_fail(struct evfcgi_json *j, int err)
{
	j->j_err = err;
	errno = err;
	return -1;
}

/*
 * Appends len bytes; keeps room for a NUL after them.  A streaming writer
 * first writes what it holds when the chunk would overflow, and a run
 * of a chunk or more goes straight out: it never holds more than a chunk.
 */
static int
json_put(struct evfcgi_json *j, const char *s, size_t len)
{
	size_t	 cap = j->j_cap > 0 ? j->j_cap : 256;
	char	*p;

	if (j->j_req != NULL && j->j_len + len > EVFCGI_JSON_CHUNK) {
		if (json_send(j, j->j_buf, j->j_len) == -1)
			return -1;
		j->j_len = 0;
		if (len >= EVFCGI_JSON_CHUNK)
			return json_send(j, s, len);
	}
	if (j->j_len + len + 1 > j->j_cap) {
		while (cap < j->j_len + len + 1)
			cap *= 2;
		if ((p = realloc(j->j_buf, cap)) == NULL)
			return json_fail(j, ENOMEM);
		j->j_buf = p;
		j->j_cap = cap;
	}
	memcpy(j->j_buf + j->j_len, s, len);
	j->j_len += len;
	j->j_buf[j->j_len] = '\0';
	return 0;
}

/* Writes len bytes of text to the request (evfcgi_write()). */
static int
json_send(struct evfcgi_json *j, const char *s, size_t len)
{
	if (len > 0 && evfcgi_write(j->j_req, s, len) == -1)
		return json_fail(j, EIO);
	j->j_sent += len;
	return 0;
}

/*
 * A value is about to be written: checks that one may come here (not an
 * object's key place, not after the top value) and writes its comma.
 */
static int
json_value(struct evfcgi_json *j)
{
	int	 d = j->j_depth - 1;

	if (j->j_err != 0) {
		errno = j->j_err;
		return -1;
	}
	if (d < 0)
		return j->j_done ? json_fail(j, EINVAL) : 0;
	if (j->j_kind[d] == 'o') {
		if (!j->j_keyed[d])
			return json_fail(j, EINVAL);
		j->j_keyed[d] = 0;
		return 0;	/* the key wrote the comma */
	}
	return j->j_count[d]++ > 0 ? json_put(j, ",", 1) : 0;
}

/* The top value is complete once nothing is open. */
#define JSON_CLOSED(j)	do {						\
	if ((j)->j_depth == 0)						\
		(j)->j_done = 1;					\
} while (0)

/*
 * The length of the valid UTF-8 sequence at s (n bytes left), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF.
 */
static size_t
json_utf8(const unsigned char *s, size_t n)
{
	size_t	 len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Writes len bytes at s as a JSON string. */
static int
json_quote(struct evfcgi_json *j, const unsigned char *s, size_t len)
{
	char	 esc[8];
	size_t	 i = 0, run, k;

	if (json_put(j, "\"", 1) == -1)
		return -1;
	while (i < len) {
		/* A run of bytes that stand for themselves, in one copy. */
		for (run = i; run < len && s[run] >= 0x20 && s[run] < 0x7f &&
		    s[run] != '"' && s[run] != '\\' && s[run] != '<' &&
		    s[run] != '>' && s[run] != '&'; run++)
			;
		if (run > i && json_put(j, (const char *)s + i, run - i) == -1)
			return -1;
		if ((i = run) == len)
			break;
		if (s[i] == '"' || s[i] == '\\') {
			esc[0] = '\\';
			esc[1] = (char)s[i];
			k = 2;
			i++;
		} else if (s[i] < 0x80) {
			/* Controls, DEL, and < > & for HTML's sake. */
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", s[i]);
			i++;
		} else if ((k = json_utf8(s + i, len - i)) == 0) {
			memcpy(esc, "\\ufffd", 6);
			k = 6;
			i++;
		} else if (k == 3 && s[i] == 0xe2 && s[i + 1] == 0x80 &&
		    (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
			/* U+2028, U+2029: line ends to JavaScript. */
			k = (size_t)snprintf(esc, sizeof(esc), "\\u%04x",
			    s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
			i += 3;
		} else {
			memcpy(esc, s + i, k);
			i += k;
		}
		if (json_put(j, esc, k) == -1)
			return -1;
	}
	return json_put(j, "\"", 1);
}

int
evfcgi_json_key(struct evfcgi_json *j, const char *key)
{
	int	 d = j->j_depth - 1;

	if (j->j_err != 0) {
		errno = j->j_err;
		return -1;
	}
	if (d < 0 || j->j_kind[d] != 'o' || j->j_keyed[d])
		return json_fail(j, EINVAL);
	if ((j->j_count[d]++ > 0 && json_put(j, ",", 1) == -1) ||
	    json_quote(j, (const unsigned char *)key, strlen(key)) == -1 ||
	    json_put(j, ":", 1) == -1)
		return -1;
	j->j_keyed[d] = 1;
	return 0;
}

/* Opens an object ('o') or an array ('a'). */
static int
json_open(struct evfcgi_json *j, char kind)
{
	if (json_value(j) == -1)
		return -1;
	if (j->j_depth == EVFCGI_JSON_MAX_DEPTH)
		return json_fail(j, EOVERFLOW);
	if (json_put(j, kind == 'o' ? "{" : "[", 1) == -1)
		return -1;
	j->j_kind[j->j_depth] = kind;
	j->j_count[j->j_depth] = 0;
	j->j_keyed[j->j_depth] = 0;
	j->j_depth++;
	return 0;
}

/* Closes the innermost container, which must be of kind. */
static int
json_close(struct evfcgi_json *j, char kind)
{
	int	 d = j->j_depth - 1;

	if (j->j_err != 0) {
		errno = j->j_err;
		return -1;
	}
	if (d < 0 || j->j_kind[d] != kind || j->j_keyed[d])
		return json_fail(j, EINVAL);
	if (json_put(j, kind == 'o' ? "}" : "]", 1) == -1)
		return -1;
	j->j_depth--;
	JSON_CLOSED(j);
	return 0;
}

int
evfcgi_json_object(struct evfcgi_json *j)
{
	return json_open(j, 'o');
}

int
evfcgi_json_object_end(struct evfcgi_json *j)
{
	return json_close(j, 'o');
}

int
evfcgi_json_array(struct evfcgi_json *j)
{
	return json_open(j, 'a');
}

int
evfcgi_json_array_end(struct evfcgi_json *j)
{
	return json_close(j, 'a');
}

int
evfcgi_json_string_len(struct evfcgi_json *j, const void *s, size_t len)
{
	if (json_value(j) == -1 || json_quote(j, s, len) == -1)
		return -1;
	JSON_CLOSED(j);
	return 0;
}

int
evfcgi_json_string(struct evfcgi_json *j, const char *s)
{
	if (s == NULL)
		return evfcgi_json_null(j);
	return evfcgi_json_string_len(j, s, strlen(s));
}

int
evfcgi_json_int(struct evfcgi_json *j, long long v)
{
	char	 num[32];
	int	 n = snprintf(num, sizeof(num), "%lld", v);

	if (json_value(j) == -1 || json_put(j, num, (size_t)n) == -1)
		return -1;
	JSON_CLOSED(j);
	return 0;
}

int
evfcgi_json_bool(struct evfcgi_json *j, int v)
{
	if (json_value(j) == -1 || json_put(j, v ? "true" : "false",
	    v ? 4 : 5) == -1)
		return -1;
	JSON_CLOSED(j);
	return 0;
}

int
evfcgi_json_null(struct evfcgi_json *j)
{
	if (json_value(j) == -1 || json_put(j, "null", 4) == -1)
		return -1;
	JSON_CLOSED(j);
	return 0;
}

const char *
evfcgi_json_text(const struct evfcgi_json *j, size_t *len)
{
	if (j->j_err != 0 || !j->j_done || j->j_req != NULL) {
		*len = 0;
		errno = j->j_err != 0 ? j->j_err : EINVAL;
		return NULL;
	}
	*len = j->j_len;
	return j->j_buf;
}

/* Frees the text once its last byte has left (evfcgi_write_ref_free()). */
static void
json_release(const void *data, void *arg)
{
	(void)arg;
	free((void *)(uintptr_t)data);
}

int
evfcgi_json_respond(struct evfcgi_req *req, int status,
    struct evfcgi_json *j)
{
	char	*buf;
	size_t	 len;

	if (evfcgi_json_text(j, &len) == NULL) {
		evfcgi_json_free(j);
		(void)evfcgi_respond_error(req, 500, "JSON not complete");
		return -1;
	}
	buf = j->j_buf;
	j->j_buf = NULL;
	evfcgi_json_free(j);
	if (evfcgi_header(req, status, "application/json",
	    (long long)len) == -1) {
		free(buf);
		(void)evfcgi_respond_error(req, 500, NULL);
		return -1;
	}
	if (evfcgi_write_ref_free(req, buf, len, json_release, NULL) == -1) {
		(void)evfcgi_finish(req);	/* cut: short of its length */
		return -1;
	}
	return evfcgi_finish(req);
}

struct evfcgi_json *
evfcgi_json_stream(struct evfcgi_req *req, int status)
{
	struct evfcgi_json	*j;

	if ((j = evfcgi_json_new()) == NULL)
		return NULL;
	if ((j->j_buf = malloc(EVFCGI_JSON_CHUNK + 1)) == NULL) {
		free(j);
		errno = ENOMEM;
		return NULL;
	}
	j->j_cap = EVFCGI_JSON_CHUNK + 1;
	if (evfcgi_header(req, status, "application/json", -1) == -1) {
		evfcgi_json_free(j);
		errno = EINVAL;
		return NULL;
	}
	j->j_req = req;
	return j;
}

int
evfcgi_json_flush(struct evfcgi_json *j)
{
	if (j->j_err != 0) {
		errno = j->j_err;
		return -1;
	}
	if (j->j_req == NULL)
		return 0;
	if (json_send(j, j->j_buf, j->j_len) == -1)
		return -1;
	j->j_len = 0;
	return 0;
}

size_t
evfcgi_json_length(const struct evfcgi_json *j)
{
	return j->j_sent + j->j_len;
}

size_t
evfcgi_json_held(const struct evfcgi_json *j)
{
	return j->j_len;
}

int
evfcgi_json_end(struct evfcgi_json *j)
{
	struct evfcgi_req	*req = j->j_req;
	int			 whole;

	if (req == NULL) {
		evfcgi_json_free(j);
		errno = EINVAL;
		return -1;
	}
	whole = j->j_done && evfcgi_json_flush(j) == 0;
	evfcgi_json_free(j);
	if (!whole) {
		/* After the header the status cannot change: a cut. */
		(void)evfcgi_respond_error(req, 500, "JSON not complete");
		return -1;
	}
	return evfcgi_finish(req);
}
