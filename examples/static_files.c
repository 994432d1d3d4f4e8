/*
 * static_files.c: serves the files of one directory over FastCGI, on
 * libevfcgi.  Each file is streamed from its descriptor with
 * evfcgi_write_fd(), read only as the connection drains, so a 100 MiB file
 * to a slow client costs a watermark of memory, not the file.
 *
 * Safe by construction: the path is walked one component at a time from
 * the root's descriptor with openat(O_NOFOLLOW), so ".." (plain or %2e%2e:
 * the engine decodes the path first) and symbolic links are refused (403)
 * and nothing outside ROOT is ever opened; dot files are not served (404),
 * nor anything but regular files (403).  A directory is served by its
 * index.html (a path without its final '/' is redirected, 301), else 403.
 *
 * HTTP: GET and HEAD (the engine answers 405 otherwise); Last-Modified and
 * If-Modified-Since (304); one byte range (206 with Content-Range; 416
 * when it is past the end; several ranges, or If-Range not matching
 * Last-Modified, get the whole file, as RFC 9110 allows); Content-Type
 * from a small table of extensions.
 *
 * usage: static_files [--listen ADDR] ROOT
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "evfcgi.h"

#define OPEN_FLAGS	(O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

static void	route_file(struct evfcgi_req *, void *);
static int	walk(int, const char *, int *);
static int	open_below(int, const char *, int, int *);
static void	send_file(struct evfcgi_req *, int, const struct stat *,
		    const char *);
static int	parse_range(const char *, uint64_t, uint64_t *, uint64_t *);
static int	parse_date(const char *, time_t *);
static const char *mime_type(const char *);

static const char usage[] =
    "usage: static_files [--listen ADDR] ROOT\n"
    "  ROOT           the directory whose files are served\n"
    "  --listen ADDR  HOST:PORT, [V6]:PORT or unix:/path; without it, fd 0\n"
    "                 must be a listening socket (spawn-fcgi)\n"
    "  --help         this text\n";

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct evfcgi_limits	 lim;
	struct evfcgi_server	*srv;
	struct event_base	*base;
	const char		*addr = NULL;
	char			 err[256];
	int			 ch, root, rc;

	while ((ch = getopt_long(argc, argv, "l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			addr = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "static_files: expected one ROOT directory\n%s",
		    usage);
		return 2;
	}
	if ((root = open(argv[optind], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1) {
		fprintf(stderr, "static_files: %s: %s\n", argv[optind],
		    strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	evfcgi_limits_default(&lim);
	if ((base = event_base_new()) == NULL ||
	    (srv = evfcgi_server_new(base, &lim)) == NULL ||
	    evfcgi_route_ex(srv, "/", EVFCGI_ROUTE_PREFIX, "GET", route_file,
	    &root) == -1) {
		fprintf(stderr, "static_files: out of memory\n");
		return 1;
	}
	if (addr != NULL ? evfcgi_listen(srv, addr, 0660, err,
	    sizeof(err)) == -1 : evfcgi_listen_fd(srv, 0) == -1) {
		fprintf(stderr, "static_files: %s\n%s", addr != NULL ? err :
		    "no --listen and fd 0 is not a listening socket", usage);
		return 1;
	}
	if (evfcgi_handle_signals(srv) == -1)
		fprintf(stderr, "static_files: signals not handled\n");
	rc = evfcgi_run(srv);
	evfcgi_server_free(srv);
	event_base_free(base);
	close(root);
	return rc == 0 ? 0 : 1;
}

static void
route_file(struct evfcgi_req *req, void *arg)
{
	const char	*path = evfcgi_path(req), *uri;
	struct stat	 sb;
	char		 loc[PATH_MAX + 2];
	int		 fd, st;

	if ((st = walk(*(int *)arg, path, &fd)) != 0) {
		evfcgi_respond_error(req, st, st == 404 ? "no such file" :
		    "refused: '..', a symbolic link, or not a regular file");
		return;
	}
	if (fstat(fd, &sb) == -1)
		goto fail;
	if (S_ISDIR(sb.st_mode) && path[strlen(path) - 1] != '/') {
		close(fd);
		uri = *evfcgi_raw_uri(req) != '\0' ? evfcgi_raw_uri(req) : path;
		snprintf(loc, sizeof(loc), "%.*s/", (int)strcspn(uri, "?"),
		    uri);
		evfcgi_header_add(req, "Location", loc);
		evfcgi_respond_error(req, 301, NULL);
		return;
	}
	if (S_ISDIR(sb.st_mode)) {
		st = open_below(fd, "index.html", 0, &fd);
		if (st != 0) {
			evfcgi_respond_error(req, 403, "no index.html here");
			return;
		}
		if (fstat(fd, &sb) == -1)
			goto fail;
		path = "index.html";
	}
	if (!S_ISREG(sb.st_mode)) {
		close(fd);
		evfcgi_respond_error(req, 403, "not a regular file");
		return;
	}
	send_file(req, fd, &sb, path);
	return;
fail:
	close(fd);
	evfcgi_respond_error(req, 500, NULL);
}

/*
 * Opens path below the directory root, one component at a time.  Returns
 * 0 with *out open, or the HTTP status that refuses it (403, 404).
 */
static int
walk(int root, const char *path, int *out)
{
	char		 name[NAME_MAX + 1];
	const char	*p = path;
	size_t		 n;
	int		 dir, st;

	if ((dir = openat(root, ".", OPEN_FLAGS | O_DIRECTORY)) == -1)
		return 404;
	for (;;) {
		p += strspn(p, "/");
		if (*p == '\0')
			break;
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			close(dir);
			return 404;
		}
		memcpy(name, p, n);
		name[n] = '\0';
		p += n;
		st = open_below(dir, name, *p == '/', &dir);
		if (st != 0)
			return st;
	}
	*out = dir;
	return 0;
}

/*
 * Opens name in the directory dir (a directory when isdir) and closes dir.
 * Returns 0 with *out open, or 403 ('..', a symbolic link, no access) or
 * 404 (absent, a dot file, a file where a directory was expected).
 */
static int
open_below(int dir, const char *name, int isdir, int *out)
{
	struct stat	 sb;
	int		 fd, st = 404;

	if (strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		st = 403;
	else if (name[0] == '.')
		st = 404;
	else if ((fd = openat(dir, name, OPEN_FLAGS |
	    (isdir ? O_DIRECTORY : 0))) != -1) {
		close(dir);
		*out = fd;
		return 0;
	} else if (errno == ELOOP || errno == EACCES || errno == EPERM ||
	    (fstatat(dir, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode)))
		st = 403;
	close(dir);
	return st;
}

/* Answers 200, 206, 304 or 416 for the open regular file fd. */
static void
send_file(struct evfcgi_req *req, int fd, const struct stat *sb,
    const char *path)
{
	const char	*ims = evfcgi_param(req, "HTTP_IF_MODIFIED_SINCE");
	const char	*range = evfcgi_param(req, "HTTP_RANGE");
	const char	*ifr = evfcgi_param(req, "HTTP_IF_RANGE");
	uint64_t	 size = (uint64_t)sb->st_size, off = 0, len = size;
	char		 lm[64], cr[80];
	struct tm	 tm;
	time_t		 since;
	int		 status = 200;

	strftime(lm, sizeof(lm), "%a, %d %b %Y %H:%M:%S GMT",
	    gmtime_r(&sb->st_mtime, &tm));
	evfcgi_header_add(req, "Last-Modified", lm);
	evfcgi_header_add(req, "Accept-Ranges", "bytes");
	/* RFC 9110 13.1.3: an If-None-Match would win; this has no ETags. */
	if (ims != NULL && evfcgi_param(req, "HTTP_IF_NONE_MATCH") == NULL &&
	    parse_date(ims, &since) == 0 && sb->st_mtime <= since) {
		close(fd);
		evfcgi_header(req, 304, NULL, -1);
		evfcgi_finish(req);
		return;
	}
	if (range != NULL && (ifr == NULL || strcmp(ifr, lm) == 0)) {
		switch (parse_range(range, size, &off, &len)) {
		case -1:
			close(fd);
			snprintf(cr, sizeof(cr), "bytes */%" PRIu64, size);
			evfcgi_header_add(req, "Content-Range", cr);
			evfcgi_respond_error(req, 416, "range past the end");
			return;
		case 1:
			status = 206;
			snprintf(cr, sizeof(cr), "bytes %" PRIu64 "-%" PRIu64
			    "/%" PRIu64, off, off + len - 1, size);
			evfcgi_header_add(req, "Content-Range", cr);
			break;
		}
	}
	evfcgi_header_add(req, "X-Content-Type-Options", "nosniff");
	if (evfcgi_header(req, status, mime_type(path), (long long)len) ==
	    -1) {
		close(fd);
		evfcgi_respond_error(req, 500, NULL);
		return;
	}
	evfcgi_write_fd(req, fd, off, len);	/* finishes the request */
}

/*
 * A Range header (RFC 9110 14.1.2) against a file of size bytes.  Returns
 * 1 with the one range in *off and *len, 0 when it is to be ignored
 * (malformed, not bytes, several ranges), -1 when it is unsatisfiable.
 */
static int
parse_range(const char *h, uint64_t size, uint64_t *off, uint64_t *len)
{
	unsigned long long	 a = 0, b = ULLONG_MAX;
	const char		*p;
	char			*end;

	if (strncasecmp(h, "bytes=", 6) != 0 || strchr(h, ',') != NULL)
		return 0;
	p = h + 6 + strspn(h + 6, " \t");
	errno = 0;
	if (*p == '-') {		/* the last b bytes */
		if (p[1] < '0' || p[1] > '9')
			return 0;
		b = strtoull(p + 1, &end, 10);
		if (errno != 0 || end[strspn(end, " \t")] != '\0')
			return 0;
		if (b == 0 || size == 0)
			return -1;
		*len = b < size ? b : size;
		*off = size - *len;
		return 1;
	}
	if (*p < '0' || *p > '9')
		return 0;
	a = strtoull(p, &end, 10);
	if (errno != 0 || *end++ != '-')
		return 0;
	if (*end >= '0' && *end <= '9') {
		b = strtoull(end, &end, 10);
		if (errno != 0 || b < a)
			return 0;
	}
	if (end[strspn(end, " \t")] != '\0')
		return 0;
	if (a >= size)
		return -1;
	if (b >= size)
		b = size - 1;
	*off = a;
	*len = b - a + 1;
	return 1;
}

/* An HTTP-date in any of its three forms (RFC 9110 5.6.7): 0 or -1. */
static int
parse_date(const char *s, time_t *t)
{
	static const char	*forms[] = {
		"%a, %d %b %Y %H:%M:%S GMT",	/* IMF-fixdate */
		"%A, %d-%b-%y %H:%M:%S GMT",	/* RFC 850 */
		"%a %b %e %H:%M:%S %Y",		/* asctime() */
	};
	struct tm	 tm;
	const char	*end;
	size_t		 i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		memset(&tm, 0, sizeof(tm));
		if ((end = strptime(s, forms[i], &tm)) != NULL && *end == '\0') {
			*t = timegm(&tm);
			return 0;
		}
	}
	return -1;
}

/* The Content-Type of a file by its extension. */
static const char *
mime_type(const char *path)
{
	static const char *const types[][2] = {
		{ "html", "text/html; charset=utf-8" },
		{ "htm", "text/html; charset=utf-8" },
		{ "css", "text/css; charset=utf-8" },
		{ "js", "text/javascript; charset=utf-8" },
		{ "mjs", "text/javascript; charset=utf-8" },
		{ "json", "application/json" },
		{ "txt", "text/plain; charset=utf-8" },
		{ "xml", "application/xml" },
		{ "svg", "image/svg+xml" },
		{ "png", "image/png" },
		{ "jpg", "image/jpeg" },
		{ "jpeg", "image/jpeg" },
		{ "gif", "image/gif" },
		{ "webp", "image/webp" },
		{ "ico", "image/vnd.microsoft.icon" },
		{ "pdf", "application/pdf" },
		{ "wasm", "application/wasm" },
		{ "woff2", "font/woff2" },
		{ "mp4", "video/mp4" },
	};
	const char	*dot = strrchr(path, '.');
	size_t		 i;

	if (dot != NULL && strchr(dot, '/') == NULL)
		for (i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot + 1, types[i][0]) == 0)
				return types[i][1];
	return "application/octet-stream";
}
