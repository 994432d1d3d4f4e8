/*
 * fuzz_router.c: libFuzzer target for route patterns.  The input's first
 * line is a pattern, the rest a raw path.  The pattern compiles or is
 * refused; the path splits (each segment decoded) or is refused; a match's
 * values must lie inside the split path, and specificity must order a
 * pattern equal to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "router.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const uint8_t	*nl = memchr(data, '\n', len);
	struct rseg	 segs[RPAT_MAX_SEGS], vals[RPAT_MAX_SEGS];
	struct rpat	 pat;
	char		*text, *mem;
	size_t		 plen, rlen, i;
	int		 n, have;

	if (nl == NULL)
		return 0;
	plen = (size_t)(nl - data);
	rlen = len - plen - 1;
	/* REQUEST_URI is a C string: up to its first NUL. */
	if (memchr(nl + 1, '\0', rlen) != NULL)
		rlen = (size_t)((const uint8_t *)memchr(nl + 1, '\0', rlen) -
		    (nl + 1));
	if ((text = malloc(plen + 1)) == NULL ||
	    (mem = malloc(rlen + 1)) == NULL)
		abort();
	memcpy(text, data, plen);
	text[plen] = '\0';
	have = strlen(text) == plen && rpat_compile(text, &pat) == 0;
	n = rseg_split_raw((const char *)nl + 1, rlen, mem, segs,
	    RPAT_MAX_SEGS);
	if (n > 0 && strlen(mem) > rlen)
		abort();
	if (have) {
		if (rpat_cmp(&pat, &pat) != 0 || pat.p_nparams > pat.p_nsegs)
			abort();
		if (n > 0 && rpat_match(&pat, segs, n, vals)) {
			for (i = 0; i < pat.p_nparams; i++)
				if (vals[i].s < mem ||
				    vals[i].s + vals[i].len > mem + rlen)
					abort();
		}
		rpat_free(&pat);
	}
	/* Without escapes, the cleaned path splits the same again. */
	if (n > 0 && memchr(nl + 1, '%', rlen) == NULL) {
		free(text);
		if ((text = malloc(strlen(mem) + 2)) == NULL)
			abort();
		text[0] = '/';
		strcpy(text + 1, mem);
		if (rseg_split(text, segs, RPAT_MAX_SEGS) != n)
			abort();
	}
	free(text);
	free(mem);
	return 0;
}
