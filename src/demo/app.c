/*
 * app.c: the demo routes.  Large bodies are produced only as the socket
 * drains: /big and /size queue slices of one shared buffer by reference,
 * /stream copies fresh chunks, /echo moves the request body across.  So a
 * slow reader holds at most a watermark of its response in memory.
 * /upload takes its body as it arrives (a streamed route), so an upload of
 * any size holds a watermark too; /redirect shows header lines.  As a
 * FastCGI Filter, on any path, the demo answers the DATA stream back.
 */
#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "app.h"
#include "fcgi_proto.h"

#define PATTERN_PERIOD	64
/*
 * /stream makes what its room asks for, from STREAM_MIN to STREAM_CHUNK
 * bytes a call: a whole chunk into a share of a few KiB would pass it by
 * up to a chunk (at 10,000 slow readers, 3 KiB of evfcgid's queue each).
 */
#define STREAM_CHUNK	16384
#define STREAM_MIN	4096
#define SLEEP_MAX_MS	3600000

struct body {
	uint64_t	b_pos;
	uint64_t	b_total;
	struct body	*b_next;	/* kept for the next body */
};

/*
 * Bodies done are kept for the next ones, so that a /big in steady state
 * allocates nothing; at most BODY_KEEP of them.
 */
#define BODY_KEEP	256

/* What /upload has seen: POSIX cksum's CRC so far, and the length. */
struct upload {
	uint32_t	u_crc;
	uint64_t	u_len;
};

struct sleeper {
	struct event		*s_ev;
	struct evfcgi_req	*s_req;
	unsigned long		 s_ms;
	struct timespec		 s_due;		/* CLOCK_MONOTONIC */
};

static void	route_hello(struct evfcgi_req *, void *);
static void	route_big(struct evfcgi_req *, void *);
static void	route_size(struct evfcgi_req *, void *);
static void	route_stream(struct evfcgi_req *, void *);
static void	route_echo(struct evfcgi_req *, void *);
static void	route_sleep(struct evfcgi_req *, void *);
static void	route_redirect(struct evfcgi_req *, void *);
static void	route_upload(struct evfcgi_req *, void *);
static void	route_filter(struct evfcgi_req *, void *);
static int	produce_filter(struct evfcgi_req *, size_t, void *);
static void	upload_body(struct evfcgi_req *, struct evbuffer *, int, void *);
static void	upload_abort(struct evfcgi_req *, void *);
static uint32_t	cksum_add(uint32_t, const uint8_t *, size_t);
static int	produce_shared(struct evfcgi_req *, size_t, void *);
static int	produce_stream(struct evfcgi_req *, size_t, void *);
static int	produce_echo(struct evfcgi_req *, size_t, void *);
static struct body *body_new(uint64_t);
static void	body_done(struct body *);
static void	body_abort(struct evfcgi_req *, void *);
static int	sleep_arm(struct sleeper *);
static void	sleep_done(evutil_socket_t, short, void *);
static void	sleep_abort(struct evfcgi_req *, void *);
static int	parse_count(const char *, uint64_t *);
static void	send_pattern(struct evfcgi_req *, uint64_t, evfcgi_producer);

/*
 * One period more than the largest record, so that any slice of the body
 * starting anywhere in the period is one contiguous run of this buffer.
 */
static uint8_t			pattern[FCGI_MAX_ALIGNED + PATTERN_PERIOD];
static uint32_t			crc_table[256];
static struct app_config	app_cfg;
static struct body		*body_kept;
static size_t			 body_nkept;

int
app_register(struct evfcgi_server *srv, const struct app_config *cfg)
{
	uint32_t	 c;
	size_t		 i, k;

	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)APP_PATTERN_LINE[i % PATTERN_PERIOD];
	/* cksum's CRC-32: polynomial 0x04C11DB7, most significant bit first. */
	for (i = 0; i < 256; i++) {
		for (c = (uint32_t)i << 24, k = 0; k < 8; k++)
			c = c & 0x80000000u ? c << 1 ^ 0x04C11DB7u : c << 1;
		crc_table[i] = c;
	}
	app_cfg = *cfg;
	if (evfcgi_route(srv, "/hello", route_hello, NULL) == -1 ||
	    evfcgi_route(srv, "/big", route_big, NULL) == -1 ||
	    evfcgi_route(srv, "/size", route_size, NULL) == -1 ||
	    evfcgi_route(srv, "/stream", route_stream, NULL) == -1 ||
	    evfcgi_route(srv, "/echo", route_echo, NULL) == -1 ||
	    evfcgi_route(srv, "/sleep", route_sleep, NULL) == -1 ||
	    evfcgi_route_methods(srv, "/redirect", "GET", route_redirect,
	    NULL) == -1 ||
	    evfcgi_route_ex(srv, "/upload", EVFCGI_ROUTE_STREAM, "POST,PUT",
	    route_upload, NULL) == -1 ||
	    evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX | EVFCGI_ROUTE_FILTER,
	    NULL, route_filter, NULL) == -1)
		return -1;
	return 0;
}

/*
 * The Filter role, any path: the DATA stream (the file the web server
 * filters) back byte for byte, moved across as the connection has room
 * (moved in one call, a large file was queued whole, past --max-queued:
 * such a write is refused now); the STDIN length in a header.
 */
static void
route_filter(struct evfcgi_req *req, void *arg)
{
	char	 n[24];

	(void)arg;
	snprintf(n, sizeof(n), "%zu", evbuffer_get_length(evfcgi_body(req)));
	evfcgi_header_add(req, "X-Stdin-Length", n);
	if (evfcgi_header(req, 200, "application/octet-stream",
	    (long long)evbuffer_get_length(evfcgi_data(req))) == -1) {
		evfcgi_respond_error(req, 503, NULL);
		return;
	}
	evfcgi_produce(req, produce_filter, NULL);
}

/* Moves the next slice of the DATA stream to the output, uncopied. */
static int
produce_filter(struct evfcgi_req *req, size_t room, void *arg)
{
	struct evbuffer	*data = evfcgi_data(req);
	size_t		 n = evbuffer_get_length(data);

	(void)arg;
	if (n > room)
		n = room;
	evfcgi_write_buffer(req, data, n);
	return evbuffer_get_length(data) == 0;
}

/* Parses a plain decimal count.  Returns 0, or -1 when s is not one. */
static int
parse_count(const char *s, uint64_t *out)
{
	char			*end;
	unsigned long long	 n;

	if (*s < '0' || *s > '9' || strlen(s) > 20)
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = n;
	return 0;
}

static void
route_hello(struct evfcgi_req *req, void *arg)
{
	static const char	 hello[] = "Hello World\n";

	(void)arg;
	evfcgi_respond(req, 200, "text/plain", hello, sizeof(hello) - 1);
}

/* Sends total pattern bytes through producer fn, paced by the socket. */
static void
send_pattern(struct evfcgi_req *req, uint64_t total, evfcgi_producer fn)
{
	struct body	*b;

	if (evfcgi_is_head(req)) {
		/* Its body would send nothing: the header tells it all. */
		if (evfcgi_header(req, 200, "text/plain", (long long)total) == 0)
			(void)evfcgi_finish(req);
		return;
	}
	if ((b = body_new(total)) == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	evfcgi_header(req, 200, "text/plain", (long long)total);
	evfcgi_on_abort(req, body_abort, b);
	evfcgi_produce(req, fn, b);
}

static void
route_big(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	send_pattern(req, APP_BIG_SIZE, produce_shared);
}

/* Reads N from the query of /size and /stream; answers 400/413 itself. */
static int
sized_query(struct evfcgi_req *req, uint64_t *n)
{
	char	 detail[96];

	if (parse_count(evfcgi_query(req), n) == -1) {
		evfcgi_respond_error(req, 400, "expected a byte count: ?N");
		return -1;
	}
	if (*n > app_cfg.max_size) {
		snprintf(detail, sizeof(detail), "%" PRIu64 " bytes is above "
		    "the limit of %" PRIu64, *n, app_cfg.max_size);
		evfcgi_respond_error(req, 413, detail);
		return -1;
	}
	return 0;
}

static void
route_size(struct evfcgi_req *req, void *arg)
{
	uint64_t	 n;

	(void)arg;
	if (sized_query(req, &n) == 0)
		send_pattern(req, n, produce_shared);
}

static void
route_stream(struct evfcgi_req *req, void *arg)
{
	uint64_t	 n;

	(void)arg;
	if (sized_query(req, &n) == 0)
		send_pattern(req, n, produce_stream);
}

/* Queues one record's worth of the shared buffer by reference. */
static int
produce_shared(struct evfcgi_req *req, size_t room, void *arg)
{
	struct body	*b = arg;
	size_t		 off = (size_t)(b->b_pos % PATTERN_PERIOD), n;

	(void)room;
	n = b->b_total - b->b_pos < FCGI_MAX_ALIGNED ?
	    (size_t)(b->b_total - b->b_pos) : FCGI_MAX_ALIGNED;
	evfcgi_write_ref(req, pattern + off, n);
	b->b_pos += n;
	if (b->b_pos < b->b_total)
		return 0;
	body_done(b);
	return 1;
}

/* Makes one fresh chunk of the body, as a generator would. */
static int
produce_stream(struct evfcgi_req *req, size_t room, void *arg)
{
	struct body	*b = arg;
	uint8_t		 chunk[STREAM_CHUNK];
	size_t		 i, n;

	n = room < STREAM_CHUNK ? room : STREAM_CHUNK;
	if (n < STREAM_MIN)
		n = STREAM_MIN;
	if (b->b_total - b->b_pos < n)
		n = (size_t)(b->b_total - b->b_pos);
	for (i = 0; i < n; i++)
		chunk[i] = (uint8_t)APP_PATTERN_LINE[(b->b_pos + i) %
		    PATTERN_PERIOD];
	evfcgi_write(req, chunk, n);
	b->b_pos += n;
	if (b->b_pos < b->b_total)
		return 0;
	body_done(b);
	return 1;
}

void
app_release(void)
{
	struct body	*b;

	while ((b = body_kept) != NULL) {
		body_kept = b->b_next;
		free(b);
	}
	body_nkept = 0;
}

/* A body of total bytes from its start: a kept one, or NULL. */
static struct body *
body_new(uint64_t total)
{
	struct body	*b;

	if ((b = body_kept) != NULL) {
		body_kept = b->b_next;
		body_nkept--;
	} else if ((b = malloc(sizeof(*b))) == NULL)
		return NULL;
	*b = (struct body){ .b_total = total };
	return b;
}

/* b is done with: kept for the next body, or freed. */
static void
body_done(struct body *b)
{
	if (body_nkept >= BODY_KEEP) {
		free(b);
		return;
	}
	b->b_next = body_kept;
	body_kept = b;
	body_nkept++;
}

static void
body_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	body_done(arg);
}

static void
route_echo(struct evfcgi_req *req, void *arg)
{
	(void)arg;
	evfcgi_header(req, 200, "application/octet-stream",
	    (long long)evbuffer_get_length(evfcgi_body(req)));
	evfcgi_produce(req, produce_echo, NULL);
}

/* Moves the next slice of the request body to the output, uncopied. */
static int
produce_echo(struct evfcgi_req *req, size_t room, void *arg)
{
	struct evbuffer	*body = evfcgi_body(req);
	size_t		 n = evbuffer_get_length(body);

	(void)arg;
	if (n > room)
		n = room;
	evfcgi_write_buffer(req, body, n);
	return evbuffer_get_length(body) == 0;
}

static void
route_sleep(struct evfcgi_req *req, void *arg)
{
	struct sleeper	*s;
	struct timeval	 tv;
	uint64_t	 ms;

	(void)arg;
	if (parse_count(evfcgi_query(req), &ms) == -1 || ms > SLEEP_MAX_MS) {
		evfcgi_respond_error(req, 400,
		    "expected milliseconds: ?MS, at most 3600000");
		return;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->s_ev = evtimer_new(evfcgi_req_base(req), sleep_done, s)) ==
	    NULL) {
		free(s);
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	s->s_req = req;
	s->s_ms = (unsigned long)ms;
	evfcgi_on_abort(req, sleep_abort, s);
	clock_gettime(CLOCK_MONOTONIC, &s->s_due);
	s->s_due.tv_sec += (time_t)(ms / 1000);
	s->s_due.tv_nsec += (long)(ms % 1000) * 1000000;
	if (s->s_due.tv_nsec >= 1000000000) {
		s->s_due.tv_sec++;
		s->s_due.tv_nsec -= 1000000000;
	}
	if (!sleep_arm(s)) {
		timerclear(&tv);
		evtimer_add(s->s_ev, &tv);	/* ?0: on the next turn */
	}
}

/*
 * Arms s's timer for what is left of its sleep; returns 0 when none is.
 * libevent's clock is the kernel tick on Linux (4 ms) and a timer can fire
 * up to a tick early by the real clock, so the sleep is measured here.
 */
static int
sleep_arm(struct sleeper *s)
{
	struct timespec	 now;
	struct timeval	 tv;
	long long	 us;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (s->s_due.tv_sec - now.tv_sec) * 1000000LL +
	    (s->s_due.tv_nsec - now.tv_nsec + 999) / 1000;
	if (us <= 0)
		return 0;
	tv.tv_sec = (time_t)(us / 1000000);
	tv.tv_usec = (suseconds_t)(us % 1000000);
	evtimer_add(s->s_ev, &tv);
	return 1;
}

static void
sleep_done(evutil_socket_t fd, short what, void *arg)
{
	struct sleeper	*s = arg;
	char		 msg[48];
	int		 n;

	(void)fd;
	(void)what;
	if (sleep_arm(s))
		return;
	n = snprintf(msg, sizeof(msg), "slept %lu ms\n", s->s_ms);
	evfcgi_on_abort(s->s_req, NULL, NULL);
	evfcgi_respond(s->s_req, 200, "text/plain", msg, (size_t)n);
	event_free(s->s_ev);
	free(s);
}

static void
sleep_abort(struct evfcgi_req *req, void *arg)
{
	struct sleeper	*s = arg;

	(void)req;
	event_free(s->s_ev);
	free(s);
}

/* 302 to /hello, with two cookies: header lines of one name, in order. */
static void
route_redirect(struct evfcgi_req *req, void *arg)
{
	static const char	 msg[] = "see /hello\n";

	(void)arg;
	if (evfcgi_header_add(req, "Location", "/hello") == -1 ||
	    evfcgi_header_add(req, "Set-Cookie", "a=1; Path=/") == -1 ||
	    evfcgi_header_add(req, "Set-Cookie", "b=2; Path=/") == -1) {
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	evfcgi_respond(req, 302, "text/plain", msg, sizeof(msg) - 1);
}

/*
 * A streamed upload: its bytes are summed as they come and let go, and the
 * answer is what `cksum` prints for them ("CRC LENGTH").
 */
static void
route_upload(struct evfcgi_req *req, void *arg)
{
	struct upload	*u;

	(void)arg;
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	evfcgi_on_abort(req, upload_abort, u);
	evfcgi_on_body(req, upload_body, u);
}

static void
upload_body(struct evfcgi_req *req, struct evbuffer *body, int done,
    void *arg)
{
	struct upload		*u = arg;
	struct evbuffer_iovec	 v[8];
	char			 msg[48];
	uint64_t		 n;
	uint8_t			 b;
	int			 i, k;

	while ((k = evbuffer_peek(body, -1, NULL, v, 8)) > 0) {
		for (i = 0; i < k && i < 8; i++) {
			u->u_crc = cksum_add(u->u_crc, v[i].iov_base,
			    v[i].iov_len);
			u->u_len += v[i].iov_len;
			evbuffer_drain(body, v[i].iov_len);
		}
	}
	if (!done)
		return;
	for (n = u->u_len; n > 0; n >>= 8) {
		b = (uint8_t)n;
		u->u_crc = cksum_add(u->u_crc, &b, 1);
	}
	k = snprintf(msg, sizeof(msg), "%" PRIu32 " %" PRIu64 "\n", ~u->u_crc,
	    u->u_len);
	evfcgi_on_abort(req, NULL, NULL);
	free(u);
	evfcgi_respond(req, 200, "text/plain", msg, (size_t)k);
}

static void
upload_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	free(arg);
}

/* Adds len bytes at p to the CRC crc (cksum's, before the length). */
static uint32_t
cksum_add(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len-- > 0)
		crc = crc << 8 ^ crc_table[(crc >> 24 ^ *p++) & 0xff];
	return crc;
}
