/*
 * http_parse.c: http:// URLs, HTTP/1.1 response heads and the chunked
 * coding, parsed from bytes in memory.  Only what a client needs to find
 * the end of a response is read; everything else in a head is skipped.
 */
#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_parse.h"

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

/*
 * head_end: length of the response head in buf up to and including the
 * empty line that ends it (CRLF or bare LF), or 0 if it is not complete.
 */
size_t
head_end(const char *buf, size_t len)
{
	const char	*p = buf, *end = buf + len, *nl;

	while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (nl + 1 < end && nl[1] == '\n')
			return (size_t)(nl + 2 - buf);
		if (nl + 2 < end && nl[1] == '\r' && nl[2] == '\n')
			return (size_t)(nl + 3 - buf);
		p = nl + 1;
	}
	return 0;
}

/*
 * head_parse: reads the status line and the headers that frame the body
 * and decide keep-alive from a complete head of len bytes (as measured by
 * head_end()).  Returns 0, or -1 if malformed: no "HTTP/1.x NNN" status
 * line, a bad or conflicting Content-Length.
 */
int
head_parse(const char *buf, size_t len, struct http_head *h)
{
	const char	*p, *end = buf + len, *eol, *v;
	size_t		 n;
	int		 i, http10, keep = 0;

	h->h_status = 0;
	h->h_clen = -1;
	h->h_chunked = 0;
	h->h_close = 0;
	if (len < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ')
		return -1;
	http10 = buf[7] == '0';
	for (i = 9; i < 12; i++) {
		if (!isdigit((unsigned char)buf[i]))
			return -1;
		h->h_status = h->h_status * 10 + (buf[i] - '0');
	}
	if ((eol = memchr(buf, '\n', len)) == NULL)
		return -1;
	for (p = eol + 1; p < end; p = eol + 1) {
		if ((eol = memchr(p, '\n', (size_t)(end - p))) == NULL)
			break;
		n = (size_t)(eol - p);
		if (n >= 15 && strncasecmp(p, "Content-Length:", 15) == 0) {
			uint64_t cl = 0;
			int digits = 0;

			for (v = p + 15; v < eol && (*v == ' ' || *v == '\t'); v++)
				;
			for (; v < eol && isdigit((unsigned char)*v); v++) {
				if (cl > (UINT64_C(1) << 53))
					return -1;
				cl = cl * 10 + (uint64_t)(*v - '0');
				digits++;
			}
			for (; v < eol && isspace((unsigned char)*v); v++)
				;
			if (digits == 0 || v != eol)
				return -1;
			if (h->h_clen != -1 && (uint64_t)h->h_clen != cl)
				return -1;
			h->h_clen = (int64_t)cl;
		} else if (n >= 18 &&
		    strncasecmp(p, "Transfer-Encoding:", 18) == 0) {
			/* Chunked must be the last coding; look for it anywhere. */
			for (v = p + 18; v + 7 <= eol; v++)
				if (strncasecmp(v, "chunked", 7) == 0)
					h->h_chunked = 1;
		} else if (n >= 11 && strncasecmp(p, "Connection:", 11) == 0) {
			for (v = p + 11; v < eol; v++) {
				if (v + 5 <= eol && strncasecmp(v, "close", 5) == 0)
					h->h_close = 1;
				if (v + 10 <= eol &&
				    strncasecmp(v, "keep-alive", 10) == 0)
					keep = 1;
			}
		}
	}
	if (http10 && !keep)
		h->h_close = 1;
	return 0;
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
