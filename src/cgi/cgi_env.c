/*
 * cgi_env.c: a CGI program's environment (RFC 3875 4.1) from the web
 * server's params, as fcgiwrap passes them, and nothing of the daemon's
 * own but a safe PATH; and its command line (RFC 3875 4.4).  One
 * allocation each: the pointer array, then the strings.  A name given
 * twice is its last value, here as in evfcgi_param(), which the rest of
 * the gateway reads.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgi.h"
#include "request.h"

/* A name with where it came from: a later one replaces an earlier. */
struct env_ent {
	const char	*e_name;
	const char	*e_value;	/* NULL: removed */
	size_t		 e_order;
};

static int	ent_cmp(const void *, const void *);
static int	name_cmp(const void *, const void *);
static int	name_ok(const char *);
static const char *env_get(char *const[], const char *);
static int	search_words(const char *, char *, char **);

/* By name, then by order: the last of a name is the one kept. */
static int
ent_cmp(const void *a, const void *b)
{
	const struct env_ent	*x = a, *y = b;
	int			 c;

	if ((c = strcmp(x->e_name, y->e_name)) != 0)
		return c;
	return x->e_order < y->e_order ? -1 : x->e_order > y->e_order;
}

/* Whether name can be an environment variable's: not empty, no '='. */
static int
name_ok(const char *name)
{
	return name != NULL && *name != '\0' && strchr(name, '=') == NULL;
}

char **
cgi_env_build(const struct cgi_param *pv, size_t n,
    const struct cgi_param *over, size_t nover)
{
	static const struct cgi_param defaults[] = {
		{ "GATEWAY_INTERFACE", "CGI/1.1" },
		{ "QUERY_STRING", "" },
		{ "PATH", CGI_SAFE_PATH }
	};
	const size_t		 ndef = sizeof(defaults) / sizeof(defaults[0]);
	struct env_ent		*ent;
	const struct cgi_param	*p;
	char			**envp, *s;
	size_t			 i, k, m = 0, total = 0, nl, vl, kept = 0;

	if (n > SIZE_MAX / sizeof(*ent) - nover - ndef)
		return NULL;
	if ((ent = calloc(n + nover + ndef, sizeof(*ent))) == NULL)
		return NULL;
	/* The defaults first: anything given replaces them. */
	for (i = 0; i < ndef + n + nover; i++) {
		p = i < ndef ? &defaults[i] : i < ndef + n ? &pv[i - ndef] :
		    &over[i - ndef - n];
		if (!name_ok(p->p_name))
			continue;
		ent[m].e_name = p->p_name;
		ent[m].e_value = p->p_value;
		ent[m].e_order = i;
		m++;
	}
	qsort(ent, m, sizeof(*ent), ent_cmp);
	/* Keep the last of each name, unless it is a removal. */
	for (i = 0, k = 0; i < m; i++) {
		if (i + 1 < m && strcmp(ent[i].e_name, ent[i + 1].e_name) == 0)
			continue;
		if (ent[i].e_value == NULL)
			continue;
		ent[k++] = ent[i];
	}
	kept = k;
	total = (kept + 1) * sizeof(char *);
	for (i = 0; i < kept; i++)
		total += strlen(ent[i].e_name) + strlen(ent[i].e_value) + 2;
	if ((envp = malloc(total)) == NULL) {
		free(ent);
		return NULL;
	}
	s = (char *)(envp + kept + 1);
	for (i = 0; i < kept; i++) {
		nl = strlen(ent[i].e_name);
		vl = strlen(ent[i].e_value);
		envp[i] = s;
		memcpy(s, ent[i].e_name, nl);
		s[nl] = '=';
		memcpy(s + nl + 1, ent[i].e_value, vl + 1);
		s += nl + vl + 2;
	}
	envp[kept] = NULL;
	free(ent);
	return envp;
}

/* bsearch() of a name among names. */
static int
name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

const char *
cgi_param_dup(const struct cgi_param *pv, size_t n)
{
	/* Sorted (bsearch): RFC 3875 4.1, and what the gateway reads. */
	static const char *const names[] = {
		"AUTH_TYPE", "CONTENT_LENGTH", "CONTENT_TYPE",
		"DOCUMENT_ROOT", "DOCUMENT_URI", "GATEWAY_INTERFACE",
		"PATH_INFO", "PATH_TRANSLATED", "QUERY_STRING", "REMOTE_ADDR",
		"REMOTE_HOST", "REMOTE_IDENT", "REMOTE_USER", "REQUEST_METHOD",
		"REQUEST_URI", "SCRIPT_FILENAME", "SCRIPT_NAME", "SERVER_NAME",
		"SERVER_PORT", "SERVER_PROTOCOL", "SERVER_SOFTWARE"
	};
	const size_t		 nn = sizeof(names) / sizeof(names[0]);
	const char *const	*hit;
	uint32_t		 seen = 0, bit;
	size_t			 i;

	for (i = 0; i < n; i++) {
		if (pv[i].p_name == NULL || (hit = bsearch(pv[i].p_name, names,
		    nn, sizeof(names[0]), name_cmp)) == NULL)
			continue;
		bit = (uint32_t)1 << (hit - names);
		if (seen & bit)
			return *hit;
		seen |= bit;
	}
	return NULL;
}

/* The value of name in envp, or NULL. */
static const char *
env_get(char *const envp[], const char *name)
{
	size_t	 nl = strlen(name);

	for (; *envp != NULL; envp++)
		if (strncmp(*envp, name, nl) == 0 && (*envp)[nl] == '=')
			return *envp + nl + 1;
	return NULL;
}

/*
 * Whether q is a search-string (RFC 3875 4.4): search-word *("+"
 * search-word), a word one or more of unreserved, escaped or reserved
 * characters but "=" and "+".  Returns the number of words, each decoded
 * and NUL-ended into out (strlen(q) + 1 bytes are enough) and pointed to
 * by words[] (room for one more than q has '+'); 0 when q is not one, a
 * word holds %00 or a word starts with '-' once decoded.
 */
static int
search_words(const char *q, char *out, char **words)
{
	static const char	 schar[] = "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.!~*'();/?:@&$,%";
	const char		*w;
	size_t			 n;
	long			 d;
	int			 nw = 0;

	for (w = q;; w += n + 1) {
		n = strcspn(w, "+");
		/* Empty ("a++b", "+a", "a+"), or "=", a blank, a control. */
		if (n == 0 || strspn(w, schar) != n)
			return 0;
		if ((d = req_pct_decode(out, w, n)) == -1 || *out == '-')
			return 0;
		words[nw++] = out;
		out += d + 1;
		if (w[n] == '\0')
			return nw;
	}
}

char **
cgi_argv_build(const char *argv0, char *const envp[], int indexed)
{
	const char	*method = env_get(envp, "REQUEST_METHOD");
	const char	*q = env_get(envp, "QUERY_STRING");
	const char	*c;
	char		**argv, *s;
	size_t		 a0 = strlen(argv0) + 1, maxw = 0, qlen = 0;
	int		 n = 0;

	/* An indexed query: room for a word a '+' and one more. */
	if (indexed && method != NULL && q != NULL && *q != '\0' &&
	    (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)) {
		qlen = strlen(q) + 1;
		for (maxw = 1, c = q; (c = strchr(c, '+')) != NULL; c++)
			maxw++;
	}
	if ((argv = malloc((maxw + 2) * sizeof(char *) + a0 + qlen)) == NULL)
		return NULL;
	s = (char *)(argv + maxw + 2);
	argv[0] = memcpy(s, argv0, a0);
	if (maxw > 0)
		n = search_words(q, s + a0, argv + 1);
	argv[n + 1] = NULL;
	return argv;
}
