/*
 * cookie.c: cookies (RFC 6265): the Cookie header read by name in one
 * pass (into the request's typed data), and Set-Cookie lines built only
 * from names, values and attributes that are valid.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "reqdata.h"

static int	cookie_token(const char *);
static int	cookie_value_ok(const char *);
static int	cookie_attr_ok(const char *);
static int	cookie_domain_ok(const char *);

int
evfcgi_cookie(struct evfcgi_req *r, const char *name, const char **value)
{
	struct reqdata	*d;
	const char	*ck;

	*value = NULL;
	if ((d = reqdata_get(r)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (d->d_cookie.st == RD_NONE) {
		if ((ck = evfcgi_param(r, "HTTP_COOKIE")) == NULL)
			ck = "";
		reqdata_split(&d->d_cookie, ck, strlen(ck), ';');
	}
	*value = reqdata_find(&d->d_cookie, name);
	return *value != NULL;
}

/* An HTTP token (RFC 9110 5.6.2), not empty. */
static int
cookie_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') ||
		    strchr("!#$%&'*+-.^_`|~", *s) != NULL))
			return 0;
	return 1;
}

/* cookie-value: cookie-octets, maybe in double quotes as a whole. */
static int
cookie_value_ok(const char *s)
{
	size_t	 len = strlen(s), i;

	if (len >= 2 && s[0] == '"' && s[len - 1] == '"') {
		s++;
		len -= 2;
	}
	for (i = 0; i < len; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if (c < 0x21 || c > 0x7e || c == '"' || c == ',' ||
		    c == ';' || c == '\\')
			return 0;
	}
	return 1;
}

/* An attribute value (Path): printable, no ';'. */
static int
cookie_attr_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e ||
		    *s == ';')
			return 0;
	return 1;
}

/* A domain: letters, digits, '-' and '.', not empty. */
static int
cookie_domain_ok(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '-' || *s == '.'))
			return 0;
	return 1;
}

int
evfcgi_cookie_format(char *buf, size_t size, const char *name,
    const char *value, const struct evfcgi_cookie_opts *o)
{
	static const char *const wd[] = { "Sun", "Mon", "Tue", "Wed", "Thu",
	    "Fri", "Sat" };
	static const char *const mon[] = { "Jan", "Feb", "Mar", "Apr", "May",
	    "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
	static const struct evfcgi_cookie_opts none;
	const char	*ss = NULL;
	struct tm	 tm;
	time_t		 t;
	size_t		 n;
	int		 k;

	if (o == NULL)
		o = &none;
	if (o->same_site != NULL) {
		if (strcasecmp(o->same_site, "Strict") == 0)
			ss = "Strict";
		else if (strcasecmp(o->same_site, "Lax") == 0)
			ss = "Lax";
		else if (strcasecmp(o->same_site, "None") == 0)
			ss = "None";
	}
	/* Browsers drop SameSite=None without Secure, and the prefixes'. */
	if (!cookie_token(name) || !cookie_value_ok(value) ||
	    (o->path != NULL && !cookie_attr_ok(o->path)) ||
	    (o->domain != NULL && !cookie_domain_ok(o->domain)) ||
	    (o->same_site != NULL && ss == NULL) ||
	    (ss != NULL && strcmp(ss, "None") == 0 && !o->secure) ||
	    (strncmp(name, "__Secure-", 9) == 0 && !o->secure) ||
	    (strncmp(name, "__Host-", 7) == 0 && (!o->secure ||
	    o->domain != NULL || o->path == NULL ||
	    strcmp(o->path, "/") != 0))) {
		errno = EINVAL;
		return -1;
	}
	k = snprintf(buf, size, "%s=%s", name, value);
	n = (size_t)k;
#define ADD(...) do {							\
	k = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0,	\
	    __VA_ARGS__);						\
	n += (size_t)k;							\
} while (0)
	if (o->path != NULL)
		ADD("; Path=%s", o->path);
	if (o->domain != NULL)
		ADD("; Domain=%s", o->domain);
	if (o->max_age != 0)
		ADD("; Max-Age=%lld", o->max_age > 0 ? o->max_age : 0);
	if (o->expires != 0) {
		t = (time_t)o->expires;
		if (gmtime_r(&t, &tm) == NULL) {
			errno = EINVAL;
			return -1;
		}
		ADD("; Expires=%s, %02d %s %04d %02d:%02d:%02d GMT",
		    wd[tm.tm_wday], tm.tm_mday, mon[tm.tm_mon],
		    tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
	}
	if (o->secure)
		ADD("; Secure");
	if (o->http_only)
		ADD("; HttpOnly");
	if (ss != NULL)
		ADD("; SameSite=%s", ss);
#undef ADD
	if (n >= size) {
		errno = ENOSPC;
		return -1;
	}
	return (int)n;
}

int
evfcgi_set_cookie(struct evfcgi_req *r, const char *name, const char *value,
    const struct evfcgi_cookie_opts *o)
{
	char	 buf[4096];

	if (evfcgi_cookie_format(buf, sizeof(buf), name, value, o) == -1)
		return -1;
	return evfcgi_header_add(r, "Set-Cookie", buf);
}
