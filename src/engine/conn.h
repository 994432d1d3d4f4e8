/*
 * conn.h: one FastCGI connection: the bytes and records of its socket, its
 * table of requests in flight, its timers and its output buffer paced by
 * watermarks.  It knows nothing of the server above it: what it needs from
 * there comes in a struct conn_env at conn_new().
 */
#ifndef CONN_H
#define CONN_H

#include <sys/queue.h>

#include <stdint.h>

#include <event2/event_struct.h>

#include "budget.h"
#include "evfcgi.h"
#include "reqtab.h"
#include "request.h"

struct evbuffer;
struct event_base;
struct conn;

struct linger_set;

/* What the layer above lends every connection; it outlives them all. */
struct conn_env {
	struct event_base		*ce_base;
	const struct evfcgi_limits	*ce_lim;
	struct evfcgi_stats		*ce_st;		/* counters to keep */
	struct budget			*ce_budget;	/* the global output cap */
	struct budget			*ce_input;	/* the global input cap */
	struct evfcgi_server		*ce_srv;	/* for the application */
	struct linger_set		*ce_linger;	/* done, still sending */
	/* Fills rt with the route of r, whose params are in. */
	void		(*ce_route)(void *arg, struct evfcgi_req *r,
			    struct req_route *rt);
	/* Bit 1 << role set: a route takes that role (Responder always). */
	unsigned	 ce_roles;
	/* c is closing and is freed right after. */
	void		(*ce_closed)(void *arg, struct conn *c);
	void		*ce_arg;
	/* Lent to every request: the same base, limits, counters and input
	   cap as above, with conn_req_ops. */
	struct req_env	 ce_req;
};

/* How requests reach their connection (for conn_env's ce_req). */
extern const struct req_ops conn_req_ops;

/*
 * READING <-> PAUSED (output above the high mark), either -> CLOSING (no
 * more input; closes once the output is flushed), any -> DEAD.
 */
enum conn_state {
	CONN_READING,	/* reading and serving requests */
	CONN_PAUSED,	/* output above the high mark: no new input read */
	CONN_CLOSING,	/* no more input; closes once output is flushed */
	CONN_DEAD	/* torn down; freed when the callback unwinds */
};

/* The one timer a connection runs, by what it waits for. */
enum conn_timer {
	TIMER_NONE,
	TIMER_HEADER,	/* deadline for the PARAMS of a request */
	TIMER_IDLE,	/* no input for idle_timeout */
	TIMER_RECORD,	/* a record begun header_timeout ago, unfinished */
	TIMER_FAIL	/* output failed: close on the next loop turn */
};

TAILQ_HEAD(req_list, req_head);

struct conn {
	const struct conn_env	*c_env;
	struct evbuffer		*c_in;		/* unread input, or NULL */
	struct evbuffer		*c_out;
	struct event		 c_rev;		/* readable (while reading) */
	struct event		 c_wev;		/* writable (while the kernel
						   refuses bytes), or made
						   active to flush */
	unsigned		 c_reading:1;	/* c_rev is added */
	unsigned		 c_writing:1;	/* c_wev waits for room */
	unsigned		 c_holding:1;	/* counted a holder (budget.h):
						   the kernel refused bytes */
	unsigned		 c_flush_due:1;	/* c_wev made active */
	unsigned		 c_staging:1;	/* has the stage (conn_readcb) */
	unsigned		 c_close_after:1; /* close when no request left */
	unsigned		 c_first_due:1;	/* ... not before a BEGIN_REQUEST
						   or the end of input */
	unsigned		 c_in_records:1; /* acting on records just read */
	unsigned		 c_eof:1;	/* the peer sends no more */
	unsigned		 c_partial:1;	/* input ends inside a record */
	unsigned		 c_stream_held:1; /* a STDIN record waits for
						   its handler to take more */
	unsigned		 c_stuck:2;	/* write timer ran without a write */
	unsigned		 c_held:1;	/* not reading for itself
						   since c_held_since */
	unsigned		 c_idle_lazy:1;	/* c_timer pending for an idle
						   deadline at or before the
						   real one (checked on fire) */
	unsigned		 c_unix:1;	/* a unix socket (no TCP) */
	unsigned		 c_cut:1;	/* cut by conn_end(), CONN_RESET */
	unsigned		 c_thin:1;	/* kept lean in a spike while it
						   holds (conn_thin) */
	unsigned		 c_idle_keep:1;	/* the last input served no
						   request: idle goes on */
	unsigned		 c_in_paused:1;	/* not read: --max-input is
						   reached (conn_input_paused) */
	/* Bit-fields, and c_fd beside them: an idle connection's size. */
	enum conn_state		 c_state:3;
	enum conn_timer		 c_timer_kind:3;
	int			 c_fd;
	struct req_link		 c_link;	/* lent to its requests */
	struct reqtab		 c_tab;		/* requests in flight, by id */
	struct req_list		 c_reqs;	/* the same, in BEGIN order */
	struct req_list		 c_params;	/* those in PARAMS, in order */
	struct req_head		*c_kicked;	/* streamed bodies to look at
						   next turn (r_st.s_next) */
	struct req_list		 c_producers;	/* round-robin order */
	struct budget_waiter	 c_wait;	/* held by the global cap */
	struct budget_waiter	*c_in_wait;	/* ... by the input's cap: made
						   when c pauses, freed when
						   it may read again */
	uint64_t		 c_begun;	/* requests let in (not refused) */
	int			 c_outq;	/* kernel send queue seen then */
	int			 c_in_cb;	/* inside one of our callbacks */
	size_t			 c_allow;	/* its high mark at most: grows
						   as it drains (conn_high) */
	uint32_t		 c_fed_ms;	/* holding: its window began
						   (conn_fed), loop ms */
	uint32_t		 c_fed_bytes;	/* ... and what it drained
						   since (saturates) */
	struct timeval		 c_partial_since; /* its first byte came */
	struct timeval		 c_idle_from;	/* the idle countdown began */
	struct timeval		 c_held_since;
	struct event		 c_timer;
	struct event		*c_pwake;	/* idle producers, next turn:
						   made when first needed */
	const char		*c_fail_why;	/* set with TIMER_FAIL */
	char			 c_peer[56];	/* "[IPv6]:port" fits */
	TAILQ_ENTRY(conn)	 c_entry;	/* for the layer above */
};

/*
 * Serves the connected socket fd (now owned by the connection).  Returns
 * the connection, or NULL (fd closed) when out of memory.
 */
struct conn	*conn_new(const struct conn_env *env, int fd, const char *peer);

/* When a connection ends (conn_end()). */
enum conn_when {
	CONN_NOW,	/* at once: its requests end (abort callbacks run) */
	CONN_NEXT_TURN,	/* on the next loop turn, reading and writing
			   stopped at once: for a failure inside a call
			   that must not have c freed under it */
	CONN_FLUSHED	/* once no request is in flight and its output is
			   out (a drain); at once if that is so already */
};

/* How it ends. */
enum conn_how {
	CONN_CLOSE,	/* a close; still a reset if it cuts an answer */
	CONN_ERROR,	/* the peer's fault or a failure: counted
			   (closed_on_error) and logged with why */
	CONN_RESET	/* what it owes is cut first: every request ends
			   (abort callbacks run), the cut mark follows what
			   is queued, and the close is a reset */
};

/*
 * The one way a connection ends, when and how the caller says (a
 * connection's own timers and its input's end come here too).  why is
 * logged (NULL: nothing to say).  Nothing happens to a connection that
 * is closed already; c is freed once no callback of its runs, and env's
 * closed callback runs when it is.
 */
void		 conn_end(struct conn *c, enum conn_when when,
		    enum conn_how how, const char *why);

/* Fills output from the producers up to the high mark. */
void		 conn_pump(struct conn *c);

/*
 * The same for a connection accepted while the server drains: it closes
 * after its first request (it was made to send one), or by its timeouts.
 */
void		 conn_drain_fresh(struct conn *c);

/*
 * Whether the connection waits on its peer: output above the low mark, so
 * no producer runs until the peer reads it down.  (Above the high mark only
 * for an instant: the kernel gets what fits at the end of the callback that
 * queued it.)
 */
int		 conn_stalled(const struct conn *c);

/*
 * conn_input.c, the input side of the same connection: with conn.c one
 * module (scripts/layers counts them as one node), split for length.
 */

/* Parses and acts on the whole records in c's input. */
void		 conn_process_input(struct conn *c);

/* The same for n bytes just read at p; what is left is kept in c. */
void		 conn_process_read(struct conn *c, const uint8_t *p, size_t n);

/*
 * Frees c's input buffer and gives back what it was charged to the
 * global input cap (--max-input): twice its bytes, for its chains.
 */
void		 conn_input_free(struct conn *c);

/*
 * Whether c must not read now: the input held by all connections is at
 * --max-input and what c would read next begins something new (a request,
 * or more of a streamed body); c then waits for the input to fall and
 * reads again (conn_read_update).  A connection inside a record, or whose
 * requests' bodies are still coming (paid ahead, or refused as they come),
 * reads on: that is what lets the input go.
 */
int		 conn_input_wait(struct conn *c);
static inline int
conn_input_paused(struct conn *c)
{
	/* Below the cap and waiting on nothing: the common case, here. */
	if (!c->c_in_paused && c->c_in_wait == NULL &&
	    !budget_over(c->c_env->ce_input))
		return 0;
	return conn_input_wait(c);
}

/*
 * conn.c's, for conn_input.c (and only for it): the input side's way
 * into the connection.
 */

/* Bytes in c's input buffer. */
size_t		 conn_input_len(const struct conn *c);

/*
 * Whether c's input holds a whole record not yet acted on (paused above
 * the high mark, or a streamed body's held): c must not close before it is.
 */
int		 conn_input_pending(struct conn *c);

/* The peer's input ended and all of it was acted on: finish c off. */
void		 conn_input_ended(struct conn *c);

/*
 * c's high mark: its share of the global cap (budget.h), at most
 * --high-water; and its low mark, --low-water scaled alike.
 */
size_t		 conn_high(const struct conn *c);
size_t		 conn_low(const struct conn *c);

/* Bytes of output c holds: queued, and staged in the running callback. */
size_t		 conn_out_len(const struct conn *c);

/* Checks an fcgi_out result of c's own: -1 makes c close.  Returns rc. */
int		 conn_out(struct conn *c, int rc);

/* Closes c if it is to close after its last request and none is left. */
void		 conn_maybe_close(struct conn *c);

/* Adds r to c's table and lists.  0, or -1 when out of memory. */
int		 conn_req_add(struct conn *c, struct evfcgi_req *r);

/* Takes r out of c's table and lists (r itself is not freed). */
void		 conn_req_unlink(struct conn *c, struct evfcgi_req *r);

/* Unlinks r from c and frees it; says nothing on the wire. */
void		 conn_req_free(struct conn *c, struct evfcgi_req *r);

/* Moves c to state s.  0, or -1 (logged) for a step it cannot take. */
int		 conn_set_state(struct conn *c, enum conn_state s);

/* Arms the one timer c needs now. */
void		 conn_timer_update(struct conn *c);

/*
 * The oldest request in PARAMS finished them: the header timeout of the
 * next one counts from now.  (Another request's PARAMS ending is no
 * progress for the oldest: a peer cannot keep an abandoned one alive by
 * going on with others.)
 */
void		 conn_params_clock(struct conn *c);

/*
 * c stops reading for itself (paused above the high mark, a streamed body
 * held) and reads again: the time between is the daemon's, not its
 * peer's, and the oldest request in PARAMS gets it back.
 */
void		 conn_params_hold(struct conn *c);
void		 conn_params_resume(struct conn *c);

/* Reads while c is reading, has room for input and the peer may send. */
void		 conn_read_update(struct conn *c);

#endif /* CONN_H */
