/*
 * cgi_redirect.c: a local redirect (RFC 3875 6.2.2): a program answered
 * only "Location: /path?query"; the path is resolved as a server resolves
 * a request's (decoded, dot segments removed, never above "/"), and the
 * program it names under DOCUMENT_ROOT, which must be inside the CGI
 * root, runs for the same request instead, as a GET with no arguments.
 * What would leave the root is refused with a 500.  Here: the path and
 * the new parameters; cgi.c's cgi_job_redirect() runs the program.
 */
#include <sys/types.h>
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "cgi_job.h"
#include "evfcgi.h"
#include "log.h"

long
cgi_local_path(const char *loc, size_t len, char *out, const char **why)
{
	const char	*seg, *slash, *end = loc + len;
	size_t		 o = 0, n;
	long		 d, k;
	unsigned char	 c;
	int		 dot = 0;

	if (len == 0 || loc[0] != '/') {
		*why = "not an absolute path";
		return -1;
	}
	/* out holds "/seg" after "/seg": never longer than what was read. */
	for (seg = loc + 1;; seg = slash + 1) {
		slash = memchr(seg, '/', (size_t)(end - seg));
		n = (size_t)((slash != NULL ? slash : end) - seg);
		if ((d = evfcgi_pct_decode(out + o + 1, seg, n)) == -1) {
			*why = "a bad escape or a %00 in its path";
			return -1;
		}
		for (k = 0; k < d; k++) {
			c = (unsigned char)out[o + 1 + k];
			if (c == '/') {
				*why = "an escaped '/' in a segment of its path";
				return -1;
			}
			if (c < 0x20 || c == 0x7f) {
				*why = "a control character in its path";
				return -1;
			}
		}
		dot = (d == 1 || d == 2) && out[o + 1] == '.' &&
		    out[o + d] == '.';
		if (dot && d == 2) {
			if (o == 0) {
				*why = "its path climbs above the root";
				return -1;
			}
			while (out[--o] != '/')
				;
		} else if (!dot) {
			out[o] = '/';
			o += 1 + (size_t)d;
		}
		if (slash == NULL)
			break;
	}
	/* "/a/." and "/a/b/.." name the directory "/a/". */
	if (o == 0 || dot)
		out[o++] = '/';
	out[o] = '\0';
	return (long)o;
}

/*
 * The overrides of a local redirect to loc (len bytes: path and query):
 * the path resolved (cgi_local_path), the program is the longest leading
 * part of it that is a file under DOCUMENT_ROOT (SCRIPT_NAME), the rest
 * is PATH_INFO; method GET, no body.  Returns 0, or the status to answer
 * (500 for a path refused, 404 for no program on it) with *why.
 */
int
cgi_redirect_params(struct cgi_job *job, const char *loc, size_t len,
    const char **why)
{
	const char	*root = evfcgi_param(job->j_req, "DOCUMENT_ROOT");
	const char	*q = memchr(loc, '?', len);
	struct stat	 st;
	char		*path, *file, *uri, *query, *sname;
	size_t		 plen = q != NULL ? (size_t)(q - loc) : len, rl, i;
	long		 dl;

	if (root == NULL || *root != '/') {
		*why = "no DOCUMENT_ROOT to find its path in";
		return 500;
	}
	rl = strlen(root);
	free(job->j_overmem);
	/* path, root + path, the URI, the query, SCRIPT_NAME. */
	if ((job->j_overmem = malloc(plen + 1 + rl + plen + 1 + len + 1 +
	    len + 1 + plen + 1)) == NULL) {
		*why = "out of memory";
		return 500;
	}
	path = job->j_overmem;
	file = path + plen + 1;
	uri = file + rl + plen + 1;
	query = uri + len + 1;
	sname = query + len + 1;
	if ((dl = cgi_local_path(loc, plen, path, why)) == -1)
		return 500;
	memcpy(uri, loc, len);
	uri[len] = '\0';
	if (q != NULL)
		memcpy(query, q + 1, len - plen - 1);
	query[q != NULL ? len - plen - 1 : 0] = '\0';
	memcpy(file, root, rl);
	for (i = 1; i <= (size_t)dl; i++) {
		if (i < (size_t)dl && path[i] != '/')
			continue;
		memcpy(file + rl, path, i);
		file[rl + i] = '\0';
		if (stat(file, &st) == -1 || !S_ISDIR(st.st_mode))
			break;
	}
	if (i > (size_t)dl || stat(file, &st) == -1 || !S_ISREG(st.st_mode)) {
		*why = "no program on its path";
		return 404;
	}
	memcpy(sname, path, i);
	sname[i] = '\0';
	job->j_nover = 0;
#define OVER(n, v) do {							\
	job->j_over[job->j_nover].p_name = (n);				\
	job->j_over[job->j_nover++].p_value = (v);			\
} while (0)
	OVER("SCRIPT_FILENAME", file);
	OVER("SCRIPT_NAME", sname);
	OVER("DOCUMENT_URI", path);
	OVER("PATH_INFO", path[i] != '\0' ? path + i : NULL);
	OVER("QUERY_STRING", query);
	OVER("REQUEST_URI", uri);
	OVER("REQUEST_METHOD", "GET");
	OVER("CONTENT_LENGTH", NULL);
	OVER("CONTENT_TYPE", NULL);
	OVER("PATH_TRANSLATED", NULL);
#undef OVER
	return 0;
}
