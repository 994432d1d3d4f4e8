/*
 * reply.c: a convenience over response.c: a printf-style body write.
 */
#include <sys/types.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "req_struct.h"

int
evfcgi_vprintf(struct evfcgi_req *r, const char *fmt, va_list ap)
{
	char	 small[512], *p = small;
	va_list	 ap2;
	int	 n, rc;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= 0 && (size_t)n >= sizeof(small)) {
		/* Larger than the stack's share: once, from the heap. */
		if ((p = malloc((size_t)n + 1)) == NULL)
			n = -1;
		else
			(void)vsnprintf(p, (size_t)n + 1, fmt, ap2);
	}
	va_end(ap2);
	if (n < 0)
		return -1;
	rc = evfcgi_write(r, p, (size_t)n);
	if (p != small)
		free(p);
	return rc == -1 ? -1 : n;
}

int
evfcgi_printf(struct evfcgi_req *r, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = evfcgi_vprintf(r, fmt, ap);
	va_end(ap);
	return n;
}
