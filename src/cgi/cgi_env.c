/*
 * cgi_env.c: a CGI program's environment (RFC 3875 4.1) from the web
 * server's params, as fcgiwrap passes them, and nothing of the daemon's
 * own but a safe PATH; and its command line (RFC 3875 4.4).  One
 * allocation each: the pointer array, then the strings.  A name given
 * twice is its last value, here as in evfcgi_param(), which the rest of
 * the gateway reads; but a client's header (HTTP_*) given twice is its
 * copies joined, as RFC 9110 reads a repeated field.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgi.h"
#include "evfcgi.h"

/* A name with where it came from: a later one replaces an earlier. */
struct env_ent {
	const char	*e_name;
	const char	*e_value;	/* NULL: removed */
	size_t		 e_order;
};

static int	ent_cmp(const void *, const void *);
static const char *list_sep(const char *);
static size_t	run_len(const struct env_ent *, size_t, size_t);
static char	*run_copy(char *, const struct env_ent *, size_t, size_t);
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

/*
 * The separator that joins the copies of a client's header the front end
 * passed more than once (nginx sends a repeated header as two HTTP_*
 * params): "; " for Cookie (RFC 6265 5.4), ", " for the others (RFC 9110
 * 5.3: a list, or a field that must not repeat); NULL for a name that is
 * no client's header, of which the last is the value.
 */
static const char *
list_sep(const char *name)
{
	if (strncmp(name, "HTTP_", 5) != 0)
		return NULL;
	return strcmp(name, "HTTP_COOKIE") == 0 ? "; " : ", ";
}

/*
 * The length of the value of the run ent[i..j) of one name: its copies
 * joined (empty ones left out) where the name is a list, else the last.
 */
static size_t
run_len(const struct env_ent *ent, size_t i, size_t j)
{
	const char	*sep = list_sep(ent[i].e_name);
	size_t		 len = 0, k, n = 0;

	if (sep == NULL)
		return strlen(ent[j - 1].e_value);
	for (k = i; k < j; k++) {
		if (ent[k].e_value == NULL || ent[k].e_value[0] == '\0')
			continue;
		len += (n++ > 0 ? strlen(sep) : 0) + strlen(ent[k].e_value);
	}
	return len;
}

/* Writes the run's value (see run_len) at s, NUL-ended; returns its end. */
static char *
run_copy(char *s, const struct env_ent *ent, size_t i, size_t j)
{
	const char	*sep = list_sep(ent[i].e_name);
	size_t		 k, l, n = 0;

	if (sep == NULL)
		i = j - 1;
	for (k = i; k < j; k++) {
		if (ent[k].e_value == NULL || (sep != NULL &&
		    ent[k].e_value[0] == '\0'))
			continue;
		if (n++ > 0) {
			memcpy(s, sep, strlen(sep));
			s += strlen(sep);
		}
		memcpy(s, ent[k].e_value, l = strlen(ent[k].e_value));
		s += l;
	}
	*s = '\0';
	return s + 1;
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
	size_t			 i, j, k, m = 0, total, nl, kept = 0;

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
	/*
	 * One variable a name: a client's header given more than once is
	 * its copies joined, in order; any other name is its last, unless
	 * that is a removal.  The runs' bounds are kept in e_order.
	 */
	total = sizeof(char *);
	for (i = 0; i < m; i = j) {
		for (j = i + 1; j < m && strcmp(ent[j].e_name,
		    ent[i].e_name) == 0; j++)
			;
		if (ent[j - 1].e_value == NULL)
			continue;
		total += sizeof(char *) + strlen(ent[i].e_name) + 2 +
		    run_len(ent, i, j);
		kept++;
	}
	if ((envp = malloc(total)) == NULL) {
		free(ent);
		return NULL;
	}
	s = (char *)(envp + kept + 1);
	for (i = 0, k = 0; i < m; i = j) {
		for (j = i + 1; j < m && strcmp(ent[j].e_name,
		    ent[i].e_name) == 0; j++)
			;
		if (ent[j - 1].e_value == NULL)
			continue;
		envp[k++] = s;
		nl = strlen(ent[i].e_name);
		memcpy(s, ent[i].e_name, nl);
		s[nl] = '=';
		s = run_copy(s + nl + 1, ent, i, j);
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
		if ((d = evfcgi_pct_decode(out, w, n)) == -1 || *out == '-')
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
