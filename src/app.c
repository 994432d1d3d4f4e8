/*
 * app.c: the demo routes.  Large bodies are produced only as the socket
 * drains: /big and /size queue slices of one shared buffer by reference,
 * /stream copies fresh chunks, /echo moves the request body across.  So a
 * slow reader holds at most a watermark of its response in memory.
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
#define STREAM_CHUNK	16384
#define SLEEP_MAX_MS	3600000

struct body {
	uint64_t	b_pos;
	uint64_t	b_total;
};

struct sleeper {
	struct event		*s_ev;
	struct evfcgi_req	*s_req;
	unsigned long		 s_ms;
};

static void	route_hello(struct evfcgi_req *, void *);
static void	route_big(struct evfcgi_req *, void *);
static void	route_size(struct evfcgi_req *, void *);
static void	route_stream(struct evfcgi_req *, void *);
static void	route_echo(struct evfcgi_req *, void *);
static void	route_sleep(struct evfcgi_req *, void *);
static void	route_status(struct evfcgi_req *, void *);
static int	produce_shared(struct evfcgi_req *, size_t, void *);
static int	produce_stream(struct evfcgi_req *, size_t, void *);
static int	produce_echo(struct evfcgi_req *, size_t, void *);
static void	body_abort(struct evfcgi_req *, void *);
static void	sleep_done(evutil_socket_t, short, void *);
static void	sleep_abort(struct evfcgi_req *, void *);
static int	parse_count(const char *, uint64_t *);
static void	send_pattern(struct evfcgi_req *, uint64_t, evfcgi_producer);

/*
 * One period more than the largest record, so that any slice of the body
 * starting anywhere in the period is one contiguous run of this buffer.
 */
static uint8_t			pattern[FCGI_MAX_ALIGNED + PATTERN_PERIOD];
static struct app_config	app_cfg;
static time_t			app_started;

int
app_register(struct evfcgi_server *srv, const struct app_config *cfg)
{
	size_t	 i;

	for (i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)APP_PATTERN_LINE[i % PATTERN_PERIOD];
	app_cfg = *cfg;
	app_started = time(NULL);
	if (evfcgi_route(srv, "/hello", route_hello, NULL) == -1 ||
	    evfcgi_route(srv, "/big", route_big, NULL) == -1 ||
	    evfcgi_route(srv, "/size", route_size, NULL) == -1 ||
	    evfcgi_route(srv, "/stream", route_stream, NULL) == -1 ||
	    evfcgi_route(srv, "/echo", route_echo, NULL) == -1 ||
	    evfcgi_route(srv, "/sleep", route_sleep, NULL) == -1 ||
	    evfcgi_route(srv, "/status", route_status, NULL) == -1)
		return -1;
	return 0;
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

	if ((b = calloc(1, sizeof(*b))) == NULL) {
		evfcgi_respond_error(req, 503, "out of memory");
		return;
	}
	b->b_total = total;
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
	free(b);
	return 1;
}

/* Makes one fresh chunk of the body, as a generator would. */
static int
produce_stream(struct evfcgi_req *req, size_t room, void *arg)
{
	struct body	*b = arg;
	uint8_t		 chunk[STREAM_CHUNK];
	size_t		 i, n;

	(void)room;
	n = b->b_total - b->b_pos < STREAM_CHUNK ?
	    (size_t)(b->b_total - b->b_pos) : STREAM_CHUNK;
	for (i = 0; i < n; i++)
		chunk[i] = (uint8_t)APP_PATTERN_LINE[(b->b_pos + i) %
		    PATTERN_PERIOD];
	evfcgi_write(req, chunk, n);
	b->b_pos += n;
	if (b->b_pos < b->b_total)
		return 0;
	free(b);
	return 1;
}

static void
body_abort(struct evfcgi_req *req, void *arg)
{
	(void)req;
	free(arg);
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
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	evtimer_add(s->s_ev, &tv);
}

static void
sleep_done(evutil_socket_t fd, short what, void *arg)
{
	struct sleeper	*s = arg;
	char		 msg[48];
	int		 n;

	(void)fd;
	(void)what;
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

static void
route_status(struct evfcgi_req *req, void *arg)
{
	const struct evfcgi_limits	*lim;
	struct evfcgi_stats		 st;
	char				 buf[2048];
	int				 n;

	(void)arg;
	evfcgi_get_stats(evfcgi_req_server(req), &st);
	lim = evfcgi_get_limits(evfcgi_req_server(req));
	n = snprintf(buf, sizeof(buf),
	    "{\"pid\":%d,\"uptime_s\":%lld,"
	    "\"connections\":%" PRIu64 ",\"connections_total\":%" PRIu64 ","
	    "\"requests\":%" PRIu64 ",\"requests_active\":%" PRIu64 ","
	    "\"bytes_queued\":%" PRIu64 ",\"peak_bytes_queued\":%" PRIu64 ","
	    "\"bytes_input\":%" PRIu64 ",\"peak_bytes_input\":%" PRIu64 ","
	    "\"stalled_sockets\":%" PRIu64 ",\"overloaded\":%" PRIu64 ","
	    "\"rejected\":%" PRIu64 ",\"aborted\":%" PRIu64 ","
	    "\"closed_on_error\":%" PRIu64 ","
	    "\"limits\":{\"max_conns\":%zu,\"max_reqs\":%zu,"
	    "\"max_conn_requests\":%zu,\"max_params\":%zu,\"max_body\":%zu,"
	    "\"max_size\":%" PRIu64 ",\"high_water\":%zu,\"low_water\":%zu,"
	    "\"max_queued\":%zu,\"max_input\":%zu,\"sndbuf\":%zu,\"header_timeout\":%d,"
	    "\"idle_timeout\":%d,\"write_timeout\":%d,\"drain_timeout\":%d}}\n",
	    (int)getpid(), (long long)(time(NULL) - app_started),
	    st.connections, st.connections_total, st.requests_total,
	    st.requests_active, st.bytes_queued, st.peak_bytes_queued,
	    st.bytes_input, st.peak_bytes_input,
	    st.stalled, st.overloaded, st.rejected, st.aborted,
	    st.closed_on_error, lim->max_conns, lim->max_reqs,
	    lim->max_conn_requests, lim->max_params, lim->max_body,
	    app_cfg.max_size, lim->high_water, lim->low_water, lim->max_queued,
	    lim->max_input,
	    lim->sndbuf, lim->header_timeout, lim->idle_timeout,
	    lim->write_timeout, lim->drain_timeout);
	evfcgi_respond(req, 200, "application/json", buf, (size_t)n);
}
