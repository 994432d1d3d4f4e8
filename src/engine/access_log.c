/*
 * access_log.c: the access log (see access_log.h).  Lines gather in an
 * evbuffer; an event made active with the first line of a loop turn
 * writes them after that turn's callbacks, in one writev.
 */
#include <sys/types.h>
#include <sys/time.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "access_log.h"
#include "log.h"
#include "request.h"

#define ALOG_FLUSH_NOW	(64 * 1024)	/* buffered: written at once */
#define ALOG_MAX	(1024 * 1024)	/* buffered: lines dropped */
#define ALOG_LINE	8192
#define ALOG_URI_MAX	4096		/* field text, before escapes */
#define ALOG_FIELD_MAX	1024

struct access_log {
	char		*alog_path;
	int		 alog_fd;
	struct evbuffer	*alog_buf;
	struct event	*alog_flush_ev;
	int		 alog_flush_due;
	uint64_t	 alog_dropped;	/* lines lost since last said */
	time_t		 alog_said;	/* when a loss was last logged */
	time_t		 alog_sec;	/* alog_when is for this second */
	char		 alog_when[40];
};

static int	alog_open_fd(const char *);
static void	alog_flushcb(evutil_socket_t, short, void *);
static void	alog_flush(struct access_log *);
static void	alog_lost(struct access_log *, const char *);
static size_t	alog_put(char *, size_t, const char *, size_t);

/* Opens path to append to; the fd, or -1 with errno. */
static int
alog_open_fd(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
	    O_NONBLOCK, 0640);
}

struct access_log *
access_log_open(struct event_base *base, const char *path, char *err,
    size_t errlen)
{
	struct access_log	*al;

	if ((al = calloc(1, sizeof(*al))) == NULL ||
	    (al->alog_path = strdup(path)) == NULL ||
	    (al->alog_buf = evbuffer_new()) == NULL ||
	    (al->alog_flush_ev = event_new(base, -1, 0, alog_flushcb,
	    al)) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	if ((al->alog_fd = alog_open_fd(path)) == -1) {
		snprintf(err, errlen, "%s: %s", path,
		    strerror(errno));
		goto fail;
	}
	return al;
fail:
	if (al != NULL) {
		if (al->alog_flush_ev != NULL)
			event_free(al->alog_flush_ev);
		if (al->alog_buf != NULL)
			evbuffer_free(al->alog_buf);
		free(al->alog_path);
		free(al);
	}
	return NULL;
}

int
access_log_reopen(struct access_log *al)
{
	int	 fd;

	alog_flush(al);
	if ((fd = alog_open_fd(al->alog_path)) == -1)
		return -1;
	close(al->alog_fd);
	al->alog_fd = fd;
	return 0;
}

void
access_log_close(struct access_log *al)
{
	if (al == NULL)
		return;
	alog_flush(al);
	event_free(al->alog_flush_ev);
	evbuffer_free(al->alog_buf);
	close(al->alog_fd);
	free(al->alog_path);
	free(al);
}

/* Counts and, at most once a minute, logs lost lines. */
static void
alog_lost(struct access_log *al, const char *why)
{
	time_t	 now = time(NULL);

	al->alog_dropped++;
	if (now - al->alog_said < 60)
		return;
	log_warn("access log %s: %s: %" PRIu64 " lines lost", al->alog_path,
	    why, al->alog_dropped);
	al->alog_said = now;
	al->alog_dropped = 0;
}

/* Writes what the kernel takes now; the rest waits for the next turn. */
static void
alog_flush(struct access_log *al)
{
	size_t	 len;

	al->alog_flush_due = 0;
	while ((len = evbuffer_get_length(al->alog_buf)) > 0) {
		if (evbuffer_write(al->alog_buf, al->alog_fd) > 0)
			continue;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			/* A full disk must not keep the lines in memory. */
			evbuffer_drain(al->alog_buf, len);
			alog_lost(al, strerror(errno));
		}
		break;
	}
}

static void
alog_flushcb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	alog_flush(arg);
}

/*
 * Appends at most cap bytes of s (NULL or "": "-") to line at off, with
 * '"', '\\' and bytes outside printable ASCII escaped (\xHH), so that no
 * peer can forge a line; stops 256 bytes short of ALOG_LINE, room for
 * the fixed parts.  Returns the new offset.
 */
static size_t
alog_put(char *line, size_t off, const char *s, size_t cap)
{
	static const char	 hex[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 i;

	if (s == NULL || *s == '\0') {
		line[off++] = '-';
		return off;
	}
	for (i = 0; p[i] != '\0' && i < cap && off + 4 < ALOG_LINE - 256;
	    i++) {
		if (p[i] == '"' || p[i] == '\\') {
			line[off++] = '\\';
			line[off++] = (char)p[i];
		} else if (p[i] < 0x20 || p[i] >= 0x7f) {
			line[off++] = '\\';
			line[off++] = 'x';
			line[off++] = hex[p[i] >> 4];
			line[off++] = hex[p[i] & 15];
		} else
			line[off++] = (char)p[i];
	}
	return off;
}

#define PUT(s, cap)	(off = alog_put(line, off, (s), (cap)))
#define LIT(s)		(memcpy(line + off, (s), sizeof(s) - 1), \
			    off += sizeof(s) - 1)

void
access_log_request(struct access_log *al, struct evfcgi_req *r)
{
	char		 line[ALOG_LINE], tail[96];
	struct timeval	 now;
	struct timespec	 mono;
	struct tm	 tm;
	long long	 us;
	size_t		 off = 0;
	int		 n;

	if (evbuffer_get_length(al->alog_buf) >= ALOG_MAX) {
		alog_lost(al, "writing falls behind");
		return;
	}
	gettimeofday(&now, NULL);
	if (now.tv_sec != al->alog_sec) {
		gmtime_r(&now.tv_sec, &tm);
		strftime(al->alog_when, sizeof(al->alog_when),
		    " [%d/%b/%Y:%H:%M:%S +0000] \"", &tm);
		al->alog_sec = now.tv_sec;
	}
	clock_gettime(CLOCK_MONOTONIC, &mono);
	us = (mono.tv_sec - req_h(r)->h_t0.tv_sec) * 1000000LL +
	    (mono.tv_nsec - req_h(r)->h_t0.tv_nsec) / 1000;
	if (us < 0)
		us = 0;
	PUT(evfcgi_param(r, "REMOTE_ADDR"), ALOG_FIELD_MAX);
	LIT(" - ");
	PUT(evfcgi_param(r, "REMOTE_USER"), ALOG_FIELD_MAX);
	memcpy(line + off, al->alog_when, strlen(al->alog_when));
	off += strlen(al->alog_when);
	PUT(evfcgi_param(r, "REQUEST_METHOD"), 32);
	LIT(" ");
	PUT(evfcgi_param(r, "REQUEST_URI") != NULL ?
	    evfcgi_param(r, "REQUEST_URI") : evfcgi_path(r), ALOG_URI_MAX);
	LIT(" ");
	PUT(evfcgi_param(r, "SERVER_PROTOCOL"), 32);
	n = snprintf(tail, sizeof(tail), "\" %d %" PRIu64 " \"",
	    req_h(r)->h_status, req_h(r)->h_sent);
	memcpy(line + off, tail, (size_t)n);
	off += (size_t)n;
	PUT(evfcgi_param(r, "HTTP_REFERER"), ALOG_FIELD_MAX);
	LIT("\" \"");
	PUT(evfcgi_param(r, "HTTP_USER_AGENT"), ALOG_FIELD_MAX);
	n = snprintf(tail, sizeof(tail), "\" %lld.%03lld\n", us / 1000,
	    us % 1000);
	memcpy(line + off, tail, (size_t)n);
	off += (size_t)n;
	if (evbuffer_add(al->alog_buf, line, off) == -1) {
		alog_lost(al, "out of memory");
		return;
	}
	if (evbuffer_get_length(al->alog_buf) >= ALOG_FLUSH_NOW)
		alog_flush(al);
	else if (!al->alog_flush_due) {
		al->alog_flush_due = 1;
		event_active(al->alog_flush_ev, EV_TIMEOUT, 0);
	}
}
