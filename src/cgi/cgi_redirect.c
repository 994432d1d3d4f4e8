/*
 * cgi_redirect.c: a local redirect (RFC 3875 6.2.2): a program answered
 * only "Location: /path?query"; the path is resolved as a server resolves
 * a request's (decoded, dot segments removed, never above "/"), and the
 * program it names under DOCUMENT_ROOT, which must be inside the CGI
 * root, runs for the same request instead, as a GET with no arguments.
 * What would leave the root is refused with a 500.
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
#include "request.h"

static int	redirect_params(struct cgi_job *, const char *, size_t,
		    const char **);

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
		if ((d = req_pct_decode(out + o + 1, seg, n)) == -1) {
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
static int
redirect_params(struct cgi_job *job, const char *loc, size_t len,
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

void
cgi_job_redirect(struct cgi_job *job, const char *loc, size_t len)
{
	struct cgi	*cg = job->j_cg;
	struct cgi_prog	 prog;
	const char	*why;
	char		*argv0, *name, msg[256], to[104];
	size_t		 i;
	int		 status;

	if (++job->j_redirects > CGI_MAX_REDIRECTS) {
		cgi_job_fail(job, 500, "too many local redirects");
		return;
	}
	/* loc points into the header block: copied before it goes. */
	for (i = 0; i < len && i < sizeof(to) - 4; i++)
		to[i] = (unsigned char)loc[i] < 0x20 || loc[i] == 0x7f ? '?' :
		    loc[i];
	to[i] = '\0';
	if (i < len)
		strcpy(to + i, "...");
	status = redirect_params(job, loc, len, &why);
	/* The first program's part is over; it finishes on its own. */
	cgi_io_close(job);
	if (job->j_child != NULL)
		job->j_child->ch_job = NULL;
	job->j_child = NULL;
	evbuffer_drain(job->j_head, evbuffer_get_length(job->j_head));
	job->j_scanpos = 0;
	job->j_discard = 1;
	if (job->j_body != NULL)
		evbuffer_drain(job->j_body, evbuffer_get_length(job->j_body));
	/* Refused (not missing): the path would leave the CGI root. */
	if (status == 0 &&
	    (status = cgi_open(cg->cg_rootfd, cg->cg_root, cg->cg_rootlen,
	    job->j_over[0].p_value, &prog, &why)) == 403)
		status = 500;
	if (status == 0) {
		argv0 = strdup(job->j_over[0].p_value);
		name = cgi_safe_str(job->j_over[0].p_value);
		if (argv0 == NULL || name == NULL) {
			free(argv0);
			free(name);
			cgi_prog_close(&prog);
			cgi_job_fail(job, 500, "out of memory");
			return;
		}
		cgi_prog_close(&job->j_prog);
		free(job->j_argv0);
		free(job->j_name);
		job->j_prog = prog;
		job->j_argv0 = argv0;
		job->j_name = name;
		log_debug("cgi %s: local redirect", name);
		cgi_job_start(job, 1);
		return;
	}
	snprintf(msg, sizeof(msg), "local redirect to %s: %s", to, why);
	cgi_job_fail(job, status, msg);
}
