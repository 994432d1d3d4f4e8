/*
 * conn.h: one FastCGI connection: its parser state, its request table and
 * its output buffer with watermarks.  Only server.c and conn.c include it.
 */
#ifndef CONN_H
#define CONN_H

#include <sys/queue.h>

#include <stdint.h>

#include "evfcgi.h"
#include "server.h"

struct bufferevent;
struct event;

enum conn_state {
	CONN_READING,	/* reading and serving requests */
	CONN_PAUSED,	/* output above the high mark: no new input read */
	CONN_CLOSING,	/* no more input; closes once output is flushed */
	CONN_DEAD	/* torn down; freed when the callback unwinds */
};

enum req_state {
	REQ_PARAMS,	/* collecting PARAMS */
	REQ_STDIN,	/* collecting the body */
	REQ_HANDLER,	/* the application owns it */
	REQ_DRAIN	/* answered; discarding input until STDIN ends */
};

enum conn_timer {
	TIMER_NONE,
	TIMER_HEADER,	/* deadline for the PARAMS of a request */
	TIMER_IDLE	/* no input for idle_timeout */
};

struct param {
	const char	*p_name;
	const char	*p_value;
};

struct evfcgi_req {
	struct conn		*r_conn;
	uint16_t		 r_id;
	uint8_t			 r_keep;	/* FCGI_KEEP_CONN */
	enum req_state		 r_state;
	struct timeval		 r_begun;	/* BEGIN_REQUEST read at */
	int			 r_reject;	/* status to answer, 0: none */
	struct evbuffer		*r_params;	/* raw PARAMS until complete */
	struct param		*r_pv;		/* parsed, NUL-ended */
	size_t			 r_npv;
	char			*r_pvmem;
	char			*r_path;
	struct evbuffer		*r_body;
	size_t			 r_body_len;
	int			 r_headers_sent;
	evfcgi_producer		 r_producer;
	void			*r_producer_arg;
	evfcgi_abort_cb		 r_abort;
	void			*r_abort_arg;
	TAILQ_ENTRY(evfcgi_req)	 r_prod_entry;	/* on c_producers */
	int			 r_producing;
};

TAILQ_HEAD(req_list, evfcgi_req);

struct conn {
	struct evfcgi_server	*c_srv;
	struct bufferevent	*c_bev;
	enum conn_state		 c_state;
	struct evfcgi_req	**c_reqs;	/* max_reqs slots */
	size_t			 c_nreqs;
	struct req_list		 c_producers;	/* round-robin order */
	uint64_t		 c_served;
	int			 c_close_after;	/* close when no request left */
	int			 c_starved;
	int			 c_in_cb;	/* inside one of our callbacks */
	enum conn_timer		 c_timer_kind;
	struct event		*c_timer;
	char			 c_peer[64];
	TAILQ_ENTRY(conn)	 c_entry;	/* on srv_conns */
	TAILQ_ENTRY(conn)	 c_starve_entry;	/* on srv_starved */
};

/*
 * Serves the connected socket fd (now owned by the connection).  Returns
 * the connection, or NULL (fd closed) when out of memory.
 */
struct conn	*conn_new(struct evfcgi_server *srv, int fd, const char *peer);

/* Tears the connection down, aborting its requests.  Idempotent. */
void		 conn_close(struct conn *c, const char *why);

/* Fills output from the producers up to the high mark. */
void		 conn_pump(struct conn *c);

/* Closes at once if nothing is in flight, else after the last request. */
void		 conn_drain(struct conn *c);

/*
 * Whether the connection waits on its peer: output above the low mark, so
 * no producer runs until the peer reads it down.  (Above the high mark only
 * for an instant: libevent hands the kernel what fits right after a pump.)
 */
int		 conn_stalled(const struct conn *c);

#endif /* CONN_H */
