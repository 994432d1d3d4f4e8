/*
 * html.c: text escaped for HTML (element content and quoted attribute
 * values): the five characters that can end either, and NUL.
 */
#include <sys/types.h>

#include <string.h>

#include "evfcgi.h"

static const char	*html_entity(unsigned char);

/* The entity for c, or NULL when c stands for itself. */
static const char *
html_entity(unsigned char c)
{
	switch (c) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	case '\0':
		return "&#xFFFD;";
	default:
		return NULL;
	}
}

size_t
evfcgi_html_escape(char *dst, size_t size, const char *src, size_t len)
{
	const char	*e;
	size_t		 i, o = 0, k;

	for (i = 0; i < len; i++) {
		e = html_entity((unsigned char)src[i]);
		k = e != NULL ? strlen(e) : 1;
		if (o + k < size)
			memcpy(dst + o, e != NULL ? e : src + i, k);
		else if (o < size)
			size = o + 1;	/* no partial entity: cut here */
		o += k;
	}
	if (size > 0)
		dst[o < size ? o : size - 1] = '\0';
	return o;
}

int
evfcgi_write_html(struct evfcgi_req *req, const char *s)
{
	char	 buf[1024];
	size_t	 len = strlen(s), n;

	/* A piece escapes to at most 8 times its length. */
	while (len > 0) {
		n = len < (sizeof(buf) - 1) / 8 ? len : (sizeof(buf) - 1) / 8;
		if (evfcgi_write(req, buf, evfcgi_html_escape(buf, sizeof(buf),
		    s, n)) == -1)
			return -1;
		s += n;
		len -= n;
	}
	return 0;
}

size_t
evfcgi_url_escape(char *dst, size_t size, const char *src)
{
	static const char	 hex[] = "0123456789ABCDEF";
	unsigned char		 c;
	size_t			 o = 0, k;

	for (; *src != '\0'; src++) {
		c = (unsigned char)*src;
		k = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || strchr("-._~", c) != NULL ? 1 : 3;
		if (o + k < size) {
			if (k == 1)
				dst[o] = (char)c;
			else {
				dst[o] = '%';
				dst[o + 1] = hex[c >> 4];
				dst[o + 2] = hex[c & 15];
			}
		} else if (o < size)
			size = o + 1;	/* no partial escape: cut here */
		o += k;
	}
	if (size > 0)
		dst[o < size ? o : size - 1] = '\0';
	return o;
}
