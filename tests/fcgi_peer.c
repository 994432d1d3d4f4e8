/*
 * fcgi_peer.c: the raw FastCGI peer the socketpair suites share (see
 * fcgi_peer.h).
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fcgi_proto.h"
#include "tests/fcgi_peer.h"

struct event_base	*base;
struct evfcgi_server	*srv;

static uint16_t		 ids_first = 0, ids_end = PEER_MAX_ID;

static struct peer	*peer_on(int);
static void		 peer_parse(struct peer *);
static void		 resp_stdout(struct resp *, const struct fcgi_record *);

void
peer_ids(uint16_t first, uint16_t end)
{
	ck_assert_uint_le(end, PEER_MAX_ID);
	ids_first = first;
	ids_end = end;
}

/* A peer on fd, its end of a connection the server adopted. */
static struct peer *
peer_on(int fd)
{
	struct peer	*p = calloc(1, sizeof(*p));

	ck_assert_ptr_nonnull(p);
	p->fd = fd;
	fcntl(p->fd, F_SETFL, O_NONBLOCK);
	return p;
}

struct peer *
peer_new(void)
{
	int	 sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(evfcgi_adopt(srv, sv[0]), 0);
	return peer_on(sv[1]);
}

struct peer *
peer_new_tcp(int rcvbuf)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 lfd, fd, cfd;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ne(lfd = socket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&sin, &len), 0);
	ck_assert_int_ne(cfd = socket(AF_INET, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
	    sizeof(rcvbuf)), 0);
	ck_assert_int_eq(connect(cfd, (struct sockaddr *)&sin, len), 0);
	ck_assert_int_ne(fd = accept(lfd, NULL, NULL), -1);
	close(lfd);
	ck_assert_int_eq(evfcgi_adopt(srv, fd), 0);
	return peer_on(cfd);
}

void
peer_free(struct peer *p)
{
	int	 i;

	close(p->fd);
	for (i = 0; i < PEER_MAX_ID; i++)
		free(p->r[i].out);
	free(p->in);
	free(p);
}

void
resp_reset(struct peer *p, int id)
{
	free(p->r[id].out);
	memset(&p->r[id], 0, sizeof(p->r[id]));
}

void
peer_send(struct peer *p, const void *buf, size_t len)
{
	const uint8_t	*b = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(p->fd, b, len);
		if (n == -1 && errno == EAGAIN) {
			event_base_loop(base, EVLOOP_NONBLOCK);
			continue;
		}
		ck_assert_int_gt(n, 0);
		b += n;
		len -= (size_t)n;
	}
}

/* Appends a STDOUT record's content to r: no STDOUT after its end. */
static void
resp_stdout(struct resp *r, const struct fcgi_record *rec)
{
	size_t	 n = rec->hdr.content_length;

	ck_assert(!r->out_ended);
	if (n == 0)
		r->out_ended = 1;
	r->out = realloc(r->out, r->outlen + n + 1);
	ck_assert_ptr_nonnull(r->out);
	memcpy(r->out + r->outlen, rec->content, n);
	r->outlen += n;
	r->out[r->outlen] = '\0';
	r->nout += n > 0;
}

/* Parses what arrived into per-id responses and the management record. */
static void
peer_parse(struct peer *p)
{
	struct fcgi_record	 rec;
	struct resp		*r;
	uint32_t		 app;
	ssize_t			 n;
	size_t			 off = 0;

	if (p->cut) {
		p->inlen = 0;
		return;
	}
	for (;;) {
		if (p->inlen - off >= FCGI_HEADER_LEN && p->in[off] == 0) {
			/* The cut mark (fcgi_out_cut()): the stream ends. */
			p->cut = 1;
			p->inlen = 0;
			return;
		}
		if ((n = fcgi_parse(p->in + off, p->inlen - off, &rec)) <= 0)
			break;
		off += (size_t)n;
		p->records++;
		ck_assert_uint_ge(rec.hdr.request_id, ids_first);
		ck_assert_uint_lt(rec.hdr.request_id, ids_end);
		if (rec.hdr.request_id == 0) {
			p->mgmt_type = rec.hdr.type;
			p->mgmtlen = rec.hdr.content_length;
			memcpy(p->mgmt, rec.content, p->mgmtlen);
			continue;
		}
		r = &p->r[rec.hdr.request_id];
		/* Nothing for an id after its END_REQUEST (FastCGI 1.0 5.5). */
		ck_assert_msg(!r->ended, "record type %u for id %u after its "
		    "END_REQUEST", rec.hdr.type, rec.hdr.request_id);
		if (rec.hdr.type == FCGI_STDOUT)
			resp_stdout(r, &rec);
		else if (rec.hdr.type == FCGI_END_REQUEST) {
			ck_assert_int_eq(fcgi_end_decode(rec.content,
			    rec.hdr.content_length, &app, &r->pstatus), 0);
			r->ended = 1;
		}
	}
	ck_assert_int_ne(n, -1);
	memmove(p->in, p->in + off, p->inlen - off);
	p->inlen -= off;
}

void
peer_read(struct peer *p, size_t max)
{
	ssize_t	 n;
	size_t	 want;

	for (;;) {
		if (p->incap - p->inlen < 65536) {
			p->incap = p->incap * 2 + 65536;
			p->in = realloc(p->in, p->incap);
			ck_assert_ptr_nonnull(p->in);
		}
		want = p->incap - p->inlen;
		if (max > 0 && want > max)
			want = max;
		n = read(p->fd, p->in + p->inlen, want);
		if (n == 0)
			p->eof = 1;
		if (n <= 0)
			break;
		p->inlen += (size_t)n;
		p->nread += (size_t)n;
		if (max > 0)
			break;
	}
	peer_parse(p);
}

void
w_record(struct wire *w, uint8_t type, uint16_t id, const void *data,
    size_t len)
{
	uint8_t	 pad = fcgi_padding(len);

	ck_assert_uint_le(w->len + FCGI_HEADER_LEN + len + pad, sizeof(w->b));
	fcgi_header_encode(w->b + w->len, type, id, (uint16_t)len, pad);
	if (len > 0)
		memcpy(w->b + w->len + FCGI_HEADER_LEN, data, len);
	memset(w->b + w->len + FCGI_HEADER_LEN + len, 0, pad);
	w->len += FCGI_HEADER_LEN + len + pad;
}

void
w_begin(struct wire *w, uint16_t id, uint16_t role, uint8_t flags)
{
	ck_assert_uint_le(w->len + 16, sizeof(w->b));
	fcgi_begin_encode(w->b + w->len, id, role, flags);
	w->len += 16;
}

size_t
nv_list(uint8_t *b, size_t cap, const char *const *nv)
{
	size_t	 n = 0;

	for (; nv[0] != NULL; nv += 2)
		n += fcgi_nv_encode(b + n, cap - n, nv[0], strlen(nv[0]),
		    nv[1], strlen(nv[1]));
	ck_assert_uint_le(n, cap);
	return n;
}

void
w_params(struct wire *w, uint16_t id, const char *const *nv)
{
	uint8_t	 b[2048];

	w_record(w, FCGI_PARAMS, id, b, nv_list(b, sizeof(b), nv));
	w_record(w, FCGI_PARAMS, id, NULL, 0);
}

void
w_stream(struct wire *w, uint8_t type, uint16_t id, const char *s)
{
	if (*s != '\0')
		w_record(w, type, id, s, strlen(s));
	w_record(w, type, id, NULL, 0);
}

void
send_record(struct peer *p, uint8_t type, uint16_t id, const void *data,
    size_t len)
{
	struct wire	 w;

	w.len = 0;
	w_record(&w, type, id, data, len);
	peer_send(p, w.b, w.len);
}

void
send_begin(struct peer *p, uint16_t id, uint16_t role, uint8_t flags)
{
	uint8_t	 b[16];

	fcgi_begin_encode(b, id, role, flags);
	peer_send(p, b, sizeof(b));
}

struct peer *
exchange(const struct wire *w, int id)
{
	struct peer	*p = peer_new();

	peer_send(p, w->b, w->len);
	ck_assert_msg(RUN_UNTIL(p, p->r[id].ended, 5), "no END_REQUEST");
	return p;
}

int
resp_status(const struct resp *r)
{
	ck_assert_msg(r->out != NULL && strncmp(r->out, "Status: ", 8) == 0,
	    "got '%s'", r->out != NULL ? r->out : "nothing");
	return atoi(r->out + 8);
}

double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}
