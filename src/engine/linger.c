/*
 * linger.c: sockets done with, held until the kernel has sent what they
 * queued (see linger.h).
 */
#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <linux/sockios.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/event_struct.h>

#include "linger.h"
#include "log.h"

/* Look at the queue this often (ms), or twice a timeout if shorter. */
#define LINGER_TICK_MS	5000

struct linger_sock {
	struct event		 l_ev;		/* readable, or the tick */
	struct linger_set	*l_set;
	int			 l_fd;
	int			 l_outq;	/* the queue at the last look */
	long			 l_still_ms;	/* without progress since */
	long			 l_tick_ms;
	char			 l_peer[56];
	TAILQ_ENTRY(linger_sock)	 l_entry;
};

static void	linger_cb(evutil_socket_t, short, void *);
static void	linger_end(struct linger_sock *);

void
linger_init(struct linger_set *ls, struct event_base *base, size_t max,
    int timeout, uint64_t *gauge)
{
	ls->ls_base = base;
	TAILQ_INIT(&ls->ls_list);
	ls->ls_n = 0;
	ls->ls_max = max;
	ls->ls_timeout = timeout;
	ls->ls_gauge = gauge;
}

int
linger_start(struct linger_set *ls, int fd, int outq, const char *peer)
{
	struct linger_sock	*l;
	struct timeval	 tv;

	if (ls->ls_n >= ls->ls_max || (l = calloc(1, sizeof(*l))) == NULL)
		return 0;
	if (shutdown(fd, SHUT_WR) == -1) {
		free(l);
		return 0;
	}
	l->l_set = ls;
	l->l_fd = fd;
	l->l_outq = outq;
	l->l_tick_ms = (long)ls->ls_timeout * 500;
	if (l->l_tick_ms > LINGER_TICK_MS || l->l_tick_ms <= 0)
		l->l_tick_ms = LINGER_TICK_MS;
	snprintf(l->l_peer, sizeof(l->l_peer), "%s", peer);
	tv.tv_sec = l->l_tick_ms / 1000;
	tv.tv_usec = l->l_tick_ms % 1000 * 1000;
	event_assign(&l->l_ev, ls->ls_base, fd, EV_READ | EV_PERSIST,
	    linger_cb, l);
	if (event_add(&l->l_ev, &tv) == -1) {
		free(l);
		return 0;
	}
	TAILQ_INSERT_TAIL(&ls->ls_list, l, l_entry);
	ls->ls_n++;
	(*ls->ls_gauge)++;
	log_debug("%s: done, %d bytes still queued: lingering", peer, outq);
	return 1;
}

/*
 * Input is discarded (the peer's end shows as EOF or an error); on each
 * tick the send queue is looked at: empty ends it, a shrinking one counts
 * as progress, a still one for the write timeout gives up.
 */
static void
linger_cb(evutil_socket_t fd, short what, void *arg)
{
	struct linger_sock	*l = arg;
	char		 buf[4096];
	ssize_t		 n;
	int		 outq = 0;

	if (what & EV_READ) {
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			linger_end(l);
			return;
		}
	}
	if (!(what & EV_TIMEOUT))
		return;
	if (ioctl(fd, SIOCOUTQ, &outq) == -1 || outq <= 0) {
		linger_end(l);
		return;
	}
	if (outq < l->l_outq) {
		l->l_outq = outq;
		l->l_still_ms = 0;
		return;
	}
	l->l_still_ms += l->l_tick_ms;
	if (l->l_still_ms >= (long)l->l_set->ls_timeout * 1000) {
		log_info("%s: closing: no write progress for %d s, %d bytes of "
		    "the answer still queued", l->l_peer, l->l_set->ls_timeout,
		    outq);
		linger_end(l);
	}
}

static void
linger_end(struct linger_sock *l)
{
	struct linger_set	*ls = l->l_set;

	event_del(&l->l_ev);
	close(l->l_fd);
	TAILQ_REMOVE(&ls->ls_list, l, l_entry);
	ls->ls_n--;
	(*ls->ls_gauge)--;
	free(l);
}

void
linger_fini(struct linger_set *ls)
{
	struct linger_sock	*l;

	while ((l = TAILQ_FIRST(&ls->ls_list)) != NULL)
		linger_end(l);
}
