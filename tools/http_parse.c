/*
 * http_parse.c: http:// URLs and HTTP/1.1 responses framed from bytes in
 * memory.  Only what a client needs to find the end of a response is read;
 * everything else in a head is skipped.  The head is scanned byte by byte
 * as it arrives, so nothing is gathered and any split is the same.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_parse.h"

static int	 ascii_lower(int);
static int	 match_step(const char *, unsigned *, int);
static void	 status_byte(struct http_scan *, size_t, int);
static void	 clen_byte(struct http_scan *, int);
static void	 line_byte(struct http_scan *, int);
static void	 line_end(struct http_scan *);
static int	 head_byte(struct http_scan *, int);
static void	 head_done(struct http_frame *);
static int	 line_idle(const struct http_scan *);
static size_t	 head_step(struct http_frame *, const char *, size_t);

/*
 * http_url_parse: splits the NUL-terminated "http://HOST[:PORT][/PATH]"
 * into *u (port 80 by default; the fragment dropped; "/" put in front of a
 * path that lacks one).  Returns URL_OK, or the first problem found, with
 * *u then unspecified.
 */
enum http_url_err
http_url_parse(const char *s, struct http_url *u)
{
	const char	*p, *h, *he, *ps;
	char		 num[8], *end;
	size_t		 hl;
	long long	 port = 0;

	memset(u, 0, sizeof(*u));
	if (strlen(s) >= HTTP_URL_MAX)
		return URL_TOO_LONG;
	for (p = s; *p != '\0'; p++)
		if (isspace((unsigned char)*p) || iscntrl((unsigned char)*p))
			return URL_SPACE;
	if (strncasecmp(s, "http://", 7) != 0)
		return URL_SCHEME;
	p = s + 7;
	if (*p == '[') {
		h = p + 1;
		if ((he = strchr(h, ']')) == NULL)
			return URL_BRACKET;
		p = he + 1;
		u->u_v6 = 1;
	} else {
		h = p;
		he = p + strcspn(p, ":/?#");
		p = he;
	}
	hl = (size_t)(he - h);
	if (hl == 0 || hl >= sizeof(u->u_host))
		return URL_HOST;
	if (memchr(h, '@', hl) != NULL)
		return URL_USERINFO;
	memcpy(u->u_host, h, hl);
	u->u_host[hl] = '\0';
	u->u_port = 80;
	if (*p == ':') {
		ps = ++p;
		p += strcspn(p, "/?#");
		if (p - ps == 0 || p - ps >= (long)sizeof(num))
			return URL_PORT;
		memcpy(num, ps, (size_t)(p - ps));
		num[p - ps] = '\0';
		/* Short and free of white space, so strtoll() cannot overflow. */
		port = strtoll(num, &end, 10);
		if (*end != '\0' || port < 1 || port > 65535)
			return URL_PORT;
		u->u_port = (int)port;
	} else if (*p != '\0' && *p != '/' && *p != '?' && *p != '#')
		return URL_JUNK;
	/* The fragment is never sent; a bare "?q" gets the root path. */
	hl = strcspn(p, "#");
	snprintf(u->u_path, sizeof(u->u_path), "%s%.*s", *p == '/' ? "" : "/",
	    (int)hl, p);
	return URL_OK;
}

/* Why a URL was refused, by enum http_url_err. */
static const char *const url_whys[] = {
	[URL_OK] = "no error",
	[URL_TOO_LONG] = "URL too long",
	[URL_SPACE] = "URL contains white space or control characters",
	[URL_SCHEME] = "only http:// URLs are supported",
	[URL_BRACKET] = "unterminated [IPv6] host",
	[URL_HOST] = "empty or too long host",
	[URL_USERINFO] = "user information in URLs is not supported",
	[URL_PORT] = "bad port",
	[URL_JUNK] = "junk after host"
};

/* http_url_why: a static sentence for err, as http_get words it. */
const char *
http_url_why(enum http_url_err err)
{
	return url_whys[err];
}

/*
 * http_host_header: writes the Host header value for u into buf of size
 * len: the host, bracketed if it was a [V6] literal, and ":PORT" unless the
 * port is 80.  Truncates to fit, like snprintf().
 */
void
http_host_header(const struct http_url *u, char *buf, size_t len)
{
	size_t	n;

	snprintf(buf, len, u->u_v6 ? "[%s]" : "%s", u->u_host);
	n = strlen(buf);
	if (u->u_port != 80)
		snprintf(buf + n, len - n, ":%d", u->u_port);
}

/* The headers that frame a response, lower case, in hs_cand bit order. */
enum { H_NONE, H_CLEN, H_TE, H_CONN };
static const char *const hdr_names[] = {
	"content-length:", "transfer-encoding:", "connection:"
};
#define H_ALL		7u		/* every hdr_names bit */

/* Content-Length's value, byte by byte. */
enum { CL_WS, CL_DIGITS, CL_TRAIL, CL_BAD };

/*
 * http_frame_init: starts f on a response; nobody when it answers a HEAD
 * request, whose response never has a body.
 */
void
http_frame_init(struct http_frame *f, int nobody)
{
	memset(f, 0, sizeof(*f));
	f->hf_state = HF_HEAD;
	f->hf_clen = -1;
	f->hf_nobody = nobody;
	f->hf_scan.hs_clen = -1;
}

/* ascii_lower: c with A-Z folded, as strncasecmp() does in the C locale. */
static int
ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

/*
 * match_step: advances *m, the bytes of pat matched so far, over c; returns
 * 1 when pat is complete.  Right for the patterns used, none of which
 * starts again inside itself.
 */
static int
match_step(const char *pat, unsigned *m, int c)
{
	c = ascii_lower(c);
	if (c == pat[*m]) {
		if (pat[++*m] != '\0')
			return 0;
		*m = 0;
		return 1;
	}
	*m = c == pat[0];
	return 0;
}

/*
 * status_byte: checks byte i (< 12) of a head against "HTTP/1.x NNN",
 * noting HTTP/1.0 and the status code.
 */
static void
status_byte(struct http_scan *s, size_t i, int c)
{
	if (i < 7 && c != "HTTP/1."[i])
		s->hs_bad = 1;
	else if (i == 7)
		s->hs_http10 = c == '0';
	else if (i == 8 && c != ' ')
		s->hs_bad = 1;
	else if (i > 8) {
		if (c < '0' || c > '9')
			s->hs_bad = 1;
		else
			s->hs_status = s->hs_status * 10 + (c - '0');
	}
}

/*
 * clen_byte: one byte of a Content-Length value: blanks, digits (at most
 * about 2^53), then white space to the end of the line.
 */
static void
clen_byte(struct http_scan *s, int c)
{
	int	digit = c >= '0' && c <= '9';

	switch (s->hs_clstate) {
	case CL_WS:
		if (digit)
			s->hs_clstate = CL_DIGITS;
		else if (c != ' ' && c != '\t')
			s->hs_clstate = CL_BAD;
		break;
	case CL_DIGITS:
		if (!digit)
			s->hs_clstate = isspace(c) ? CL_TRAIL : CL_BAD;
		break;
	case CL_TRAIL:
		if (!isspace(c))
			s->hs_clstate = CL_BAD;
		break;
	}
	if (digit && s->hs_clstate == CL_DIGITS) {
		if (s->hs_clval > (UINT64_C(1) << 53))
			s->hs_clstate = CL_BAD;
		else
			s->hs_clval = s->hs_clval * 10 + (uint64_t)(c - '0');
	}
}

/*
 * line_byte: one byte (not LF) of a header line: matches the header name
 * while it may still be one of hdr_names, then reads that one's value.
 */
static void
line_byte(struct http_scan *s, int c)
{
	unsigned	k;

	if (s->hs_hdr == H_CLEN)
		clen_byte(s, c);
	else if (s->hs_hdr == H_TE) {
		if (match_step("chunked", &s->hs_m1, c))
			s->hs_chunked = 1;
	} else if (s->hs_hdr == H_CONN) {
		if (match_step("close", &s->hs_m1, c))
			s->hs_close = 1;
		if (match_step("keep-alive", &s->hs_m2, c))
			s->hs_keep = 1;
	}
	for (k = 0; s->hs_cand != 0 && k < 3; k++) {
		if ((s->hs_cand & 1u << k) == 0)
			continue;
		if (ascii_lower(c) != hdr_names[k][s->hs_col])
			s->hs_cand &= ~(1u << k);
		else if (hdr_names[k][s->hs_col + 1] == '\0') {
			s->hs_cand = 0;
			s->hs_hdr = (int)k + 1;
			s->hs_clstate = CL_WS;
			s->hs_clval = 0;
			s->hs_m1 = s->hs_m2 = 0;
		}
	}
	s->hs_col++;
}

/* line_end: a line of the head ends; a Content-Length is checked. */
static void
line_end(struct http_scan *s)
{
	if (s->hs_hdr == H_CLEN) {
		if (s->hs_clstate != CL_DIGITS && s->hs_clstate != CL_TRAIL)
			s->hs_bad = 1;
		else if (s->hs_clen != -1 && (uint64_t)s->hs_clen !=
		    s->hs_clval)
			s->hs_bad = 1;
		else
			s->hs_clen = (int64_t)s->hs_clval;
	}
	s->hs_body_line = 1;
	s->hs_col = 0;
	s->hs_cand = H_ALL;
	s->hs_hdr = H_NONE;
}

/*
 * head_byte: one byte of a head.  Returns 1 if it ends the head: an LF
 * right after an LF, or after LF CR.
 */
static int
head_byte(struct http_scan *s, int c)
{
	size_t	i = s->hs_len++;

	if (i < 12)
		status_byte(s, i, c);
	if (c == '\n') {
		line_end(s);
		if (s->hs_eol != 0)
			return 1;
		s->hs_eol = 1;
		return 0;
	}
	s->hs_eol = c == '\r' && s->hs_eol == 1 ? 2 : 0;
	if (s->hs_body_line)
		line_byte(s, c);
	return 0;
}

/*
 * head_done: a whole head has been read.  An interim (1xx) one is
 * forgotten; the final one sets the result and how the body is framed.
 */
static void
head_done(struct http_frame *f)
{
	struct http_scan	*s = &f->hf_scan;

	if (s->hs_bad || s->hs_len < 12) {
		f->hf_state = HF_ERROR;
		f->hf_err = HF_BAD_HEAD;
		return;
	}
	if (s->hs_status >= 100 && s->hs_status < 200) {
		memset(s, 0, sizeof(*s));
		s->hs_clen = -1;
		return;
	}
	f->hf_status = s->hs_status;
	f->hf_clen = s->hs_clen;
	f->hf_chunked = s->hs_chunked;
	f->hf_close = s->hs_close || (s->hs_http10 && !s->hs_keep);
	if (f->hf_nobody || s->hs_status == 204 || s->hs_status == 304)
		f->hf_state = HF_DONE;
	else if (s->hs_chunked)
		f->hf_state = HF_CHUNKED;
	else if (s->hs_clen >= 0)
		f->hf_state = s->hs_clen == 0 ? HF_DONE : HF_LENGTH;
	else {
		f->hf_state = HF_CLOSE;
		f->hf_close = 1;
	}
}

/*
 * line_idle: whether the rest of the current line cannot matter: past the
 * 12 bytes of "HTTP/1.x NNN", on the status line or a header that is
 * none of hdr_names.
 */
static int
line_idle(const struct http_scan *s)
{
	if (s->hs_len < 12)
		return 0;
	return !s->hs_body_line || (s->hs_cand == 0 && s->hs_hdr == H_NONE);
}

/*
 * head_step: reads head bytes of buf, up to the end of one head; the rest
 * of a line that cannot matter is passed over with memchr().  Returns the
 * bytes consumed.
 */
static size_t
head_step(struct http_frame *f, const char *buf, size_t len)
{
	struct http_scan	*s = &f->hf_scan;
	const char		*lf;
	size_t			 i, skip;

	for (i = 0; i < len; i++) {
		if (head_byte(s, (unsigned char)buf[i])) {
			head_done(f);
			return i + 1;
		}
		if (line_idle(s) && i + 1 < len) {
			/* Bytes before an LF, after a byte that is not one. */
			lf = memchr(buf + i + 1, '\n', len - i - 1);
			skip = (lf != NULL ? (size_t)(lf - buf) : len) - i - 1;
			if (skip > HTTP_HEAD_MAX - s->hs_len)
				skip = HTTP_HEAD_MAX - s->hs_len;
			if (skip > 0) {
				s->hs_len += skip;
				s->hs_col += skip;
				s->hs_eol = 0;
				i += skip;
			}
		}
		if (s->hs_len == HTTP_HEAD_MAX) {
			f->hf_state = HF_ERROR;
			f->hf_err = HF_BIG_HEAD;
			return i + 1;
		}
	}
	return len;
}

/*
 * http_frame_step: consumes the next bytes of buf that belong to f's
 * response and returns how many; *data of them, from the first, are body
 * (0, or all of them).  Consumes nothing once the response is complete
 * (HF_DONE) or malformed (HF_ERROR); less than len otherwise only where
 * head, framing and body meet, so call it again with the rest.
 */
size_t
http_frame_step(struct http_frame *f, const char *buf, size_t len,
    size_t *data)
{
	size_t	n = 0;
	int	r;

	*data = 0;
	switch (f->hf_state) {
	case HF_HEAD:
		return head_step(f, buf, len);
	case HF_LENGTH:
		n = (uint64_t)f->hf_clen - f->hf_body < len ?
		    (size_t)((uint64_t)f->hf_clen - f->hf_body) : len;
		if (f->hf_body + n == (uint64_t)f->hf_clen)
			f->hf_state = HF_DONE;
		break;
	case HF_CHUNKED:
		if ((r = chunk_step(&f->hf_chunk, buf, len, &n)) == -1) {
			f->hf_state = HF_ERROR;
			f->hf_err = HF_BAD_CHUNK;
			return 0;
		}
		if (f->hf_chunk.ch_state == CH_DONE)
			f->hf_state = HF_DONE;
		f->hf_body += n;
		*data = n;
		return (size_t)r;
	case HF_CLOSE:
		n = len;
		break;
	case HF_DONE:
	case HF_ERROR:
		return 0;
	}
	f->hf_body += n;
	*data = n;
	return n;
}

/*
 * http_frame_feed: runs all of buf that belongs to f's response through
 * http_frame_step(), handing each piece of body to body(arg, p, n) unless
 * body is NULL.  Returns the bytes consumed: len, or fewer when the
 * response completed (HF_DONE) or turned out malformed (HF_ERROR) first.
 */
size_t
http_frame_feed(struct http_frame *f, const char *buf, size_t len,
    void (*body)(void *, const char *, size_t), void *arg)
{
	size_t	off = 0, data;

	while (off < len && f->hf_state < HF_DONE) {
		off += http_frame_step(f, buf + off, len - off, &data);
		if (data > 0 && body != NULL)
			body(arg, buf + off - data, data);
	}
	return off;
}

/*
 * http_frame_eof: the server closed the connection.  Returns 1 if f's
 * response is complete (a close-delimited body ends here), else 0.
 */
int
http_frame_eof(struct http_frame *f)
{
	if (f->hf_state == HF_CLOSE)
		f->hf_state = HF_DONE;
	return f->hf_state == HF_DONE;
}

/*
 * chunk_step: advances the chunked decoder over buf.  Returns the number of
 * bytes consumed and sets *data: when *data is non-zero the consumed bytes
 * are body data (all of them), else framing.  Returns -1 on bad framing.
 * Stop calling once ch_state is CH_DONE.
 */
int
chunk_step(struct chunk *ch, const char *buf, size_t len, size_t *data)
{
	size_t	i;
	int	c, d;

	*data = 0;
	if (ch->ch_state == CH_DATA) {
		*data = len < ch->ch_left ? len : (size_t)ch->ch_left;
		if (*data > INT_MAX)
			*data = INT_MAX;
		ch->ch_left -= *data;
		if (ch->ch_left == 0)
			ch->ch_state = CH_DATA_END;
		return (int)*data;
	}
	for (i = 0; i < len && i < INT_MAX; i++) {
		c = (unsigned char)buf[i];
		switch (ch->ch_state) {
		case CH_SIZE:
			if (isxdigit(c)) {
				d = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
				if (ch->ch_left > (UINT64_C(1) << 48))
					return -1;
				ch->ch_left = ch->ch_left * 16 + (uint64_t)d;
				ch->ch_digits++;
				break;
			}
			if (ch->ch_digits == 0)
				return -1;
			if (c == ';' || c == ' ' || c == '\t' || c == '\r') {
				ch->ch_state = CH_EXT;
				break;
			}
			if (c != '\n')
				return -1;
			/* FALLTHROUGH */
		case CH_EXT:
			if (c != '\n')
				break;
			ch->ch_digits = 0;
			if (ch->ch_left == 0) {
				ch->ch_state = CH_TRAILER_BOL;
				break;
			}
			ch->ch_state = CH_DATA;
			return (int)i + 1;
		case CH_DATA_END:
			if (c == '\n')
				ch->ch_state = CH_SIZE;
			else if (c != '\r')
				return -1;
			break;
		case CH_TRAILER_BOL:
			if (c == '\n') {
				ch->ch_state = CH_DONE;
				return (int)i + 1;
			}
			if (c != '\r')
				ch->ch_state = CH_TRAILER;
			break;
		case CH_TRAILER:
			if (c == '\n')
				ch->ch_state = CH_TRAILER_BOL;
			break;
		case CH_DATA:
		case CH_DONE:
			return (int)i;
		}
	}
	return (int)i;
}
