/*
 * linger.h: sockets closed with their answer still in the kernel's send
 * queue.  Closing such a socket orphans it, and Linux aborts an orphan
 * whose peer keeps a zero window (nginx with full buffers before a slow
 * client) once its probe backoff reaches two minutes: the peer gets a reset
 * instead of the end of its answer.  So a connection that is done but whose
 * bytes still wait is shut for writing and held here, on a small struct,
 * until the queue is empty, the peer closes, or the queue makes no
 * progress for the write timeout.
 */
#ifndef LINGER_H
#define LINGER_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

struct event_base;
struct evfcgi_stats;
struct linger_sock;

TAILQ_HEAD(linger_list, linger_sock);

/* Every lingering socket of a server; owned by the server. */
struct linger_set {
	struct event_base	*ls_base;
	struct linger_list	 ls_list;
	size_t			 ls_n;
	size_t			 ls_max;	/* beyond: closed at once */
	int			 ls_timeout;	/* s without progress: give up */
	uint64_t		*ls_gauge;	/* the stats' lingering count */
};

/* An empty set for base: at most max sockets, giving up after timeout s. */
void	linger_init(struct linger_set *ls, struct event_base *base,
	    size_t max, int timeout, uint64_t *gauge);

/*
 * Closes fd once its send queue (outq bytes now) has drained: shuts it
 * for writing and holds it.  Returns 1 when ls owns fd from now on, 0 when
 * the caller must close it (the set is full, or out of memory).
 */
int	linger_start(struct linger_set *ls, int fd, int outq, const char *peer);

/* Closes every socket still held. */
void	linger_fini(struct linger_set *ls);

#endif /* LINGER_H */
