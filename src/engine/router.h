/*
 * router.h: route patterns ("/files/{name}", "/static/{rest...}") as pure
 * functions over paths: compiled once at registration, matched against a
 * path split into segments.  No I/O; nothing allocated while matching.
 */
#ifndef ROUTER_H
#define ROUTER_H

#include <stddef.h>

#define RPAT_MAX_SEGS	64	/* a path of more segments matches no
				   pattern */

/* One segment of a path: len bytes at s, not NUL-ended. */
struct rseg {
	const char	*s;
	size_t		 len;
};

/* What a pattern's segment is, the more specific the larger. */
enum rkind {
	RK_REST = 0,	/* {name...}: the rest, last only */
	RK_PARAM = 1,	/* {name}: one non-empty segment */
	RK_LIT = 2	/* the same bytes */
};

struct rpat_seg {
	enum rkind	 k;
	const char	*s;	/* the literal, or the parameter's name */
	size_t		 len;
};

struct rpat {
	char		*p_text;	/* the segments' bytes, NUL-ended */
	struct rpat_seg	*p_segs;
	size_t		 p_nsegs;
	size_t		 p_nparams;
};

/* Whether path is a pattern: it holds a '{'. */
int	rpat_is(const char *path);

/*
 * Compiles pattern (begins with '/'; segments split by '/'; a segment is
 * "{name}", "{name...}" as the last one only, or a literal without '{' or
 * '}'; names are letters, digits and '_', each once).  Returns 0 with
 * *pat filled (freed by rpat_free()), or -1 (errno EINVAL, or ENOMEM).
 */
int	rpat_compile(const char *pattern, struct rpat *pat);

void	rpat_free(struct rpat *pat);

/*
 * Splits a decoded path that begins with '/' into segments, pointing into
 * path: "/" is one empty segment, a trailing '/' ends with one.  Returns
 * the count, or -1 when path does not begin with '/' or has more than
 * max segments.
 */
int	rseg_split(const char *path, struct rseg *segs, size_t max);

/*
 * Splits the raw path (len bytes, %XX escapes undecoded) at its '/' bytes,
 * then decodes each segment into mem (room for len + 1 bytes), so that %2F
 * stays inside its segment; empty segments (but a last one) and "." are
 * dropped, ".." takes the segment before it away (after decoding, as
 * nginx resolves "%2e%2e").  In mem the segments follow each other, one
 * '/' between two, NUL-ended.  Returns the count, or -1 for a malformed
 * escape, %00, a ".." above the root, no leading '/' or more than max.
 */
int	rseg_split_raw(const char *raw, size_t len, char *mem,
	    struct rseg *segs, size_t max);

/*
 * Whether pat matches the n segments: literals byte for byte, {name} one
 * non-empty segment, {name...} one or more (the last may be empty).  On a
 * match, vals (pat->p_nparams of them, may be NULL) get each parameter's
 * value in order: a {name...} value runs from its first segment to the end
 * of the last, so the segments must follow each other in memory one byte
 * apart (as both split functions leave them).  Returns 1 or 0.
 */
int	rpat_match(const struct rpat *pat, const struct rseg *segs, int n,
	    struct rseg *vals);

/*
 * Orders two patterns by how specific they are, segment by segment from
 * the left (a literal before {name} before {name...}), then the longer.
 * Returns > 0 when a is more specific, < 0 when b is, 0 when alike.
 */
int	rpat_cmp(const struct rpat *a, const struct rpat *b);

/*
 * The literal segments pat begins with: a prefix route of as many whole
 * segments ("/a/b/" has 2) is as specific as "/a/b/{rest...}".
 */
size_t	rpat_lead(const struct rpat *pat);

/* The index of parameter name among pat's, or -1. */
int	rpat_param(const struct rpat *pat, const char *name);

/* The name of parameter i (0 .. p_nparams - 1). */
const char *rpat_param_name(const struct rpat *pat, size_t i);

#endif /* ROUTER_H */
