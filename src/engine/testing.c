/*
 * testing.c: the in-process test harness (evfcgi_test_request()): plays
 * the web server on one end of a socketpair whose other end the server
 * adopted, sends one request's records, runs the server's loop until the
 * answer's END_REQUEST, and hands back its status, headers and body.
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "evfcgi.h"
#include "fcgi_proto.h"

struct tpeer {
	int			 t_fd;
	struct evbuffer		*t_out;		/* to send */
	struct evbuffer		*t_in;		/* records not parsed yet */
	struct evbuffer		*t_stdout;
	struct event		*t_rev;
	struct event		*t_wev;
	int			 t_done;	/* END_REQUEST or EOF */
	int			 t_ended;	/* END_REQUEST */
	int			 t_err;		/* errno of a failure */
};

static int	t_record(struct evbuffer *, uint8_t, const void *, size_t);
static int	t_param(struct evbuffer *, const char *, const char *);
static int	t_params(struct evbuffer *, const struct evfcgi_test_req *);
static void	t_readcb(evutil_socket_t, short, void *);
static void	t_writecb(evutil_socket_t, short, void *);
static void	t_timeoutcb(evutil_socket_t, short, void *);
static int	t_parse(struct evfcgi_test_resp *, struct evbuffer *);
static int	t_build(struct evbuffer *, const struct evfcgi_test_req *);

/* Appends a record of type (request id 1) with len bytes, padded. */
static int
t_record(struct evbuffer *b, uint8_t type, const void *p, size_t len)
{
	uint8_t	 h[FCGI_HEADER_LEN], pad[8] = { 0 };
	uint8_t	 padlen = fcgi_padding(len);

	fcgi_header_encode(h, type, 1, (uint16_t)len, padlen);
	if (evbuffer_add(b, h, sizeof(h)) == -1 ||
	    (len > 0 && evbuffer_add(b, p, len) == -1) ||
	    evbuffer_add(b, pad, padlen) == -1)
		return -1;
	return 0;
}

/* Appends one name-value pair as a PARAMS record of its own. */
static int
t_param(struct evbuffer *b, const char *name, const char *value)
{
	uint8_t	*buf;
	size_t	 nl = strlen(name), vl = strlen(value), n;
	int	 rc;

	if (nl + vl + 8 > FCGI_MAX_CONTENT) {
		errno = EMSGSIZE;
		return -1;
	}
	if ((buf = malloc(nl + vl + 8)) == NULL)
		return -1;
	n = fcgi_nv_encode(buf, nl + vl + 8, name, nl, value, vl);
	rc = t_record(b, FCGI_PARAMS, buf, n);
	free(buf);
	return rc;
}

/* The CGI params of tr: method, URI, query, length, type, HTTP_*. */
static int
t_params(struct evbuffer *b, const struct evfcgi_test_req *tr)
{
	const char	*uri = tr->uri != NULL ? tr->uri : "/", *q, *colon;
	char		 name[256], num[32], *path;
	size_t		 i, k, plen;
	int		 rc;

	q = strchr(uri, '?');
	plen = q != NULL ? (size_t)(q - uri) : strlen(uri);
	if ((path = strndup(uri, plen)) == NULL)
		return -1;
	rc = t_param(b, "GATEWAY_INTERFACE", "CGI/1.1") |
	    t_param(b, "SERVER_PROTOCOL", "HTTP/1.1") |
	    t_param(b, "REQUEST_METHOD", tr->method != NULL ? tr->method :
	    "GET") | t_param(b, "REQUEST_URI", uri) |
	    t_param(b, "SCRIPT_NAME", path) |
	    t_param(b, "QUERY_STRING", q != NULL ? q + 1 : "") |
	    t_param(b, "REMOTE_ADDR", "127.0.0.1") |
	    t_param(b, "REMOTE_PORT", "40000");
	free(path);
	if (!tr->no_length) {
		snprintf(num, sizeof(num), "%zu", tr->body_len);
		rc |= t_param(b, "CONTENT_LENGTH", num);
	}
	for (i = 0; rc == 0 && tr->headers != NULL && tr->headers[i] != NULL;
	    i++) {
		if ((colon = strchr(tr->headers[i], ':')) == NULL ||
		    (size_t)(colon - tr->headers[i]) + 6 > sizeof(name)) {
			errno = EINVAL;
			return -1;
		}
		if (strncasecmp(tr->headers[i], "Content-Type:", 13) == 0)
			strcpy(name, "CONTENT_TYPE");
		else {
			memcpy(name, "HTTP_", 5);
			for (k = 0; tr->headers[i] + k < colon; k++)
				name[5 + k] = tr->headers[i][k] == '-' ? '_' :
				    (char)toupper((unsigned char)
				    tr->headers[i][k]);
			name[5 + k] = '\0';
		}
		colon++;
		colon += strspn(colon, " \t");
		rc |= t_param(b, name, colon);
	}
	return rc == 0 ? t_record(b, FCGI_PARAMS, NULL, 0) : -1;
}

static void
t_writecb(evutil_socket_t fd, short what, void *arg)
{
	struct tpeer	*t = arg;

	(void)fd;
	(void)what;
	if (evbuffer_write(t->t_out, t->t_fd) == -1 && errno != EAGAIN &&
	    errno != EINTR) {
		/* The server closed early (an error answer): stop sending. */
		evbuffer_drain(t->t_out, evbuffer_get_length(t->t_out));
	}
	if (evbuffer_get_length(t->t_out) == 0)
		event_del(t->t_wev);
}

static void
t_readcb(evutil_socket_t fd, short what, void *arg)
{
	struct tpeer		*t = arg;
	struct fcgi_record	 rec;
	uint8_t			*p;
	size_t			 len;
	ssize_t			 used;
	int			 n;

	(void)fd;
	(void)what;
	if ((n = evbuffer_read(t->t_in, t->t_fd, 65536)) == 0 ||
	    (n == -1 && errno != EAGAIN && errno != EINTR)) {
		t->t_done = 1;
		return;
	}
	while ((len = evbuffer_get_length(t->t_in)) >= FCGI_HEADER_LEN) {
		p = evbuffer_pullup(t->t_in, -1);
		if ((used = fcgi_parse(p, len, &rec)) == 0)
			break;
		if (used < 0 || rec.hdr.request_id != 1) {
			t->t_err = EPROTO;
			t->t_done = 1;
			return;
		}
		if (rec.hdr.type == FCGI_STDOUT &&
		    evbuffer_add(t->t_stdout, rec.content,
		    rec.hdr.content_length) == -1) {
			t->t_err = ENOMEM;
			t->t_done = 1;
		}
		if (rec.hdr.type == FCGI_END_REQUEST)
			t->t_done = t->t_ended = 1;
		evbuffer_drain(t->t_in, (size_t)used);
	}
}

static void
t_timeoutcb(evutil_socket_t fd, short what, void *arg)
{
	struct tpeer	*t = arg;

	(void)fd;
	(void)what;
	t->t_err = ETIMEDOUT;
	t->t_done = 1;
}

/*
 * Splits the CGI answer in out into resp: the header lines (Status gives
 * the status: 200 without it, 302 with a Location), then the body.
 * Returns 0, or -1 (errno EPROTO) when the header block is malformed.
 */
static int
t_parse(struct evfcgi_test_resp *resp, struct evbuffer *out)
{
	struct evbuffer_ptr	 end;
	size_t			 hlen, i, n = 0;
	char			*h, *line, *next, *colon, *v;

	end = evbuffer_search(out, "\r\n\r\n", 4, NULL);
	if (end.pos == -1) {
		errno = EPROTO;
		return -1;
	}
	hlen = (size_t)end.pos + 2;
	if ((h = malloc(hlen + 1)) == NULL)
		return -1;
	evbuffer_remove(out, h, hlen);
	evbuffer_drain(out, 2);
	h[hlen] = '\0';
	for (i = 0; i < hlen; i++)
		n += h[i] == '\n';
	resp->headers = h;
	if ((resp->hdr = calloc(2 * n + 1, sizeof(char *))) == NULL)
		return -1;
	resp->status = 200;
	for (line = h; *line != '\0'; line = next) {
		if ((next = strstr(line, "\r\n")) == NULL) {
			errno = EPROTO;
			return -1;
		}
		*next = '\0';
		next += 2;
		if ((colon = strchr(line, ':')) == NULL) {
			errno = EPROTO;
			return -1;
		}
		*colon = '\0';
		v = colon + 1 + strspn(colon + 1, " \t");
		resp->hdr[2 * resp->nhdr] = line;
		resp->hdr[2 * resp->nhdr + 1] = v;
		resp->nhdr++;
		if (strcasecmp(line, "Status") == 0)
			resp->status = atoi(v);
		else if (strcasecmp(line, "Location") == 0 &&
		    evfcgi_test_header(resp, "Status", 0) == NULL)
			resp->status = 302;
	}
	resp->body_len = evbuffer_get_length(out);
	if ((resp->body = malloc(resp->body_len + 1)) == NULL)
		return -1;
	evbuffer_remove(out, resp->body, resp->body_len);
	resp->body[resp->body_len] = '\0';
	return 0;
}

/* The request's records: BEGIN, PARAMS, STDIN in pieces of tr->chunk. */
static int
t_build(struct evbuffer *b, const struct evfcgi_test_req *tr)
{
	uint8_t		 begin[FCGI_HEADER_LEN + 8];
	const uint8_t	*body = tr->body;
	size_t		 off, n, chunk = tr->chunk;

	if (chunk == 0 || chunk > FCGI_MAX_CONTENT)
		chunk = FCGI_MAX_CONTENT;
	fcgi_begin_encode(begin, 1, FCGI_RESPONDER, 0);
	if (evbuffer_add(b, begin, sizeof(begin)) == -1 ||
	    t_params(b, tr) == -1)
		return -1;
	for (off = 0; off < tr->body_len; off += n) {
		n = tr->body_len - off < chunk ? tr->body_len - off : chunk;
		if (t_record(b, FCGI_STDIN, body + off, n) == -1)
			return -1;
	}
	return t_record(b, FCGI_STDIN, NULL, 0);
}

int
evfcgi_test_request(struct evfcgi_server *srv,
    const struct evfcgi_test_req *tr, struct evfcgi_test_resp *resp)
{
	struct event_base	*base = evfcgi_server_base(srv);
	struct tpeer		 t = { .t_fd = -1 };
	struct event		*tev = NULL;
	struct timeval		 tv;
	int			 sv[2], rc = -1, ms = tr->timeout_ms;

	memset(resp, 0, sizeof(*resp));
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
	    sv) == -1)
		return -1;
	if (evfcgi_adopt(srv, sv[0]) == -1) {
		close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	t.t_fd = sv[1];
	t.t_out = evbuffer_new();
	t.t_in = evbuffer_new();
	t.t_stdout = evbuffer_new();
	if (t.t_out == NULL || t.t_in == NULL || t.t_stdout == NULL)
		goto out;
	if (t_build(t.t_out, tr) == -1)
		goto out;
	t.t_rev = event_new(base, t.t_fd, EV_READ | EV_PERSIST, t_readcb, &t);
	t.t_wev = event_new(base, t.t_fd, EV_WRITE | EV_PERSIST, t_writecb,
	    &t);
	tev = evtimer_new(base, t_timeoutcb, &t);
	if (t.t_rev == NULL || t.t_wev == NULL || tev == NULL)
		goto out;
	tv.tv_sec = (ms > 0 ? ms : 30000) / 1000;
	tv.tv_usec = (ms > 0 ? ms : 30000) % 1000 * 1000;
	event_add(t.t_rev, NULL);
	event_add(t.t_wev, NULL);
	evtimer_add(tev, &tv);
	while (!t.t_done)
		if (event_base_loop(base, EVLOOP_ONCE) == -1) {
			t.t_err = EIO;
			break;
		}
	resp->ended = t.t_ended;
	if (t.t_err != 0)
		errno = t.t_err;
	else if (evbuffer_get_length(t.t_stdout) == 0) {
		rc = 0;		/* no answer at all: status 0 */
		resp->status = 0;
	} else
		rc = t_parse(resp, t.t_stdout);
out:
	if (tev != NULL)
		event_free(tev);
	if (t.t_rev != NULL)
		event_free(t.t_rev);
	if (t.t_wev != NULL)
		event_free(t.t_wev);
	if (t.t_out != NULL)
		evbuffer_free(t.t_out);
	if (t.t_in != NULL)
		evbuffer_free(t.t_in);
	if (t.t_stdout != NULL)
		evbuffer_free(t.t_stdout);
	close(t.t_fd);
	if (rc == -1)
		evfcgi_test_free(resp);
	return rc;
}

const char *
evfcgi_test_header(const struct evfcgi_test_resp *resp, const char *name,
    size_t nth)
{
	size_t	 i;

	for (i = 0; i < resp->nhdr; i++)
		if (strcasecmp(resp->hdr[2 * i], name) == 0 && nth-- == 0)
			return resp->hdr[2 * i + 1];
	return NULL;
}

void
evfcgi_test_free(struct evfcgi_test_resp *resp)
{
	int	 status = resp->status, ended = resp->ended;

	free(resp->headers);
	free(resp->hdr);
	free(resp->body);
	memset(resp, 0, sizeof(*resp));
	resp->status = status;
	resp->ended = ended;
}
