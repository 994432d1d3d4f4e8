/*
 * floor: the machine's floor for make bench.  It is not the product.
 *
 * The least a FastCGI responder can do per request on this machine and
 * still be a correct one: a level-triggered epoll loop, one read() per
 * readable socket, the records of that read parsed with the project's
 * codec, every answer they complete appended to the connection's output,
 * and one write() for the whole batch.  EPOLLOUT is asked for only when
 * the kernel refuses bytes.  The answers are fixed: /hello and /big (the
 * 96256-byte body is copied into the output, as a responder that has it
 * in memory would), anything else 404; each is built once at start with
 * request id 0, and only the id bytes are patched per request.
 *
 * What it still does properly, so that it is a fair floor: records split
 * anywhere across reads, PARAMS split across records (the route comes
 * from REQUEST_URI, else SCRIPT_NAME + PATH_INFO), STDIN read to its
 * empty record before the answer, several request ids in flight on one
 * connection (FCGI_MPXS_CONNS), FCGI_KEEP_CONN honoured (without it the
 * connection closes once the answer is written), ABORT_REQUEST,
 * GET_VALUES, UNKNOWN_TYPE, UNKNOWN_ROLE, and output bounded: above
 * OUT_HIGH queued bytes a connection stops reading until it drains.
 * A malformed record, or more than PARAMS_MAX bytes of PARAMS, closes that
 * one connection.  What it leaves out: timeouts, limits on connections,
 * logging, signals beyond SIGPIPE (SIGTERM ends it at once).
 */
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi_proto.h"
#include "listen.h"

#define PROG		"floor"
#define IN_SIZE		(128 * 1024)	/* holds any whole record */
#define OUT_HIGH	(1024 * 1024)	/* queued output that stops reading */
#define MAX_REQS	64		/* request ids in flight per connection */
#define STR(x)		#x
#define XSTR(x)		STR(x)
#define PARAMS_MAX	65536		/* PARAMS bytes one request may send */
#define MAX_EVENTS	256
#define BACKLOG		4096
#define BIG_SIZE	96256
#define MAX_HDRS	8		/* record headers in one fixed answer */

static const char pattern_line[] =
    "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ.\n";

/* A fixed answer: its records with request id 0, and where the ids go. */
struct answer {
	uint8_t		*a_bytes;
	size_t		 a_len;
	size_t		 a_hdr[MAX_HDRS];	/* offsets of the record headers */
	int		 a_nhdr;
};

/* One request id in flight; r_params is kept for the slot's next use. */
struct req {
	int		 r_busy;
	uint16_t	 r_id;
	int		 r_keep;	/* FCGI_KEEP_CONN was set */
	int		 r_params_done;
	uint8_t		*r_params;
	size_t		 r_plen;
	size_t		 r_pcap;
};

/* One connection: its socket, the unparsed input and the queued output. */
struct conn {
	int		 c_fd;
	int		 c_closing;	/* no more input: close once written */
	uint32_t	 c_events;	/* what epoll watches now */
	size_t		 c_inlen;
	uint8_t		*c_out;
	size_t		 c_outoff;	/* written so far */
	size_t		 c_outlen;
	size_t		 c_outcap;
	struct req	 c_reqs[MAX_REQS];
	uint8_t		 c_in[IN_SIZE];
};

static void	 usage(FILE *, int) __attribute__((noreturn));
static void	 answer_build(struct answer *, const char *, const uint8_t *,
		    size_t);
static void	*xmalloc(size_t);
static void	 accept_all(int, int);
static void	 conn_close(int, struct conn *);
static void	 conn_watch(int, struct conn *);
static void	 conn_readable(int, struct conn *);
static int	 conn_flush(struct conn *);
static int	 conn_records(struct conn *);
static int	 conn_record(struct conn *, const struct fcgi_record *);
static int	 out_reserve(struct conn *, size_t);
static int	 out_add(struct conn *, const void *, size_t);
static int	 out_answer(struct conn *, const struct answer *, uint16_t);
static int	 out_end(struct conn *, uint16_t, uint8_t);
static int	 out_values(struct conn *, const uint8_t *, size_t);
static struct req *req_find(struct conn *, uint16_t);
static int	 req_begin(struct conn *, uint16_t, const uint8_t *, size_t);
static int	 req_params(struct req *, const uint8_t *, size_t);
static const struct answer *req_route(const struct req *);

static struct answer	 ans_hello, ans_big, ans_404;

static void
usage(FILE *fp, int status)
{
	fprintf(fp,
"usage: %s --listen ADDR\n"
"The bare epoll FastCGI responder of make bench: the machine's floor, not\n"
"the product.  Serves /hello and /big (96256 bytes) as evfcgid does, 404\n"
"for anything else, on ADDR (HOST:PORT, [V6]:PORT or unix:/path).\n"
"\n"
"  -l, --listen ADDR   the address to serve (required)\n"
"  -h, --help          this text\n", PROG);
	exit(status);
}

/* xmalloc: malloc that ends the program when memory is out. */
static void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n)) == NULL) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(1);
	}
	return p;
}

/*
 * answer_build: a's records for the CGI header block head followed by
 * body: STDOUT records of at most FCGI_MAX_ALIGNED bytes (the last one
 * padded to 8), the empty STDOUT, END_REQUEST; request id 0 everywhere.
 */
static void
answer_build(struct answer *a, const char *head, const uint8_t *body,
    size_t blen)
{
	size_t	 hlen = strlen(head), slen = hlen + blen, off, n, max;
	uint8_t	*stream, pad;

	max = slen + (slen / FCGI_MAX_ALIGNED + 3) * (FCGI_HEADER_LEN + 8);
	stream = xmalloc(slen);
	memcpy(stream, head, hlen);
	memcpy(stream + hlen, body, blen);
	a->a_bytes = xmalloc(max);
	a->a_len = 0;
	a->a_nhdr = 0;
	off = 0;
	do {	/* the last turn writes the empty STDOUT */
		n = slen - off < FCGI_MAX_ALIGNED ? slen - off : FCGI_MAX_ALIGNED;
		pad = fcgi_padding(n);
		a->a_hdr[a->a_nhdr++] = a->a_len;
		fcgi_header_encode(a->a_bytes + a->a_len, FCGI_STDOUT, 0,
		    (uint16_t)n, pad);
		a->a_len += FCGI_HEADER_LEN;
		memcpy(a->a_bytes + a->a_len, stream + off, n);
		memset(a->a_bytes + a->a_len + n, 0, pad);
		a->a_len += n + pad;
		off += n;
	} while (n > 0);
	a->a_hdr[a->a_nhdr++] = a->a_len;
	fcgi_end_encode(a->a_bytes + a->a_len, 0, 0, FCGI_REQUEST_COMPLETE);
	a->a_len += 16;
	free(stream);
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen",	required_argument,	NULL, 'l' },
		{ "help",	no_argument,		NULL, 'h' },
		{ NULL,		0,			NULL, 0 }
	};
	struct epoll_event	 ev, evs[MAX_EVENTS];
	const char		*addr = NULL;
	char			 err[256];
	uint8_t			*big;
	size_t			 i;
	int			 c, lfd, ep, n;

	while ((c = getopt_long(argc, argv, "l:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			addr = optarg;
			break;
		case 'h':
			usage(stdout, 0);
		default:
			usage(stderr, 2);
		}
	}
	if (addr == NULL || optind != argc) {
		fprintf(stderr, "%s: %s\n", PROG, addr == NULL ?
		    "--listen ADDR is required" : "unexpected argument");
		usage(stderr, 2);
	}

	big = xmalloc(BIG_SIZE);
	for (i = 0; i < BIG_SIZE; i++)
		big[i] = (uint8_t)pattern_line[i % (sizeof(pattern_line) - 1)];
	answer_build(&ans_hello, "Status: 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 12\r\n\r\n", (const uint8_t *)"Hello World\n", 12);
	answer_build(&ans_big, "Status: 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 96256\r\n\r\n", big, BIG_SIZE);
	answer_build(&ans_404, "Status: 404 Not Found\r\n"
	    "Content-Type: text/plain\r\nContent-Length: 10\r\n\r\n",
	    (const uint8_t *)"Not Found\n", 10);
	free(big);

	signal(SIGPIPE, SIG_IGN);
	if ((lfd = listen_bind(addr, 0666, BACKLOG, err, sizeof(err))) == -1) {
		fprintf(stderr, "%s: %s\n", PROG, err);
		return 1;
	}
	if (fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK) == -1 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		perror(PROG);
		return 1;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;		/* NULL: the listener */
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1) {
		perror(PROG ": epoll_ctl");
		return 1;
	}
	for (;;) {
		if ((n = epoll_wait(ep, evs, MAX_EVENTS, -1)) == -1) {
			if (errno == EINTR)
				continue;
			perror(PROG ": epoll_wait");
			return 1;
		}
		for (c = 0; c < n; c++) {
			struct conn	*cn = evs[c].data.ptr;

			if (cn == NULL)
				accept_all(ep, lfd);
			else if (evs[c].events & EPOLLIN)
				conn_readable(ep, cn);
			else if (conn_flush(cn) == -1)
				conn_close(ep, cn);
			else
				conn_watch(ep, cn);
		}
	}
}

/* accept_all: takes every pending connection, each watched for input. */
static void
accept_all(int ep, int lfd)
{
	struct epoll_event	 ev;
	struct conn		*c;
	int			 fd, one = 1;

	while ((fd = accept4(lfd, NULL, NULL,
	    SOCK_NONBLOCK | SOCK_CLOEXEC)) != -1) {
		/* Fails harmlessly on a unix socket. */
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
		    sizeof(one));
		c = xmalloc(sizeof(*c));
		memset(c, 0, offsetof(struct conn, c_in));
		c->c_fd = fd;
		c->c_events = EPOLLIN;
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
			close(fd);
			free(c);
		}
	}
	if (errno == EMFILE || errno == ENFILE)
		fprintf(stderr, "%s: accept: %s\n", PROG, strerror(errno));
}

/* conn_close: closes c's socket and frees c with all it held. */
static void
conn_close(int ep, struct conn *c)
{
	int	 i;

	(void)epoll_ctl(ep, EPOLL_CTL_DEL, c->c_fd, NULL);
	close(c->c_fd);
	for (i = 0; i < MAX_REQS; i++)
		free(c->c_reqs[i].r_params);
	free(c->c_out);
	free(c);
}

/*
 * conn_watch: after a read or a write, closes c when it is closing and
 * has written everything, else has epoll watch what c waits for: input
 * unless closing or OUT_HIGH bytes are queued, output while any is.
 */
static void
conn_watch(int ep, struct conn *c)
{
	struct epoll_event	 ev;
	size_t			 queued = c->c_outlen - c->c_outoff;

	if (c->c_closing && queued == 0) {
		conn_close(ep, c);
		return;
	}
	ev.events = 0;
	if (!c->c_closing && queued < OUT_HIGH)
		ev.events |= EPOLLIN;
	if (queued > 0)
		ev.events |= EPOLLOUT;
	if (ev.events == c->c_events)
		return;
	ev.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, c->c_fd, &ev) == -1) {
		conn_close(ep, c);
		return;
	}
	c->c_events = ev.events;
}

/*
 * conn_readable: one read(), the whole records it completes acted on, and
 * one write() of every answer they made.  Closes c on end of input with
 * nothing left to write, a read or write error or a malformed record.
 */
static void
conn_readable(int ep, struct conn *c)
{
	ssize_t	 n;

	n = read(c->c_fd, c->c_in + c->c_inlen, IN_SIZE - c->c_inlen);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* End of input: what is queued still goes out. */
		c->c_closing = 1;
		if (n == -1 || c->c_outlen == c->c_outoff) {
			conn_close(ep, c);
			return;
		}
	} else {
		c->c_inlen += (size_t)n;
		if (conn_records(c) == -1) {
			conn_close(ep, c);
			return;
		}
	}
	if (c->c_outlen > c->c_outoff && conn_flush(c) == -1) {
		conn_close(ep, c);
		return;
	}
	conn_watch(ep, c);
}

/*
 * conn_flush: one write() of c's queued output.  Returns 0 (all or part
 * written, or the kernel took nothing for now), -1 on an error.
 */
static int
conn_flush(struct conn *c)
{
	ssize_t	 n;

	n = write(c->c_fd, c->c_out + c->c_outoff, c->c_outlen - c->c_outoff);
	if (n == -1)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	c->c_outoff += (size_t)n;
	if (c->c_outoff == c->c_outlen)
		c->c_outoff = c->c_outlen = 0;
	return 0;
}

/*
 * conn_records: acts on every whole record in c's input and keeps the
 * part of a record that has not arrived whole.  Returns 0, or -1 when a
 * record is malformed or cannot be answered (out of memory).
 */
static int
conn_records(struct conn *c)
{
	struct fcgi_record	 rec;
	size_t			 off = 0;
	ssize_t			 n = 0;

	while (!c->c_closing &&
	    (n = fcgi_parse(c->c_in + off, c->c_inlen - off, &rec)) > 0) {
		if (conn_record(c, &rec) == -1)
			return -1;
		off += (size_t)n;
	}
	if (!c->c_closing && n == -1)
		return -1;
	c->c_inlen -= off;
	if (off > 0 && c->c_inlen > 0)
		memmove(c->c_in, c->c_in + off, c->c_inlen);
	return 0;
}

/*
 * conn_record: acts on one record: a request's BEGIN, PARAMS, STDIN (its
 * empty record queues the answer) or ABORT; a management record.
 * Records for an id not in flight are ignored, as the spec says.
 * Returns 0, or -1 to close the connection.
 */
static int
conn_record(struct conn *c, const struct fcgi_record *rec)
{
	const struct fcgi_header	*h = &rec->hdr;
	struct req			*r;
	uint8_t				 u[16];

	if (h->request_id == 0) {
		if (h->type == FCGI_GET_VALUES)
			return out_values(c, rec->content, h->content_length);
		if (h->type >= FCGI_BEGIN_REQUEST && h->type <= FCGI_DATA)
			return -1;	/* an application record needs an id */
		fcgi_unknown_type_encode(u, h->type);
		return out_add(c, u, sizeof(u));
	}
	if (h->type == FCGI_BEGIN_REQUEST)
		return req_begin(c, h->request_id, rec->content,
		    h->content_length);
	if ((r = req_find(c, h->request_id)) == NULL)
		return 0;
	switch (h->type) {
	case FCGI_PARAMS:
		if (r->r_params_done)
			return 0;
		if (h->content_length == 0) {
			r->r_params_done = 1;
			return 0;
		}
		return req_params(r, rec->content, h->content_length);
	case FCGI_STDIN:
		if (h->content_length > 0)
			return 0;	/* a body: read, not wanted */
		if (out_answer(c, req_route(r), r->r_id) == -1)
			return -1;
		break;
	case FCGI_ABORT_REQUEST:
		if (out_end(c, r->r_id, FCGI_REQUEST_COMPLETE) == -1)
			return -1;
		break;
	default:
		return 0;		/* DATA, or a type a responder ignores */
	}
	r->r_busy = 0;
	if (!r->r_keep)
		c->c_closing = 1;
	return 0;
}

/* req_find: the request in flight with this id, or NULL. */
static struct req *
req_find(struct conn *c, uint16_t id)
{
	int	 i;

	for (i = 0; i < MAX_REQS; i++)
		if (c->c_reqs[i].r_busy && c->c_reqs[i].r_id == id)
			return &c->c_reqs[i];
	return NULL;
}

/*
 * req_begin: starts request id from its BEGIN_REQUEST body: a free slot,
 * or END_REQUEST with FCGI_UNKNOWN_ROLE or FCGI_CANT_MPX_CONN when it
 * cannot be served.  Returns 0, or -1 when the record is malformed (a
 * bad length, an id already in flight).
 */
static int
req_begin(struct conn *c, uint16_t id, const uint8_t *body, size_t len)
{
	struct req	*r = NULL;
	uint16_t	 role;
	uint8_t		 flags;
	int		 i;

	if (fcgi_begin_decode(body, len, &role, &flags) == -1 ||
	    req_find(c, id) != NULL)
		return -1;
	if (role != FCGI_RESPONDER)
		return out_end(c, id, FCGI_UNKNOWN_ROLE);
	for (i = 0; i < MAX_REQS && r == NULL; i++)
		if (!c->c_reqs[i].r_busy)
			r = &c->c_reqs[i];
	if (r == NULL)
		return out_end(c, id, FCGI_CANT_MPX_CONN);
	r->r_busy = 1;
	r->r_id = id;
	r->r_keep = (flags & FCGI_KEEP_CONN) != 0;
	r->r_params_done = 0;
	r->r_plen = 0;
	return 0;
}

/*
 * req_params: appends one PARAMS record's content to r's parameters.
 * Returns 0, or -1 past PARAMS_MAX bytes or when memory is out.
 */
static int
req_params(struct req *r, const uint8_t *p, size_t len)
{
	uint8_t	*np;
	size_t	 cap;

	if (r->r_plen + len > PARAMS_MAX)
		return -1;
	if (r->r_plen + len > r->r_pcap) {
		cap = r->r_pcap == 0 ? 2048 : r->r_pcap * 2;
		while (cap < r->r_plen + len)
			cap *= 2;
		if ((np = realloc(r->r_params, cap)) == NULL)
			return -1;
		r->r_params = np;
		r->r_pcap = cap;
	}
	memcpy(r->r_params + r->r_plen, p, len);
	r->r_plen += len;
	return 0;
}

/*
 * req_route: the answer for r's path, REQUEST_URI up to its '?', else
 * SCRIPT_NAME followed by PATH_INFO.  Malformed pairs end the search.
 */
static const struct answer *
req_route(const struct req *r)
{
	struct fcgi_nv	 nv;
	const uint8_t	*script = NULL, *info = NULL;
	size_t		 off = 0, slen = 0, ilen = 0, plen;
	ssize_t		 n;
	char		 path[8];

	while ((n = fcgi_nv_parse(r->r_params + off, r->r_plen - off,
	    &nv)) > 0) {
		off += (size_t)n;
		if (nv.name_len == 11 && memcmp(nv.name, "REQUEST_URI", 11) == 0) {
			plen = 0;
			while (plen < nv.value_len && nv.value[plen] != '?')
				plen++;
			script = nv.value, slen = plen, info = NULL, ilen = 0;
			break;
		}
		if (nv.name_len == 11 && memcmp(nv.name, "SCRIPT_NAME", 11) == 0)
			script = nv.value, slen = nv.value_len;
		else if (nv.name_len == 9 && memcmp(nv.name, "PATH_INFO", 9) == 0)
			info = nv.value, ilen = nv.value_len;
	}
	if (script == NULL || slen + ilen >= sizeof(path))
		return &ans_404;
	memcpy(path, script, slen);
	if (info != NULL)
		memcpy(path + slen, info, ilen);
	path[slen + ilen] = '\0';
	if (strcmp(path, "/hello") == 0)
		return &ans_hello;
	if (strcmp(path, "/big") == 0)
		return &ans_big;
	return &ans_404;
}

/*
 * out_reserve: room for n more bytes of output, the buffer doubled as
 * needed.  Returns 0, or -1 when memory is out.
 */
static int
out_reserve(struct conn *c, size_t n)
{
	uint8_t	*np;
	size_t	 cap;

	if (c->c_outlen + n <= c->c_outcap)
		return 0;
	cap = c->c_outcap == 0 ? 65536 : c->c_outcap * 2;
	while (cap < c->c_outlen + n)
		cap *= 2;
	if ((np = realloc(c->c_out, cap)) == NULL)
		return -1;
	c->c_out = np;
	c->c_outcap = cap;
	return 0;
}

/* out_add: queues n bytes.  Returns 0, or -1 when memory is out. */
static int
out_add(struct conn *c, const void *p, size_t n)
{
	if (out_reserve(c, n) == -1)
		return -1;
	memcpy(c->c_out + c->c_outlen, p, n);
	c->c_outlen += n;
	return 0;
}

/*
 * out_answer: queues the fixed answer a for request id, its record
 * headers given that id.  Returns 0, or -1 when memory is out.
 */
static int
out_answer(struct conn *c, const struct answer *a, uint16_t id)
{
	uint8_t	*p;
	int	 i;

	if (out_reserve(c, a->a_len) == -1)
		return -1;
	p = c->c_out + c->c_outlen;
	memcpy(p, a->a_bytes, a->a_len);
	for (i = 0; i < a->a_nhdr; i++) {
		p[a->a_hdr[i] + 2] = (uint8_t)(id >> 8);
		p[a->a_hdr[i] + 3] = (uint8_t)id;
	}
	c->c_outlen += a->a_len;
	return 0;
}

/* out_end: queues END_REQUEST for id.  Returns 0, or -1 (no memory). */
static int
out_end(struct conn *c, uint16_t id, uint8_t protocol_status)
{
	uint8_t	 e[16];

	fcgi_end_encode(e, id, 0, protocol_status);
	return out_add(c, e, sizeof(e));
}

/*
 * out_values: queues the GET_VALUES_RESULT for the names asked in p (len
 * bytes) that this responder can answer truly: FCGI_MAX_REQS and
 * FCGI_MPXS_CONNS (it sets no cap on connections, so FCGI_MAX_CONNS is
 * left out, as the spec allows).  Returns 0, or -1 when the names are malformed or
 * memory is out.
 */
static int
out_values(struct conn *c, const uint8_t *p, size_t len)
{
	static const struct {
		const char	*name;
		const char	*value;
	} known[] = {
		{ "FCGI_MAX_REQS",	XSTR(MAX_REQS) },
		{ "FCGI_MPXS_CONNS",	"1" },
	};
	struct fcgi_nv	 nv;
	uint8_t		 rec[FCGI_HEADER_LEN + 256];
	size_t		 off = 0, clen = 0, k;
	ssize_t		 n;
	uint8_t		 pad;

	while (off < len && (n = fcgi_nv_parse(p + off, len - off, &nv)) > 0) {
		off += (size_t)n;
		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
			if (nv.name_len != strlen(known[k].name) ||
			    memcmp(nv.name, known[k].name, nv.name_len) != 0)
				continue;
			if (clen + 64 > sizeof(rec) - FCGI_HEADER_LEN - 8)
				break;
			clen += fcgi_nv_encode(rec + FCGI_HEADER_LEN + clen,
			    sizeof(rec) - FCGI_HEADER_LEN - clen, known[k].name,
			    strlen(known[k].name), known[k].value,
			    strlen(known[k].value));
		}
	}
	if (off != len)
		return -1;
	pad = fcgi_padding(clen);
	memset(rec + FCGI_HEADER_LEN + clen, 0, pad);
	fcgi_header_encode(rec, FCGI_GET_VALUES_RESULT, 0, (uint16_t)clen, pad);
	return out_add(c, rec, FCGI_HEADER_LEN + clen + pad);
}
