/*
 * sendfile.c: a file as an answer: its length, a single byte range
 * (RFC 9110 14) answered 206 or 416, and its bytes read only as the
 * connection has room (evfcgi_write_fd()).
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "evfcgi.h"

int
evfcgi_range_parse(const char *h, uint64_t size, uint64_t *off,
    uint64_t *len)
{
	long long	 a = -1, b = -1;
	const char	*dash;
	char		 first[24];

	if (h == NULL || strncmp(h, "bytes=", 6) != 0 ||
	    strchr(h, ',') != NULL)
		return 0;
	h += 6;
	if ((dash = strchr(h, '-')) == NULL ||
	    (size_t)(dash - h) >= sizeof(first))
		return -1;
	memcpy(first, h, (size_t)(dash - h));
	first[dash - h] = '\0';
	if ((*first != '\0' && evfcgi_parse_int(first, 0, LLONG_MAX, &a) ==
	    -1) || (dash[1] != '\0' && evfcgi_parse_int(dash + 1, 0,
	    LLONG_MAX, &b) == -1) || (a == -1 && b <= 0))
		return -1;
	if (a == -1) {			/* the last b bytes */
		a = (uint64_t)b < size ? (long long)size - b : 0;
		b = (long long)size - 1;
	} else if (b == -1 || (uint64_t)b >= size)
		b = (long long)size - 1;
	if ((uint64_t)a >= size || b < a)
		return -1;
	*off = (uint64_t)a;
	*len = (uint64_t)(b - a) + 1;
	return 1;
}

int
evfcgi_send_file(struct evfcgi_req *req, int fd, const char *ctype)
{
	struct stat	 st;
	uint64_t	 off = 0, len;
	char		 cr[80];
	int		 r;

	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode)) {
		close(fd);
		return evfcgi_respond_error(req, 404, NULL);
	}
	len = (uint64_t)st.st_size;
	(void)evfcgi_header_add(req, "Accept-Ranges", "bytes");
	r = evfcgi_range_parse(evfcgi_param(req, "HTTP_RANGE"), len, &off,
	    &len);
	if (r == -1) {
		close(fd);
		snprintf(cr, sizeof(cr), "bytes */%lld", (long long)st.st_size);
		(void)evfcgi_header_add(req, "Content-Range", cr);
		return evfcgi_respond_error(req, 416, NULL);
	}
	if (r == 1) {
		snprintf(cr, sizeof(cr), "bytes %llu-%llu/%lld",
		    (unsigned long long)off, (unsigned long long)(off + len - 1),
		    (long long)st.st_size);
		(void)evfcgi_header_add(req, "Content-Range", cr);
	}
	if (evfcgi_header(req, r == 1 ? 206 : 200, ctype != NULL ? ctype :
	    "application/octet-stream", (long long)len) == -1) {
		close(fd);
		(void)evfcgi_respond_error(req, 500, NULL);
		return -1;
	}
	return evfcgi_write_fd(req, fd, off, len);
}
