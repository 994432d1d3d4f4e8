/*
 * http_parse.h: the client side of HTTP/1.1 as pure functions over bytes:
 * an http:// URL, a response head and the chunked transfer coding.
 *
 * Nothing here does I/O, allocates or exits; http_get and http_load share
 * it and tests/check_http_parse.c feeds it every truncated prefix.
 */
#ifndef HTTP_PARSE_H
#define HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_URL_MAX	4096		/* longest URL accepted, exclusive */

struct http_url {
	char	 u_host[256];		/* without the brackets of an IPv6 literal */
	int	 u_port;
	int	 u_v6;			/* the host was a [V6] literal */
	char	 u_path[HTTP_URL_MAX + 2];	/* origin-form request target */
};

/* What is wrong with a URL; each tool words the reasons its own way. */
enum http_url_err {
	URL_OK = 0,
	URL_TOO_LONG,		/* HTTP_URL_MAX characters or more */
	URL_SPACE,		/* white space or control characters */
	URL_SCHEME,		/* not http:// */
	URL_BRACKET,		/* unterminated [IPv6] host */
	URL_HOST,		/* empty or too long host */
	URL_USERINFO,		/* user@ before the host */
	URL_PORT,		/* port not in 1..65535 */
	URL_JUNK		/* something else after the host */
};

struct http_head {
	int		 h_status;
	int64_t		 h_clen;	/* -1: absent */
	int		 h_chunked;
	int		 h_close;	/* the server will not keep the connection */
};

/* Incremental chunked transfer-coding decoder; zeroed to start. */
enum chunk_state {
	CH_SIZE,		/* hex digits of a chunk size */
	CH_EXT,			/* chunk extension, skipped to LF */
	CH_DATA,		/* ch_left data bytes to go */
	CH_DATA_END,		/* CRLF after data */
	CH_TRAILER_BOL,		/* start of a trailer line (empty: done) */
	CH_TRAILER,		/* inside a trailer line */
	CH_DONE
};

struct chunk {
	enum chunk_state	 ch_state;
	uint64_t		 ch_left;
	int			 ch_digits;
};

enum http_url_err http_url_parse(const char *, struct http_url *);
void		 http_host_header(const struct http_url *, char *, size_t);
size_t		 head_end(const char *, size_t);
int		 head_parse(const char *, size_t, struct http_head *);
int		 chunk_step(struct chunk *, const char *, size_t, size_t *);

#endif /* HTTP_PARSE_H */
