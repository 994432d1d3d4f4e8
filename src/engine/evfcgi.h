/*
 * evfcgi.h: the evfcgid engine as a library.
 *
 * An application makes a server on its libevent base, registers a handler
 * per path, binds listeners and calls evfcgi_run().  One thread, one loop:
 * handlers must never block.  Output is queued per connection and paced by
 * watermarks, so a slow reader holds at most a watermark of its response.
 *
 * For a HEAD request (RFC 3875 6.3.3) the engine drops the body: writes
 * succeed and send nothing, so a handler needs no special case.
 *
 * A request belongs to the engine; the application holds a borrowed
 * pointer.  A handler answers it with evfcgi_respond(), or with
 * evfcgi_header() (after any evfcgi_header_add()) followed by writes (or a
 * producer, or a file descriptor) and evfcgi_finish().  It may answer at
 * once or later, from a timer or any other event of the loop (an
 * asynchronous handler); until it does, the request stays open.  The
 * request pointer stays valid until one of these, and not a moment after:
 *   - evfcgi_finish(), evfcgi_respond() or evfcgi_respond_error() returns;
 *   - a producer returned 1, or evfcgi_write_fd()'s last byte was queued;
 *   - the abort callback (evfcgi_on_abort()) returns: the peer aborted
 *     (FCGI_ABORT_REQUEST), its connection closed or failed, or the engine
 *     ended a streamed body (413 past evfcgi_body_limit(), 503 at the
 *     global input cap) or a body-less answer whose producer returned 0
 *     (HEAD: see evfcgi_producer).
 * The abort callback runs at most once, only while the application holds
 * the request, never after it finished; it must release what the
 * application keeps for the request (timers, producer state): the engine
 * frees the request and closes a pending evfcgi_write_fd() descriptor
 * itself.  Inside it the request is already ended: it may be read, and
 * every call that would answer it or set it up (respond, header, the
 * writes, produce, finish, on_body ...) returns -1 and queues nothing (a
 * descriptor or reference handed over is closed or released as on any
 * refusal), so the peer gets at most one END_REQUEST for it.  Strings the accessors return belong to the request and die
 * with it.  Nothing here may be called from another thread.
 */
#ifndef EVFCGI_H
#define EVFCGI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evbuffer;
struct evfcgi_server;
struct evfcgi_req;

struct evfcgi_limits {
	size_t	max_conns;		/* connections at once */
	size_t	max_reqs;		/* requests in flight per connection */
	size_t	max_conn_requests;	/* requests per connection, 0: no cap */
	size_t	max_params;		/* PARAMS bytes per request */
	size_t	max_body;		/* STDIN bytes per request */
	size_t	high_water;		/* per-connection output: pause above */
	size_t	low_water;		/* per-connection output: resume below */
	size_t	max_queued;		/* output queued in all connections */
	size_t	max_input;		/* request input (PARAMS, bodies) held
					   in all connections */
	size_t	sndbuf;			/* SO_SNDBUF of accepted sockets (64k); 0:
					   the kernel's autotuning */
	int	header_timeout;		/* s from BEGIN_REQUEST to end of PARAMS */
	int	idle_timeout;		/* s without input while waiting for it */
	int	write_timeout;		/* s of queued output without progress */
	int	drain_timeout;		/* s allowed to finish after SIGTERM */
	size_t	share_floor;		/* a slow connection's share of
					   max_queued: at least this (8k) */
};

struct evfcgi_stats {
	uint64_t	connections;		/* open now */
	uint64_t	connections_total;
	uint64_t	requests_total;		/* BEGIN_REQUEST accepted */
	uint64_t	requests_active;
	uint64_t	bytes_queued;		/* output waiting in all sockets */
	uint64_t	peak_bytes_queued;
	uint64_t	bytes_input;		/* PARAMS and bodies held */
	uint64_t	peak_bytes_input;
	uint64_t	stalled;		/* sockets waiting above the low mark */
	uint64_t	holding;		/* sockets holding output the kernel
						   refused (sharing max_queued) */
	uint64_t	share;			/* bytes each of those may hold */
	uint64_t	overloaded;		/* answered FCGI_OVERLOADED or 503 */
	uint64_t	rejected;		/* answered 413 or 431 */
	uint64_t	aborted;		/* ABORT_REQUEST or peer gone */
	uint64_t	closed_on_error;	/* malformed input or a timeout */
	uint64_t	denied;			/* peers closed at accept: not in
						   the allowed list */
	uint64_t	bytes_written;		/* to the sockets, all records */
	uint64_t	body_bytes;		/* response bodies queued */
	uint64_t	answered_2xx;		/* requests finished, by status */
	uint64_t	answered_3xx;
	uint64_t	answered_4xx;
	uint64_t	answered_5xx;		/* (and any other status) */
	uint64_t	status_413;		/* limit hits by answer */
	uint64_t	status_431;
	uint64_t	status_503;
	uint64_t	timeouts_header;	/* PARAMS not complete in time */
	uint64_t	timeouts_record;	/* a record trickled */
	uint64_t	timeouts_idle;		/* a request body stalled */
	uint64_t	timeouts_write;		/* output without progress */
	uint64_t	lingering;		/* closed, the answer's last
						   bytes still in the kernel's
						   queue: held until sent */
};

/*
 * Called once a request's params and body have arrived; or, on a route
 * registered with EVFCGI_ROUTE_STREAM, as soon as its params have (the
 * body then comes through evfcgi_on_body()).
 */
typedef void	(*evfcgi_handler)(struct evfcgi_req *, void *);

/*
 * Called when the connection's output has room for about room more bytes
 * (what is left below its high watermark); writes some output.  Returns 1
 * when the body is complete (the engine then finishes the request), 0 to
 * be called again when there is room.  A producer that ends the request
 * itself (evfcgi_finish() or an error answer) returns 0: the request is
 * gone by then.  No producer can hold the loop: one that returns 0 having
 * written nothing is called again only once the output has drained to its
 * low watermark (if it is there already, on the next loop turn), or once
 * the room it asked for with evfcgi_produce_need() is there; writes past
 * room plus a high watermark in one call are refused (-1, nothing queued:
 * return 0 and be called again).  A body-less answer (HEAD, 204, 304)
 * runs its producer once: returning 0, the engine ends the request there,
 * after its abort callback (evfcgi_on_abort()) let the state go.
 */
typedef int	(*evfcgi_producer)(struct evfcgi_req *, size_t room, void *);

/* Called when a request dies before it finished; release what it holds. */
typedef void	(*evfcgi_abort_cb)(struct evfcgi_req *, void *);

/*
 * A streamed body's bytes (EVFCGI_ROUTE_STREAM): called with body holding
 * what arrived and was not taken yet, done 0; then once with done 1 when
 * the body has ended (body may still hold bytes).  The callback takes what
 * it wants by draining body (evbuffer_remove(), evbuffer_drain(),
 * evfcgi_write_buffer()), now or later.  While body holds more than the
 * connection's low watermark, the engine reads nothing more from that
 * connection; draining it below resumes reading.  So an upload of any size
 * costs a watermark, whatever the handler's pace.
 */
typedef void	(*evfcgi_body_cb)(struct evfcgi_req *, struct evbuffer *body,
	    int done, void *);

/*
 * Route flags, for evfcgi_route_ex().  A route takes the requests of one
 * FastCGI role: Responder without a role flag (the default handler too),
 * else the role its flag names.  A request of a role no route takes is
 * refused at its BEGIN_REQUEST with FCGI_UNKNOWN_ROLE; one whose path no
 * route of its role takes is answered 404.
 *
 * An authorizer (FastCGI 1.0 6.3) gets no body: its handler runs at the
 * end of PARAMS, CONTENT_LENGTH means nothing and STDIN records are
 * ignored.  It answers 200 to let the request through, with header lines
 * "Variable-NAME: value" (evfcgi_header_add()) that the web server hands
 * the responder as NAME; any other status refuses it, and the web server
 * sends that answer (header lines, body) to the client.  evfcgi_respond()
 * sends an authorizer's answer (up to 8 KiB of body) in one record, as
 * Apache's mod_authnz_fcgi needs to pass the body on.
 *
 * A filter (FastCGI 1.0 6.4) gets STDIN and, after its PARAMS, a second
 * stream, FCGI_DATA (evfcgi_data()), read as STDIN is (capped by
 * max_body or the route's evfcgi_route_body_limit(), 413 past it);
 * FCGI_DATA_LENGTH, when given, must be a decimal number the stream
 * meets (else 400).  Its handler runs once both have ended.  A DATA record
 * for a Responder or an Authorizer is ignored.
 */
#define EVFCGI_ROUTE_PREFIX	0x01	/* path and everything below it */
#define EVFCGI_ROUTE_STREAM	0x02	/* handler runs at the end of PARAMS
					   (Responder only) */
#define EVFCGI_ROUTE_AUTHORIZER	0x04	/* FCGI_AUTHORIZER requests */
#define EVFCGI_ROUTE_FILTER	0x08	/* FCGI_FILTER requests */

/* The roles of FastCGI 1.0, as evfcgi_role() gives them. */
#define EVFCGI_RESPONDER	1
#define EVFCGI_AUTHORIZER	2
#define EVFCGI_FILTER		3

/*
 * Fills lim with the defaults evfcgid documents in --help; max_conns is
 * max_queued / share_floor (16384).  The library changes no process
 * limit: past the soft RLIMIT_NOFILE accept backs off, so an application
 * raises it itself (setrlimit(2), as evfcgid does at start).
 */
void	evfcgi_limits_default(struct evfcgi_limits *lim);

/*
 * Makes a server on base with a copy of lim.  Returns NULL when lim is
 * inconsistent (low_water above high_water, a zero cap).  base NULL: the
 * server makes its own, freed with it (evfcgi_req_base() gives it); lim
 * NULL: the defaults.
 */
struct evfcgi_server *evfcgi_server_new(struct event_base *base,
	    const struct evfcgi_limits *lim);

/*
 * Binds and listens on addr: "HOST:PORT", "[V6]:PORT" or "unix:/path"
 * (a stale socket file is replaced; the socket is made with mode's
 * permission bits by the umask around bind()).  Returns 0, or -1
 * with a message in err (errlen bytes).
 */
int	evfcgi_listen(struct evfcgi_server *srv, const char *addr, int mode,
	    char *err, size_t errlen);

/*
 * Serves an already listening socket (fd 0 under spawn-fcgi or lighttpd's
 * bin-path).  Returns 0, or -1 when fd is not a listening socket.
 */
int	evfcgi_listen_fd(struct evfcgi_server *srv, int fd);

/* Serves an already connected socket (tests use socketpairs); 0 or -1. */
int	evfcgi_adopt(struct evfcgi_server *srv, int fd);

/*
 * Routing.  A request's path (evfcgi_path(): percent-decoded) picks its
 * handler: a route of that exact path first, else the longest prefix route
 * the path begins with ("/api/" takes "/api/x" and "/api/", not "/api"),
 * else the default handler, else the engine answers 404.  A route with a
 * method list answers other methods 405 with an Allow header (HEAD is
 * allowed wherever GET is).  A path with a malformed escape or %00 is
 * answered 400 before any route.  Registering a path (and kind) again
 * replaces its route.  Each returns 0, or -1 when out of memory or the
 * arguments are bad (an empty path, a method list that is not tokens).
 */

/* Routes requests whose path is exactly path, whatever their method. */
int	evfcgi_route(struct evfcgi_server *srv, const char *path,
	    evfcgi_handler fn, void *arg);

/* The same, for the methods in methods ("GET,POST": comma-separated). */
int	evfcgi_route_methods(struct evfcgi_server *srv, const char *path,
	    const char *methods, evfcgi_handler fn, void *arg);

/* Routes every path that begins with prefix. */
int	evfcgi_route_prefix(struct evfcgi_server *srv, const char *prefix,
	    evfcgi_handler fn, void *arg);

/*
 * The general form: flags EVFCGI_ROUTE_PREFIX, EVFCGI_ROUTE_STREAM and
 * one role (EVFCGI_ROUTE_AUTHORIZER or EVFCGI_ROUTE_FILTER, neither with
 * EVFCGI_ROUTE_STREAM), methods NULL for all.  A streamed route's body is not capped by
 * max_body (nor charged whole ahead): the handler sets its own cap with
 * evfcgi_body_limit(); what the engine holds of it is charged to max_input.
 * Past max_input a record still reaches a body callback that took all it
 * was handed before; a body left waiting there ends the request with 503.
 */
int	evfcgi_route_ex(struct evfcgi_server *srv, const char *path, int flags,
	    const char *methods, evfcgi_handler fn, void *arg);

/* The handler for paths no route takes (NULL: 404 again). */
void	evfcgi_route_default(struct evfcgi_server *srv, evfcgi_handler fn,
	    void *arg);

/*
 * Makes srv's loop handle SIGTERM and SIGINT (evfcgi_drain(), after which
 * evfcgi_run() returns) and SIGHUP (the log is reopened).  The library
 * changes no signal disposition of the process unless this is called.
 * Returns 0, or -1 when the handlers could not be installed.
 */
int	evfcgi_handle_signals(struct evfcgi_server *srv);

/*
 * Runs the loop until the drain after evfcgi_drain() ends (or nothing is
 * left to wait for).  At the drain's deadline (drain_timeout) every answer
 * still unfinished is cut before it returns: abort callbacks run, the cut
 * mark (a record header of version 0, which a front end takes for an
 * upstream error, over a unix socket as over TCP) follows what is queued,
 * and each connection is reset once that is out, one second at most; so
 * main may return right after it.  The application must ignore SIGPIPE
 * first: a write to a peer that has gone away raises it.  Returns 0, or -1
 * when the loop failed.
 */
int	evfcgi_run(struct evfcgi_server *srv);

/* Stops accepting and closes connections as their requests finish. */
void	evfcgi_drain(struct evfcgi_server *srv);

/* Closes everything the server holds and frees it. */
void	evfcgi_server_free(struct evfcgi_server *srv);

void	evfcgi_get_stats(struct evfcgi_server *srv, struct evfcgi_stats *st);
const struct evfcgi_limits *evfcgi_get_limits(struct evfcgi_server *srv);

/*
 * What a request says.  Strings are NUL-ended, owned by the request and
 * valid until it ends (see the top of this file).
 */

/*
 * A request parameter, or NULL when the request has none of that name.
 * A name given more than once is its last value (a later fastcgi_param
 * line overrides, as PHP-FPM and the CGI gateway read it); the path,
 * query and method are taken the same way.
 */
const char *evfcgi_param(struct evfcgi_req *req, const char *name);

/*
 * Iterates over all params in the order they came: start with *i = 0;
 * returns 1 with *name and *value set (and *i advanced), 0 at the end.
 * A pair whose name holds a NUL byte (only a hostile peer sends one) is
 * skipped, as evfcgi_param() never finds it; a value is read up to its
 * first NUL byte, here and by evfcgi_param() alike.
 */
int	evfcgi_param_next(struct evfcgi_req *req, size_t *i,
	    const char **name, const char **value);

/* EVFCGI_RESPONDER, EVFCGI_AUTHORIZER or EVFCGI_FILTER. */
int	evfcgi_role(struct evfcgi_req *req);

/*
 * A filter's FCGI_DATA stream (whole when its handler runs), owned by the
 * request; a handler may drain it.  NULL for the other roles.
 */
struct evbuffer *evfcgi_data(struct evfcgi_req *req);

/* REQUEST_METHOD ("GET", "POST" ...), "" when absent. */
const char *evfcgi_method(struct evfcgi_req *req);

/*
 * Whether req is a HEAD request: its body writes send nothing, so a
 * handler may send the header and finish without producing the body.
 */
int	evfcgi_is_head(struct evfcgi_req *req);

/*
 * The routed path: REQUEST_URI up to '?' with its %XX escapes decoded
 * ('+' stays '+'), else SCRIPT_NAME followed by PATH_INFO (which the web
 * server has decoded already); then, as nginx does, doubled slashes merged
 * and dot segments resolved (one that climbs above "/" is answered 400
 * before any route).  Never NULL.
 */
const char *evfcgi_path(struct evfcgi_req *req);

/* REQUEST_URI as the web server sent it, undecoded; "" when absent. */
const char *evfcgi_raw_uri(struct evfcgi_req *req);

/* QUERY_STRING, "" when absent. */
const char *evfcgi_query(struct evfcgi_req *req);

/*
 * REMOTE_ADDR, or NULL when absent; *port (when port is not NULL) gets
 * REMOTE_PORT, 0 when absent or not a port number.
 */
const char *evfcgi_remote_addr(struct evfcgi_req *req, int *port);

/*
 * The request body (STDIN), owned by the request; a handler may drain it.
 * On a streamed route it holds what arrived and was not taken yet.
 */
struct evbuffer *evfcgi_body(struct evfcgi_req *req);

/*
 * The request body (what evfcgi_body() holds) as one block of *len bytes,
 * for an application that includes no libevent header: owned by the
 * request, valid until the body is drained or the request ends.  Returns
 * "" with *len 0 for an empty body, NULL (with *len 0) when out of memory.
 */
const void *evfcgi_body_bytes(struct evfcgi_req *req, size_t *len);

/*
 * Streamed routes only: fn gets the body as it arrives (evfcgi_body_cb).
 * Set it in the handler; set later, what waits is handed over on the next
 * loop turn.  Returns 0, or -1 when req's body is not streamed or ended
 * and was handed over already.
 */
int	evfcgi_on_body(struct evfcgi_req *req, evfcgi_body_cb fn, void *arg);

/*
 * Streamed routes only: caps the body at max bytes (0: no cap).  Returns 0,
 * or -1 when the body is not streamed or already known (CONTENT_LENGTH) or
 * seen to be larger: the handler answers that itself (413).  Past the cap
 * later, the engine answers 413 (the abort callback runs first).
 */
int	evfcgi_body_limit(struct evfcgi_req *req, uint64_t max);

struct evfcgi_server *evfcgi_req_server(struct evfcgi_req *req);
struct event_base *evfcgi_req_base(struct evfcgi_req *req);

/*
 * Adds a header line "name: value" to the header block evfcgi_header()
 * sends; several of one name are sent in order (Set-Cookie).  Returns 0,
 * or -1 (logged, nothing added) once the header block was sent or the
 * request finished, when name is not an HTTP token or is one the engine
 * writes (Status, Content-Length), when value holds CR, LF or another
 * control character but tab, or past 64 KiB of added headers.  For an
 * authorizer, a name "Variable-NAME" (any case) is refused too unless
 * NAME is a variable name: letters, digits and '_', not a digit first.
 */
int	evfcgi_header_add(struct evfcgi_req *req, const char *name,
	    const char *value);

/*
 * Queues the CGI header block: Status, Content-Type (none when ctype is
 * NULL; else it replaces one evfcgi_header_add() gave: one Content-Type,
 * the last given), Content-Length unless content_length is negative, then
 * the lines evfcgi_header_add() gave.  A 1xx, 204 or 304 answer gets no
 * Content-Length and no body (RFC 9110: writes send nothing, as for HEAD).
 * Returns 0, or -1 (nothing queued, the request still open) once the
 * request has finished, when a header was queued already (a second one is
 * refused and logged), when status is not 100-599 or ctype holds a
 * control character such as CR or LF (logged), or when the output could
 * not be queued (the connection then closes and the abort callback runs).
 * A body that does not meet content_length is an error (logged): writes
 * past it are refused (-1), and a body short of it at evfcgi_finish()
 * makes the connection close after it, so the web server sees the answer
 * cut rather than a wrong one.
 */
int	evfcgi_header(struct evfcgi_req *req, int status, const char *ctype,
	    long long content_length);

/*
 * Queues a copy of len bytes of body.  Returns 0, or -1 (nothing queued)
 * before the header, once the request finished, past the Content-Length
 * the header gave, past a producer's share of one call (evfcgi_producer),
 * or when the output could not be queued.  The same for every write below.
 * Outside a producer's call, a write that would take the output of all
 * connections past max_queued (past it, past 9/8 of it plus two
 * share_floor per connection holding output, or, for more than
 * share_floor bytes, beyond the part kept for connections that drain:
 * evfcgi(3)) is refused too (-1, logged), every later write of the answer
 * as well (no gap in it), and the answer is cut at evfcgi_finish(): write
 * large bodies from a producer, which waits for room instead.
 */
int	evfcgi_write(struct evfcgi_req *req, const void *data, size_t len);

/*
 * Queues len bytes by reference, not copied: data must stay valid and
 * unchanged for the life of the server (shared static bodies).  0 or -1.
 */
int	evfcgi_write_ref(struct evfcgi_req *req, const void *data, size_t len);

/*
 * Queues len bytes by reference, not copied: data must stay valid and
 * unchanged until freefn(data, arg) runs, once, when the last of them has
 * left (or their connection closed); maybe after the request ended, maybe
 * before this returns (HEAD, an error).  freefn may be NULL.  0 or -1.
 */
int	evfcgi_write_ref_free(struct evfcgi_req *req, const void *data,
	    size_t len, void (*freefn)(const void *data, void *arg), void *arg);

/* Moves len bytes from src into the body without copying; 0 or -1. */
int	evfcgi_write_buffer(struct evfcgi_req *req, struct evbuffer *src,
	    size_t len);

/*
 * Sends len bytes of fd from offset as the rest of the body, read only as
 * the connection has room (a huge file costs a watermark), then finishes
 * the request, maybe before this returns.  fd belongs to the engine from
 * this call, success or not: closed when sent or when the request dies.
 * A read error or a file shorter than len cuts the response (logged).
 * Returns 0, or -1 before the header or once the request finished.
 */
int	evfcgi_write_fd(struct evfcgi_req *req, int fd, uint64_t offset,
	    uint64_t len);

/*
 * Hands the rest of the body to fn, called whenever the connection's output
 * is below its low watermark, until it returns 1.  It may be called (and
 * the request finish) before this returns.  fn NULL stops the calls (a
 * producer whose source has nothing yet: returning 0 without writing, it
 * would be called again each time the output is at its low mark, maybe
 * each loop turn); a later evfcgi_produce() resumes them.  Returns 0, or
 * -1 when req is not the handler's (answered already).
 */
int	evfcgi_produce(struct evfcgi_req *req, evfcgi_producer fn, void *arg);

/*
 * req's producer is called only when the room it gets is at least nbytes
 * (0: any room, the default): for a producer that writes whole units (a
 * line, a record) and would write nothing in less.  A need above what the
 * low watermark leaves (high_water - low_water) is met at the low mark.
 * Returns 0, or -1 when req is not the handler's.
 */
int	evfcgi_produce_need(struct evfcgi_req *req, size_t nbytes);

/*
 * fn(req, arg) runs if req dies before it finished (see the top of this
 * file); NULL clears it.  Clear it, or free its state knowing it will not
 * run, when the application finishes the request itself.
 */
void	evfcgi_on_abort(struct evfcgi_req *req, evfcgi_abort_cb fn, void *arg);

/*
 * Ends the response (END_REQUEST); the request must not be used after.
 * Returns 0, or -1 when the request had finished already, its output
 * failed, or its body fell short of its Content-Length: then the answer
 * is cut (logged; no END_REQUEST, and the connection is reset once its
 * output is out, so the front end reports the cut to its client).  Called
 * before any header (evfcgi_header()), it sends the engine's 500 page in
 * place of an empty answer (logged) and returns -1; the request ends all
 * the same.
 */
int	evfcgi_finish(struct evfcgi_req *req);

/*
 * Header, body and END_REQUEST in one go: for small answers.  The request
 * ends in any case.  Returns 0, or -1 when the answer was refused (status
 * not 100-599, a control character in ctype: logged, and a 500 goes in its
 * place; past the output cap, as evfcgi_write(): a 503 goes in its place,
 * before any of it is queued) or could not be queued as given.
 */
int	evfcgi_respond(struct evfcgi_req *req, int status, const char *ctype,
	    const void *body, size_t len);

/*
 * A short text/plain page for an error status, then END_REQUEST.  After
 * the header was sent the status can no longer be told: the answer is cut
 * there as evfcgi_finish() cuts a short one (logged; the connection is
 * reset), and the client sees it cut.  Returns as evfcgi_respond(), -1
 * also for that cut.
 */
int	evfcgi_respond_error(struct evfcgi_req *req, int status,
	    const char *detail);

/*
 * ---- Conveniences: the query, the path below a prefix route, a body cap
 * per route, the engine's error pages, printf, the log.  Each returns an
 * int or states its error value.  An application that uses none of them
 * pays nothing for them.
 */

/*
 * The query string (QUERY_STRING) read as form data: pairs split by '&',
 * a name split from its value by the first '=' (none: the value is ""),
 * '+' a space, %XX escapes decoded; empty pairs ("a=1&&b=2") are skipped.
 * A '%' not followed by two hex digits, or %00, makes the whole query
 * malformed.  Decoded once, at the first call, into memory the request
 * owns and keeps for the next one (so, in steady state, no allocation);
 * the strings are NUL-ended and valid until the request ends.
 */

/*
 * Sets *value to the value of the first pair named name.  Returns 1; 0
 * when no pair has that name (*value NULL); -1 (*value NULL) when the
 * query is malformed (errno EINVAL: answer 400) or out of memory (ENOMEM).
 */
int	evfcgi_query_param(struct evfcgi_req *req, const char *name,
	    const char **value);

/*
 * Iterates over the pairs in the order they came: start with *i = 0;
 * returns 1 with *name and *value set (and *i advanced), 0 at the end, -1
 * as evfcgi_query_param() when the query is malformed or out of memory.
 */
int	evfcgi_query_next(struct evfcgi_req *req, size_t *i,
	    const char **name, const char **value);

/*
 * The part of evfcgi_path() below the route that took the request: what
 * follows the prefix of a prefix route ("/api/" took "/api/items/7":
 * "items/7"), "" for an exact route, the whole path for the default
 * handler.  Decoded as evfcgi_path() is; never NULL; owned by the request.
 */
const char *evfcgi_path_rest(struct evfcgi_req *req);

/*
 * evfcgi_header() with the Status line's reason phrase: reason (NULL or
 * empty: the standard one for status), as a gateway passes a CGI
 * program's own on ("Status: 404 Not Here").  Returns as evfcgi_header(),
 * and -1 (logged) when reason holds a control character.
 */
int	evfcgi_header_reason(struct evfcgi_req *req, int status,
	    const char *reason, const char *ctype, long long content_length);

/* The standard reason phrase of an HTTP status, "Unknown" for others. */
const char *evfcgi_status_text(int status);

/*
 * Decodes the %XX escapes of the len bytes at src into dst (room for len
 * + 1; NUL-ended); '+' stays '+'.  Returns the decoded length, or -1 for
 * a '%' not followed by two hex digits, or for %00.
 */
long	evfcgi_pct_decode(char *dst, const char *src, size_t len);

/*
 * Caps the body of the requests that the route registered for path (and
 * of the kind flags says: EVFCGI_ROUTE_PREFIX or not) takes, at max bytes.
 * A longer body is answered 413 by the engine (from CONTENT_LENGTH before
 * it comes, else as soon as it passes max) and the handler never runs.
 * On a route that is not streamed, max takes the place of max_body for
 * it (larger or smaller; max_input still caps what all requests hold); on
 * a streamed one it is the cap evfcgi_body_limit() sets, which the
 * handler may still change.  max 0 removes the route's cap.  Registering
 * the route again removes it too.  Returns 0, or -1 when no route has
 * that path and kind.
 */
int	evfcgi_route_body_limit(struct evfcgi_server *srv, const char *path,
	    int flags, uint64_t max);

/*
 * Makes the body of every error answer: the engine's own (400, 404, 405,
 * 413, 431, 500, 503 ...) and evfcgi_respond_error()'s.  Called with the
 * status and the engine's detail (or NULL), *ctype set to "text/plain";
 * it writes at most size (EVFCGI_ERROR_PAGE_MAX) bytes into buf, may set
 * *ctype to a string that stays valid after it returns (a literal), and
 * returns the body's length.  Returning -1 (or more than size) sends the
 * engine's own page, as does a *ctype that is NULL, empty, longer than 256
 * bytes or holding a control character (logged).  It may read req
 * (evfcgi_param() ...); a call that would answer it returns -1.
 */
#define EVFCGI_ERROR_PAGE_MAX	4096
typedef int	(*evfcgi_error_page)(struct evfcgi_req *req, int status,
	    const char *detail, const char **ctype, char *buf, size_t size,
	    void *arg);

/*
 * Sets srv's error page maker (NULL: the engine's text/plain).  Returns 0,
 * or -1 when srv is NULL.
 */
int	evfcgi_set_error_page(struct evfcgi_server *srv, evfcgi_error_page fn,
	    void *arg);

/*
 * Formats as printf(3) and writes the result as body, after the header.
 * Returns the number of bytes formatted (for HEAD too, whose body is
 * dropped), or -1 when evfcgi_write() would fail or out of memory.
 */
int	evfcgi_printf(struct evfcgi_req *req, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	evfcgi_vprintf(struct evfcgi_req *req, const char *fmt, va_list ap)
	    __attribute__((format(printf, 2, 0)));

/*
 * The library's log, for the whole process (evfcgid's own defaults:
 * stderr, "TIME evfcgid[PID] LEVEL: text", LOG_INFO).  Lines of priority
 * (syslog's: LOG_ERR 3, LOG_WARNING 4, LOG_INFO 6, LOG_DEBUG 7) above
 * level are dropped before they are formatted; level -1 drops them all.
 * With fn NULL lines go where they went, named ident (NULL: unchanged;
 * at most 63 bytes); with fn, each line is handed to fn, without time,
 * name or newline, msg valid during the call.  Returns 0, or -1 (nothing
 * changed) when level is not in -1..7 or ident is too long.
 */
typedef void	(*evfcgi_log_fn)(int prio, const char *msg, void *arg);
int	evfcgi_set_log(const char *ident, int level, evfcgi_log_fn fn,
	    void *arg);

/*
 * ---- Requests as typed data: path parameters, forms, integers, cookies,
 * multipart uploads, JSON and HTML out, and an in-process test harness.
 * Each is bounded, linear in its input, and says which answer bad input
 * deserves: errno EINVAL for 400, EMSGSIZE for 413.
 */

/*
 * Route patterns.  A path given to evfcgi_route(), evfcgi_route_methods()
 * or evfcgi_route_ex() (not with EVFCGI_ROUTE_PREFIX) that holds a '{' is
 * a pattern: segments split by '/', each a literal, "{name}" (one
 * non-empty segment) or, last only, "{name...}" (the rest of the path,
 * one segment or more, "" for a trailing '/').  Names are letters, digits
 * and '_'.  The request's raw path (REQUEST_URI) is split into segments
 * first and each segment decoded after, so "%2F" is data inside its
 * segment; "." and ".." segments are resolved as nginx does.  An exact
 * route of the decoded path wins, then the most specific pattern (from
 * the left, a literal segment before {name} before {name...}) or the
 * longest prefix route where it is more specific (a prefix "/a/b/" is as
 * specific as "/a/b/{rest...}"), then the default handler.  A method the
 * route does not list is answered 405 with Allow.  Exact and prefix
 * routes compare the decoded path (evfcgi_path()), patterns the raw
 * path's segments: "/files/a%2Fb" is two segments, taken by
 * "/files/{name}" (name "a/b") and never by "/files/{a}/{b}", beside a
 * prefix route "/files/" as without one.  Without REQUEST_URI the path is
 * SCRIPT_NAME and PATH_INFO, which the web server decoded: a %2F can no
 * longer be told from '/'.  A pattern route's evfcgi_path_rest() is the
 * whole path.  A route without a '{' costs nothing more than before.
 */

/*
 * The value of the pattern's parameter name, decoded, NUL-ended, owned by
 * the request; NULL when the route that took req has no such parameter.
 */
const char *evfcgi_path_param(struct evfcgi_req *req, const char *name);

/*
 * Form values: the pairs of an application/x-www-form-urlencoded body
 * (a route that is not streamed; at most EVFCGI_FORM_MAX_FIELDS pairs and
 * EVFCGI_FORM_MAX_BYTES bytes), then the query's, each decoded as
 * evfcgi_query_param() decodes.  A body of another type adds no pairs.
 * Strings are owned by the request.
 */
#define EVFCGI_FORM_MAX_FIELDS	1000
#define EVFCGI_FORM_MAX_BYTES	(1024 * 1024)

/*
 * Sets *value to the first value named name, from the body, else the
 * query.  Returns 1; 0 when none (*value NULL); -1 (*value NULL) with
 * errno EINVAL (a malformed body or query: answer 400), EMSGSIZE (past the
 * caps: 413), ENOTSUP (a streamed route's body) or ENOMEM.
 */
int	evfcgi_form_value(struct evfcgi_req *req, const char *name,
	    const char **value);

/* Iterates over the body's pairs then the query's, as evfcgi_query_next(). */
int	evfcgi_form_next(struct evfcgi_req *req, size_t *i, const char **name,
	    const char **value);

/*
 * Reads s as a decimal integer in min..max, whatever the locale: an
 * optional '-', then digits only (no space, no '+', no other base).
 * Returns 0 with *out set, or -1 with errno EINVAL (not a number) or
 * ERANGE (outside min..max or long long).
 */
int	evfcgi_parse_int(const char *s, long long min, long long max,
	    long long *out);

/*
 * The query's (or form's) value of name read by evfcgi_parse_int().
 * Returns 1 with *out set; 0 when absent; -1 with errno as
 * evfcgi_query_param() or evfcgi_parse_int() set it (answer 400).
 */
int	evfcgi_query_int(struct evfcgi_req *req, const char *name,
	    long long min, long long max, long long *out);
int	evfcgi_form_int(struct evfcgi_req *req, const char *name,
	    long long min, long long max, long long *out);

/*
 * Escapes len bytes of src for HTML text and quoted attribute values
 * (& < > " ' as entities, NUL as U+FFFD) into dst, NUL-ended, at most
 * size bytes with the NUL (never a partial entity).  Returns the escaped
 * length, as snprintf(3): size was enough when it is below size.
 */
size_t	evfcgi_html_escape(char *dst, size_t size, const char *src,
	    size_t len);

/* Writes s escaped for HTML as body (evfcgi_write()); 0 or -1. */
int	evfcgi_write_html(struct evfcgi_req *req, const char *s);

/*
 * Cookies.  The Cookie header (HTTP_COOKIE) is split once, at the first
 * call, in time linear in its length: pairs split by ';', spaces around
 * them dropped, a value's double quotes taken off; a pair without '=' or
 * a name is skipped.  Values are not decoded.
 */

/*
 * Sets *value to the value of the first cookie named name (owned by the
 * request).  Returns 1; 0 when none (*value NULL); -1 (ENOMEM).
 */
int	evfcgi_cookie(struct evfcgi_req *req, const char *name,
	    const char **value);

/* A Set-Cookie line's attributes; all zero: a session cookie. */
struct evfcgi_cookie_opts {
	const char	*path;		/* Path, or NULL */
	const char	*domain;	/* Domain, or NULL */
	long long	 max_age;	/* Max-Age in s; 0: none; < 0: "0",
					   the cookie is deleted */
	long long	 expires;	/* Expires, s since the epoch; 0: none */
	int		 secure;	/* Secure */
	int		 http_only;	/* HttpOnly */
	const char	*same_site;	/* "Strict", "Lax", "None" or NULL */
};

/*
 * Formats "name=value; attributes" into buf (size bytes, NUL-ended).
 * Returns its length, or -1 with errno EINVAL when name is not a token,
 * value holds other than cookie-octets (RFC 6265 4.1.1: no space, '"',
 * ',', ';', '\\' or control; it may be quoted whole), Path holds ';' or a
 * control, Domain other than letters, digits, '-' and '.', SameSite is
 * not one of the three, SameSite=None comes without Secure, or a
 * "__Secure-" or "__Host-" name breaks its prefix's rules; ENOSPC when
 * buf is too small.
 */
int	evfcgi_cookie_format(char *buf, size_t size, const char *name,
	    const char *value, const struct evfcgi_cookie_opts *opts);

/*
 * Adds a Set-Cookie header line (evfcgi_header_add()) as
 * evfcgi_cookie_format() makes it (up to 4 KiB).  Returns 0, or -1 as
 * either refuses it (nothing added).
 */
int	evfcgi_set_cookie(struct evfcgi_req *req, const char *name,
	    const char *value, const struct evfcgi_cookie_opts *opts);

/*
 * A JSON writer: values appended in document order into a buffer the
 * writer owns, the grammar checked as they come.  Each call returns 0, or
 * -1 (errno EINVAL: a value where an object wants a key, a key outside
 * an object, a close that does not match, a second top value; EOVERFLOW:
 * nesting past EVFCGI_JSON_MAX_DEPTH; ENOMEM), and after a failure every
 * later call fails too.  Strings may hold any bytes: '"', '\\' and
 * control characters are escaped, invalid UTF-8 becomes U+FFFD, and
 * < > & U+2028 U+2029 are written as \\u escapes so the text is safe
 * inside HTML and JavaScript.
 */
#define EVFCGI_JSON_MAX_DEPTH	64
struct evfcgi_json;

/* A new writer (NULL when out of memory); freed by evfcgi_json_free(). */
struct evfcgi_json *evfcgi_json_new(void);
void	evfcgi_json_free(struct evfcgi_json *j);

int	evfcgi_json_object(struct evfcgi_json *j);
int	evfcgi_json_object_end(struct evfcgi_json *j);
int	evfcgi_json_array(struct evfcgi_json *j);
int	evfcgi_json_array_end(struct evfcgi_json *j);
/* An object member's name; its value comes next. */
int	evfcgi_json_key(struct evfcgi_json *j, const char *key);
/* A string (NULL: null), or len bytes as one. */
int	evfcgi_json_string(struct evfcgi_json *j, const char *s);
int	evfcgi_json_string_len(struct evfcgi_json *j, const void *s,
	    size_t len);
int	evfcgi_json_int(struct evfcgi_json *j, long long v);
int	evfcgi_json_bool(struct evfcgi_json *j, int v);
int	evfcgi_json_null(struct evfcgi_json *j);

/*
 * The text, NUL-ended, *len bytes, owned by j; NULL (errno) when a call
 * failed or the top value is not complete.
 */
const char *evfcgi_json_text(const struct evfcgi_json *j, size_t *len);

/*
 * Answers req with j's text: status, Content-Type application/json,
 * Content-Length, then END_REQUEST; the text is queued without a copy.
 * A writer that failed or is not complete answers 500 instead.  Frees j
 * in any case.  Returns 0, or -1 (the request ended all the same).
 */
int	evfcgi_json_respond(struct evfcgi_req *req, int status,
	    struct evfcgi_json *j);

/*
 * A streaming writer: sends req's header now (status, Content-Type
 * application/json, no Content-Length) and writes its text through
 * evfcgi_write() as it is made, each time EVFCGI_JSON_CHUNK bytes of it
 * are held, so it never holds more than that whatever the document's
 * size; a write that fails is the writer's failure (EIO).  Returns
 * NULL when out of memory or when evfcgi_header() refused (req is still
 * the caller's to answer in either case).  A large document is written
 * from a producer (evfcgi_produce()): a call writes values until
 * evfcgi_json_length() has grown by about its room, then flushes, so the
 * output waits for the client within the watermarks.  evfcgi_json_text()
 * and evfcgi_json_respond() refuse such a writer; evfcgi_json_free()
 * frees it and leaves req open (an abort callback's way).
 */
#define EVFCGI_JSON_CHUNK	16384
struct evfcgi_json *evfcgi_json_stream(struct evfcgi_req *req, int status);

/* Writes what a streaming writer holds; 0 (a buffered writer: 0), or -1. */
int	evfcgi_json_flush(struct evfcgi_json *j);

/* Bytes of text made so far, written or held. */
size_t	evfcgi_json_length(const struct evfcgi_json *j);

/* Bytes of text held, not yet written (a buffered writer: all of them). */
size_t	evfcgi_json_held(const struct evfcgi_json *j);

/*
 * Ends a streaming writer's answer: a complete document is flushed and
 * the request finished (evfcgi_finish()); one that failed or is not
 * complete is cut, as evfcgi_respond_error() cuts after a header, so the
 * client never takes it for whole.  Frees j.  Returns 0, or -1 (a cut,
 * a failed finish, or j not a streaming writer: EINVAL, req untouched).
 */
int	evfcgi_json_end(struct evfcgi_json *j);

/*
 * multipart/form-data uploads (RFC 7578), streamed: on a route registered
 * with EVFCGI_ROUTE_STREAM, evfcgi_multipart_new() takes the body over
 * and calls back per part: its start (name, filename, type), a file's
 * data in chunks as it arrives (never held whole), its end (a non-file
 * field's value whole, then), and once at the end of the form.  A
 * delimiter split anywhere across reads is found.  The parser holds at
 * most a part's header block and the non-file values, each capped;
 * its time is linear in the body.  A consumer that cannot take more
 * returns EVFCGI_MP_PAUSE: the body then waits in the engine, which stops
 * reading the connection past its low watermark, until
 * evfcgi_multipart_resume().
 */
#define EVFCGI_MP_PAUSE		1
#define EVFCGI_MP_MAX_PARTS	1000
#define EVFCGI_MP_MAX_HEADER	8192
#define EVFCGI_MP_MAX_FIELD	(1024 * 1024)

struct evfcgi_multipart;

struct evfcgi_part {
	const char	*name;		/* the field's name, "" when none */
	const char	*filename;	/* NULL: not a file */
	const char	*ctype;		/* its Content-Type, or NULL */
	const char	*value;		/* a non-file part's value, NUL-ended,
					   at its end only; else NULL */
	size_t		 value_len;
	uint64_t	 size;		/* data bytes so far */
};

/* Caps (0: the default named). */
struct evfcgi_multipart_limits {
	size_t		 max_parts;	/* parts (EVFCGI_MP_MAX_PARTS) */
	size_t		 max_header;	/* one part's header block
					   (EVFCGI_MP_MAX_HEADER bytes) */
	uint64_t	 max_field;	/* all non-file values
					   (EVFCGI_MP_MAX_FIELD bytes) */
	uint64_t	 max_file;	/* one file part; 0: no cap */
};

/*
 * The callbacks (each may be NULL).  part, data and part_end return 0 to
 * go on, or an HTTP status (400 and up) that ends the form with it; data
 * may return EVFCGI_MP_PAUSE having taken its bytes.  The strings of a
 * struct evfcgi_part live until its part_end returns.  done(req, status)
 * comes once, when the form ended (status 0: every part was handed over),
 * or with the status the request deserves: 400 (malformed: a delimiter
 * not followed by CRLF, a header line not ended by CRLF, no
 * Content-Disposition form-data, a body that ended before the close
 * delimiter), 413 (past a cap) or a callback's.  The application answers
 * the request then (the rest of the body is dropped), and may free the
 * parser there.  If the request dies first (evfcgi_on_abort()), done is
 * not called: free the parser in the abort callback.
 */
struct evfcgi_multipart_cbs {
	int	(*part)(struct evfcgi_req *req, const struct evfcgi_part *part,
		    void *arg);
	int	(*data)(struct evfcgi_req *req, const struct evfcgi_part *part,
		    const void *data, size_t len, void *arg);
	int	(*part_end)(struct evfcgi_req *req,
		    const struct evfcgi_part *part, void *arg);
	void	(*done)(struct evfcgi_req *req, int status, void *arg);
};

/*
 * Reads req's body as multipart/form-data from now on (the handler of a
 * streamed route calls it), with lim's caps (NULL: the defaults); cbs is
 * copied.  Returns the parser, or NULL with errno EINVAL (CONTENT_TYPE is
 * not multipart/form-data with a valid boundary: answer 400), ENOTSUP
 * (the route is not streamed) or ENOMEM.
 */
struct evfcgi_multipart *evfcgi_multipart_new(struct evfcgi_req *req,
	    const struct evfcgi_multipart_cbs *cbs,
	    const struct evfcgi_multipart_limits *lim, void *arg);

/* Data comes again after EVFCGI_MP_PAUSE (from the next loop turn). */
void	evfcgi_multipart_resume(struct evfcgi_multipart *mp);

/* Frees the parser: after done, or in the request's abort callback. */
void	evfcgi_multipart_free(struct evfcgi_multipart *mp);

/*
 * Percent-encodes src for a URL path segment or query value: all but
 * letters, digits and "-._~", into dst as evfcgi_html_escape() does
 * (NUL-ended, never a partial escape).  Returns the encoded length.
 */
size_t	evfcgi_url_escape(char *dst, size_t size, const char *src);

/*
 * Reads a Range header value (HTTP_RANGE) for a body of size bytes: one
 * range "bytes=A-B", "bytes=A-" or "bytes=-N".  Returns 1 with *off and
 * *len set (B clipped to the end); 0 to send the whole body (h NULL, not
 * bytes, or several ranges); -1 when it cannot be met (answer 416).
 */
int	evfcgi_range_parse(const char *h, uint64_t size, uint64_t *off,
	    uint64_t *len);

/*
 * Answers req with the regular file fd (which the engine owns from this
 * call): Accept-Ranges, a single Range honoured (206 with Content-Range,
 * or 416 with a Content-Range of the size alone), Content-Length, ctype
 * (NULL: application/octet-stream), then the bytes through
 * evfcgi_write_fd().  Not a regular file: 404.  Returns 0, or -1.
 */
int	evfcgi_send_file(struct evfcgi_req *req, int fd, const char *ctype);

/*
 * Runs srv in n processes (1 to 64) on the listeners bound so far, as
 * evfcgid --workers runs the daemon: forks n workers, each running the
 * loop with evfcgi_handle_signals(); the parent passes SIGTERM, SIGINT and
 * SIGHUP on to them, replaces one that dies (at most once a second a
 * slot), and after SIGTERM or SIGINT waits while they drain.  Call it in
 * place of evfcgi_run(), the application's state set up before (each
 * worker has its copy: what must be shared between them lives outside,
 * in files or a database).  It returns in every process: in a worker
 * when its loop ended (as evfcgi_run()), in the parent once every worker
 * exited (0 when all exited 0, else -1); the application then frees srv
 * and returns from main.  The parent's dispositions of the three signals
 * are put back before it returns.  n 1 runs the loop here.
 */
int	evfcgi_run_workers(struct evfcgi_server *srv, int n);

/* The loop srv runs on (the one evfcgi_server_new() was given or made). */
struct event_base *evfcgi_server_base(struct evfcgi_server *srv);

/*
 * The test harness, as Go's httptest: one request made in this process
 * against srv's routes, with no socket for the caller to set up and no
 * web server.  It plays the web server on a socketpair the server adopts,
 * runs srv's loop until the answer has ended (handlers may answer later,
 * from timers), and hands back what a client would see.  The request's
 * params are those a web server sends (REQUEST_METHOD, REQUEST_URI,
 * SCRIPT_NAME, QUERY_STRING, CONTENT_LENGTH, REMOTE_ADDR, CONTENT_TYPE
 * and HTTP_* from headers).
 */
struct evfcgi_test_req {
	const char		*method;	/* NULL: "GET" */
	const char		*uri;		/* path and query; NULL: "/" */
	const char *const	*headers;	/* "Name: value", NULL-ended */
	const void		*body;
	size_t			 body_len;
	size_t			 chunk;		/* body bytes a STDIN record
						   (1..65535); 0: 65535 */
	int			 no_length;	/* send no CONTENT_LENGTH */
	int			 timeout_ms;	/* 0: 30 s */
};

struct evfcgi_test_resp {
	int	 status;	/* the Status header's, 200 without one; 0:
				   no answer came */
	int	 ended;		/* END_REQUEST came (else the answer was cut) */
	char	*body;		/* NUL-ended, body_len bytes */
	size_t	 body_len;
	size_t	 nhdr;		/* header lines */
	char	**hdr;		/* name, value, name, value ... */
	char	*headers;	/* their storage */
};

/*
 * Makes the request tr against srv and fills resp (freed with
 * evfcgi_test_free()).  Returns 0, or -1 with errno: ETIMEDOUT (no end
 * within the timeout), EPROTO (a malformed answer), or a system error.
 */
int	evfcgi_test_request(struct evfcgi_server *srv,
	    const struct evfcgi_test_req *tr, struct evfcgi_test_resp *resp);

/* The nth (from 0) value of the header name (any case), or NULL. */
const char *evfcgi_test_header(const struct evfcgi_test_resp *resp,
	    const char *name, size_t nth);

/* Frees what resp holds (its status and ended stay). */
void	evfcgi_test_free(struct evfcgi_test_resp *resp);

#endif /* EVFCGI_H */
