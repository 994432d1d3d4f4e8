/*
 * json_api.c: a small JSON resource API on libevfcgi, an in-memory todo
 * list.  Every answer is JSON, errors included, written by jansson (no
 * hand-made escaping):
 *
 *   GET    /api/items[?limit=N&offset=N]   the list
 *   POST   /api/items     {"title": "...", "done": false}   201, Location
 *   GET    /api/items/ID  one item         DELETE /api/items/ID  204
 *
 * Errors: 400 bad JSON or query, 404, 405 with Allow, 413 past 16 KiB of
 * body (evfcgi_body_limit() on a streamed route), 415 for a body that is
 * not application/json.
 *
 * usage: json_api [--listen ADDR]   (without --listen: fd 0, a listening
 * socket, as under spawn-fcgi)
 */
#include <sys/types.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <jansson.h>

#include "evfcgi.h"

#define MAX_BODY	(16 * 1024)
#define MAX_ITEMS	10000
#define MAX_TITLE	200
#define MAX_LIMIT	1000

struct store {
	json_t		*s_items;	/* array of items, in id order */
	json_int_t	 s_next;	/* the id the next item gets */
};

/* A body on its way in: collected here until it has ended. */
struct upload {
	struct store	*u_store;
	struct evbuffer	*u_buf;
};

static void	route_items(struct evfcgi_req *, void *);
static void	route_item(struct evfcgi_req *, void *);
static void	route_none(struct evfcgi_req *, void *);
static void	list_items(struct evfcgi_req *, struct store *);
static void	take_body(struct evfcgi_req *, struct store *);
static void	upload_body(struct evfcgi_req *, struct evbuffer *, int,
		    void *);
static void	upload_abort(struct evfcgi_req *, void *);
static void	upload_done(struct evfcgi_req *, struct upload *, json_t *);
static size_t	find_item(struct store *, json_int_t);
static int	parse_uint(const char *, size_t, json_int_t, json_int_t *);
static void	send_json(struct evfcgi_req *, int, json_t *);
static void	send_error(struct evfcgi_req *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static void	free_dump(const void *, void *);

static const char usage[] =
    "usage: json_api [--listen ADDR]\n"
    "  --listen ADDR  HOST:PORT, [V6]:PORT or unix:/path; without it, fd 0\n"
    "                 must be a listening socket (spawn-fcgi)\n"
    "  --help         this text\n";

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct evfcgi_limits	 lim;
	struct evfcgi_server	*srv;
	struct event_base	*base;
	struct store		 st = { NULL, 1 };
	const char		*addr = NULL;
	char			 err[256];
	int			 ch, rc;

	while ((ch = getopt_long(argc, argv, "l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			addr = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "json_api: unexpected argument '%s'\n%s",
		    argv[optind], usage);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	if ((st.s_items = json_array()) == NULL ||
	    (base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL) {
		fprintf(stderr, "json_api: out of memory\n");
		return 1;
	}
	/* Streamed, so that the handler sets the body's cap before it comes. */
	if (evfcgi_route_ex(srv, "/api/items", EVFCGI_ROUTE_STREAM, NULL,
	    route_items, &st) == -1 ||
	    evfcgi_route_ex(srv, "/api/items/", EVFCGI_ROUTE_PREFIX |
	    EVFCGI_ROUTE_STREAM, NULL, route_item, &st) == -1) {
		fprintf(stderr, "json_api: cannot add routes\n");
		return 1;
	}
	evfcgi_route_default(srv, route_none, NULL);
	if (addr != NULL ? evfcgi_listen(srv, addr, 0660, err,
	    sizeof(err)) == -1 : evfcgi_listen_fd(srv, 0) == -1) {
		fprintf(stderr, "json_api: %s\n%s", addr != NULL ? err :
		    "no --listen and fd 0 is not a listening socket", usage);
		return 1;
	}
	if (evfcgi_handle_signals(srv) == -1)
		fprintf(stderr, "json_api: signals not handled\n");
	rc = evfcgi_run(srv);
	evfcgi_server_free(srv);
	event_base_free(base);
	json_decref(st.s_items);
	return rc == 0 ? 0 : 1;
}

/* /api/items: the list (GET, HEAD) or a new item (POST). */
static void
route_items(struct evfcgi_req *req, void *arg)
{
	const char	*m = evfcgi_method(req);

	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
		list_items(req, arg);
	else if (strcmp(m, "POST") == 0)
		take_body(req, arg);
	else {
		evfcgi_header_add(req, "Allow", "GET, HEAD, POST");
		send_error(req, 405, "method %s not allowed here", m);
	}
}

/* /api/items/ID: one item, read or deleted. */
static void
route_item(struct evfcgi_req *req, void *arg)
{
	struct store	*st = arg;
	const char	*m = evfcgi_method(req);
	const char	*id_s = evfcgi_path(req) + strlen("/api/items/");
	json_int_t	 id;
	size_t		 i;

	if (parse_uint(id_s, strlen(id_s), INT64_MAX, &id) == -1 ||
	    (i = find_item(st, id)) == (size_t)-1) {
		send_error(req, 404, "no such item");
		return;
	}
	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0)
		send_json(req, 200, json_incref(json_array_get(st->s_items, i)));
	else if (strcmp(m, "DELETE") == 0) {
		json_array_remove(st->s_items, i);
		/* No Content-Length on a 204 (RFC 9110 8.6). */
		evfcgi_header(req, 204, NULL, -1);
		evfcgi_finish(req);
	} else {
		evfcgi_header_add(req, "Allow", "GET, HEAD, DELETE");
		send_error(req, 405, "method %s not allowed here", m);
	}
}

static void
route_none(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	send_error(req, 404, "no such resource");
}

/* GET /api/items: "limit=N&offset=N", in any order, both optional. */
static void
list_items(struct evfcgi_req *req, struct store *st)
{
	const char	*q = evfcgi_query(req), *amp, *eq;
	json_int_t	 limit = 100, offset = 0, *v;
	json_t		*out;
	size_t		 n;

	for (; *q != '\0'; q = *amp == '&' ? amp + 1 : amp) {
		amp = q + strcspn(q, "&");
		eq = q + strcspn(q, "=&");
		v = eq - q == 5 && strncmp(q, "limit", 5) == 0 ? &limit :
		    eq - q == 6 && strncmp(q, "offset", 6) == 0 ? &offset : NULL;
		if (v == NULL || *eq != '=' || parse_uint(eq + 1, (size_t)(amp -
		    eq - 1), v == &limit ? MAX_LIMIT : INT64_MAX, v) == -1) {
			send_error(req, 400, "bad query at '%.*s': expected "
			    "limit=0..%d, offset=N", (int)(amp - q < 40 ?
			    amp - q : 40), q, MAX_LIMIT);
			return;
		}
	}
	n = json_array_size(st->s_items);
	out = json_array();
	while (out != NULL && offset < (json_int_t)n && limit-- > 0)
		json_array_append(out, json_array_get(st->s_items, offset++));
	send_json(req, 200, json_pack("{s:o, s:I}", "items", out, "total",
	    (json_int_t)n));
}

/*
 * POST: the body is capped before it comes, then collected as it arrives;
 * upload_body() acts once it has ended.
 */
static void
take_body(struct evfcgi_req *req, struct store *st)
{
	const char	*ct = evfcgi_param(req, "CONTENT_TYPE");
	struct upload	*u;

	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
		send_error(req, 415, "the body must be application/json");
		return;
	}
	/* -1: CONTENT_LENGTH says more already (past it later: the engine). */
	if (evfcgi_body_limit(req, MAX_BODY) == -1) {
		send_error(req, 413, "a body of at most %d bytes", MAX_BODY);
		return;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL ||
	    (u->u_buf = evbuffer_new()) == NULL) {
		free(u);
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	u->u_store = st;
	evfcgi_on_abort(req, upload_abort, u);
	evfcgi_on_body(req, upload_body, u);
}

/* Takes what arrived (so the engine keeps reading); parses at the end. */
static void
upload_body(struct evfcgi_req *req, struct evbuffer *body, int done,
    void *arg)
{
	struct upload	*u = arg;
	json_error_t	 jerr;
	json_t		*doc;
	size_t		 len;

	evbuffer_add_buffer(u->u_buf, body);
	if (!done)
		return;
	evfcgi_on_abort(req, NULL, NULL);
	len = evbuffer_get_length(u->u_buf);
	doc = json_loadb((const char *)evbuffer_pullup(u->u_buf, -1), len,
	    JSON_REJECT_DUPLICATES, &jerr);
	if (len == 0)
		send_error(req, 400, "an empty body: expected a JSON object");
	else if (doc == NULL)
		send_error(req, 400, "bad JSON at line %d, column %d: %s",
		    jerr.line, jerr.column, jerr.text);
	else
		upload_done(req, u, doc);
	json_decref(doc);
	upload_abort(req, u);	/* frees u: the request is gone */
}

/* Frees the upload; the request dies without the application. */
static void
upload_abort(struct evfcgi_req *req, void *arg)
{
	struct upload	*u = arg;

	(void)req;
	evbuffer_free(u->u_buf);
	free(u);
}

/* A parsed body: checked against the item's shape, then stored. */
static void
upload_done(struct evfcgi_req *req, struct upload *u, json_t *doc)
{
	struct store	*st = u->u_store;
	json_error_t	 jerr;
	json_t		*item;
	const char	*title;
	char		 loc[64];
	int		 done = 0;

	if (json_unpack_ex(doc, &jerr, JSON_STRICT, "{s:s, s?b}", "title",
	    &title, "done", &done) == -1) {
		send_error(req, 400, "expected {\"title\": string, \"done\": "
		    "boolean (optional)}: %s", jerr.text);
		return;
	}
	if (*title == '\0' || strlen(title) > MAX_TITLE) {
		send_error(req, 400, "a title of 1 to %d bytes", MAX_TITLE);
		return;
	}
	if (json_array_size(st->s_items) >= MAX_ITEMS) {
		send_error(req, 503, "the list is full (%d items)", MAX_ITEMS);
		return;
	}
	item = json_pack("{s:I, s:s, s:b}", "id", st->s_next, "title", title,
	    "done", done);
	if (item == NULL || json_array_append(st->s_items, item) == -1) {
		json_decref(item);
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	snprintf(loc, sizeof(loc), "/api/items/%" JSON_INTEGER_FORMAT,
	    st->s_next++);
	evfcgi_header_add(req, "Location", loc);
	send_json(req, 201, item);
}

/* The index of item id in the store, or (size_t)-1. */
static size_t
find_item(struct store *st, json_int_t id)
{
	json_t	*item;
	size_t	 i;

	json_array_foreach(st->s_items, i, item)
		if (json_integer_value(json_object_get(item, "id")) == id)
			return i;
	return (size_t)-1;
}

/* Parses len bytes of s as a decimal up to max: 0, or -1 when not one. */
static int
parse_uint(const char *s, size_t len, json_int_t max, json_int_t *out)
{
	json_int_t	 v = 0;
	size_t		 i;

	if (len == 0 || len > 18)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

/*
 * Answers status with v as compact JSON and a newline; takes v's
 * reference.  The dump goes out by reference and is freed once sent.
 */
static void
send_json(struct evfcgi_req *req, int status, json_t *v)
{
	char	*s = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;
	size_t	 len;

	json_decref(v);
	if (s == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	len = strlen(s);
	if (evfcgi_header(req, status, "application/json",
	    (long long)len + 1) == -1) {
		free(s);
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	evfcgi_write_ref_free(req, s, len, free_dump, NULL);
	evfcgi_write_ref(req, "\n", 1);
	evfcgi_finish(req);
}

/* {"error": message, "status": status}; jansson checks the text's UTF-8. */
static void
send_error(struct evfcgi_req *req, int status, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];
	json_t	*v;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((v = json_pack("{s:s, s:i}", "error", msg, "status", status)) ==
	    NULL)	/* msg quoted bytes that are not UTF-8 */
		v = json_pack("{s:s, s:i}", "error", "bad request", "status",
		    status);
	send_json(req, status, v);
}

static void
free_dump(const void *data, void *arg)
{
	(void)arg;
	free((void *)data);
}
