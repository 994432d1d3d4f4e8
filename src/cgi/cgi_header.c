/*
 * cgi_header.c: a CGI program's header block (RFC 3875 6.2, 6.3), parsed
 * as a pure function over bytes: no I/O, no allocation.  The caller keeps
 * the bytes; fields point into them.
 */
#include <sys/types.h>

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "cgi.h"

static int	tchar(int);
static int	line_check(const char *, size_t, const char **);
static int	field_split(const char *, size_t, struct cgi_field *);
static int	read_status(const struct cgi_field *, int *, struct cgi_head *);
static int	read_clen(const struct cgi_field *, long long *);

/* Whether c may appear in an HTTP token (RFC 9110 5.6.2). */
static int
tchar(int c)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9'))
		return 1;
	return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/*
 * Checks one header line of len bytes (its LF and a CR before it taken
 * off): a token, ':', a value without control characters but tab.
 * Returns 0, or -1 with *why.
 */
static int
line_check(const char *p, size_t len, const char **why)
{
	size_t		 i = 0;
	unsigned char	 c;

	while (i < len && tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i == len || p[i] != ':') {
		*why = i == 0 && len > 0 && (p[0] == ' ' || p[0] == '\t') ?
		    "a header line begins with a blank (folding)" :
		    "a header line that is not \"name: value\"";
		return -1;
	}
	for (i++; i < len; i++) {
		c = (unsigned char)p[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			*why = "a control character in a header value";
			return -1;
		}
	}
	return 0;
}

long
cgi_header_scan(const char *buf, size_t len, size_t *pos, const char **why)
{
	const char	*nl;
	size_t		 at = *pos, end;

	while (at < len) {
		if ((nl = memchr(buf + at, '\n', len - at)) == NULL)
			return 0;
		end = (size_t)(nl - buf);
		/* The empty line: the block ends after it. */
		if (end == at || (end == at + 1 && buf[at] == '\r')) {
			if (at == 0) {
				*why = "an empty line before any header";
				return -1;
			}
			return (long)end + 1;
		}
		if (buf[end - 1] == '\r')
			end--;
		if (line_check(buf + at, end - at, why) == -1)
			return -1;
		at = (size_t)(nl - buf) + 1;
		*pos = at;
	}
	return 0;
}

/* Splits a checked line into f; returns 0, or -1 for the empty line. */
static int
field_split(const char *p, size_t len, struct cgi_field *f)
{
	const char	*colon, *v, *e;

	if (len > 0 && p[len - 1] == '\r')
		len--;
	if (len == 0 || (colon = memchr(p, ':', len)) == NULL)
		return -1;
	f->f_name = p;
	f->f_namelen = (size_t)(colon - p);
	v = colon + 1;
	e = p + len;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	f->f_value = v;
	f->f_valuelen = (size_t)(e - v);
	return 0;
}

int
cgi_header_next(const char *buf, size_t len, size_t *off, struct cgi_field *f)
{
	const char	*nl;
	size_t		 at = *off;

	if (at >= len || (nl = memchr(buf + at, '\n', len - at)) == NULL)
		return 0;
	if (field_split(buf + at, (size_t)(nl - buf) - at, f) == -1)
		return 0;
	*off = (size_t)(nl - buf) + 1;
	return 1;
}

int
cgi_field_is(const struct cgi_field *f, const char *name)
{
	return strlen(name) == f->f_namelen &&
	    strncasecmp(f->f_name, name, f->f_namelen) == 0;
}

/*
 * Status: 3 digits, 100 to 599, then nothing or blanks and a reason
 * phrase.  Returns 0 with *status and h's reason (NULL when none), or -1.
 */
static int
read_status(const struct cgi_field *f, int *status, struct cgi_head *h)
{
	const char	*v = f->f_value;
	size_t		 r;
	int		 i, n = 0;

	if (f->f_valuelen < 3)
		return -1;
	for (i = 0; i < 3; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	if (f->f_valuelen > 3 && v[3] != ' ' && v[3] != '\t')
		return -1;
	if (n < 100 || n > 599)
		return -1;
	*status = n;
	for (r = 3; r < f->f_valuelen && (v[r] == ' ' || v[r] == '\t'); r++)
		;
	h->h_reason = r < f->f_valuelen ? v + r : NULL;
	h->h_reasonlen = f->f_valuelen - r;
	return 0;
}

/* Content-Length: decimal digits only.  Returns 0 with *n, or -1. */
static int
read_clen(const struct cgi_field *f, long long *n)
{
	size_t		 i;
	long long	 v = 0;

	if (f->f_valuelen == 0 || f->f_valuelen > 18)
		return -1;
	for (i = 0; i < f->f_valuelen; i++) {
		if (f->f_value[i] < '0' || f->f_value[i] > '9')
			return -1;
		v = v * 10 + (f->f_value[i] - '0');
	}
	*n = v;
	return 0;
}

int
cgi_header_read(const char *buf, size_t len, struct cgi_head *h,
    const char **why)
{
	struct cgi_field	 f;
	size_t			 off = 0;
	int			 status = 0;

	memset(h, 0, sizeof(*h));
	h->h_clen = -1;
	while (cgi_header_next(buf, len, &off, &f)) {
		if (cgi_field_is(&f, "Status")) {
			if (status != 0 ||
			    read_status(&f, &status, h) == -1) {
				*why = status != 0 ? "Status given twice" :
				    "a Status that is not a code from 100 "
				    "to 599";
				return -1;
			}
		} else if (cgi_field_is(&f, "Content-Type")) {
			if (h->h_ctype.f_name != NULL || f.f_valuelen == 0) {
				*why = f.f_valuelen == 0 ?
				    "an empty Content-Type" :
				    "Content-Type given twice";
				return -1;
			}
			h->h_ctype = f;
		} else if (cgi_field_is(&f, "Location")) {
			if (h->h_location.f_name != NULL ||
			    f.f_valuelen == 0) {
				*why = f.f_valuelen == 0 ?
				    "an empty Location" :
				    "Location given twice";
				return -1;
			}
			h->h_location = f;
		} else if (cgi_field_is(&f, "Content-Length")) {
			if (h->h_clen != -1 || read_clen(&f, &h->h_clen) == -1) {
				*why = "a bad Content-Length";
				return -1;
			}
		}
	}
	if (status == 0 && h->h_ctype.f_name == NULL &&
	    h->h_location.f_name == NULL) {
		*why = "no Content-Type, Location or Status";
		return -1;
	}
	h->h_kind = CGI_DOCUMENT;
	if (h->h_location.f_name != NULL) {
		/* A local path without a Status of its own is run here. */
		if (h->h_location.f_value[0] == '/' && status == 0 &&
		    (h->h_location.f_valuelen == 1 ||
		    h->h_location.f_value[1] != '/'))
			h->h_kind = CGI_LOCAL_REDIRECT;
		else {
			h->h_kind = CGI_CLIENT_REDIRECT;
			if (status == 0)
				status = 302;
		}
	}
	h->h_status = status != 0 ? status : 200;
	return 0;
}
