/*
 * fcgi_load: a load generator that speaks FastCGI itself, so a responder
 * (evfcgid, or any other) can be measured with no web server in between.
 *
 * Every request is the same one, encoded once at start: BEGIN_REQUEST,
 * the CGI variables as PARAMS, the optional body as STDIN.  By default
 * each request has its own connection, which the server closes after
 * END_REQUEST, as lighttpd and a default nginx do; -k sets FCGI_KEEP_CONN
 * and reuses connections, and -m multiplexes several request ids on each
 * (--begin-first: the BEGIN_REQUESTs of the requests started together on a
 * connection go first, their PARAMS and STDIN after them all).
 * Without -k a slot dials again only once the server has closed, so
 * TIME_WAIT stays on the server's side, as behind a real front end, and
 * a long run does not use up the client's ports.
 *
 * Responses are validated as they stream in: record headers with the
 * project's codec, content counted and dropped (only -o keeps a body), so
 * memory stays bounded whatever the size of the answers.  The slow-reader
 * options (--rcvbuf before connect(), --read-size, --pause) make this the
 * experiment's slow client at the FastCGI level too.  The summary is one
 * "key: value" per line on stdout (see usage()).  The run and the
 * connection slots are tools/loadgen's, shared with http_load.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "fcgi_proto.h"
#include "listen.h"
#include "loadgen.h"
#include "toolutil.h"

#define TIMEOUT_SECS	60		/* default --timeout */
#define LINGER_SECS	1		/* wait for the server's close, at most */
#define RBUF_SIZE	(128 * 1024)	/* default --read-size */
#define PATH_MAX_LEN	8192
#define LAT_CAP		(8 * 1024 * 1024)	/* latency samples kept (32 MiB) */
#define SMALL_REQ	16384		/* requests this small are copied */
#define LINE_KEEP	64		/* bytes of a CGI header line looked at */

/* Exit statuses, documented in usage(). */
enum {
	EXIT_OK = 0,
	EXIT_ERRORS = 1,
	EXIT_USAGE = 2,
	EXIT_CUTOFF = 3
};

/* Why a request failed; the summary counts each kind. */
enum err_kind {
	ERR_CONNECT,		/* socket() or connect() failed */
	ERR_TIMEOUT,		/* no progress for --timeout seconds */
	ERR_MALFORMED,		/* bad record, or no CGI header block */
	ERR_CLOSED,		/* connection lost before END_REQUEST */
	ERR_OVERLOADED,		/* END_REQUEST with FCGI_OVERLOADED */
	ERR_CANT_MPX,		/* ... FCGI_CANT_MPX_CONN */
	ERR_UNKNOWN_ROLE,	/* ... FCGI_UNKNOWN_ROLE */
	ERR_PROTOCOL,		/* ... a protocolStatus the spec does not define */
	ERR_NKINDS
};

static const char *const err_names[ERR_NKINDS] = {
	"connect", "timeout", "malformed", "closed", "overloaded", "cant_mpx",
	"unknown_role", "protocol_status"
};

enum fconn_state {
	CS_IDLE,		/* no socket */
	CS_RETRY,		/* unix listen queue full: connect() again soon */
	CS_OPEN,		/* connecting or connected, requests in flight */
	CS_LINGER		/* END_REQUEST read, waiting for the server's close */
};

/* One request id on one connection. */
struct req {
	int		 r_busy;
	uint16_t	 r_id;
	long long	 r_seq;		/* 1 for the first request started */
	int64_t		 r_start_us;	/* BEGIN_REQUEST handed to the socket */
	int		 r_got;		/* a record for it has arrived */
	int		 r_retried;	/* resent once on a fresh connection */
	int		 r_out;		/* its body goes to -o */
	int		 r_status;	/* CGI Status (200 if absent), -1 bad */
	int		 r_head_done;	/* the CGI header block has ended */
	size_t		 r_linelen;	/* current header line, CRs left out */
	char		 r_line[LINE_KEEP];
};

/*
 * One connection slot: a socket (or none; the slot's ls_wake also times a
 * unix connect retry, and ls_done counts the requests ended on the
 * socket) with its requests, its queued output and the state of the
 * record being read.  Torn down by fconn_shut(), which leaves the requests
 * to the caller.
 */
struct fconn {
	struct lg_slot	 c_slot;
	enum fconn_state	 c_state;
	struct event	 c_defer;	/* refill on the next loop turn */
	int		 c_refill;	/* a kept request ended: start the next */
	int64_t		 c_connect_us;
	struct evbuffer	*c_out;
	struct req	*c_reqs;	/* per_conn slots; id = index + 1 */
	int		 c_nbusy;
	long long	 c_next;	/* where to look for a free slot */
	/* The record being read. */
	uint8_t		 c_hdr[FCGI_HEADER_LEN];
	size_t		 c_hdrlen;	/* header bytes gathered */
	int		 c_inrec;	/* header decoded, content or padding due */
	struct fcgi_header c_rec;
	size_t		 c_left;	/* content bytes to go */
	size_t		 c_padleft;
	struct req	*c_cur;
	uint8_t		 c_end[8];	/* END_REQUEST body */
	size_t		 c_endlen;
};

struct fparam {
	char	*p_name;
	char	*p_value;
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static void	 oom(void) __attribute__((noreturn));
static void	 parse_args(int, char **);
static int	 opt_take(int, const char *);
static void	 bad_value(int) __attribute__((noreturn));
static void	 usage_error(const char *, ...)
		    __attribute__((noreturn, format(printf, 1, 2)));
static int	 server_parse(const char *, const char **);
static void	 request_build(void);
static void	 params_free(struct fparam *, size_t);
static void	 run_setup(void);
static void	 start(void *);
static int	 finish(void);
static void	 cleanup(void);
static void	 param_set(struct fparam **, size_t *, const char *, size_t,
		    const char *);
static int	 load_body(const char *, uint8_t **, size_t *);
static void	 tmpl_add(uint8_t, const uint8_t *, size_t);
static void	 tmpl_build(const struct fparam *, size_t, const uint8_t *,
		    size_t, uint8_t);
static void	 tmpl_queue(struct evbuffer *, uint16_t, size_t, size_t);
static void	 slot_fill(struct fconn *);
static void	 req_start(struct fconn *);
static void	 req_ok(struct fconn *, struct req *);
static void	 req_fail(struct fconn *, struct req *, enum err_kind,
		    const char *);
static void	 req_done(struct fconn *, struct req *);
static size_t	 req_head(struct req *, const uint8_t *, size_t);
static void	 req_stdout(struct req *, const uint8_t *, size_t);
static void	 fconn_open(struct fconn *);
static void	 fconn_connected(struct fconn *);
static void	 fconn_clocks(struct fconn *);
static void	 fconn_watch(struct fconn *);
static void	 fconn_write(struct fconn *);
static void	 fconn_read(struct fconn *);
static void	 fconn_shut(struct fconn *);
static int	 fconn_redial(struct fconn *);
static int	 fconn_fail(struct fconn *, enum err_kind, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
static int	 fconn_feed(struct fconn *, const uint8_t *, size_t);
static int	 rec_begin(struct fconn *, const struct fcgi_header *);
static void	 rec_data(struct fconn *, const uint8_t *, size_t);
static void	 rec_end(struct fconn *);
static void	 fconn_cb(evutil_socket_t, short, void *);
static void	 fconn_woke(void *);
static void	 defer_cb(evutil_socket_t, short, void *);
static void	 lat_add(int64_t);
static int	 lat_cmp(const void *, const void *);
static double	 lat_pct(double);
static void	 report(int64_t);

static const char	*progname = "fcgi_load";

/* Options. */
static long long	 opt_conns = 1, opt_inflight = 1, opt_requests;
static double		 opt_duration, opt_limit, opt_timeout = TIMEOUT_SECS;
static int		 opt_keep, opt_quiet, opt_begin_first;
static long long	 opt_rcvbuf, opt_read_size = RBUF_SIZE, opt_pause;
static const char	*opt_output, *opt_body;
static struct fparam	*opt_params;	/* -p, in order */
static size_t		 opt_nparams;
static int		 opt_have_n;
static long long	 max_conns;	/* the descriptor budget */

/* The server. */
static const char		*addr_str, *req_path;
static struct addr		 srv;

/* The request, encoded once with request id 1. */
static uint8_t		*tmpl;
static size_t		 tmpl_len;
static size_t		*tmpl_recs;	/* offset of each record header */
static size_t		 tmpl_nrecs;
static uint8_t		*scratch;	/* a small request with another id */
static struct evbuffer	*rest_q;	/* --begin-first: what follows BEGINs */

static struct lg_run		 run;	/* lr_started: requests started */
static const struct timeval	*timeout_tv, *linger_tv;
static struct timeval		 pause_tv;
static struct fconn		*conns;
static long long		 per_conn;	/* request ids in flight per socket */
static FILE			*out_fp;
static int			 out_err;

/* Statistics. */
static long long	 completed;
static long long	 errors[ERR_NKINDS], nerrors;
static long long	 app_nonzero;
static uint64_t		 stdout_bytes, stderr_bytes;
static uint32_t		*lat;		/* microseconds, a uniform sample */
static size_t		 lat_n, lat_alloc;
static uint64_t		 lat_seen;
static uint32_t		 lat_max;

static const struct option longopts[] = {
	{ "connections",	required_argument,	NULL, 'c' },
	{ "keep-conn",		no_argument,		NULL, 'k' },
	{ "in-flight",		required_argument,	NULL, 'm' },
	{ "requests",		required_argument,	NULL, 'n' },
	{ "duration",		required_argument,	NULL, 'd' },
	{ "body",		required_argument,	NULL, 'b' },
	{ "param",		required_argument,	NULL, 'p' },
	{ "timeout",		required_argument,	NULL, 'T' },
	{ "begin-first",	no_argument,		NULL, 'F' },
	SLOW_READER_LONGOPTS('R', 'S', 'P')
};

/*
 * usage: prints the help text to fp and exits with status; after a
 * mistake (fp is stderr) only the synopsis, the mistake stays visible.
 */
static void
usage(FILE *fp, int status)
{
	if (fp == stderr) {
		fprintf(fp, "usage: %s [options] ADDR PATH[?QUERY]\n"
		    "       %s --help for the options\n", progname, progname);
		exit(status);
	}
	fprintf(fp,
"usage: %s [options] ADDR PATH[?QUERY]\n"
"Sends FastCGI RESPONDER requests for PATH to the application at ADDR\n"
"(HOST:PORT, [V6]:PORT or unix:/path) and summarises the answers.\n"
"\n"
"  -c, --connections N  connections at once (default 1)\n"
"  -k, --keep-conn      set FCGI_KEEP_CONN and reuse each connection (default:\n"
"                       one connection per request, closed by the server)\n"
"  -m, --in-flight N    request ids in flight on each kept connection\n"
"                       (multiplexing; default 1; needs -k)\n"
"      --begin-first    the requests started together on a connection send\n"
"                       all their BEGIN_REQUESTs first, then their PARAMS\n"
"                       and STDIN (needs -m)\n"
"  -n, --requests N     requests in all (default 1)\n"
"  -d, --duration S     run for S seconds instead (fractions allowed);\n"
"                       requests still in flight then are not counted\n"
"  -b, --body FILE      send FILE as STDIN (REQUEST_METHOD POST)\n"
"  -p, --param N=V      one more CGI variable, or a new value for a\n"
"                       default one; repeatable\n"
"      --timeout S      a request with no progress for S seconds fails\n"
"                       (timeout) and its connection is closed (default %d)\n"
"      --rcvbuf N       SO_RCVBUF set before connect() (default: the kernel's)\n"
"      --read-size N    bytes asked for by each read (default %d)\n"
"      --pause MS       milliseconds between reads (default 0)\n"
"  -t, --time-limit S   stop after S seconds whatever is in flight\n"
"  -o, --output FILE    write the body (STDOUT after the CGI headers) of the\n"
"                       first request to FILE\n"
"  -q, --quiet          no summary\n"
"  -h, --help           this text\n"
"\n"
"Always sent: REQUEST_METHOD, REQUEST_URI, SCRIPT_NAME, QUERY_STRING,\n"
"SERVER_PROTOCOL, CONTENT_LENGTH, GATEWAY_INTERFACE, SERVER_NAME,\n"
"SERVER_PORT, REMOTE_ADDR.\n"
"\n"
"Summary on stdout, one item a line:\n"
"  requests: N          requests answered (END_REQUEST, REQUEST_COMPLETE)\n"
"  seconds: X           start to end of the run\n"
"  rps: X               requests per second\n"
"  bytes: N             FCGI_STDOUT content bytes received (CGI headers and\n"
"                       bodies, from every request, finished or not)\n"
"  latency_ms: p50=X p90=X p99=X max=X\n"
"                       BEGIN_REQUEST sent to END_REQUEST read\n"
"  status S: N          answers per CGI Status (200 when absent), one line each\n"
"  errors: N (KIND N, ...)\n"
"                       failed requests: connect, timeout, malformed, closed\n"
"                       (before END_REQUEST), overloaded, cant_mpx,\n"
"                       unknown_role, protocol_status\n"
"\n"
"Exit status: 0 no errors (any CGI status); 1 errors; 2 bad usage;\n"
"3 the time limit cut requests off.\n", progname, TIMEOUT_SECS, RBUF_SIZE);
	exit(status);
}

/* oom: there is no sensible way on without memory; says so and exits 1. */
static void
oom(void)
{
	fprintf(stderr, "%s: out of memory\n", progname);
	exit(EXIT_ERRORS);
}

/*
 * server_parse: reads ADDR (HOST:PORT, [V6]:PORT or unix:/path) into srv
 * with listen's parser, HOST resolved once (IPv4 first).  Brackets hold an
 * IPv6 literal, never a name.  Returns 0, or -1 with *why set to a static
 * reason.
 */
static int
server_parse(const char *s, const char **why)
{
	if (addr_parse(s, 0, &srv, why) == -1)
		return -1;
	if (s[0] == '[' && srv.a_ss.ss_family != AF_INET6) {
		*why = "bad IPv6 address";
		return -1;
	}
	return 0;
}

/*
 * param_set: sets CGI variable name (name_len bytes) to value in the list
 * *ps of *np entries, replacing an earlier value.  Exits on no memory.
 */
static void
param_set(struct fparam **ps, size_t *np, const char *name, size_t name_len,
    const char *value)
{
	struct fparam	*p;
	size_t		 i;

	for (i = 0; i < *np; i++)
		if (strlen((*ps)[i].p_name) == name_len &&
		    memcmp((*ps)[i].p_name, name, name_len) == 0)
			break;
	if (i == *np) {
		if ((p = realloc(*ps, (*np + 1) * sizeof(*p))) == NULL ||
		    (p[i].p_name = strndup(name, name_len)) == NULL)
			oom();
		*ps = p;
		(*np)++;
	} else
		free((*ps)[i].p_value);
	if (((*ps)[i].p_value = strdup(value)) == NULL)
		oom();
}

/*
 * load_body: reads the whole of path into a new buffer *buf (the caller's)
 * of *len bytes.  Returns 0, or -1 with errno set.
 */
static int
load_body(const char *path, uint8_t **buf, size_t *len)
{
	FILE	*fp;
	uint8_t	*b = NULL, *nb;
	size_t	 cap = 0, n = 0, got;
	int	 saved;

	if ((fp = fopen(path, "rb")) == NULL)
		return -1;
	for (;;) {
		if (n == cap) {
			cap = cap == 0 ? 65536 : cap * 2;
			if ((nb = realloc(b, cap)) == NULL)
				oom();
			b = nb;
		}
		got = fread(b + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		saved = errno;
		fclose(fp);
		free(b);
		errno = saved;
		return -1;
	}
	fclose(fp);
	*buf = b;
	*len = n;
	return 0;
}

/*
 * tmpl_add: appends records of type carrying len bytes of data to the
 * request template, split at the largest aligned size; len 0 appends the
 * empty record that ends a stream.
 */
static void
tmpl_add(uint8_t type, const uint8_t *data, size_t len)
{
	uint8_t	*nt;
	size_t	*nr, n, need;
	uint8_t	 pad;

	do {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		need = FCGI_HEADER_LEN + n + pad;
		if ((nt = realloc(tmpl, tmpl_len + need)) == NULL ||
		    (nr = realloc(tmpl_recs, (tmpl_nrecs + 1) *
		    sizeof(*nr))) == NULL)
			oom();
		tmpl = nt;
		tmpl_recs = nr;
		tmpl_recs[tmpl_nrecs++] = tmpl_len;
		fcgi_header_encode(tmpl + tmpl_len, type, 1, (uint16_t)n, pad);
		if (n > 0)
			memcpy(tmpl + tmpl_len + FCGI_HEADER_LEN, data, n);
		memset(tmpl + tmpl_len + FCGI_HEADER_LEN + n, 0, pad);
		tmpl_len += need;
		data += n;
		len -= n;
	} while (len > 0);
}

/*
 * tmpl_build: encodes the whole request (BEGIN_REQUEST with flags, the np
 * variables of ps as PARAMS, body as STDIN) once, with request id 1.
 */
static void
tmpl_build(const struct fparam *ps, size_t np, const uint8_t *body,
    size_t blen, uint8_t flags)
{
	uint8_t	*pv;
	size_t	 i, plen = 0, off = 0;

	for (i = 0; i < np; i++)
		plen += fcgi_nv_encode(NULL, 0, ps[i].p_name,
		    strlen(ps[i].p_name), ps[i].p_value, strlen(ps[i].p_value));
	if ((pv = malloc(plen + 1)) == NULL ||
	    (tmpl = malloc(16)) == NULL)
		oom();
	for (i = 0; i < np; i++)
		off += fcgi_nv_encode(pv + off, plen - off, ps[i].p_name,
		    strlen(ps[i].p_name), ps[i].p_value, strlen(ps[i].p_value));
	fcgi_begin_encode(tmpl, 1, FCGI_RESPONDER, flags);
	tmpl_len = 16;
	if ((tmpl_recs = malloc(sizeof(*tmpl_recs))) == NULL)
		oom();
	tmpl_recs[tmpl_nrecs++] = 0;
	if (plen > 0)
		tmpl_add(FCGI_PARAMS, pv, plen);
	tmpl_add(FCGI_PARAMS, NULL, 0);
	if (blen > 0)
		tmpl_add(FCGI_STDIN, body, blen);
	tmpl_add(FCGI_STDIN, NULL, 0);
	free(pv);
	if (tmpl_len <= SMALL_REQ && (scratch = malloc(tmpl_len)) == NULL)
		oom();
}

/*
 * tmpl_queue: appends records [from, to) of the request (to 0: all from
 * from on) with id to out.  A small one is copied; a large one is
 * referenced (the template lives as long as the process), with fresh
 * headers when the id is not 1.
 */
static void
tmpl_queue(struct evbuffer *out, uint16_t id, size_t from, size_t to)
{
	uint8_t	 hdr[FCGI_HEADER_LEN];
	size_t	 i, off, end;
	int	 rc = 0;

	if (to == 0 || to > tmpl_nrecs)
		to = tmpl_nrecs;
	off = tmpl_recs[from];
	end = to < tmpl_nrecs ? tmpl_recs[to] : tmpl_len;
	if (id == 1)
		rc = tmpl_len <= SMALL_REQ ?
		    evbuffer_add(out, tmpl + off, end - off) :
		    evbuffer_add_reference(out, tmpl + off, end - off, NULL,
		    NULL);
	else if (tmpl_len <= SMALL_REQ) {
		memcpy(scratch + off, tmpl + off, end - off);
		for (i = from; i < to; i++) {
			scratch[tmpl_recs[i] + 2] = (uint8_t)(id >> 8);
			scratch[tmpl_recs[i] + 3] = (uint8_t)id;
		}
		rc = evbuffer_add(out, scratch + off, end - off);
	} else
		for (i = from; i < to && rc == 0; i++) {
			off = tmpl_recs[i];
			end = i + 1 < tmpl_nrecs ? tmpl_recs[i + 1] : tmpl_len;
			memcpy(hdr, tmpl + off, sizeof(hdr));
			hdr[2] = (uint8_t)(id >> 8);
			hdr[3] = (uint8_t)id;
			rc = evbuffer_add(out, hdr, sizeof(hdr));
			if (rc == 0 && end > off + FCGI_HEADER_LEN)
				rc = evbuffer_add_reference(out,
				    tmpl + off + FCGI_HEADER_LEN,
				    end - off - FCGI_HEADER_LEN, NULL, NULL);
		}
	if (rc == -1)
		oom();
}

/*
 * slot_fill: puts c back to work: starts requests on it until per_conn are
 * in flight or none is left to start, opening a socket if it has none, and
 * closes a socket that has nothing left to do.  A failure here never calls
 * back into slot_fill(): fconn_fail() defers the next attempt.
 */
static void
slot_fill(struct fconn *c)
{
	if (run.lr_stopping || c->c_state == CS_LINGER ||
	    c->c_state == CS_RETRY)
		return;
	while (c->c_nbusy < per_conn && lg_more(&run))
		req_start(c);
	/* --begin-first: the BEGINs went; the rest of each follows. */
	if (rest_q != NULL && evbuffer_add_buffer(c->c_out, rest_q) == -1)
		oom();
	if (c->c_nbusy == 0) {
		if (c->c_state == CS_OPEN)
			fconn_shut(c);
		return;
	}
	if (c->c_state == CS_IDLE)
		fconn_open(c);
	else
		fconn_write(c);
}

/* req_start: queues a new request in a free id slot of c. */
static void
req_start(struct fconn *c)
{
	struct req	*r;
	long long	 i;

	/* Slots are freed about in the order they were taken. */
	for (i = c->c_next; c->c_reqs[i].r_busy; i = (i + 1) % per_conn)
		;
	c->c_next = (i + 1) % per_conn;
	r = &c->c_reqs[i];
	memset(r, 0, sizeof(*r));
	r->r_busy = 1;
	r->r_id = (uint16_t)(i + 1);
	r->r_seq = ++run.lr_started;
	r->r_status = 200;
	r->r_start_us = now_us();
	r->r_out = out_fp != NULL && r->r_seq == 1;
	c->c_nbusy++;
	if (rest_q == NULL)
		tmpl_queue(c->c_out, r->r_id, 0, 0);
	else {
		tmpl_queue(c->c_out, r->r_id, 0, 1);
		tmpl_queue(rest_q, r->r_id, 1, 0);
	}
}

/* req_ok: r was answered: counts its status and latency, frees its slot. */
static void
req_ok(struct fconn *c, struct req *r)
{
	completed++;
	lg_status(&run, r->r_status);
	lat_add(now_us() - r->r_start_us);
	req_done(c, r);
}

/* req_fail: r failed for kind (why says more): counts it, frees its slot. */
static void
req_fail(struct fconn *c, struct req *r, enum err_kind kind, const char *why)
{
	errors[kind]++;
	nerrors++;
	lg_error(&run, progname, "request %lld failed (%s): %s", r->r_seq,
	    err_names[kind], why);
	req_done(c, r);
}

/* req_done: frees r's slot on c; the run stops after the last request. */
static void
req_done(struct fconn *c, struct req *r)
{
	r->r_busy = 0;
	c->c_nbusy--;
	c->c_slot.ls_done++;
	lg_ended(&run);
}

/*
 * req_head: walks STDOUT bytes of r that belong to the CGI header block,
 * noting a Status header.  Returns how many of the len bytes it took: all
 * of them, or up to and including the empty line that ends the block.
 */
static size_t
req_head(struct req *r, const uint8_t *p, size_t len)
{
	const char	*v;
	size_t		 i, n;
	int		 st, d;

	for (i = 0; i < len; i++) {
		if (p[i] == '\r')
			continue;
		if (p[i] != '\n') {
			if (r->r_linelen < LINE_KEEP)
				r->r_line[r->r_linelen] = (char)p[i];
			r->r_linelen++;
			continue;
		}
		if (r->r_linelen == 0) {
			r->r_head_done = 1;
			return i + 1;
		}
		n = r->r_linelen < LINE_KEEP ? r->r_linelen : LINE_KEEP;
		r->r_linelen = 0;
		if (n < 7 || strncasecmp(r->r_line, "Status:", 7) != 0)
			continue;
		for (v = r->r_line + 7; v < r->r_line + n &&
		    (*v == ' ' || *v == '\t'); v++)
			;
		for (st = 0, d = 0; v < r->r_line + n && d < 4 &&
		    isdigit((unsigned char)*v); v++, d++)
			st = st * 10 + (*v - '0');
		/* Three digits, then the end or a reason phrase. */
		if (d != 3 || st < 100 || (v < r->r_line + n && *v != ' ' &&
		    *v != '\t'))
			r->r_status = -1;
		else
			r->r_status = st;
	}
	return len;
}

/* req_stdout: takes STDOUT content of r: headers parsed, body to -o. */
static void
req_stdout(struct req *r, const uint8_t *p, size_t len)
{
	size_t	used = 0;

	if (!r->r_head_done)
		used = req_head(r, p, len);
	if (r->r_out && used < len && !out_err &&
	    fwrite(p + used, 1, len - used, out_fp) != len - used)
		out_err = 1;
}

/*
 * fconn_open: opens a socket for c's queued requests and starts connecting;
 * a unix listener with a full queue is tried again a millisecond later.
 */
static void
fconn_open(struct fconn *c)
{
	struct timeval	 tv = { 0, 1000 };
	const char	*step;
	int		 r;

	if (c->c_state != CS_RETRY)
		c->c_connect_us = now_us();
	c->c_state = CS_OPEN;
	r = lg_slot_dial(&c->c_slot, (struct sockaddr *)&srv.a_ss, srv.a_len,
	    !srv.a_unix, (int)opt_rcvbuf, &step);
	if (r == -1 && errno == EAGAIN && srv.a_unix &&
	    strcmp(step, "connect") == 0) {
		lg_slot_close(&c->c_slot);
		c->c_state = CS_RETRY;
		evtimer_add(&c->c_slot.ls_wake, &tv);
		return;
	}
	if (r == -1) {
		if (strcmp(step, "connect") == 0)
			fconn_fail(c, ERR_CONNECT, "connect to %s: %s",
			    addr_str, strerror(errno));
		else
			fconn_fail(c, ERR_CONNECT, "%s: %s", step,
			    strerror(errno));
		return;
	}
	if (r == 1)
		fconn_clocks(c);
	/* On loopback the handshake is usually done already: write now. */
	fconn_write(c);
}

/*
 * fconn_connected: c's socket is known to be established; the latency of
 * the requests queued before starts now (fconn_clocks()).
 */
static void
fconn_connected(struct fconn *c)
{
	if (c->c_slot.ls_connected)
		return;
	c->c_slot.ls_connected = 1;
	fconn_clocks(c);
}

/*
 * fconn_clocks: c's socket is established: the latency of the requests in
 * flight on it starts now, when their bytes can leave.
 */
static void
fconn_clocks(struct fconn *c)
{
	int64_t		t = now_us();
	long long	i;

	for (i = 0; i < per_conn; i++)
		if (c->c_reqs[i].r_busy)
			c->c_reqs[i].r_start_us = t;
}

/*
 * fconn_watch: makes c_ev wait for what c needs now: reading unless paused,
 * writing while output is queued; the timeout restarts with each change
 * and each event (EV_PERSIST).
 */
static void
fconn_watch(struct fconn *c)
{
	short	want = 0;

	if (!c->c_slot.ls_paused)
		want |= EV_READ;
	if (c->c_state == CS_OPEN && evbuffer_get_length(c->c_out) > 0)
		want |= EV_WRITE;
	lg_slot_watch(&c->c_slot, want,
	    c->c_state == CS_LINGER ? linger_tv : timeout_tv);
}

/* fconn_write: writes what c has queued, as much as the socket takes. */
static void
fconn_write(struct fconn *c)
{
	int	n;

	if (evbuffer_get_length(c->c_out) > 0) {
		n = evbuffer_write(c->c_out, c->c_slot.ls_fd);
		if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			if (!c->c_slot.ls_connected)
				fconn_fail(c, ERR_CONNECT, "connect to %s: %s",
				    addr_str, strerror(errno));
			else
				fconn_fail(c, ERR_CLOSED, "write: %s",
				    strerror(errno));
			return;
		}
		if (n > 0)
			fconn_connected(c);
	}
	fconn_watch(c);
}

/*
 * fconn_read: one read of at most --read-size bytes from c, fed to the
 * record parser; then a --pause, or the next requests on a kept socket.
 */
static void
fconn_read(struct fconn *c)
{
	ssize_t	 n;

	n = recv(c->c_slot.ls_fd, run.lr_rbuf, (size_t)opt_read_size, 0);
	if (n == -1) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return;
		if (!c->c_slot.ls_connected)
			fconn_fail(c, ERR_CONNECT, "connect to %s: %s",
			    addr_str, strerror(errno));
		else
			fconn_fail(c, ERR_CLOSED, "read: %s", strerror(errno));
		return;
	}
	if (n == 0) {
		if (c->c_nbusy == 0) {
			/* The close we waited for, or a kept socket let go. */
			fconn_shut(c);
			slot_fill(c);
		} else
			fconn_fail(c, ERR_CLOSED, "connection closed by the "
			    "server before END_REQUEST");
		return;
	}
	fconn_connected(c);
	if (c->c_state == CS_LINGER)
		return;		/* nothing is due after END_REQUEST: ignored */
	if (fconn_feed(c, (uint8_t *)run.lr_rbuf, (size_t)n) == -1)
		return;
	if (c->c_state == CS_OPEN && c->c_refill) {
		c->c_refill = 0;
		slot_fill(c);
	}
	if (c->c_state == CS_OPEN && opt_pause > 0)
		lg_slot_pause(&c->c_slot, &pause_tv);
	if (c->c_state == CS_OPEN || c->c_state == CS_LINGER)
		fconn_watch(c);
}

/*
 * fconn_shut: closes c's socket, stops its events and forgets its output
 * and input state; its requests are left as they are (the caller ends or
 * resends them).  Idempotent.
 */
static void
fconn_shut(struct fconn *c)
{
	lg_slot_close(&c->c_slot);
	evbuffer_drain(c->c_out, evbuffer_get_length(c->c_out));
	c->c_state = CS_IDLE;
	c->c_refill = 0;
	c->c_hdrlen = 0;
	c->c_inrec = 0;
	c->c_cur = NULL;
}

/*
 * fconn_redial: a kept socket that already served requests died before a
 * byte of the ones in flight arrived (the server let it go): resends them
 * once on a new socket.  Returns 1 if it did, 0 if they must fail.
 */
static int
fconn_redial(struct fconn *c)
{
	long long	 i;

	if (c->c_nbusy == 0)
		return 0;
	for (i = 0; i < per_conn; i++)
		if (c->c_reqs[i].r_busy && (c->c_reqs[i].r_got ||
		    c->c_reqs[i].r_retried))
			return 0;
	if (!lg_slot_redial(&c->c_slot))
		return 0;
	fconn_shut(c);
	for (i = 0; i < per_conn; i++)
		if (c->c_reqs[i].r_busy) {
			c->c_reqs[i].r_retried = 1;
			c->c_reqs[i].r_start_us = now_us();
			tmpl_queue(c->c_out, c->c_reqs[i].r_id, 0, 0);
		}
	fconn_open(c);
	return 1;
}

/*
 * fconn_fail: c's socket broke (kind, fmt says how): fails every request
 * in flight on it, or resends them (fconn_redial), and closes it.  The slot
 * is refilled on the next loop turn, so that a server that refuses at once
 * cannot keep this call stack, or the loop, busy.  Returns -1.
 */
static int
fconn_fail(struct fconn *c, enum err_kind kind, const char *fmt, ...)
{
	struct timeval	 zero = { 0, 0 };
	char		 why[256];
	va_list		 ap;
	long long	 i;

	if (kind == ERR_CLOSED && fconn_redial(c))
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	for (i = 0; i < per_conn; i++)
		if (c->c_reqs[i].r_busy)
			req_fail(c, &c->c_reqs[i], kind, why);
	fconn_shut(c);
	if (!run.lr_stopping)
		evtimer_add(&c->c_defer, &zero);
	return -1;
}

/*
 * fconn_feed: runs len bytes read from c through the record parser.  A
 * record that arrived whole is parsed in place by fcgi_parse(); one split
 * across reads is followed by its header, so content is counted as it
 * comes and never gathered.  Returns 0, or -1 when c was failed.
 */
static int
fconn_feed(struct fconn *c, const uint8_t *buf, size_t len)
{
	struct fcgi_record	 rec;
	struct fcgi_header	 h;
	ssize_t			 n;
	size_t			 take;

	while (len > 0 && c->c_state == CS_OPEN) {
		if (!c->c_inrec && c->c_hdrlen == 0 &&
		    (n = fcgi_parse(buf, len, &rec)) != 0) {
			if (n == -1)
				return fconn_fail(c, ERR_MALFORMED,
				    "bad record header (version %u, type %u)",
				    buf[0], len > 1 ? buf[1] : 0);
			if (rec_begin(c, &rec.hdr) == -1)
				return -1;
			rec_data(c, rec.content, rec.hdr.content_length);
			rec_end(c);
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (!c->c_inrec) {
			take = FCGI_HEADER_LEN - c->c_hdrlen < len ?
			    FCGI_HEADER_LEN - c->c_hdrlen : len;
			memcpy(c->c_hdr + c->c_hdrlen, buf, take);
			c->c_hdrlen += take;
			buf += take;
			len -= take;
			if (c->c_hdrlen < FCGI_HEADER_LEN)
				break;
			c->c_hdrlen = 0;
			if (fcgi_header_decode(c->c_hdr, FCGI_HEADER_LEN, &h) !=
			    1 || h.type == 0)
				return fconn_fail(c, ERR_MALFORMED,
				    "bad record header (version %u, type %u)",
				    c->c_hdr[0], c->c_hdr[1]);
			if (rec_begin(c, &h) == -1)
				return -1;
			c->c_inrec = 1;
			c->c_left = h.content_length;
			c->c_padleft = h.padding_length;
		} else if (c->c_left > 0) {
			take = c->c_left < len ? c->c_left : len;
			rec_data(c, buf, take);
			c->c_left -= take;
			buf += take;
			len -= take;
		} else {
			take = c->c_padleft < len ? c->c_padleft : len;
			c->c_padleft -= take;
			buf += take;
			len -= take;
		}
		if (c->c_inrec && c->c_left == 0 && c->c_padleft == 0) {
			c->c_inrec = 0;
			rec_end(c);
		}
	}
	return 0;
}

/*
 * rec_begin: checks a record header read from c: an answer (STDOUT,
 * STDERR, END_REQUEST) for a request id in flight.  Returns 0, or -1 when
 * it is not and c was failed.
 */
static int
rec_begin(struct fconn *c, const struct fcgi_header *h)
{
	struct req	*r;

	if (h->type != FCGI_STDOUT && h->type != FCGI_STDERR &&
	    h->type != FCGI_END_REQUEST)
		return fconn_fail(c, ERR_MALFORMED, "unexpected %s record "
		    "(type %u, id %u)", fcgi_type_name(h->type), h->type,
		    h->request_id);
	if (h->request_id == 0 || h->request_id > per_conn ||
	    !c->c_reqs[h->request_id - 1].r_busy)
		return fconn_fail(c, ERR_MALFORMED, "%s record for request id "
		    "%u, which is not in flight", fcgi_type_name(h->type),
		    h->request_id);
	if (h->type == FCGI_END_REQUEST && h->content_length != 8)
		return fconn_fail(c, ERR_MALFORMED, "END_REQUEST with %u "
		    "content bytes", h->content_length);
	r = &c->c_reqs[h->request_id - 1];
	r->r_got = 1;
	c->c_rec = *h;
	c->c_cur = r;
	c->c_endlen = 0;
	return 0;
}

/* rec_data: takes len content bytes of the current record of c. */
static void
rec_data(struct fconn *c, const uint8_t *p, size_t len)
{
	switch (c->c_rec.type) {
	case FCGI_STDOUT:
		stdout_bytes += len;
		req_stdout(c->c_cur, p, len);
		break;
	case FCGI_STDERR:
		stderr_bytes += len;
		break;
	case FCGI_END_REQUEST:
		memcpy(c->c_end + c->c_endlen, p, len);
		c->c_endlen += len;
		break;
	}
}

/*
 * rec_end: the current record of c is complete.  END_REQUEST ends its
 * request, well or not; the socket then waits for the server's close, or,
 * kept, takes the next request.
 */
static void
rec_end(struct fconn *c)
{
	struct req	*r = c->c_cur;
	uint32_t	 app;
	uint8_t		 ps;

	if (c->c_rec.type != FCGI_END_REQUEST)
		return;
	c->c_cur = NULL;
	(void)fcgi_end_decode(c->c_end, c->c_endlen, &app, &ps);
	if (app != 0)
		app_nonzero++;
	switch (ps) {
	case FCGI_REQUEST_COMPLETE:
		if (!r->r_head_done)
			req_fail(c, r, ERR_MALFORMED, "STDOUT without a "
			    "complete CGI header block");
		else if (r->r_status < 0)
			req_fail(c, r, ERR_MALFORMED, "bad CGI Status header");
		else
			req_ok(c, r);
		break;
	case FCGI_CANT_MPX_CONN:
		req_fail(c, r, ERR_CANT_MPX, "END_REQUEST FCGI_CANT_MPX_CONN");
		break;
	case FCGI_OVERLOADED:
		req_fail(c, r, ERR_OVERLOADED, "END_REQUEST FCGI_OVERLOADED");
		break;
	case FCGI_UNKNOWN_ROLE:
		req_fail(c, r, ERR_UNKNOWN_ROLE,
		    "END_REQUEST FCGI_UNKNOWN_ROLE");
		break;
	default:
		req_fail(c, r, ERR_PROTOCOL, "END_REQUEST with an unknown "
		    "protocolStatus");
		break;
	}
	if (opt_keep)
		c->c_refill = 1;
	else
		c->c_state = CS_LINGER;
}

/* fconn_cb: c's socket is ready, or made no progress for --timeout. */
static void
fconn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fconn	*c = arg;

	if (what & EV_TIMEOUT) {
		if (c->c_nbusy == 0) {
			/* The server did not close after END_REQUEST. */
			fconn_shut(c);
			slot_fill(c);
		} else if (c->c_slot.ls_connected)
			fconn_fail(c, ERR_TIMEOUT, "no progress for %g s",
			    opt_timeout);
		else
			fconn_fail(c, ERR_TIMEOUT, "connect to %s: no answer "
			    "for %g s", addr_str, opt_timeout);
		return;
	}
	if (what & EV_WRITE) {
		fconn_write(c);
		if (c->c_slot.ls_fd != fd || c->c_state != CS_OPEN)
			return;
	}
	if (what & EV_READ)
		fconn_read(c);
}

/* fconn_woke: a --pause of conn arg is over, or a unix connect() is due. */
static void
fconn_woke(void *arg)
{
	struct fconn	*c = arg;

	if (c->c_state == CS_RETRY) {
		if (now_us() - c->c_connect_us > (int64_t)(opt_timeout * 1e6))
			fconn_fail(c, ERR_TIMEOUT,
			    "connect to %s: listen queue full for %g s",
			    addr_str, opt_timeout);
		else
			fconn_open(c);
		return;
	}
	if (c->c_state == CS_OPEN)
		fconn_watch(c);
}

/* defer_cb: refills a slot whose socket failed on an earlier turn. */
static void
defer_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	slot_fill(arg);
}

/*
 * lat_add: records one latency of us microseconds.  Past LAT_CAP samples
 * (or when memory runs out) a reservoir keeps a uniform sample, so the
 * percentiles stay fair; the maximum is always exact.
 */
static void
lat_add(int64_t us)
{
	uint32_t	 v, *nl;
	uint64_t	 j;
	size_t		 na;

	v = us < 0 ? 0 : us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	if (v > lat_max)
		lat_max = v;
	lat_seen++;
	if (lat_n == lat_alloc && lat_alloc < LAT_CAP) {
		na = lat_alloc == 0 ? 65536 : lat_alloc * 2;
		if ((nl = realloc(lat, na * sizeof(*lat))) != NULL) {
			lat = nl;
			lat_alloc = na;
		}
	}
	if (lat_n < lat_alloc) {
		lat[lat_n++] = v;
		return;
	}
	j = ((uint64_t)random() << 31 | (uint64_t)random()) % lat_seen;
	if (j < lat_n)
		lat[j] = v;
}

/* lat_cmp: qsort order of two samples. */
static int
lat_cmp(const void *a, const void *b)
{
	uint32_t	x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* lat_pct: the p-th percentile (nearest rank) of the sorted samples, ms. */
static double
lat_pct(double p)
{
	size_t	k;

	if (lat_n == 0)
		return 0;
	k = (size_t)(p / 100 * (double)lat_n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > lat_n)
		k = lat_n;
	return (double)lat[k - 1] / 1e3;
}

/* report: prints the summary, one "key: value" a line (see usage()). */
static void
report(int64_t end_us)
{
	double	 secs = (double)(end_us - run.lr_start_us) / 1e6;
	int	 i, first = 1;

	if (lat_n > 0)
		qsort(lat, lat_n, sizeof(*lat), lat_cmp);
	printf("requests: %lld\n", completed);
	printf("seconds: %.3f\n", secs);
	printf("rps: %.2f\n", secs > 0 ? (double)completed / secs : 0.0);
	printf("bytes: %llu\n", (unsigned long long)stdout_bytes);
	printf("latency_ms: p50=%.3f p90=%.3f p99=%.3f max=%.3f\n",
	    lat_pct(50), lat_pct(90), lat_pct(99), (double)lat_max / 1e3);
	for (i = 0; i < 1000; i++)
		if (run.lr_status[i] > 0)
			printf("status %d: %lld\n", i, run.lr_status[i]);
	printf("errors: %lld", nerrors);
	for (i = 0; i < ERR_NKINDS; i++)
		if (errors[i] > 0) {
			printf("%s%s %lld", first ? " (" : ", ", err_names[i],
			    errors[i]);
			first = 0;
		}
	printf("%s\n", first ? "" : ")");
	fflush(stdout);
}

/*
 * parse_args: reads the command line into the options, ADDR into srv;
 * says what is wrong and exits with EXIT_USAGE otherwise.
 */
static void
parse_args(int argc, char **argv)
{
	const char	*why;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "c:km:n:d:b:p:t:o:qh", longopts,
	    NULL)) != -1)
		if (opt_take(ch, optarg) == -1)
			bad_value(ch);
	if (argc - optind != 2) {
		fprintf(stderr, "%s: expected ADDR and PATH\n", progname);
		usage(stderr, EXIT_USAGE);
	}
	if (opt_have_n && opt_duration > 0)
		usage_error("only one of --requests and --duration");
	if (!opt_have_n && opt_duration == 0)
		opt_requests = 1;
	if (opt_inflight > 1 && !opt_keep)
		usage_error("--in-flight needs --keep-conn: without "
		    "FCGI_KEEP_CONN the server closes after one request");
	if (opt_begin_first && opt_inflight < 2)
		usage_error("--begin-first needs --in-flight 2 or more");
	addr_str = argv[optind];
	req_path = argv[optind + 1];
	if (server_parse(addr_str, &why) == -1)
		usage_error("bad address %s: %s", addr_str, why);
	if (req_path[0] != '/' || strlen(req_path) > PATH_MAX_LEN)
		usage_error("PATH must start with / (at most %d bytes): %s",
		    PATH_MAX_LEN, req_path);
}

/*
 * opt_take: takes option ch with its value arg (optarg).  Returns 0, or
 * -1 for a bad value; --help, an unknown option, a bad --param and too
 * many --connections end the program.
 */
static int
opt_take(int ch, const char *arg)
{
	const char	*eq;

	switch (ch) {
	case 'c':
		if (parse_int(arg, 1, LLONG_MAX, &opt_conns) == -1)
			return -1;
		if (opt_conns > max_conns)
			usage_error("--connections may be at most %lld (open "
			    "file limit)", max_conns);
		return 0;
	case 'k':
		opt_keep = 1;
		return 0;
	case 'm':
		return parse_int(arg, 1, 65535, &opt_inflight);
	case 'n':
		opt_have_n = 1;
		return parse_int(arg, 1, LLONG_MAX, &opt_requests);
	case 'd':
		return parse_secs(arg, 1e7, &opt_duration);
	case 'b':
		opt_body = arg;
		return 0;
	case 'p':
		if ((eq = strchr(arg, '=')) == NULL || eq == arg)
			usage_error("--param: expected NAME=VALUE: %s", arg);
		param_set(&opt_params, &opt_nparams, arg,
		    (size_t)(eq - arg), eq + 1);
		return 0;
	case 'T':
		return parse_secs(arg, 1e7, &opt_timeout);
	case 'R':
		return parse_int(arg, 0, SLOW_RCVBUF_MAX, &opt_rcvbuf);
	case 'S':
		return parse_int(arg, 1, SLOW_READ_SIZE_MAX, &opt_read_size);
	case 'P':
		return parse_int(arg, 0, SLOW_PAUSE_MAX_MS, &opt_pause);
	case 't':
		return parse_secs(arg, 1e7, &opt_limit);
	case 'o':
		opt_output = arg;
		return 0;
	case 'q':
		opt_quiet = 1;
		return 0;
	case 'F':
		opt_begin_first = 1;
		return 0;
	case 'h':
		usage(stdout, EXIT_OK);
	default:
		usage(stderr, EXIT_USAGE);
	}
}

/* bad_value: says that option ch has a bad value (optarg); exits. */
static void
bad_value(int ch)
{
	size_t	i;

	/* optind has moved past the value; name the option by ch. */
	for (i = 0; longopts[i].name != NULL; i++)
		if (longopts[i].val == ch)
			break;
	usage_error("--%s: bad value: %s", longopts[i].name, optarg);
}

/* usage_error: prints "fcgi_load: " and the message; exits EXIT_USAGE. */
static void
usage_error(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

/*
 * request_build: encodes the one request: the body file (-b), the CGI
 * variables for PATH with the user's additions and replacements (-p);
 * opens the -o file.  Says what failed and exits EXIT_USAGE.
 */
static void
request_build(void)
{
	struct fparam	*ps = NULL;
	const char	*q;
	char		 num[32], *script;
	uint8_t		*body = NULL;
	size_t		 blen = 0, np = 0, i;

	if (opt_body != NULL && load_body(opt_body, &body, &blen) == -1)
		usage_error("%s: %s", opt_body, strerror(errno));
	if (opt_output != NULL && (out_fp = fopen(opt_output, "wb")) == NULL)
		usage_error("%s: %s", opt_output, strerror(errno));
	q = strchr(req_path, '?');
	if ((script = strndup(req_path, q != NULL ?
	    (size_t)(q - req_path) : strlen(req_path))) == NULL)
		oom();
#define SET(n, v) param_set(&ps, &np, n, sizeof(n) - 1, v)
	SET("REQUEST_METHOD", opt_body != NULL ? "POST" : "GET");
	SET("REQUEST_URI", req_path);
	SET("SCRIPT_NAME", script);
	SET("QUERY_STRING", q != NULL ? q + 1 : "");
	SET("SERVER_PROTOCOL", "HTTP/1.1");
	snprintf(num, sizeof(num), "%zu", blen);
	SET("CONTENT_LENGTH", num);
	SET("GATEWAY_INTERFACE", "CGI/1.1");
	SET("SERVER_NAME", srv.a_unix ? "localhost" : srv.a_host);
	SET("SERVER_PORT", srv.a_port);
	SET("REMOTE_ADDR", srv.a_ss.ss_family == AF_INET6 ? "::1" :
	    "127.0.0.1");
#undef SET
	for (i = 0; i < opt_nparams; i++)
		param_set(&ps, &np, opt_params[i].p_name,
		    strlen(opt_params[i].p_name), opt_params[i].p_value);
	per_conn = opt_keep ? opt_inflight : 1;
	tmpl_build(ps, np, body, blen, opt_keep ? FCGI_KEEP_CONN : 0);
	params_free(ps, np);
	params_free(opt_params, opt_nparams);
	free(script);
	free(body);
}

/* params_free: frees the np variables of ps and ps itself. */
static void
params_free(struct fparam *ps, size_t np)
{
	size_t	i;

	for (i = 0; i < np; i++) {
		free(ps[i].p_name);
		free(ps[i].p_value);
	}
	free(ps);
}

/*
 * run_setup: the run (event loop, read buffer, timeouts) and the
 * connection slots, all without a socket yet.  Exits EXIT_ERRORS when it
 * cannot.
 */
static void
run_setup(void)
{
	struct timeval	 tv;
	const char	*why;
	long long	 v;

	if (lg_init(&run, progname, (size_t)opt_read_size, &why) == -1) {
		fprintf(stderr, "%s: %s\n", progname, why);
		exit(EXIT_ERRORS);
	}
	run.lr_count = opt_requests;
	run.lr_seconds = opt_duration;
	run.lr_limit = opt_limit;
	tv = secs_tv(opt_timeout);
	timeout_tv = event_base_init_common_timeout(run.lr_base, &tv);
	tv = secs_tv(opt_timeout < LINGER_SECS ? opt_timeout : LINGER_SECS);
	linger_tv = event_base_init_common_timeout(run.lr_base, &tv);
	pause_tv.tv_sec = (time_t)(opt_pause / 1000);
	pause_tv.tv_usec = (suseconds_t)(opt_pause % 1000) * 1000;
	if ((conns = calloc((size_t)opt_conns, sizeof(*conns))) == NULL)
		oom();
	if (opt_begin_first && (rest_q = evbuffer_new()) == NULL)
		oom();
	for (v = 0; v < opt_conns; v++) {
		lg_slot_init(&conns[v].c_slot, &run, fconn_cb, fconn_woke,
		    &conns[v]);
		if ((conns[v].c_out = evbuffer_new()) == NULL ||
		    (conns[v].c_reqs = calloc((size_t)per_conn,
		    sizeof(struct req))) == NULL)
			oom();
		evtimer_assign(&conns[v].c_defer, run.lr_base, defer_cb,
		    &conns[v]);
	}
}

/* start: puts every slot to work (lg_run()'s start). */
static void
start(void *arg)
{
	long long	v;

	(void)arg;
	for (v = 0; v < opt_conns && lg_more(&run); v++)
		slot_fill(&conns[v]);
}

/*
 * finish: what the run leaves to say on stderr (requests cut off by the
 * time limit, errors not shown, STDERR bytes, appStatus, a failed -o
 * file), and the exit status it makes.
 */
static int
finish(void)
{
	long long	 v, cut = 0;
	int		 status = EXIT_OK;

	if (run.lr_limit_hit) {
		for (v = 0; v < opt_conns; v++)
			cut += conns[v].c_nbusy;
		if (opt_requests > 0)
			cut += opt_requests - run.lr_started;
		if (cut > 0) {
			fprintf(stderr, "%s: time limit of %g s: %lld "
			    "requests cut off\n", progname, opt_limit, cut);
			status = EXIT_CUTOFF;
		}
	}
	if (lg_errors_hidden(&run) > 0)
		fprintf(stderr, "%s: %lld more errors not shown\n", progname,
		    lg_errors_hidden(&run));
	if (stderr_bytes > 0)
		fprintf(stderr, "%s: the application sent %llu bytes on "
		    "FCGI_STDERR\n", progname,
		    (unsigned long long)stderr_bytes);
	if (app_nonzero > 0)
		fprintf(stderr, "%s: %lld END_REQUEST records with a non-zero "
		    "appStatus\n", progname, app_nonzero);
	if (out_fp != NULL && (fclose(out_fp) != 0 || out_err)) {
		fprintf(stderr, "%s: %s: write error\n", progname, opt_output);
		if (status == EXIT_OK)
			status = EXIT_ERRORS;
	}
	if (status == EXIT_OK && nerrors > 0)
		status = EXIT_ERRORS;
	return status;
}

/* cleanup: closes every slot and frees what the run held. */
static void
cleanup(void)
{
	long long	v;

	for (v = 0; v < opt_conns; v++) {
		fconn_shut(&conns[v]);
		evtimer_del(&conns[v].c_defer);
		evbuffer_free(conns[v].c_out);
		free(conns[v].c_reqs);
	}
	if (rest_q != NULL)
		evbuffer_free(rest_q);
	lg_free(&run);
	free(tmpl);
	free(tmpl_recs);
	free(scratch);
	free(conns);
	free(lat);
}

int
main(int argc, char **argv)
{
	int	status;

	max_conns = lg_fd_budget();
	parse_args(argc, argv);
	request_build();
	run_setup();
	if (lg_run(&run, start, NULL) == -1)
		oom();
	status = finish();
	if (!opt_quiet)
		report(run.lr_end_us);
	cleanup();
	return status;
}
