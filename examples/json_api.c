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
 * body, 415 for a body that is not application/json.  The engine answers
 * 405 and 413 itself (the routes' methods and body cap), and 404 where no
 * route is; evfcgi_set_error_page() makes those JSON like the rest.
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

static void	route_items(struct evfcgi_req *, void *);
static void	route_item(struct evfcgi_req *, void *);
static void	list_items(struct evfcgi_req *, struct store *);
static void	take_body(struct evfcgi_req *, struct store *);
static void	add_item(struct evfcgi_req *, struct store *, json_t *);
static size_t	find_item(struct store *, json_int_t);
static int	parse_uint(const char *, json_int_t, json_int_t *);
static void	send_json(struct evfcgi_req *, int, json_t *);
static void	send_error(struct evfcgi_req *, int, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static int	error_page(struct evfcgi_req *, int, const char *,
		    const char **, char *, size_t, void *);

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
	struct evfcgi_server	*srv;
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
	/* The server's own loop, with the default limits. */
	if ((st.s_items = json_array()) == NULL ||
	    (srv = evfcgi_server_new(NULL, NULL)) == NULL) {
		fprintf(stderr, "json_api: out of memory\n");
		return 1;
	}
	if (evfcgi_route_methods(srv, "/api/items", "GET,HEAD,POST",
	    route_items, &st) == -1 ||
	    evfcgi_route_body_limit(srv, "/api/items", 0, MAX_BODY) == -1 ||
	    evfcgi_route_ex(srv, "/api/items/", EVFCGI_ROUTE_PREFIX,
	    "GET,HEAD,DELETE", route_item, &st) == -1 ||
	    evfcgi_set_error_page(srv, error_page, NULL) == -1) {
		fprintf(stderr, "json_api: cannot add routes\n");
		return 1;
	}
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
	json_decref(st.s_items);
	return rc == 0 ? 0 : 1;
}

/* /api/items: the list (GET, HEAD) or a new item (POST). */
static void
route_items(struct evfcgi_req *req, void *arg)
{
	if (strcmp(evfcgi_method(req), "POST") == 0)
		take_body(req, arg);
	else
		list_items(req, arg);
}

/* /api/items/ID: one item, read (GET, HEAD) or deleted (DELETE). */
static void
route_item(struct evfcgi_req *req, void *arg)
{
	struct store	*st = arg;
	json_int_t	 id;
	size_t		 i;

	if (parse_uint(evfcgi_path_rest(req), INT64_MAX, &id) == -1 ||
	    (i = find_item(st, id)) == (size_t)-1) {
		send_error(req, 404, "no such item");
		return;
	}
	if (strcmp(evfcgi_method(req), "DELETE") != 0) {
		send_json(req, 200, json_incref(json_array_get(st->s_items, i)));
		return;
	}
	json_array_remove(st->s_items, i);
	/* No Content-Length on a 204 (RFC 9110 8.6). */
	evfcgi_header(req, 204, NULL, -1);
	evfcgi_finish(req);
}

/* GET /api/items: "limit=N&offset=N", in any order, both optional. */
static void
list_items(struct evfcgi_req *req, struct store *st)
{
	const char	*name, *val;
	json_int_t	 limit = 100, offset = 0, *v;
	json_t		*out;
	size_t		 n, i = 0;
	int		 rc;

	while ((rc = evfcgi_query_next(req, &i, &name, &val)) == 1) {
		v = strcmp(name, "limit") == 0 ? &limit :
		    strcmp(name, "offset") == 0 ? &offset : NULL;
		if (v == NULL || parse_uint(val, v == &limit ? MAX_LIMIT :
		    INT64_MAX, v) == -1) {
			send_error(req, 400, "bad query at '%.40s': expected "
			    "limit=0..%d, offset=N", name, MAX_LIMIT);
			return;
		}
	}
	if (rc == -1) {
		send_error(req, 400, "malformed query");
		return;
	}
	n = json_array_size(st->s_items);
	out = json_array();
	while (out != NULL && offset < (json_int_t)n && limit-- > 0)
		json_array_append(out, json_array_get(st->s_items, offset++));
	send_json(req, 200, json_pack("{s:o, s:I}", "items", out, "total",
	    (json_int_t)n));
}

/* POST: the body is whole here (the engine answered 413 past MAX_BODY). */
static void
take_body(struct evfcgi_req *req, struct store *st)
{
	const char	*ct = evfcgi_param(req, "CONTENT_TYPE");
	const void	*body;
	size_t		 len;
	json_error_t	 jerr;
	json_t		*doc;

	if (ct == NULL || strncasecmp(ct, "application/json", 16) != 0 ||
	    (ct[16] != '\0' && ct[16] != ';' && ct[16] != ' ')) {
		send_error(req, 415, "the body must be application/json");
		return;
	}
	if ((body = evfcgi_body_bytes(req, &len)) == NULL) {
		send_error(req, 503, "out of memory");
		return;
	}
	if (len == 0) {
		send_error(req, 400, "an empty body: expected a JSON object");
		return;
	}
	doc = json_loadb(body, len,
	    JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL)
		send_error(req, 400, "bad JSON at line %d, column %d: %s",
		    jerr.line, jerr.column, jerr.text);
	else
		add_item(req, st, doc);
	json_decref(doc);
}

/* A parsed body: checked against the item's shape, then stored. */
static void
add_item(struct evfcgi_req *req, struct store *st, json_t *doc)
{
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
		send_error(req, 503, "out of memory");
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

/* Parses s as a decimal up to max: 0, or -1 when not one. */
static int
parse_uint(const char *s, json_int_t max, json_int_t *out)
{
	json_int_t	 v = 0;
	size_t		 i, len = strlen(s);

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

/* Answers status with v as compact JSON and a newline; takes v's reference. */
static void
send_json(struct evfcgi_req *req, int status, json_t *v)
{
	char	*s = v != NULL ? json_dumps(v, JSON_COMPACT) : NULL;

	json_decref(v);
	if (s == NULL) {
		send_error(req, 503, "out of memory");
		return;
	}
	if (evfcgi_header(req, status, "application/json",
	    (long long)strlen(s) + 1) == 0)
		evfcgi_printf(req, "%s\n", s);
	free(s);
	evfcgi_finish(req);
}

/* An error answer; error_page() makes its JSON. */
static void
send_error(struct evfcgi_req *req, int status, const char *fmt, ...)
{
	va_list	 ap;
	char	 msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	evfcgi_respond_error(req, status, msg);
}

/*
 * Every error answer, the engine's too: {"error": detail, "status": N}
 * and a newline; jansson checks the text's UTF-8.
 */
static int
error_page(struct evfcgi_req *req, int status, const char *detail,
    const char **ctype, char *buf, size_t size, void *arg)
{
	json_t	*v;
	size_t	 n;

	(void)req;
	(void)arg;
	if (detail == NULL)
		detail = status == 404 ? "no such resource" : status == 405 ?
		    "method not allowed here" : "request refused";
	if ((v = json_pack("{s:s, s:i}", "error", detail, "status",
	    status)) == NULL)	/* detail quoted bytes that are not UTF-8 */
		v = json_pack("{s:s, s:i}", "error", "bad request", "status",
		    status);
	n = v != NULL ? json_dumpb(v, buf, size - 1, JSON_COMPACT) : 0;
	json_decref(v);
	if (n == 0 || n > size - 1)
		return -1;
	buf[n] = '\n';
	*ctype = "application/json";
	return (int)n + 1;
}
