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
 * A request belongs to the engine.  A handler answers it with
 * evfcgi_respond(), or with evfcgi_header() followed by writes (or a
 * producer) and evfcgi_finish().  If the peer aborts or goes away first, the
 * abort callback (if any) runs and the request is freed: after that the
 * application must not touch it.
 */
#ifndef EVFCGI_H
#define EVFCGI_H

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
};

/* Called once a request's params and body have arrived. */
typedef void	(*evfcgi_handler)(struct evfcgi_req *, void *);

/*
 * Called when the connection has room for about room more bytes; writes
 * some output.  Returns 1 when the body is complete (the engine then
 * finishes the request), 0 to be called again when there is room.  A
 * producer that ends the request itself (evfcgi_finish() or an error
 * answer) returns 0: the request is gone by then.
 */
typedef int	(*evfcgi_producer)(struct evfcgi_req *, size_t room, void *);

/* Called when a request dies before it finished; release what it holds. */
typedef void	(*evfcgi_abort_cb)(struct evfcgi_req *, void *);

/* Fills lim with the defaults evfcgid documents in --help. */
void	evfcgi_limits_default(struct evfcgi_limits *lim);

/*
 * Makes a server on base with a copy of lim.  Returns NULL when lim is
 * inconsistent (low_water above high_water, a zero cap).
 */
struct evfcgi_server *evfcgi_server_new(struct event_base *base,
	    const struct evfcgi_limits *lim);

/*
 * Binds and listens on addr: "HOST:PORT", "[V6]:PORT" or "unix:/path"
 * (a stale socket file is replaced; mode applies to it).  Returns 0, or -1
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

/* Routes requests whose path is exactly path; 0, or -1 when out of memory. */
int	evfcgi_route(struct evfcgi_server *srv, const char *path,
	    evfcgi_handler fn, void *arg);

/*
 * Makes srv's loop handle SIGTERM and SIGINT (evfcgi_drain(), after which
 * evfcgi_run() returns) and SIGHUP (the log is reopened).  The library
 * changes no signal disposition of the process unless this is called.
 * Returns 0, or -1 when the handlers could not be installed.
 */
int	evfcgi_handle_signals(struct evfcgi_server *srv);

/*
 * Runs the loop until the drain after evfcgi_drain() ends (or nothing is
 * left to wait for).  The application must ignore SIGPIPE first: a write
 * to a peer that has gone away raises it.  Returns 0, or -1 when the loop
 * failed.
 */
int	evfcgi_run(struct evfcgi_server *srv);

/* Stops accepting and closes connections as their requests finish. */
void	evfcgi_drain(struct evfcgi_server *srv);

/* Closes everything the server holds and frees it. */
void	evfcgi_server_free(struct evfcgi_server *srv);

void	evfcgi_get_stats(struct evfcgi_server *srv, struct evfcgi_stats *st);
const struct evfcgi_limits *evfcgi_get_limits(struct evfcgi_server *srv);

/* A request parameter (NUL-ended, owned by the request) or NULL. */
const char *evfcgi_param(struct evfcgi_req *req, const char *name);
/* The routed path (REQUEST_URI up to '?', else SCRIPT_NAME+PATH_INFO). */
const char *evfcgi_path(struct evfcgi_req *req);
/* QUERY_STRING, "" when absent. */
const char *evfcgi_query(struct evfcgi_req *req);
/* The request body (STDIN), owned by the request; a handler may drain it. */
struct evbuffer *evfcgi_body(struct evfcgi_req *req);
struct evfcgi_server *evfcgi_req_server(struct evfcgi_req *req);
struct event_base *evfcgi_req_base(struct evfcgi_req *req);

/*
 * Queues the CGI header block: Status, Content-Type and, unless
 * content_length is negative, Content-Length.  Returns 0, or -1 once the
 * request has finished, when a header was queued already (a second one is
 * refused and logged), or when the output could not be queued (the
 * connection then closes and the abort callback runs).
 */
int	evfcgi_header(struct evfcgi_req *req, int status, const char *ctype,
	    long long content_length);

/*
 * Queues a copy of len bytes of body.  Returns 0, or -1 before the header,
 * once the request finished, or when the output could not be queued.
 */
int	evfcgi_write(struct evfcgi_req *req, const void *data, size_t len);

/*
 * Queues len bytes by reference, not copied: data must stay valid and
 * unchanged for the life of the server (shared static bodies).  0 or -1.
 */
int	evfcgi_write_ref(struct evfcgi_req *req, const void *data, size_t len);

/* Moves len bytes from src into the body without copying; 0 or -1. */
int	evfcgi_write_buffer(struct evfcgi_req *req, struct evbuffer *src,
	    size_t len);

/*
 * Hands the rest of the body to fn, called whenever the connection's output
 * is below its low watermark, until it returns 1.
 */
void	evfcgi_produce(struct evfcgi_req *req, evfcgi_producer fn, void *arg);

void	evfcgi_on_abort(struct evfcgi_req *req, evfcgi_abort_cb fn, void *arg);

/* Ends the response (END_REQUEST); the request must not be used after. */
void	evfcgi_finish(struct evfcgi_req *req);

/* Header, body and END_REQUEST in one go: for small answers. */
void	evfcgi_respond(struct evfcgi_req *req, int status, const char *ctype,
	    const void *body, size_t len);

/*
 * A short text/plain page for an error status, then END_REQUEST.  After
 * the header was sent the status can no longer be told: the response just
 * ends there (logged), and the client sees it cut.
 */
void	evfcgi_respond_error(struct evfcgi_req *req, int status,
	    const char *detail);

#endif /* EVFCGI_H */
