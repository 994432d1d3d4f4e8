/*
 * fuzz_cookie.c: libFuzzer target for the Cookie header reader and the
 * Set-Cookie builder.  The input is read as a Cookie header: every pair
 * must have a name, no separator inside, and no space around.  Then its
 * first two NUL-separated strings are given to the builder as a name and
 * a value: what it accepts must read back, by the reader, as that pair.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reqdata.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Splits len bytes of s as a Cookie header into p (room made here). */
static void
split(struct rd_part *p, const char *s, size_t len)
{
	size_t	 n = 1, i;

	for (i = 0; i < len; i++)
		n += s[i] == ';';
	memset(p, 0, sizeof(*p));
	p->pv = calloc(n, sizeof(*p->pv));
	p->cap = n;
	p->mem = malloc(len + 2 * n);
	p->memlen = len + 2 * n;
	if (p->pv == NULL || p->mem == NULL)
		abort();
	reqdata_split(p, s, len, ';');
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const char	*s = (const char *)data, *name, *value;
	struct rd_part	 p;
	char		 buf[512];
	size_t		 i, nl;

	/* HTTP_COOKIE is a C string: up to its first NUL. */
	split(&p, s, memchr(s, '\0', len) != NULL ?
	    (size_t)((const char *)memchr(s, '\0', len) - s) : len);
	if (p.st != RD_OK || p.n > p.cap)
		abort();
	for (i = 0; i < p.n; i++) {
		nl = strlen(p.pv[i].p_name);
		if (nl == 0 || nl != p.pv[i].p_nlen ||
		    strchr(p.pv[i].p_name, ';') != NULL ||
		    strchr(p.pv[i].p_value, ';') != NULL ||
		    p.pv[i].p_name[0] == ' ' || p.pv[i].p_name[nl - 1] == ' ')
			abort();
	}
	free(p.pv);
	free(p.mem);
	/* The builder: a name and a value, NUL-separated, both ended. */
	if ((name = memchr(s, '\0', len)) == NULL)
		return 0;
	value = name + 1;
	name = s;
	if (memchr(value, '\0', len - (size_t)(value - s)) == NULL)
		return 0;
	if (evfcgi_cookie_format(buf, sizeof(buf), name, value, NULL) == -1)
		return 0;
	split(&p, buf, strlen(buf));
	if (p.n != 1 || strcmp(p.pv[0].p_name, name) != 0 ||
	    (strcmp(p.pv[0].p_value, value) != 0 &&
	    !(value[0] == '"' && strlen(value) >= 2 &&
	    strncmp(p.pv[0].p_value, value + 1, strlen(value) - 2) == 0)))
		abort();
	free(p.pv);
	free(p.mem);
	return 0;
}
