/*
 * cgi_env.c: a CGI program's environment (RFC 3875 4.1) from the web
 * server's params, as fcgiwrap passes them, and nothing of the daemon's
 * own but a safe PATH.  One allocation: the pointer array, then the
 * strings.
 */
#include <sys/types.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgi.h"

/* A name with where it came from: a later one replaces an earlier. */
struct env_ent {
	const char	*e_name;
	const char	*e_value;	/* NULL: removed */
	size_t		 e_order;
};

static int	ent_cmp(const void *, const void *);
static int	name_ok(const char *);

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
