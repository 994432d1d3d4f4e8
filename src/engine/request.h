/*
 * request.h: one FastCGI request from BEGIN_REQUEST to END_REQUEST: its
 * state, its params and their CGI meaning, its body, and every public
 * evfcgi_* request function.  It sits below the connection: what it needs
 * of its connection (the output buffer, the counters, a word when it is
 * done) comes in a struct req_link the connection hands it.
 */
#ifndef REQUEST_H
#define REQUEST_H

#include <sys/queue.h>
#include <sys/time.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "budget.h"
#include "evfcgi.h"
#include "fcgi_out.h"

struct evbuffer;

/*
 * A request's life is two machines and who holds it.
 *
 * Input, what the peer still sends: IN_PARAMS -> IN_BODY -> IN_DONE.  Its
 * body is buffered (the handler runs at IN_DONE), streamed (EVFCGI_ROUTE_
 * STREAM: the handler runs at the start of IN_BODY and is handed the body
 * as it comes) or a filter's STDIN and DATA (IN_DONE once both ended).
 * A request answered before its input ended waits in IN_BODY for its
 * empty STDIN, dropping what comes, and is freed then: it never reaches
 * IN_DONE.
 *
 * Output, what has gone to the peer: OUT_NONE -> OUT_HEADER -> OUT_ENDED,
 * or OUT_NONE -> OUT_ENDED (an answer that could not be queued).  Between
 * header and end, its body goes by copies, by a producer (r_prod) or from
 * a descriptor (r_fdsrc).  OUT_ENDED is END_REQUEST queued, the answer cut
 * (req_link_cut()), or the request lost with its connection; it is entered
 * in one place, req_end(), and there before any application callback
 * runs.
 *
 * The application holds a request from req_dispatch() (r_app) until it
 * ends it or lets go of it (req_release_app()); the engine holds it
 * before and after.  Every end goes through req_end().  req_set_in() and
 * req_set_out() refuse any other step; the predicates below say in those
 * terms what the code asks of a request.
 */
enum req_in {
	IN_PARAMS,	/* collecting PARAMS */
	IN_BODY,	/* collecting (or, answered, dropping) the body */
	IN_DONE		/* its input has ended */
};
#define REQ_IN_N	3

enum req_out {
	OUT_NONE,	/* nothing queued */
	OUT_HEADER,	/* the header block is queued */
	OUT_ENDED	/* END_REQUEST queued, or the answer cut */
};
#define REQ_OUT_N	3

/* What a request calls in its connection; each gets the link's owner. */
struct req_ops {
	/* r's answer ended: free r (req_over()) or keep it until its
	   input ends. */
	void	(*ro_done)(struct evfcgi_req *r, void *owner);
	/* r has a producer now (on): run it as the output has room; or
	   none any more: stop. */
	void	(*ro_produce)(struct evfcgi_req *r, int on, void *owner);
	/* Output could not be queued: the stream is broken, close. */
	void	(*ro_failed)(void *owner, const char *why);
	/* r's streamed body may take input again, or has some to hand
	   over: look at it on the next loop turn (req_body_kick()). */
	void	(*ro_resume)(struct evfcgi_req *r, void *owner);
};

/* What a route says of a request (the layer above fills it). */
struct req_route {
	evfcgi_handler	 rr_fn;		/* NULL: 404 */
	void		*rr_arg;
	int		 rr_flags;	/* EVFCGI_ROUTE_* */
	const char	*rr_allow;	/* not NULL: 405, with this Allow */
	size_t		 rr_plen;	/* path bytes the route matched */
	uint64_t	 rr_body_max;	/* evfcgi_route_body_limit(), 0: none */
};

/* A byte buffer that keeps its room from one request to the next. */
struct req_buf {
	char	*b_p;
	size_t	 b_len;
	size_t	 b_cap;
};

/*
 * Requests freed, kept with their buffers for the next ones, so that a
 * request in steady state allocates nothing.  At most REQ_POOL_MAX of them,
 * each keeping at most REQ_KEEP bytes a buffer.
 */
#define REQ_POOL_MAX	256
#define REQ_KEEP	4096
struct req_pool {
	struct evfcgi_req	*rp_free;
	size_t			 rp_n;
};

/* Frees the requests kept in pool. */
void	req_pool_fini(struct req_pool *pool);

/* What all requests of a server share; owned by the layer above. */
struct req_env {
	struct event_base		*re_base;
	struct evfcgi_server		*re_srv;	/* for the application */
	const struct evfcgi_limits	*re_lim;
	struct evfcgi_stats		*re_st;
	struct budget			*re_input;	/* input held, all conns */
	struct budget			*re_output;	/* output queued, all
							   conns; NULL: no cap */
	const struct req_ops		*re_ops;
	struct req_pool			*re_pool;
	/* r has been answered (END_REQUEST queued); may be NULL. */
	void	(*re_finished)(void *arg, struct evfcgi_req *r);
	void				*re_finished_arg;
	evfcgi_error_page		 re_errpage;	/* or NULL */
	void				*re_errpage_arg;
};

/* What a connection lends all its requests; owned by the connection. */
struct req_link {
	struct fcgi_out			 rl_out;
	const struct req_env		*rl_env;
	void				*rl_owner;
	const char			*rl_peer;	/* for logs */
	int				 rl_broken;	/* output failed */
	int				 rl_cut;	/* an answer was cut: the
							   connection is reset */
	struct evfcgi_req		*rl_prod;	/* its producer runs */
	/* Its requests by input state: kept by req_new(), req_set_in()
	   and req_free() alone. */
	uint16_t			 rl_nin[REQ_IN_N];	/* ids: 16 bits */
};

/* A name, value pair of PARAMS, a cookie or a form (NUL-ended both). */
struct param {
	const char	*p_name;
	const char	*p_value;
	size_t		 p_nlen;	/* strlen(p_name): compared first */
};

/*
 * What a connection reads of a request and keeps in it: the first member
 * of every struct evfcgi_req (req_struct.h, for the request's own files
 * alone), reached through req_h().  The connection links its lists
 * through it and reads the request's state from it; only the request's
 * files write the state.
 */
struct req_head {
	/* The connection's (conn.c): */
	TAILQ_ENTRY(req_head)	 h_entry;	/* all its requests */
	TAILQ_ENTRY(req_head)	 h_params_entry; /* while in PARAMS */
	TAILQ_ENTRY(req_head)	 h_prod_entry;	/* its producers */
	struct req_head		*h_kick_next;	/* its kicked bodies */
	struct timeval		 h_wait_from;	/* its PARAMS awaited since:
						   BEGIN_REQUEST read, or
						   later (conn_params_clock) */
	unsigned		 h_prod_listed:1; /* on the producers' list */
	unsigned		 h_kick_listed:1; /* on the kicked list */
	/* The request's, read by the connection: */
	uint16_t		 h_id;
	uint8_t			 h_keep;	/* FCGI_KEEP_CONN */
	uint8_t			 h_role;	/* FCGI_RESPONDER ... */
	enum req_in		 h_in;		/* the two machines (above) */
	enum req_out		 h_out;
	unsigned		 h_app:1;	/* its handler holds it: from
						   req_dispatch() to its end */
	unsigned		 h_stream:1;	/* its body streamed */
	unsigned		 h_stdin_done:1; /* its empty STDIN came */
	unsigned		 h_data_open:1;	/* a filter's empty DATA not in */
	unsigned		 h_kick:1;	/* body to hand over next turn */
	unsigned		 h_prod_idle:1;	/* its producer wrote nothing:
						   waits for the low mark or
						   its need */
	size_t			 h_prod_room;	/* its producer's last room */
	size_t			 h_prod_need;	/* evfcgi_produce_need() */
	/* Its answer, for the access log and the server's counts: */
	struct timespec		 h_t0;		/* BEGIN_REQUEST read at,
						   CLOCK_MONOTONIC */
	int			 h_status;	/* of the header sent, or 0 */
	uint64_t		 h_sent;	/* body bytes queued */
};

/* r's head, and the request a head is the first member of. */
static inline struct req_head *
req_h(const struct evfcgi_req *r)
{
	return (struct req_head *)(void *)(uintptr_t)r;
}

static inline struct evfcgi_req *
req_of(struct req_head *h)
{
	return (struct evfcgi_req *)(void *)h;
}


/*
 * A new request id on link, collecting PARAMS.  Returns it, or NULL when
 * out of memory.  Counts it in the link's statistics.
 */
struct evfcgi_req *req_new(struct req_link *link, uint16_t id, int keep);

/*
 * Frees r and what it holds (back to the pool); says nothing on the wire.
 * Call it once: r is gone after it.
 */
void	req_free(struct evfcgi_req *r);

/*
 * The application lets go of r: if it holds r (r_app), its abort callback
 * runs once, with r locked (r_app_locked) so that nothing it calls on r
 * answers or ends it.  r is the engine's after it.
 */
void	req_release_app(struct evfcgi_req *r);

/* How a request ends (req_end()). */
enum req_end {
	END_COMPLETE,	/* answered: END_REQUEST after what was queued */
	END_CUT,	/* its answer stops short: the cut mark, then a reset */
	END_ABORTED,	/* the peer's ABORT_REQUEST: END_REQUEST if not yet */
	END_LOST	/* its connection is gone or cut: nothing more */
};

/*
 * The one end of every request: r's output is marked ended (OUT_ENDED)
 * before anything else, so that no callback can answer it; then, when the
 * end is not the application's own (END_ABORTED, END_LOST), its abort
 * callback runs (req_release_app()); then the wire hears of it as how
 * says.  After END_COMPLETE and END_CUT, the access log and the
 * connection (ro_done) are told, which frees r or keeps it until its
 * input ends; after the other two the caller frees r.  Answers reach it
 * through req_finish() (response.c), which checks the body against its
 * Content-Length first.
 */
void	req_end(struct evfcgi_req *r, enum req_end how);

/* r dies unfinished: req_end(END_LOST), then freed. */
void	req_kill(struct evfcgi_req *r);

/* The application holds r: its handler ran, its answer has not ended. */
static inline int
req_held(const struct evfcgi_req *r)
{
	return req_h(r)->h_app && req_h(r)->h_out != OUT_ENDED;
}

/* r's body comes to the engine, not yet to a handler: none holds it. */
static inline int
req_collecting(const struct evfcgi_req *r)
{
	const struct req_head	*h = req_h(r);

	return h->h_in == IN_BODY && !h->h_app && h->h_out != OUT_ENDED;
}

/* Past its PARAMS and not answered: the engine or its handler may answer. */
static inline int
req_answerable(const struct evfcgi_req *r)
{
	return req_h(r)->h_in != IN_PARAMS && req_h(r)->h_out != OUT_ENDED;
}

/* A streamed body still coming to its handler. */
static inline int
req_body_open(const struct evfcgi_req *r)
{
	const struct req_head	*h = req_h(r);

	return h->h_stream && h->h_in == IN_BODY && h->h_out != OUT_ENDED;
}

/* Answered, and its input over: nothing keeps r. */
static inline int
req_over(const struct evfcgi_req *r)
{
	return req_h(r)->h_out == OUT_ENDED && req_h(r)->h_in == IN_DONE;
}

/*
 * Adds one PARAMS record's content (len > 0).  Beyond max_params the pairs
 * are dropped and the request will be answered 431.  Returns 0, or -1 when
 * out of memory.
 */
int	req_params_add(struct evfcgi_req *r, const void *p, size_t len);

/*
 * PARAMS ended: decodes the pairs and the path (percent-decoded), then
 * waits to be routed (state STDIN), or answers at once (431, 400, 503).
 * Returns 0, or -1 with *why when the pairs are malformed: the connection
 * must close.
 */
int	req_params_end(struct evfcgi_req *r, const char **why);

/*
 * Acts on r's route (r in STDIN after req_params_end()): 405 with Allow,
 * the body length checked (400, 413, 503), and a streamed request handed
 * to its handler at once (503 instead when full says the output queues
 * are full).  Otherwise r waits for its body, then req_dispatch().
 */
void	req_route(struct evfcgi_req *r, const struct req_route *rt, int full);

/*
 * Decodes the %XX escapes of the len bytes at src into dst (room for len
 * + 1; NUL-ended).  Returns the decoded length, or -1 for '%' not followed
 * by two hex digits or for %00.
 */
long	req_pct_decode(char *dst, const char *src, size_t len);

/*
 * Cleans a path that begins with '/', in place, as nginx does before it
 * matches locations: doubled slashes merged, "." segments dropped, each
 * ".." segment taking the one before it away (RFC 3986 5.2.4).  Other
 * paths are left alone.  Returns 0, or -1 when a ".." would climb above
 * the root (nginx answers that 400).
 */
int	req_path_clean(char *path);

/* The value of the hex digit c, or -1 (req_pct_decode()'s, query.c's). */
int	req_hexval(int c);

/*
 * Adds len > 0 bytes of body.  Beyond max_body the request is answered 413
 * (a streamed one: beyond its own cap, and its body is handed to its body
 * callback).  Returns 0, or -1 when out of memory.
 */
int	req_body_add(struct evfcgi_req *r, const void *p, size_t len);

/*
 * Whether a STDIN record for r must wait unread: r's streamed body holds
 * more than the low watermark.  Then r resumes its connection
 * (ro_resume) once the handler drained it below.
 */
int	req_body_full(struct evfcgi_req *r);

/* A streamed body ended (its empty STDIN): the body callback is told. */
void	req_body_end(struct evfcgi_req *r);

/* Hands a streamed body what waits, if r was kicked (ro_resume). */
void	req_body_kick(struct evfcgi_req *r);

/*
 * The body is complete: hands r to its routed handler (none: 404), or
 * answers 503 at once when full says the output queues are full.
 */
void	req_dispatch(struct evfcgi_req *r, int full);

/*
 * Runs r's producer with room bytes to fill; its writes in this call are
 * capped (about room plus a high mark).  Returns 1 when r is gone (the
 * whole body produced and r finished, or r ended meanwhile), 0 when it
 * wants to be called again: r_prod.p_idle is set when it wrote nothing.  A
 * body-less answer (HEAD) runs its producer once: r then ends here.
 */
int	req_produce(struct evfcgi_req *r, size_t room);

/*
 * Charges n more bytes of input held to the global cap, on *what (which
 * req_free() gives back when it is one of r's r_charged_*).  Returns 0,
 * or -1 (nothing charged) when they do not fit.
 */
int	req_charge(struct evfcgi_req *r, size_t *what, size_t n);

/* The cap of r's body (and a filter's DATA): its route's, else max_body. */
uint64_t req_body_cap(struct evfcgi_req *r);

/*
 * The one way the engine refuses a request: counts it (413 and 431 as
 * rejected, 503 as overloaded) and answers status with why as the detail,
 * naming limit when it is not 0 ("... of N bytes").  Callers let go of
 * what r held first.
 */
void	req_refuse(struct evfcgi_req *r, int status, const char *why,
	    uint64_t limit);

/*
 * req_data.c, above this file: a filter's DATA stream.  req_data_begin()
 * readies it when r is routed (FCGI_DATA_LENGTH checked: 400, 413);
 * req_data_add() takes len > 0 bytes of it (413 past the cap, 400 past
 * FCGI_DATA_LENGTH, 503 at the global input cap); req_data_end() checks
 * its length at its empty record (400).  Each answers r itself when it
 * must (r then drains); the first two return 0, or -1 when out of memory.
 */
int	req_data_begin(struct evfcgi_req *r);
int	req_data_add(struct evfcgi_req *r, const void *p, size_t len);
void	req_data_end(struct evfcgi_req *r);

/* Room for n bytes in b.  Returns 0, or -1 out of memory. */
int	req_buf_reserve(struct req_buf *b, size_t n);

/*
 * An answer on l is cut: queues the cut mark (fcgi_out_cut()) once, after
 * what is queued, and breaks l's stream so that nothing follows it; the
 * connection is reset once its output is out (rl_cut).
 */
void	req_link_cut(struct req_link *l);

/* Closes the descriptor evfcgi_write_fd() gave r, if any (response.c). */
void	req_fd_close(struct evfcgi_req *r);

/* The status line's reason phrase for status ("Unknown" for others). */
const char *req_status_text(int status);
/*
 * evfcgi_header() with the Status line's reason phrase (NULL or empty:
 * the standard one for status): a CGI program's own phrase passes on.
 */
int	req_header(struct evfcgi_req *, int status, const char *reason,
	    const char *ctype, long long content_length);

/*
 * Answers status with the body the server's error page maker gives
 * (evfcgi_set_error_page()).  Returns 0 when it did (r is gone), 1 when it tried and
 * evfcgi_respond() refused the page (a 500 went instead; r is gone too),
 * -1 when there is no maker or it declined: the caller sends the
 * engine's own page.
 */
int	req_error_page(struct evfcgi_req *r, int status, const char *detail);

#endif /* REQUEST_H */
