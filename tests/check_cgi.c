/*
 * check_cgi.c: the CGI engine's pure parts: the header block parser
 * (every truncated prefix of a block needs more, never misreads; LF and
 * CRLF; the response kinds of RFC 3875 6.2; what is malformed) and the
 * environment builder (params through, overrides, defaults, nothing of
 * the caller's own environment), the command line, a local redirect's
 * path (dot segments, escapes); and the path check on real files.
 */
#include <sys/stat.h>

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgi.h"
#include "tests/suite.h"

/* Scans buf whole in one call; returns what cgi_header_scan() did. */
static long
scan(const char *buf, const char **why)
{
	size_t	 pos = 0;

	*why = NULL;
	return cgi_header_scan(buf, strlen(buf), &pos, why);
}

/* Reads the CGI fields of a block that scans whole; -1 if it does not. */
static int
head(const char *buf, struct cgi_head *h, const char **why)
{
	long	 n = scan(buf, why);

	if (n <= 0)
		return -1;
	return cgi_header_read(buf, (size_t)n, h, why);
}

/* Whether f holds the value v. */
static int
value_is(const struct cgi_field *f, const char *v)
{
	return f->f_name != NULL && f->f_valuelen == strlen(v) &&
	    memcmp(f->f_value, v, f->f_valuelen) == 0;
}

START_TEST(document_crlf_and_lf)
{
	const char	*blocks[] = {
		"Content-Type: text/plain\r\nX-A: 1\r\n\r\nbody",
		"Content-Type: text/plain\nX-A: 1\n\nbody",
		"Content-Type:text/plain  \r\nX-A:   1\n\r\nbody"
	};
	struct cgi_head	 h;
	struct cgi_field f;
	const char	*why;
	size_t		 i, off;

	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(scan(blocks[i], &why),
		    (long)(strstr(blocks[i], "body") - blocks[i]));
		ck_assert_int_eq(head(blocks[i], &h, &why), 0);
		ck_assert_int_eq(h.h_kind, CGI_DOCUMENT);
		ck_assert_int_eq(h.h_status, 200);
		ck_assert(value_is(&h.h_ctype, "text/plain"));
		ck_assert_ptr_null(h.h_location.f_name);
		ck_assert_int_eq(h.h_clen, -1);
		off = 0;
		ck_assert_int_eq(cgi_header_next(blocks[i], strlen(blocks[i]),
		    &off, &f), 1);
		ck_assert(cgi_field_is(&f, "content-type"));
		ck_assert_int_eq(cgi_header_next(blocks[i], strlen(blocks[i]),
		    &off, &f), 1);
		ck_assert(cgi_field_is(&f, "X-A") && value_is(&f, "1"));
		ck_assert_int_eq(cgi_header_next(blocks[i], strlen(blocks[i]),
		    &off, &f), 0);
	}
}
END_TEST

START_TEST(status_and_redirects)
{
	struct cgi_head	 h;
	const char	*why;

	ck_assert_int_eq(head("Status: 404 Not Here\r\nContent-Type: a/b"
	    "\r\n\r\n", &h, &why), 0);
	ck_assert_int_eq(h.h_status, 404);
	ck_assert_uint_eq(h.h_reasonlen, 8);
	ck_assert(strncmp(h.h_reason, "Not Here", 8) == 0);
	ck_assert_int_eq(head("Status: 304\n\n", &h, &why), 0);
	ck_assert_int_eq(h.h_status, 304);
	ck_assert_ptr_null(h.h_reason);
	ck_assert_int_eq(h.h_kind, CGI_DOCUMENT);
	/* RFC 3875 6.2.3: an absolute Location alone is a 302. */
	ck_assert_int_eq(head("Location: http://x.invalid/a?b=1\r\n\r\n", &h,
	    &why), 0);
	ck_assert_int_eq(h.h_kind, CGI_CLIENT_REDIRECT);
	ck_assert_int_eq(h.h_status, 302);
	ck_assert(value_is(&h.h_location, "http://x.invalid/a?b=1"));
	/* 6.2.4: with a document and a Status of its own. */
	ck_assert_int_eq(head("Status: 301 Moved\nLocation: http://x/n\n"
	    "Content-Type: text/plain\n\n", &h, &why), 0);
	ck_assert_int_eq(h.h_kind, CGI_CLIENT_REDIRECT);
	ck_assert_int_eq(h.h_status, 301);
	/* 6.2.2: a local path is run here. */
	ck_assert_int_eq(head("Location: /cgi-bin/t.py?from=x\r\n\r\n", &h,
	    &why), 0);
	ck_assert_int_eq(h.h_kind, CGI_LOCAL_REDIRECT);
	ck_assert(value_is(&h.h_location, "/cgi-bin/t.py?from=x"));
	/* "//host/path" is a network-path reference, not a local path. */
	ck_assert_int_eq(head("Location: //other/x\n\n", &h, &why), 0);
	ck_assert_int_eq(h.h_kind, CGI_CLIENT_REDIRECT);
	ck_assert_int_eq(head("Content-Length: 12\nContent-Type: a/b\n\n",
	    &h, &why), 0);
	ck_assert_int_eq(h.h_clen, 12);
}
END_TEST

/*
 * Every truncated prefix of a valid block needs more (0), never a length
 * and never malformed; fed a byte at a time with *pos kept, the same.
 */
START_TEST(every_prefix_needs_more)
{
	const char	*blocks[] = {
		"Content-Type: text/plain\r\nX-Long: abcdefghij\r\n\r\n",
		"Status: 200 OK\nContent-Type: a/b\nSet-Cookie: a=b; c\n\n",
		"Location: /x\r\n\r\n"
	};
	const char	*why;
	size_t		 i, n, len, pos;
	long		 r;

	for (i = 0; i < 3; i++) {
		len = strlen(blocks[i]);
		for (n = 0; n < len; n++) {
			pos = 0;
			r = cgi_header_scan(blocks[i], n, &pos, &why);
			ck_assert_msg(r == 0, "block %zu prefix %zu: %ld", i,
			    n, r);
			ck_assert_uint_le(pos, n);
		}
		pos = 0;
		for (n = 0; n < len; n++)
			ck_assert_int_eq(cgi_header_scan(blocks[i], n, &pos,
			    &why), 0);
		ck_assert_int_eq(cgi_header_scan(blocks[i], len, &pos, &why),
		    (long)len);
	}
}
END_TEST

/* A block cut inside a line ending (the CR, not the LF) needs more. */
START_TEST(cut_between_cr_and_lf)
{
	const char	*b = "Content-Type: a/b\r\n\r\n";
	const char	*why;
	size_t		 pos = 0;

	ck_assert_int_eq(cgi_header_scan(b, 18, &pos, &why), 0);
	ck_assert_int_eq(cgi_header_scan(b, 20, &pos, &why), 0);
	ck_assert_int_eq(cgi_header_scan(b, 21, &pos, &why), 21);
}
END_TEST

START_TEST(malformed_lines)
{
	const char	*bad[] = {
		"no header here, just a body\n",
		"\r\nbody",
		"\nbody",
		" folded: x\n\n",
		"Content-Type: a/b\n continued\n\n",
		"Bad Name: x\n\n",
		": novalue\n\n",
		"Content-Type: a\x01" "b\n\n",
		"Content-Type: a/b\rX-A: 1\n\n",
		"X\0Y: 1\n\n"
	};
	size_t		 lens[] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 8 };
	const char	*why;
	size_t		 i, pos;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		pos = 0;
		why = NULL;
		ck_assert_msg(cgi_header_scan(bad[i], lens[i] != 0 ? lens[i] :
		    strlen(bad[i]), &pos, &why) == -1, "bad block %zu", i);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

START_TEST(malformed_fields)
{
	const char	*bad[] = {
		"X-Only: 1\n\n",
		"Status: 99 Low\n\n",
		"Status: 600 High\n\n",
		"Status: 2000\n\n",
		"Status: abc\n\n",
		"Status: 200\nStatus: 404\n\n",
		"Content-Type: a/b\nContent-Type: c/d\n\n",
		"Content-Type:\n\n",
		"Location: /a\nLocation: /b\n\n",
		"Content-Type: a/b\nContent-Length: -1\n\n",
		"Content-Type: a/b\nContent-Length: 12x\n\n",
		"Content-Type: a/b\nContent-Length: 99999999999999999999\n\n"
	};
	struct cgi_head	 h;
	const char	*why;
	size_t		 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(head(bad[i], &h, &why) == -1, "bad fields %zu",
		    i);
		ck_assert_ptr_nonnull(why);
	}
}
END_TEST

/* Whether env holds the line exactly. */
static int
env_has(char **env, const char *line)
{
	for (; *env != NULL; env++)
		if (strcmp(*env, line) == 0)
			return 1;
	return 0;
}

/* Whether env has the name at all. */
static int
env_names(char **env, const char *name)
{
	size_t	 n = strlen(name);
	int	 k = 0;

	for (; *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			k++;
	return k;
}

START_TEST(env_params_through)
{
	struct cgi_param	 pv[] = {
		{ "SCRIPT_NAME", "/cgi-bin/x" },
		{ "QUERY_STRING", "a=1&b" },
		{ "HTTP_X_TEST", "hello, world" },
		{ "CONTENT_LENGTH", "" }
	};
	char			**env;

	setenv("EVFCGI_SECRET", "1", 1);
	env = cgi_env_build(pv, 4, NULL, 0);
	ck_assert_ptr_nonnull(env);
	ck_assert(env_has(env, "SCRIPT_NAME=/cgi-bin/x"));
	ck_assert(env_has(env, "QUERY_STRING=a=1&b"));
	ck_assert(env_has(env, "HTTP_X_TEST=hello, world"));
	ck_assert(env_has(env, "CONTENT_LENGTH="));
	ck_assert(env_has(env, "GATEWAY_INTERFACE=CGI/1.1"));
	ck_assert(env_has(env, "PATH=" CGI_SAFE_PATH));
	ck_assert_int_eq(env_names(env, "EVFCGI_SECRET"), 0);
	ck_assert_int_eq(env_names(env, "HOME"), 0);
	free(env);
}
END_TEST

START_TEST(env_defaults_and_overrides)
{
	struct cgi_param	 pv[] = {
		{ "GATEWAY_INTERFACE", "CGI/1.1" },
		{ "REQUEST_METHOD", "POST" },
		{ "CONTENT_TYPE", "a/b" },
		{ "PATH", "/opt/bin" },
		{ "X", "first" },
		{ "X", "second" }
	};
	struct cgi_param	 over[] = {
		{ "REQUEST_METHOD", "GET" },
		{ "CONTENT_TYPE", NULL },
		{ "PATH_INFO", "/p" }
	};
	char			**env;
	size_t			 n;

	env = cgi_env_build(pv, 6, over, 3);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env_names(env, "GATEWAY_INTERFACE"), 1);
	ck_assert(env_has(env, "REQUEST_METHOD=GET"));
	ck_assert_int_eq(env_names(env, "REQUEST_METHOD"), 1);
	ck_assert_int_eq(env_names(env, "CONTENT_TYPE"), 0);
	ck_assert(env_has(env, "PATH_INFO=/p"));
	/* The web server's PATH is its admin's choice. */
	ck_assert(env_has(env, "PATH=/opt/bin"));
	ck_assert(env_has(env, "X=second"));
	ck_assert_int_eq(env_names(env, "X"), 1);
	/* Unset QUERY_STRING is set empty (RFC 3875 4.1.7). */
	ck_assert(env_has(env, "QUERY_STRING="));
	for (n = 0; env[n] != NULL; n++)
		;
	ck_assert_uint_eq(n, 6);
	free(env);
}
END_TEST

/*
 * A client's header the front end passes more than once (nginx: two
 * HTTP_* params for a repeated header): its copies joined in order,
 * Cookie with "; ", the others with ", ", empty copies left out; any
 * other name is still its last (issue 37, item 7).
 */
START_TEST(env_repeated_headers_joined)
{
	struct cgi_param	 pv[] = {
		{ "HTTP_COOKIE", "a=1" }, { "HTTP_ACCEPT", "text/html" },
		{ "SCRIPT_NAME", "/x" }, { "HTTP_COOKIE", "b=2; c=3" },
		{ "HTTP_ACCEPT", "" }, { "HTTP_ACCEPT", "*/*" },
		{ "HTTP_X_FORWARDED_FOR", "10.0.0.1" }, { "SCRIPT_NAME", "/y" },
		{ "HTTP_EMPTY", "" }, { "HTTP_EMPTY", "" }, { "HTTP_ONE", "1" }
	};
	char			**env;

	env = cgi_env_build(pv, sizeof(pv) / sizeof(pv[0]), NULL, 0);
	ck_assert_ptr_nonnull(env);
	ck_assert(env_has(env, "HTTP_COOKIE=a=1; b=2; c=3"));
	ck_assert(env_has(env, "HTTP_ACCEPT=text/html, */*"));
	ck_assert(env_has(env, "HTTP_X_FORWARDED_FOR=10.0.0.1"));
	ck_assert(env_has(env, "HTTP_EMPTY="));
	ck_assert(env_has(env, "HTTP_ONE=1"));
	ck_assert(env_has(env, "SCRIPT_NAME=/y"));
	ck_assert_int_eq(env_names(env, "HTTP_COOKIE"), 1);
	ck_assert_int_eq(env_names(env, "HTTP_ACCEPT"), 1);
	ck_assert_int_eq(env_names(env, "HTTP_EMPTY"), 1);
	free(env);
}
END_TEST

START_TEST(env_bad_names_dropped)
{
	struct cgi_param	 pv[] = {
		{ "", "empty" },
		{ "A=B", "c" },
		{ "OK", "x=y" }
	};
	char			**env;

	env = cgi_env_build(pv, 3, NULL, 0);
	ck_assert_ptr_nonnull(env);
	ck_assert(env_has(env, "OK=x=y"));
	ck_assert(!env_has(env, "=empty"));
	ck_assert(!env_has(env, "A=B=c"));
	free(env);
}
END_TEST

START_TEST(env_duplicates_found)
{
	static const char *const used[] = {
		"SCRIPT_FILENAME", "SCRIPT_NAME", "REQUEST_METHOD",
		"CONTENT_LENGTH", "DOCUMENT_ROOT", "PATH_INFO", "QUERY_STRING",
		"REQUEST_URI", "AUTH_TYPE", "SERVER_SOFTWARE", "REMOTE_USER"
	};
	struct cgi_param pv[] = {
		{ "SCRIPT_FILENAME", "/srv/a" }, { "HTTP_COOKIE", "a=1" },
		{ "REQUEST_METHOD", "GET" }, { "HTTP_COOKIE", "b=2" },
		{ "script_filename", "/x" }, { "X", "1" }, { "X", "2" },
		{ NULL, NULL }
	};
	const size_t	 n = sizeof(pv) / sizeof(pv[0]) - 1;
	size_t		 i;
	const char	*d;

	/* Names nobody decides on may repeat (nginx 1.22: a header twice). */
	ck_assert_ptr_null(cgi_param_dup(pv, n));
	ck_assert_ptr_null(cgi_param_dup(pv, 0));
	for (i = 0; i < sizeof(used) / sizeof(used[0]); i++) {
		pv[n].p_name = used[i];
		pv[n].p_value = "again";
		/* The same name after another one, or right after. */
		pv[5].p_name = used[i];
		d = cgi_param_dup(pv, n + 1);
		ck_assert_msg(d != NULL && strcmp(d, used[i]) == 0,
		    "%s twice: %s", used[i], d != NULL ? d : "not found");
		pv[5].p_name = "X";
	}
	pv[n].p_name = "REQUEST_METHOD";
	ck_assert_str_eq(cgi_param_dup(pv, n + 1), "REQUEST_METHOD");
}
END_TEST

/*
 * argv of a GET (or method) with QUERY_STRING q, indexed queries taken
 * (--cgi-argv) or not; n set to its length.
 */
static char **
argv_flag(const char *method, const char *q, int indexed, size_t *n)
{
	char	 m[64], qs[512];
	char	*envp[] = { m, qs, "PATH=/bin", NULL };
	char	**argv;

	snprintf(m, sizeof(m), "REQUEST_METHOD=%s", method);
	snprintf(qs, sizeof(qs), "QUERY_STRING=%s", q);
	argv = cgi_argv_build("/srv/cgi-bin/x.sh", envp, indexed);
	ck_assert_ptr_nonnull(argv);
	ck_assert_str_eq(argv[0], "/srv/cgi-bin/x.sh");
	for (*n = 0; argv[*n] != NULL; (*n)++)
		;
	return argv;
}

/* argv_flag() with --cgi-argv. */
static char **
argv_of(const char *method, const char *q, size_t *n)
{
	return argv_flag(method, q, 1, n);
}

START_TEST(argv_indexed_query)
{
	char	**argv;
	size_t	 n;

	/* RFC 3875 4.4: words split on '+', each %-decoded. */
	argv = argv_of("GET", "git+log%2bx+%C3%A9t%C3%A9+a%20b+;/?:@&$,-_.!~*'()", &n);
	ck_assert_uint_eq(n, 6);
	ck_assert_str_eq(argv[1], "git");
	ck_assert_str_eq(argv[2], "log+x");
	ck_assert_str_eq(argv[3], "\xc3\xa9t\xc3\xa9");
	ck_assert_str_eq(argv[4], "a b");
	ck_assert_str_eq(argv[5], ";/?:@&$,-_.!~*'()");
	free(argv);
	argv = argv_of("HEAD", "one", &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(argv[1], "one");
	free(argv);
	/* An encoded "=" is a word's, not a form's. */
	argv = argv_of("GET", "a%3Db", &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(argv[1], "a=b");
	free(argv);
}
END_TEST

START_TEST(argv_not_indexed)
{
	static const char *const q[] = {
		"a=1", "x+y=z", "", "a++b", "+a", "a+", "+", "a%00b", "a%2",
		"a%zz", "a b", "a\"b", "a<b", "a\tb",
		/* Options to the program (php-cgi's CVE-2012-1823, cgit). */
		"-s", "--help", "%2ds", "%2D%2Dscan-tree%3D/etc", "a+-d+x",
		"a+--scan-tree%3D/tmp", "-"
	};
	char	**argv, *noenv[] = { NULL };
	size_t	 i, n;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		argv = argv_of("GET", q[i], &n);
		ck_assert_msg(n == 1, "query '%s': %zu words", q[i], n);
		free(argv);
	}
	argv = argv_of("POST", "words", &n);
	ck_assert_uint_eq(n, 1);
	free(argv);
	argv = cgi_argv_build("/x", noenv, 1);
	ck_assert_ptr_nonnull(argv);
	ck_assert_str_eq(argv[0], "/x");
	ck_assert_ptr_null(argv[1]);
	free(argv);
	/* A '-' inside a word is no option. */
	argv = argv_of("GET", "a-b+c-", &n);
	ck_assert_uint_eq(n, 3);
	free(argv);
}
END_TEST

/* Without --cgi-argv, no query gives arguments. */
START_TEST(argv_off_by_default)
{
	static const char *const q[] = { "git+log", "one", "a%3Db", "-s" };
	char	**argv;
	size_t	 i, n;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		argv = argv_flag("GET", q[i], 0, &n);
		ck_assert_msg(n == 1, "query '%s': %zu words", q[i], n);
		free(argv);
	}
}
END_TEST

/*
 * cgi_local_path() of loc into exactly strlen(loc) + 1 bytes (ASan sees
 * a write past them): the path (malloc'd, free it), or NULL if refused.
 */
static char *
local_path(const char *loc)
{
	size_t		 len = strlen(loc);
	char		*out = malloc(len + 1);
	const char	*why = NULL;
	long		 n;

	ck_assert_ptr_nonnull(out);
	if ((n = cgi_local_path(loc, len, out, &why)) == -1) {
		ck_assert_ptr_nonnull(why);
		free(out);
		return NULL;
	}
	ck_assert_int_eq((long)strlen(out), n);
	return out;
}

START_TEST(redirect_path_resolved)
{
	static const char *const ok[][2] = {
		{ "/", "/" },
		{ "/cgi-bin/x.sh", "/cgi-bin/x.sh" },
		{ "/a/./b", "/a/b" },
		{ "/a/b/../c", "/a/c" },
		{ "/a/%2e%2e/c", "/c" },
		{ "/a/%2E/b/%2e", "/a/b/" },
		{ "/a/.", "/a/" },
		{ "/a/b/..", "/a/" },
		{ "/a/..", "/" },
		{ "/.", "/" },
		{ "/a//b", "/a//b" },
		{ "/a//..", "/a/" },
		{ "/x%20y/%C3%A9", "/x y/\xc3\xa9" },
		{ "/.../.a/a.", "/.../.a/a." },
		{ "/a/.%2e./b", "/a/.../b" }
	};
	size_t	 i;
	char	*p;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		p = local_path(ok[i][0]);
		ck_assert_msg(p != NULL, "%s refused", ok[i][0]);
		ck_assert_msg(strcmp(p, ok[i][1]) == 0, "%s: %s, not %s",
		    ok[i][0], p, ok[i][1]);
		free(p);
	}
}
END_TEST

START_TEST(redirect_path_refused)
{
	static const char *const bad[] = {
		/* Above the root, however spelt. */
		"/..", "/../x", "/a/../../x", "/%2e%2e/x", "/%2E%2E",
		"/a/%2e%2e/%2E%2E/x", "/a/./../..", "/../../../../usr/bin/env",
		/* A '/' or a control inside a segment. */
		"/a%2fb", "/a%2F..%2F..%2Fb", "/cgi-bin%2f..%2f..%2fx",
		"/a%00", "/a%0a", "/a%0D%0Ab", "/a%7f", "/a%1b", "/a\tb",
		/* Bad escapes, not a path. */
		"/a%zz", "/a%2", "/a%", "relative", "", "x/../y"
	};
	size_t	 i;
	char	*p;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = local_path(bad[i]);
		ck_assert_msg(p == NULL, "'%s' taken as '%s'", bad[i],
		    p != NULL ? p : "");
	}
}
END_TEST

static char	 dir[PATH_MAX];

/*
 * A scratch tree: root/{run.sh, noexec.sh, sub/deep.sh, link -> ../out.sh,
 * inlink -> sub/deep.sh}.
 */
static void
tree_setup(void)
{
	char	 p[PATH_MAX + 64];
	FILE	*f;

	snprintf(dir, sizeof(dir), "/tmp/check_cgi.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/root", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/sub", dir);
	ck_assert_int_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/run.sh", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/noexec.sh", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	snprintf(p, sizeof(p), "%s/out.sh", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/root/link", dir);
	ck_assert_int_eq(symlink("../out.sh", p), 0);
	snprintf(p, sizeof(p), "%s/root/sub/deep.sh", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fclose(f);
	ck_assert_int_eq(chmod(p, 0755), 0);
	/* A symlink inside the root to a program inside: fine. */
	snprintf(p, sizeof(p), "%s/root/inlink", dir);
	ck_assert_int_eq(symlink("sub/deep.sh", p), 0);
}

static void
tree_teardown(void)
{
	char	 cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/*
 * The status cgi_open() gives name under root (dir/root, opened; "" and
 * "/" when whole): a regular file open read-only, its directory, its
 * resolved path, when 0.
 */
static int
open_under(const char *name, int whole)
{
	char		 root[PATH_MAX + 8], p[2 * PATH_MAX], *r;
	const char	*why = NULL;
	struct cgi_prog	 pr;
	struct stat	 st;
	int		 rootfd, status;

	snprintf(root, sizeof(root), "%s/root", dir);
	ck_assert_ptr_nonnull(r = realpath(whole ? "/" : root, NULL));
	if (whole)
		r[0] = '\0';
	ck_assert_int_ge(rootfd = open(whole ? "/" : r, O_PATH |
	    O_DIRECTORY), 0);
	if (name[0] == '/')
		snprintf(p, sizeof(p), "%s", name);
	else
		snprintf(p, sizeof(p), "%s/%s", root, name);
	status = cgi_open(rootfd, r, strlen(r), p, &pr, &why);
	if (status == 0) {
		ck_assert_ptr_nonnull(pr.pr_real);
		ck_assert_int_eq(strncmp(pr.pr_real, r, strlen(r)), 0);
		ck_assert_int_eq(fstat(pr.pr_fd, &st), 0);
		ck_assert(S_ISREG(st.st_mode));
		ck_assert_int_eq(fcntl(pr.pr_fd, F_GETFL) & O_ACCMODE,
		    O_RDONLY);
		ck_assert(fcntl(pr.pr_fd, F_GETFD) & FD_CLOEXEC);
		ck_assert_int_eq(fstat(pr.pr_dir, &st), 0);
		ck_assert(S_ISDIR(st.st_mode));
		cgi_prog_close(&pr);
		ck_assert_int_eq(pr.pr_fd, -1);
		ck_assert_ptr_null(pr.pr_real);
	} else {
		ck_assert_ptr_nonnull(why);
		ck_assert_int_eq(pr.pr_fd, -1);
		ck_assert_int_eq(pr.pr_dir, -1);
		ck_assert_ptr_null(pr.pr_real);
	}
	close(rootfd);
	free(r);
	return status;
}

START_TEST(open_paths)
{
	ck_assert_int_eq(open_under("run.sh", 0), 0);
	ck_assert_int_eq(open_under("sub/../run.sh", 0), 0);
	ck_assert_int_eq(open_under("sub/deep.sh", 0), 0);
	ck_assert_int_eq(open_under("inlink", 0), 0);
	ck_assert_int_eq(open_under("noexec.sh", 0), 403);
	ck_assert_int_eq(open_under("sub", 0), 403);
	ck_assert_int_eq(open_under(".", 0), 403);
	ck_assert_int_eq(open_under("link", 0), 403);
	ck_assert_int_eq(open_under("../out.sh", 0), 403);
	ck_assert_int_eq(open_under("nosuch.sh", 0), 404);
	ck_assert_int_eq(open_under("run.sh/extra", 0), 404);
	ck_assert_int_eq(open_under("relative/x", 0), 404);
	/* Root "/" (length 0) takes any absolute path. */
	ck_assert_int_eq(open_under("/bin/sh", 1), 0);
	ck_assert_int_eq(open_under("/", 1), 403);
}
END_TEST

static Suite *
cgi_suite(void)
{
	Suite	*s = suite_create("cgi");

	suite_add_case(s, "core", NULL, NULL, 0, document_crlf_and_lf,
	    status_and_redirects, env_params_through,
	    env_defaults_and_overrides, env_repeated_headers_joined, NULL);
	suite_add_case(s, "partial", NULL, NULL, 0, every_prefix_needs_more,
	    cut_between_cr_and_lf, NULL);
	suite_add_case(s, "malformed", NULL, NULL, 0, malformed_lines,
	    malformed_fields, env_bad_names_dropped, env_duplicates_found,
	    NULL);
	suite_add_case(s, "argv", NULL, NULL, 0, argv_indexed_query,
	    argv_not_indexed, argv_off_by_default, NULL);
	suite_add_case(s, "redirect", NULL, NULL, 0, redirect_path_resolved,
	    redirect_path_refused, NULL);
	suite_add_case(s, "paths", tree_setup, tree_teardown, 0,
	    open_paths, NULL);
	return s;
}

int
main(void)
{
	return suite_run(cgi_suite());
}
