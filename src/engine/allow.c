/*
 * allow.c: the list of peers a server accepts (see allow.h).
 */
#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allow.h"

#define ALLOW_ENTRY_MAX	64	/* entry text: INET6_ADDRSTRLEN and more */

static int	entry_parse(struct allow_addr *, char *);
static int	prefix_match(const unsigned char *, const unsigned char *,
		    unsigned);

/*
 * Parses word ("ADDR" or "ADDR/BITS", modified) into a.  Returns 0, or -1
 * when it is neither.
 */
static int
entry_parse(struct allow_addr *a, char *word)
{
	char		*slash, *end;
	unsigned long	 bits;
	unsigned	 max;

	if ((slash = strchr(word, '/')) != NULL)
		*slash++ = '\0';
	if (inet_pton(AF_INET, word, a->aa_bytes) == 1) {
		a->aa_family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, word, a->aa_bytes) == 1) {
		a->aa_family = AF_INET6;
		max = 128;
	} else
		return -1;
	a->aa_bits = max;
	if (slash == NULL)
		return 0;
	if (*slash < '0' || *slash > '9' || strlen(slash) > 3)
		return -1;
	bits = strtoul(slash, &end, 10);
	if (*end != '\0' || bits > max)
		return -1;
	a->aa_bits = (unsigned)bits;
	return 0;
}

/* Whether the first bits of a and b are the same. */
static int
prefix_match(const unsigned char *a, const unsigned char *b, unsigned bits)
{
	unsigned	 whole = bits / 8, rest = bits % 8;
	unsigned char	 mask;

	if (memcmp(a, b, whole) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (unsigned char)(0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

int
allow_parse(struct allow *al, const char *list, char *err, size_t errlen)
{
	struct allow_addr	*a;
	const char		*p = list, *e, *end;
	char			 word[ALLOW_ENTRY_MAX];
	size_t			 n = 1, len;

	memset(al, 0, sizeof(*al));
	for (e = list; *e != '\0'; e++)
		if (*e == ',')
			n++;
	if ((al->al_addrs = calloc(n, sizeof(*a))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (;;) {
		if ((end = strchr(p, ',')) == NULL)
			end = p + strlen(p);
		for (e = end; e > p && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		len = (size_t)(e - p);
		if (len == 0 || len >= sizeof(word))
			goto bad;
		memcpy(word, p, len);
		word[len] = '\0';
		a = &al->al_addrs[al->al_n];
		if (entry_parse(a, word) == -1)
			goto bad;
		al->al_n++;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
bad:
	snprintf(err, errlen, "'%.*s' is not an IPv4 or IPv6 address "
	    "or prefix (ADDR/BITS)",
	    (int)(e - p < 64 ? e - p : 64), p);
	allow_free(al);
	return -1;
}

void
allow_free(struct allow *al)
{
	free(al->al_addrs);
	al->al_addrs = NULL;
	al->al_n = 0;
}

int
allow_match(const struct allow *al, const struct sockaddr *sa)
{
	static const unsigned char	 mapped[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const unsigned char		*b;
	size_t				 i;
	int				 fam;

	if (al->al_n == 0)
		return 1;
	if (sa->sa_family == AF_INET) {
		fam = AF_INET;
		b = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
	} else if (sa->sa_family == AF_INET6) {
		fam = AF_INET6;
		b = (const unsigned char *)
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (memcmp(b, mapped, sizeof(mapped)) == 0) {
			fam = AF_INET;
			b += 12;
		}
	} else
		return 1;
	for (i = 0; i < al->al_n; i++)
		if (al->al_addrs[i].aa_family == fam &&
		    prefix_match(al->al_addrs[i].aa_bytes, b,
		    al->al_addrs[i].aa_bits))
			return 1;
	return 0;
}
