/*
 * allow.h: the peers a server accepts, libfcgi's FCGI_WEB_SERVER_ADDRS
 * semantics, with prefixes: a comma-separated list of IPv4 and IPv6
 * addresses, each alone or as a prefix (10.0.0.0/8, fd00::/8).  A pure
 * parser and matcher: no I/O, no logging.
 */
#ifndef ALLOW_H
#define ALLOW_H

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>

#include <stddef.h>

struct allow_addr {
	int		 aa_family;	/* AF_INET or AF_INET6 */
	unsigned char	 aa_bytes[16];	/* 4 or 16 in network order */
	unsigned	 aa_bits;	/* prefix length: 32 or 128 is exact */
};

struct allow {
	struct allow_addr	*al_addrs;
	size_t			 al_n;
};

/*
 * Parses list ("ADDR[/BITS][,ADDR[/BITS]...]", blanks around each allowed)
 * into al; the bits of an address beyond its prefix are ignored.
 * Returns 0, or -1 with a message in err naming the bad entry (al then
 * holds nothing).  al_addrs is allocated: allow_free() lets it go.
 */
int	allow_parse(struct allow *al, const char *list, char *err,
	    size_t errlen);

/* Frees what allow_parse() allocated; al holds nothing after. */
void	allow_free(struct allow *al);

/*
 * Whether the peer sa may connect: 1 when al is empty, sa is not an IP
 * address (unix sockets are not filtered) or sa is in one of the list's
 * prefixes (an IPv4-mapped IPv6 peer matches as its IPv4 address); 0
 * otherwise.
 */
int	allow_match(const struct allow *al, const struct sockaddr *sa);

#endif /* ALLOW_H */
