/*
 * router.c: route patterns, compiled and matched.  A path is split into
 * segments first and each segment decoded after (rseg_split_raw()), so an
 * escaped '/' is data inside its segment, never a separator; a pattern
 * then matches segment by segment, in time linear in the segments.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "router.h"

static int	rpat_name_ok(const char *, size_t);

int
rpat_is(const char *path)
{
	return strchr(path, '{') != NULL;
}

/* A parameter's name: letters, digits and '_', at least one. */
static int
rpat_name_ok(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0)
		return 0;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

int
rpat_compile(const char *pattern, struct rpat *pat)
{
	const char	*c;
	char		*s, *end;
	size_t		 n = 1, i, j, len;
	struct rpat_seg	*sg;

	memset(pat, 0, sizeof(*pat));
	if (pattern[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	for (c = pattern + 1; *c != '\0'; c++)
		n += *c == '/';
	if (n > RPAT_MAX_SEGS) {
		errno = EINVAL;
		return -1;
	}
	if ((pat->p_text = strdup(pattern + 1)) == NULL ||
	    (pat->p_segs = calloc(n, sizeof(*pat->p_segs))) == NULL) {
		rpat_free(pat);
		errno = ENOMEM;
		return -1;
	}
	pat->p_nsegs = n;
	s = pat->p_text;
	for (i = 0; i < n; i++, s = end + 1) {
		sg = &pat->p_segs[i];
		end = s + strcspn(s, "/");
		len = (size_t)(end - s);
		if (len >= 2 && s[0] == '{' && s[len - 1] == '}') {
			sg->s = s + 1;
			sg->len = len - 2;
			sg->k = RK_PARAM;
			if (sg->len > 3 && memcmp(s + len - 4, "...", 3) == 0) {
				sg->k = RK_REST;
				sg->len -= 3;
			}
			if (!rpat_name_ok(sg->s, sg->len) ||
			    (sg->k == RK_REST && i + 1 != n))
				goto bad;
			s[1 + sg->len] = '\0';
			pat->p_nparams++;
		} else {
			if (memchr(s, '{', len) != NULL ||
			    memchr(s, '}', len) != NULL)
				goto bad;
			sg->s = s;
			sg->len = len;
			sg->k = RK_LIT;
		}
		*end = '\0';
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (pat->p_segs[i].k != RK_LIT &&
			    pat->p_segs[j].k != RK_LIT &&
			    strcmp(pat->p_segs[i].s, pat->p_segs[j].s) == 0)
				goto bad;
	return 0;
bad:
	rpat_free(pat);
	errno = EINVAL;
	return -1;
}

void
rpat_free(struct rpat *pat)
{
	free(pat->p_text);
	free(pat->p_segs);
	memset(pat, 0, sizeof(*pat));
}

int
rseg_split(const char *path, struct rseg *segs, size_t max)
{
	const char	*s, *end;
	size_t		 n = 0;

	if (path[0] != '/')
		return -1;
	for (s = path + 1;; s = end + 1) {
		end = s + strcspn(s, "/");
		if (n == max)
			return -1;
		segs[n].s = s;
		segs[n++].len = (size_t)(end - s);
		if (*end == '\0')
			break;
	}
	return (int)n;
}

int
rseg_split_raw(const char *raw, size_t len, char *mem, struct rseg *segs,
    size_t max)
{
	const char	*s, *end, *stop = raw + len;
	char		*o = mem;
	size_t		 n = 0, k;
	long		 d;
	int		 last;

	if (len == 0 || raw[0] != '/')
		return -1;
	for (s = raw + 1;; s = end + 1) {
		end = memchr(s, '/', (size_t)(stop - s));
		last = end == NULL;
		if (last)
			end = stop;
		if ((d = req_pct_decode(o, s, (size_t)(end - s))) == -1)
			return -1;
		k = (size_t)d;
		if (k == 2 && o[0] == '.' && o[1] == '.') {
			if (n == 0)
				return -1;
			o = mem + (segs[--n].s - mem);
			if (last) {
				segs[n].s = o;
				segs[n++].len = 0;
			}
		} else if ((k == 0 || (k == 1 && o[0] == '.')) && !last)
			continue;
		else {
			if (n == max)
				return -1;
			if (k == 1 && o[0] == '.')
				k = 0;
			segs[n].s = o;
			segs[n++].len = k;
			o += k;
			*o++ = '/';
		}
		if (last)
			break;
	}
	/* Each segment ended with '/': the last one's becomes the NUL. */
	if (n > 0 && segs[n - 1].s + segs[n - 1].len < o)
		o[-1] = '\0';
	else
		*o = '\0';
	return (int)n;
}

int
rpat_match(const struct rpat *pat, const struct rseg *segs, int n,
    struct rseg *vals)
{
	const struct rpat_seg	*p;
	const struct rseg	*last;
	size_t			 i, v = 0;

	if (n <= 0 || (size_t)n < pat->p_nsegs)
		return 0;
	for (i = 0; i < pat->p_nsegs; i++) {
		p = &pat->p_segs[i];
		if (p->k == RK_REST) {
			if (vals != NULL) {
				last = &segs[n - 1];
				vals[v].s = segs[i].s;
				vals[v].len = (size_t)(last->s + last->len -
				    segs[i].s);
			}
			return 1;
		}
		if (p->k == RK_LIT ? (p->len != segs[i].len ||
		    memcmp(p->s, segs[i].s, p->len) != 0) : segs[i].len == 0)
			return 0;
		if (p->k == RK_PARAM && vals != NULL)
			vals[v++] = segs[i];
	}
	return (size_t)n == pat->p_nsegs;
}

int
rpat_cmp(const struct rpat *a, const struct rpat *b)
{
	size_t	 i;

	for (i = 0; i < a->p_nsegs && i < b->p_nsegs; i++)
		if (a->p_segs[i].k != b->p_segs[i].k)
			return (int)a->p_segs[i].k - (int)b->p_segs[i].k;
	return (a->p_nsegs > b->p_nsegs) - (a->p_nsegs < b->p_nsegs);
}

size_t
rpat_lead(const struct rpat *pat)
{
	size_t	 i;

	for (i = 0; i < pat->p_nsegs && pat->p_segs[i].k == RK_LIT; i++)
		;
	return i;
}

int
rpat_param(const struct rpat *pat, const char *name)
{
	size_t	 i;
	int	 v = 0;

	for (i = 0; i < pat->p_nsegs; i++) {
		if (pat->p_segs[i].k == RK_LIT)
			continue;
		if (strcmp(pat->p_segs[i].s, name) == 0)
			return v;
		v++;
	}
	return -1;
}

const char *
rpat_param_name(const struct rpat *pat, size_t i)
{
	size_t	 k;

	for (k = 0; k < pat->p_nsegs; k++)
		if (pat->p_segs[k].k != RK_LIT && i-- == 0)
			return pat->p_segs[k].s;
	return NULL;
}
