/*
 * multipart.h: the multipart/form-data parser (RFC 7578, RFC 2046 5.1)
 * under evfcgi_multipart_new(): a machine fed from an evbuffer, that
 * takes bytes only once it knows what they are, so a delimiter split at
 * any byte across feeds is found all the same, and that holds at most a
 * part's header block and the non-file fields' bytes (both capped).
 */
#ifndef MULTIPART_H
#define MULTIPART_H

#include <stddef.h>
#include <stdint.h>

#include "evfcgi.h"

struct evbuffer;

enum mp_state {
	MP_PREAMBLE,	/* before the first delimiter */
	MP_AFTER,	/* after a delimiter: "--", or padding and CRLF */
	MP_HEADERS,	/* a part's header block */
	MP_DATA,	/* a part's body */
	MP_EPILOGUE	/* after the close delimiter */
};

/* What mp_feed() came to. */
#define MP_MORE		0	/* took what it could: feed more */
#define MP_END		1	/* the close delimiter: the form is whole */
#define MP_PAUSED	2	/* a data callback paused it */

struct mp;

/* What the parser calls; each returns 0, EVFCGI_MP_PAUSE or a status. */
struct mp_ops {
	int	(*mo_part)(struct mp *, const struct evfcgi_part *);
	int	(*mo_data)(struct mp *, const struct evfcgi_part *,
		    const void *, size_t);
	int	(*mo_end)(struct mp *, const struct evfcgi_part *);
};

struct mp {
	enum mp_state		 m_state;
	const struct mp_ops	*m_ops;
	void			*m_ctx;		/* for the ops */
	struct evfcgi_multipart_limits m_lim;
	char			 m_delim[4 + 70 + 1];	/* CRLF "--" boundary */
	size_t			 m_dlen;
	int			 m_begun;	/* past the body's first bytes */
	size_t			 m_scanned;	/* header bytes searched */
	size_t			 m_pad;		/* padding after a delimiter */
	size_t			 m_parts;
	uint64_t		 m_field_bytes;	/* of non-file parts, all */
	char			*m_hdr;		/* the part's header block */
	struct evfcgi_part	 m_part;
	struct evbuffer		*m_field;	/* a non-file part's value */
};

/*
 * The boundary parameter of a Content-Type (NUL-ended into b, 71 bytes).
 * Returns its length, or -1 when ctype is not multipart/form-data or has
 * no valid boundary (1 to 70 bchars, not ending in a space).
 */
int	mp_boundary(const char *ctype, char *b);

/*
 * Readies m for boundary (from mp_boundary()) with lim (NULL: the
 * defaults; zero members take theirs).  Returns 0, or -1 (ENOMEM).
 */
int	mp_init(struct mp *m, const char *boundary, const struct mp_ops *ops,
	    void *ctx, const struct evfcgi_multipart_limits *lim);

/* Frees what m holds. */
void	mp_fini(struct mp *m);

/*
 * Takes from in what can be decided now, calling the ops.  Returns MP_MORE,
 * MP_END, MP_PAUSED (a data op returned EVFCGI_MP_PAUSE after taking its
 * bytes), or an HTTP status: 400 malformed (no CRLF after a delimiter, a
 * header line not ended by CRLF, no Content-Disposition form-data), 413
 * past a cap, or what an op returned.  Each call is linear in the bytes
 * it looks at: a byte is searched again only while it may begin a
 * delimiter.
 */
int	mp_feed(struct mp *m, struct evbuffer *in);

#endif /* MULTIPART_H */
