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
		if (inet_pton(AF_INET, word, a->aa_bytes) == 1)
			a->aa_family = AF_INET;
		else if (inet_pton(AF_INET6, word, a->aa_bytes) == 1)
			a->aa_family = AF_INET6;
		else
			goto bad;
		al->al_n++;
		if (*end == '\0')
			return 0;
		p = end + 1;
	}
bad:
	snprintf(err, errlen, "'%.*s' is not an IPv4 or IPv6 address",
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
	size_t				 i, blen;
	int				 fam;

	if (al->al_n == 0)
		return 1;
	if (sa->sa_family == AF_INET) {
		fam = AF_INET;
		b = (const unsigned char *)
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		blen = 4;
	} else if (sa->sa_family == AF_INET6) {
		fam = AF_INET6;
		b = (const unsigned char *)
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		blen = 16;
		if (memcmp(b, mapped, sizeof(mapped)) == 0) {
			fam = AF_INET;
			b += 12;
			blen = 4;
		}
	} else
		return 1;
	for (i = 0; i < al->al_n; i++)
		if (al->al_addrs[i].aa_family == fam &&
		    memcmp(al->al_addrs[i].aa_bytes, b, blen) == 0)
			return 1;
	return 0;
}
