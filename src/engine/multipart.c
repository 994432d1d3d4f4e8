/*
 * multipart.c: multipart/form-data, streamed (multipart.h), and its glue
 * to a streamed request body (evfcgi_multipart_new()).  The parser takes
 * bytes from the front of an evbuffer only once it knows what they are:
 * data is handed on up to the last bytes that might begin a delimiter,
 * which wait for the next feed, so a boundary split anywhere is found and
 * no byte is looked at more than a delimiter's length of times.  Caps on
 * parts, header bytes and non-file values turn the shapes of Go's
 * CVE-2022-41725, CVE-2023-24536 and CVE-2023-45290 into 413s.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "multipart.h"

#define MP_MAX_PAD	64	/* spaces allowed after a delimiter */
#define MP_AGAIN	-1	/* a state step: the machine goes on */

static int	mp_is_bchar(int);
static const char *mp_param(const char *, const char *, char *, size_t,
		    int *);
static int	mp_headers(struct mp *, size_t);
static int	mp_data(struct mp *, struct evbuffer *, size_t);
static int	mp_part_end(struct mp *);
static int	mp_preamble(struct mp *, struct evbuffer *, size_t);
static int	mp_after(struct mp *, struct evbuffer *, size_t);
static int	mp_head(struct mp *, struct evbuffer *, size_t);
static int	mp_body(struct mp *, struct evbuffer *, size_t);

/* A boundary character (RFC 2046 5.1.1 bchars). */
static int
mp_is_bchar(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	    (c >= 'A' && c <= 'Z') || strchr("'()+_,-./:=? ", c) != NULL;
}

/*
 * Finds parameter name in the "; a=b; c=\"d\"" list at s: its value
 * (token or quoted-string, unescaped) into out (size bytes), *found set
 * when it is there.  Returns out ("" for none), or NULL when the list is
 * malformed or the value too long.
 */
static const char *
mp_param(const char *s, const char *name, char *out, size_t size,
    int *found)
{
	size_t	 nlen = strlen(name), k, o;
	int	 hit;

	out[0] = '\0';
	*found = 0;
	for (;;) {
		s += strspn(s, " \t");
		if (*s == '\0')
			return "";
		if (*s++ != ';')
			return NULL;
		s += strspn(s, " \t");
		k = strcspn(s, "= \t;");
		hit = k == nlen && strncasecmp(s, name, nlen) == 0;
		s += k;
		s += strspn(s, " \t");
		if (*s++ != '=')
			return NULL;
		s += strspn(s, " \t");
		o = 0;
		if (*s == '"') {
			for (s++; *s != '"'; s++) {
				if (*s == '\\' && s[1] != '\0')
					s++;
				if (*s == '\0' || o + 1 >= size)
					return NULL;
				if (hit)
					out[o++] = *s;
			}
			s++;
		} else {
			k = strcspn(s, "; \t");
			if (k == 0 || k >= size)
				return NULL;
			if (hit)
				memcpy(out, s, k);
			o = k;
			s += k;
		}
		if (hit) {
			out[o] = '\0';
			*found = 1;
			return out;
		}
	}
}

int
mp_boundary(const char *ctype, char *b)
{
	static const char	 t[] = "multipart/form-data";
	char			 v[128];
	const char		*p;
	size_t			 len, i;
	int			 found;

	if (ctype == NULL || strncasecmp(ctype, t, sizeof(t) - 1) != 0)
		return -1;
	p = mp_param(ctype + sizeof(t) - 1, "boundary", v, sizeof(v),
	    &found);
	if (p == NULL || (len = strlen(p)) == 0 || len > 70 ||
	    p[len - 1] == ' ')
		return -1;
	for (i = 0; i < len; i++)
		if (!mp_is_bchar((unsigned char)p[i]))
			return -1;
	memcpy(b, p, len + 1);
	return (int)len;
}

int
mp_init(struct mp *m, const char *boundary, const struct mp_ops *ops,
    void *ctx, const struct evfcgi_multipart_limits *lim)
{
	size_t	 blen = strlen(boundary);

	memset(m, 0, sizeof(*m));
	if (blen == 0 || blen > 70) {
		errno = EINVAL;
		return -1;
	}
	m->m_ops = ops;
	m->m_ctx = ctx;
	if (lim != NULL)
		m->m_lim = *lim;
	if (m->m_lim.max_parts == 0)
		m->m_lim.max_parts = EVFCGI_MP_MAX_PARTS;
	if (m->m_lim.max_header == 0)
		m->m_lim.max_header = EVFCGI_MP_MAX_HEADER;
	if (m->m_lim.max_field == 0)
		m->m_lim.max_field = EVFCGI_MP_MAX_FIELD;
	memcpy(m->m_delim, "\r\n--", 4);
	memcpy(m->m_delim + 4, boundary, blen);
	m->m_dlen = 4 + blen;
	if ((m->m_hdr = malloc(m->m_lim.max_header + 1)) == NULL ||
	    (m->m_field = evbuffer_new()) == NULL) {
		mp_fini(m);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
mp_fini(struct mp *m)
{
	free(m->m_hdr);
	m->m_hdr = NULL;
	if (m->m_field != NULL)
		evbuffer_free(m->m_field);
	m->m_field = NULL;
}

/*
 * Parses the header block in m_hdr (len bytes up to its blank line, each
 * line ended by CRLF) into m_part, then starts the part.  Returns 0, or a
 * status: 400 for a line not ended by CRLF, a folded line, no
 * Content-Disposition form-data; 413 past the parts' cap; or the op's.
 */
static int
mp_headers(struct mp *m, size_t len)
{
	char	*line = m->m_hdr, *end, *colon, *v, *disp = NULL;
	char	*ctype = NULL, *name, *file;
	size_t	 room;
	int	 found, isfile;

	m->m_hdr[len] = '\0';
	if (memchr(m->m_hdr, '\0', len) != NULL)
		return 400;
	for (; *line != '\0'; line = end + 2) {
		if ((end = strstr(line, "\r\n")) == NULL ||
		    strpbrk(line, "\r\n") != end || line[0] == ' ' ||
		    line[0] == '\t' || (colon = strchr(line, ':')) == NULL ||
		    colon > end)
			return 400;
		*end = *colon = '\0';
		v = colon + 1 + strspn(colon + 1, " \t");
		if (strcasecmp(line, "Content-Disposition") == 0)
			disp = v;
		else if (strcasecmp(line, "Content-Type") == 0)
			ctype = v;
	}
	if (disp == NULL || strncasecmp(disp, "form-data", 9) != 0 ||
	    (disp[9] != '\0' && disp[9] != ';' && disp[9] != ' '))
		return 400;
	/* The names go after the block, in what is left of m_hdr. */
	name = m->m_hdr + len + 1;
	room = m->m_lim.max_header - len;
	if (room < 2)
		return 413;
	if (mp_param(disp + 9, "name", name, room / 2, &found) == NULL)
		return 400;
	file = name + strlen(name) + 1;
	if (mp_param(disp + 9, "filename", file, room / 2, &isfile) == NULL)
		return 400;
	if (++m->m_parts > m->m_lim.max_parts)
		return 413;
	m->m_part.name = name;
	m->m_part.filename = isfile ? file : NULL;
	m->m_part.ctype = ctype;
	m->m_part.value = NULL;
	m->m_part.value_len = 0;
	m->m_part.size = 0;
	return m->m_ops->mo_part != NULL ? m->m_ops->mo_part(m, &m->m_part) :
	    0;
}

/*
 * Hands the first n bytes of in on as the part's data (a file's to the
 * data op, a field's to its value), then drains them.  Returns 0,
 * EVFCGI_MP_PAUSE, or a status (413 past a cap, the op's).
 */
static int
mp_data(struct mp *m, struct evbuffer *in, size_t n)
{
	struct evbuffer_iovec	 v[8];
	size_t			 done = 0, k;
	int			 i, nv, rc = 0;

	if (n == 0)
		return 0;
	m->m_part.size += n;
	if (m->m_part.filename == NULL) {
		if ((m->m_field_bytes += n) > m->m_lim.max_field)
			return 413;
		if (evbuffer_remove_buffer(in, m->m_field, n) != (int)n)
			return 500;
		return 0;
	}
	if (m->m_lim.max_file > 0 && m->m_part.size > m->m_lim.max_file)
		return 413;
	while (done < n && rc == 0) {
		nv = evbuffer_peek(in, (ev_ssize_t)(n - done), NULL, v, 8);
		for (i = 0; i < nv && i < 8 && done < n && rc == 0; i++) {
			k = v[i].iov_len < n - done ? v[i].iov_len : n - done;
			if (m->m_ops->mo_data != NULL)
				rc = m->m_ops->mo_data(m, &m->m_part,
				    v[i].iov_base, k);
			evbuffer_drain(in, k);
			done += k;
		}
	}
	/* Paused mid-way: the rest stays in, the part's size with it. */
	m->m_part.size -= n - done;
	return rc;
}

/* The part ended: a field's value whole, then the end op. */
static int
mp_part_end(struct mp *m)
{
	size_t	 len;

	if (m->m_part.filename == NULL) {
		len = evbuffer_get_length(m->m_field);
		if (evbuffer_add(m->m_field, "", 1) == -1)
			return 500;
		m->m_part.value = (const char *)evbuffer_pullup(m->m_field, -1);
		if (m->m_part.value == NULL)
			return 500;
		m->m_part.value_len = len;
	}
	return m->m_ops->mo_end != NULL ? m->m_ops->mo_end(m, &m->m_part) : 0;
}

/* Before the first delimiter: what is not one is dropped. */
static int
mp_preamble(struct mp *m, struct evbuffer *in, size_t len)
{
	struct evbuffer_ptr	 p;
	size_t			 want, k;

	/* The first delimiter may open the body: no CRLF before it. */
	if (!m->m_begun) {
		want = m->m_dlen - 2;
		k = len < want ? len : want;
		if (k == 0)
			return MP_MORE;
		if (memcmp(evbuffer_pullup(in, (ev_ssize_t)k), m->m_delim + 2,
		    k) == 0) {
			if (k < want)
				return MP_MORE;
			evbuffer_drain(in, want);
			m->m_state = MP_AFTER;
			return MP_AGAIN;
		}
		m->m_begun = 1;
	}
	p = evbuffer_search(in, m->m_delim, m->m_dlen, NULL);
	if (p.pos != -1) {
		evbuffer_drain(in, (size_t)p.pos + m->m_dlen);
		m->m_state = MP_AFTER;
		return MP_AGAIN;
	}
	if (len >= m->m_dlen)
		evbuffer_drain(in, len - (m->m_dlen - 1));
	return MP_MORE;
}

/* After a delimiter: "--" closes the form, else padding, then CRLF. */
static int
mp_after(struct mp *m, struct evbuffer *in, size_t len)
{
	char	 two[2];

	if (len < 2)
		return MP_MORE;
	evbuffer_copyout(in, two, 2);
	if (two[0] == '-' && two[1] == '-') {
		evbuffer_drain(in, 2);
		m->m_state = MP_EPILOGUE;
		return MP_END;
	}
	if (two[0] == ' ' || two[0] == '\t') {
		if (++m->m_pad > MP_MAX_PAD)
			return 400;
		evbuffer_drain(in, 1);
		return MP_AGAIN;
	}
	if (two[0] != '\r' || two[1] != '\n')
		return 400;
	evbuffer_drain(in, 2);
	m->m_pad = 0;
	m->m_scanned = 0;
	m->m_state = MP_HEADERS;
	return MP_AGAIN;
}

/* A part's header block, up to its blank line, searched once. */
static int
mp_head(struct mp *m, struct evbuffer *in, size_t len)
{
	struct evbuffer_ptr	 p, at;
	char			 two[2];
	size_t			 k;
	int			 rc;

	/* An empty block is its blank line alone. */
	if (m->m_scanned == 0) {
		if (len < 2)
			return MP_MORE;
		evbuffer_copyout(in, two, 2);
		if (two[0] == '\r' && two[1] == '\n') {
			evbuffer_drain(in, 2);
			if ((rc = mp_headers(m, 0)) != 0)
				return rc;
			m->m_state = MP_DATA;
			return MP_AGAIN;
		}
	}
	/* Searched from where the last search stopped. */
	at.pos = -1;
	if (m->m_scanned > 3)
		evbuffer_ptr_set(in, &at, m->m_scanned - 3, EVBUFFER_PTR_SET);
	p = evbuffer_search(in, "\r\n\r\n", 4, at.pos == -1 ? NULL : &at);
	if (p.pos == -1) {
		m->m_scanned = len;
		return len > m->m_lim.max_header ? 413 : MP_MORE;
	}
	k = (size_t)p.pos + 2;		/* the lines with their CRLFs */
	if (k > m->m_lim.max_header)
		return 413;
	evbuffer_remove(in, m->m_hdr, k);
	evbuffer_drain(in, 2);
	if ((rc = mp_headers(m, k)) != 0)
		return rc;
	m->m_state = MP_DATA;
	return MP_AGAIN;
}

/*
 * A part's body: handed on up to the delimiter, or up to the last bytes
 * that may begin one (they wait for the next feed).
 */
static int
mp_body(struct mp *m, struct evbuffer *in, size_t len)
{
	struct evbuffer_ptr	 p;
	int			 rc;

	p = evbuffer_search(in, m->m_delim, m->m_dlen, NULL);
	if (p.pos == -1) {
		rc = mp_data(m, in, len >= m->m_dlen ?
		    len - (m->m_dlen - 1) : 0);
		if (rc != 0)
			return rc == EVFCGI_MP_PAUSE ? MP_PAUSED : rc;
		return MP_MORE;
	}
	/* Paused: the delimiter is found again after. */
	if ((rc = mp_data(m, in, (size_t)p.pos)) != 0)
		return rc == EVFCGI_MP_PAUSE ? MP_PAUSED : rc;
	evbuffer_drain(in, m->m_dlen);
	m->m_state = MP_AFTER;
	rc = mp_part_end(m);
	evbuffer_drain(m->m_field, evbuffer_get_length(m->m_field));
	return rc != 0 ? rc : MP_AGAIN;
}

int
mp_feed(struct mp *m, struct evbuffer *in)
{
	size_t	 len;
	int	 rc;

	do {
		len = evbuffer_get_length(in);
		switch (m->m_state) {
		case MP_PREAMBLE:
			rc = mp_preamble(m, in, len);
			break;
		case MP_AFTER:
			rc = mp_after(m, in, len);
			break;
		case MP_HEADERS:
			rc = mp_head(m, in, len);
			break;
		case MP_DATA:
			rc = mp_body(m, in, len);
			break;
		default:	/* MP_EPILOGUE */
			evbuffer_drain(in, len);
			rc = MP_END;
			break;
		}
	} while (rc == MP_AGAIN);
	return rc;
}

/* ---- The glue to a streamed request body. */

struct evfcgi_multipart {
	struct mp			 t_mp;
	struct evfcgi_req		*t_req;
	struct evfcgi_multipart_cbs	 t_cbs;
	void				*t_arg;
	struct evbuffer			*t_body;	/* once it came */
	struct event			*t_kick;	/* resume, next turn */
	unsigned			 t_ended:1;	/* the body ended */
	unsigned			 t_paused:1;
	unsigned			 t_over:1;	/* done was called */
	unsigned			 t_running:1;
};

static int	mpt_part(struct mp *, const struct evfcgi_part *);
static int	mpt_data(struct mp *, const struct evfcgi_part *,
		    const void *, size_t);
static int	mpt_end(struct mp *, const struct evfcgi_part *);
static void	mpt_run(struct evfcgi_multipart *);
static void	mpt_bodycb(struct evfcgi_req *, struct evbuffer *, int, void *);
static void	mpt_draincb(struct evfcgi_req *, struct evbuffer *, int,
		    void *);
static void	mpt_kickcb(evutil_socket_t, short, void *);

static const struct mp_ops mpt_ops = { mpt_part, mpt_data, mpt_end };

static int
mpt_part(struct mp *m, const struct evfcgi_part *part)
{
	struct evfcgi_multipart	*t = m->m_ctx;

	return t->t_cbs.part != NULL ? t->t_cbs.part(t->t_req, part,
	    t->t_arg) : 0;
}

static int
mpt_data(struct mp *m, const struct evfcgi_part *part, const void *p,
    size_t len)
{
	struct evfcgi_multipart	*t = m->m_ctx;

	return t->t_cbs.data != NULL ? t->t_cbs.data(t->t_req, part, p, len,
	    t->t_arg) : 0;
}

static int
mpt_end(struct mp *m, const struct evfcgi_part *part)
{
	struct evfcgi_multipart	*t = m->m_ctx;

	return t->t_cbs.part_end != NULL ? t->t_cbs.part_end(t->t_req, part,
	    t->t_arg) : 0;
}

/* After done: the rest of the body (an epilogue) is let go of. */
static void
mpt_draincb(struct evfcgi_req *req, struct evbuffer *body, int done,
    void *arg)
{
	(void)req;
	(void)done;
	(void)arg;
	evbuffer_drain(body, evbuffer_get_length(body));
}

/*
 * Feeds what the body holds to the parser; at the form's end, an error or
 * a body that ended first (400: a boundary never closed), done is told,
 * once.  The parser is not run again from inside itself.
 */
static void
mpt_run(struct evfcgi_multipart *t)
{
	int	 rc;

	if (t->t_over || t->t_paused || t->t_running || t->t_body == NULL)
		return;
	t->t_running = 1;
	rc = mp_feed(&t->t_mp, t->t_body);
	t->t_running = 0;
	if (rc == MP_PAUSED) {
		t->t_paused = 1;
		return;
	}
	if (rc == MP_MORE && !t->t_ended)
		return;
	if (rc == MP_MORE)
		rc = 400;
	else if (rc == MP_END)
		rc = 0;
	t->t_over = 1;
	(void)evfcgi_on_body(t->t_req, mpt_draincb, NULL);
	evbuffer_drain(t->t_body, evbuffer_get_length(t->t_body));
	if (t->t_cbs.done != NULL)
		t->t_cbs.done(t->t_req, rc, t->t_arg);
}

static void
mpt_bodycb(struct evfcgi_req *req, struct evbuffer *body, int done,
    void *arg)
{
	struct evfcgi_multipart	*t = arg;

	(void)req;
	t->t_body = body;
	if (done)
		t->t_ended = 1;
	mpt_run(t);
}

static void
mpt_kickcb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	mpt_run(arg);
}

struct evfcgi_multipart *
evfcgi_multipart_new(struct evfcgi_req *req,
    const struct evfcgi_multipart_cbs *cbs,
    const struct evfcgi_multipart_limits *lim, void *arg)
{
	struct evfcgi_multipart	*t;
	char			 b[71];

	if (mp_boundary(evfcgi_param(req, "CONTENT_TYPE"), b) == -1) {
		errno = EINVAL;
		return NULL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if (mp_init(&t->t_mp, b, &mpt_ops, t, lim) == -1) {
		free(t);
		return NULL;
	}
	t->t_req = req;
	t->t_cbs = *cbs;
	t->t_arg = arg;
	if ((t->t_kick = event_new(evfcgi_req_base(req), -1, 0, mpt_kickcb,
	    t)) == NULL) {
		evfcgi_multipart_free(t);
		errno = ENOMEM;
		return NULL;
	}
	if (evfcgi_on_body(req, mpt_bodycb, t) == -1) {
		evfcgi_multipart_free(t);
		errno = ENOTSUP;
		return NULL;
	}
	return t;
}

void
evfcgi_multipart_resume(struct evfcgi_multipart *t)
{
	if (!t->t_paused)
		return;
	t->t_paused = 0;
	event_active(t->t_kick, EV_TIMEOUT, 0);
}

void
evfcgi_multipart_free(struct evfcgi_multipart *t)
{
	if (t == NULL)
		return;
	if (t->t_kick != NULL)
		event_free(t->t_kick);
	mp_fini(&t->t_mp);
	free(t);
}
