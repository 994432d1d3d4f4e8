/*
 * fcgi_peer.h: a raw FastCGI peer for the Check suites that play the web
 * server (check_conn, check_roles).  A suite builds a request's bytes
 * record by record in a struct wire (or sends records one at a time),
 * writes them into its end of a socketpair whose other end the server
 * adopted, runs the server's loop in this process, and reads back what
 * comes, parsed into one struct resp per request id.  Every failure is a
 * Check assertion.
 */
#ifndef FCGI_PEER_H
#define FCGI_PEER_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <event2/event.h>

#include "evfcgi.h"

#define PEER_MAX_ID	16	/* ids 0 to 15 have a struct resp */

/*
 * The suite's loop and server: the suite makes and frees them, a peer
 * joins the server and runs the loop while it waits.
 */
extern struct event_base	*base;
extern struct evfcgi_server	*srv;

/* Bytes to send, built record by record. */
struct wire {
	uint8_t	 b[1 << 17];
	size_t	 len;
};

/* What came for one request id. */
struct resp {
	char	*out;		/* STDOUT bytes, NUL-ended; NULL: none */
	size_t	 outlen;
	int	 nout;		/* STDOUT records with content */
	int	 out_ended;	/* the empty STDOUT arrived */
	int	 ended;		/* END_REQUEST arrived */
	uint8_t	 pstatus;
};

struct peer {
	int		 fd;
	uint8_t		*in;		/* bytes not yet parsed */
	size_t		 inlen;
	size_t		 incap;
	int		 eof;
	struct resp	 r[PEER_MAX_ID];
	uint8_t		 mgmt[512];	/* content of the last id-0 record */
	size_t		 mgmtlen;
	uint8_t		 mgmt_type;
	int		 cut;		/* the cut mark came (a version 0
					   header): nothing after it parsed */
	size_t		 records;
	size_t		 nread;		/* bytes read in all */
};

/*
 * Which ids may come back: a record for an id below first or from end on
 * fails the test (first 0 takes management records, into mgmt).  For the
 * peers made after the call; 0 and PEER_MAX_ID unless a suite says.
 */
void		 peer_ids(uint16_t first, uint16_t end);

/* A new peer on a socketpair the server adopted; peer_free() ends it. */
struct peer	*peer_new(void);
/*
 * The same over TCP on loopback, its receive buffer set to rcvbuf bytes
 * before connect() (where the kernel counts a reader's progress byte by
 * byte, as it does not across a socketpair).
 */
struct peer	*peer_new_tcp(int rcvbuf);
/* Closes the peer's socket and frees it and all it read. */
void		 peer_free(struct peer *);
/* Forgets what arrived for id, to reuse it on a kept connection. */
void		 resp_reset(struct peer *, int id);

/* Writes all of buf, running the loop while the socket is full. */
void		 peer_send(struct peer *, const void *buf, size_t len);
/* Reads what is there (at most max bytes, 0: all) and parses it. */
void		 peer_read(struct peer *, size_t max);

/* Appends a record of type for id with len bytes at data, padded to 8. */
void		 w_record(struct wire *, uint8_t type, uint16_t id,
		    const void *data, size_t len);
/* Appends a BEGIN_REQUEST. */
void		 w_begin(struct wire *, uint16_t id, uint16_t role,
		    uint8_t flags);
/* Appends PARAMS from the NULL-ended name, value list nv, and their end. */
void		 w_params(struct wire *, uint16_t id, const char *const *nv);
/* Appends a stream of type: s in one record (none when empty), its end. */
void		 w_stream(struct wire *, uint8_t type, uint16_t id,
		    const char *s);
/* Encodes the NULL-ended name, value list nv into b; returns its length. */
size_t		 nv_list(uint8_t *b, size_t cap, const char *const *nv);

/* One record, as w_record() builds it, sent at once. */
void		 send_record(struct peer *, uint8_t type, uint16_t id,
		    const void *data, size_t len);
/* One BEGIN_REQUEST sent at once. */
void		 send_begin(struct peer *, uint16_t id, uint16_t role,
		    uint8_t flags);
/* Sends all of w on a new peer and waits for id's END_REQUEST. */
struct peer	*exchange(const struct wire *, int id);

/* The status a response's CGI header block starts with. */
int		 resp_status(const struct resp *);
/* Seconds on the monotonic clock. */
double		 now_s(void);

/* Runs the loop and reads until cond holds or secs pass; returns cond. */
#define RUN_UNTIL(p, cond, secs) __extension__ ({			\
	double __end = now_s() + (secs);				\
	while (!(cond) && now_s() < __end) {				\
		event_base_loop(base, EVLOOP_NONBLOCK);			\
		peer_read((p), 0);					\
		if (!(cond))						\
			usleep(200);					\
	}								\
	(cond);								\
})

#endif /* FCGI_PEER_H */
