/*
 * http_parse.h: the client side of HTTP/1.1 as pure functions over bytes:
 * an http:// URL, and the one response framer (head, interim responses,
 * Content-Length, chunked and close-delimited bodies).
 *
 * Nothing here does I/O, allocates or exits; http_get and http_load share
 * it and tests/check_http_parse.c feeds it every truncated prefix and
 * every split.
 */
#ifndef HTTP_PARSE_H
#define HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define HTTP_URL_MAX	4096		/* longest URL accepted, exclusive */
#define HTTP_HEAD_MAX	65536		/* longest response head accepted */

struct http_url {
	char	 u_host[256];		/* without the brackets of an IPv6 literal */
	int	 u_port;
	int	 u_v6;			/* the host was a [V6] literal */
	char	 u_path[HTTP_URL_MAX + 2];	/* origin-form request target */
};

/* What is wrong with a URL; http_url_why() words it. */
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

/* Where a response stands; the order matters (busy < HF_DONE). */
enum http_frame_state {
	HF_HEAD,		/* reading a head (interim ones are skipped) */
	HF_LENGTH,		/* a Content-Length body */
	HF_CHUNKED,		/* a chunked body */
	HF_CLOSE,		/* a body the server ends by closing */
	HF_DONE,		/* complete: bytes after it are not consumed */
	HF_ERROR		/* malformed, hf_err says how */
};

enum http_frame_err {
	HF_OK = 0,
	HF_BAD_HEAD,		/* no "HTTP/1.x NNN"; bad Content-Length */
	HF_BIG_HEAD,		/* a head longer than HTTP_HEAD_MAX */
	HF_BAD_CHUNK		/* bad chunked framing */
};

/* A head being read; private to http_parse.c, zeroed for each head. */
struct http_scan {
	size_t		 hs_len;	/* bytes of this head so far */
	int		 hs_bad;	/* malformed, said at its end */
	int		 hs_eol;	/* 1 after LF, 2 after LF CR */
	int		 hs_body_line;	/* past the status line */
	size_t		 hs_col;	/* bytes of the current line so far */
	unsigned	 hs_cand;	/* header names the line may still be */
	int		 hs_hdr;	/* the header whose value this is */
	int		 hs_status;
	int		 hs_http10;
	int		 hs_keep;	/* Connection: keep-alive */
	int		 hs_close;	/* Connection: close */
	int		 hs_chunked;
	int64_t		 hs_clen;	/* -1: absent */
	int		 hs_clstate;	/* the Content-Length value, by byte */
	uint64_t	 hs_clval;
	unsigned	 hs_m1, hs_m2;	/* bytes of "chunked", "close" and */
					/* "keep-alive" matched */
};

/*
 * One response on its way in; http_frame_init() starts it.  hf_state to
 * hf_body are the result, the head's fields valid once hf_state is past
 * HF_HEAD (hf_status stays 0 until then).
 */
struct http_frame {
	enum http_frame_state	 hf_state;
	enum http_frame_err	 hf_err;
	int			 hf_status;
	int64_t			 hf_clen;	/* -1: absent */
	int			 hf_chunked;
	int			 hf_close;	/* the server will not keep the
						   connection */
	uint64_t		 hf_body;	/* body bytes so far */
	int			 hf_nobody;	/* answers a HEAD request */
	struct http_scan	 hf_scan;
	struct chunk		 hf_chunk;
};

enum http_url_err http_url_parse(const char *, struct http_url *);
const char	*http_url_why(enum http_url_err);
void		 http_host_header(const struct http_url *, char *, size_t);
void		 http_frame_init(struct http_frame *, int);
size_t		 http_frame_step(struct http_frame *, const char *, size_t,
		    size_t *);
size_t		 http_frame_feed(struct http_frame *, const char *, size_t,
		    void (*)(void *, const char *, size_t), void *);
int		 http_frame_eof(struct http_frame *);
int		 chunk_step(struct chunk *, const char *, size_t, size_t *);

#endif /* HTTP_PARSE_H */
