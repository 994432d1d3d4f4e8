/*
 * fcgi_out.c: FastCGI records onto an evbuffer.  Content is aligned to 8
 * bytes: records carry at most FCGI_MAX_ALIGNED bytes and are padded.
 */
#include <sys/types.h>

#include <string.h>

#include <event2/buffer.h>

#include "fcgi_out.h"
#include "fcgi_proto.h"

enum how {
	HOW_COPY,
	HOW_REF,
	HOW_MOVE
};

/*
 * A record whose content is at most this long is copied with its header
 * and padding into one chain, in one commit: a /hello's records cost
 * three commits (and three runs of the output callbacks) instead of seven.
 */
#define OUT_WHOLE_MAX	4096

static int	out_stream(struct evbuffer *, uint16_t, enum how,
		    const uint8_t *, struct evbuffer *, size_t);
static int	out_whole(struct evbuffer *, uint8_t, uint16_t, const void *,
		    size_t);

static const uint8_t	zeros[8];

/*
 * evbuffer_add sizes a new chain after the last chain holding data, so
 * behind a 64 KiB slice added by reference it would allocate 64 KiB to hold
 * 8 bytes: about 8 MiB of malloc churn for one 8 MiB response, which glibc
 * trims and takes back by brk at every request.  evbuffer_reserve_space
 * makes a chain only as large as what is asked (libevent's minimum, 1 KiB).
 */
int
fcgi_out_small(struct evbuffer *out, const void *p, size_t len)
{
	struct evbuffer_iovec	 v;

	if (evbuffer_reserve_space(out, (ev_ssize_t)len, &v, 1) < 1)
		return evbuffer_add(out, p, len);
	memcpy(v.iov_base, p, len);
	v.iov_len = len;
	return evbuffer_commit_space(out, &v, 1);
}

/*
 * One record of at most OUT_WHOLE_MAX bytes of content, header, content
 * and padding copied into one reserved extent.
 */
static int
out_whole(struct evbuffer *out, uint8_t type, uint16_t id, const void *data,
    size_t len)
{
	struct evbuffer_iovec	 v;
	uint8_t			 pad = fcgi_padding(len), *p;
	size_t			 total = FCGI_HEADER_LEN + len + pad;

	if (evbuffer_reserve_space(out, (ev_ssize_t)total, &v, 1) < 1)
		return -1;
	p = v.iov_base;
	fcgi_header_encode(p, type, id, (uint16_t)len, pad);
	if (len > 0)
		memcpy(p + FCGI_HEADER_LEN, data, len);
	memset(p + FCGI_HEADER_LEN + len, 0, pad);
	v.iov_len = total;
	return evbuffer_commit_space(out, &v, 1);
}

int
fcgi_out_record(struct evbuffer *out, uint8_t type, uint16_t id,
    const void *data, size_t len)
{
	uint8_t	 hdr[FCGI_HEADER_LEN];
	uint8_t	 pad = fcgi_padding(len);

	if (len > FCGI_MAX_CONTENT)
		return -1;
	if (len <= OUT_WHOLE_MAX)
		return out_whole(out, type, id, data, len);
	fcgi_header_encode(hdr, type, id, (uint16_t)len, pad);
	if (fcgi_out_small(out, hdr, sizeof(hdr)) == -1 ||
	    (len > 0 && evbuffer_add(out, data, len) == -1) ||
	    (pad > 0 && fcgi_out_small(out, zeros, pad) == -1))
		return -1;
	return 0;
}

/*
 * The one framing loop: len bytes from p (copied or by reference) or from
 * src (moved), in aligned STDOUT records.  0, or -1 when out could not grow.
 */
static int
out_stream(struct evbuffer *out, uint16_t id, enum how how, const uint8_t *p,
    struct evbuffer *src, size_t len)
{
	uint8_t	 hdr[FCGI_HEADER_LEN], pad;
	size_t	 n;
	int	 rc;

	while (len > 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		if (how == HOW_COPY && n <= OUT_WHOLE_MAX)
			rc = out_whole(out, FCGI_STDOUT, id, p, n);
		else {
			pad = fcgi_padding(n);
			fcgi_header_encode(hdr, FCGI_STDOUT, id, (uint16_t)n,
			    pad);
			if (fcgi_out_small(out, hdr, sizeof(hdr)) == -1)
				return -1;
			if (how == HOW_COPY)
				rc = evbuffer_add(out, p, n);
			else if (how == HOW_REF)
				rc = evbuffer_add_reference(out, p, n, NULL,
				    NULL);
			else
				rc = evbuffer_remove_buffer(src, out, n) ==
				    (int)n ? 0 : -1;
			if (rc == 0 && pad > 0)
				rc = fcgi_out_small(out, zeros, pad);
		}
		if (rc == -1)
			return -1;
		if (p != NULL)
			p += n;
		len -= n;
	}
	return 0;
}

int
fcgi_out_stdout_copy(struct evbuffer *out, uint16_t id, const void *data,
    size_t len)
{
	return out_stream(out, id, HOW_COPY, data, NULL, len);
}

int
fcgi_out_stdout_ref(struct evbuffer *out, uint16_t id, const void *data,
    size_t len)
{
	return out_stream(out, id, HOW_REF, data, NULL, len);
}

int
fcgi_out_stdout_move(struct evbuffer *out, uint16_t id, struct evbuffer *src,
    size_t len)
{
	if (len > evbuffer_get_length(src))
		return -1;
	return out_stream(out, id, HOW_MOVE, NULL, src, len);
}

int
fcgi_out_finish(struct evbuffer *out, uint16_t id)
{
	uint8_t	 rec[FCGI_HEADER_LEN + 16];

	/* One small chain for both: they usually leave in one write. */
	fcgi_header_encode(rec, FCGI_STDOUT, id, 0, 0);
	fcgi_end_encode(rec + FCGI_HEADER_LEN, id, 0, FCGI_REQUEST_COMPLETE);
	return fcgi_out_small(out, rec, sizeof(rec));
}

int
fcgi_out_end_request(struct evbuffer *out, uint16_t id,
    uint8_t protocol_status)
{
	uint8_t	 rec[16];

	fcgi_end_encode(rec, id, 0, protocol_status);
	return fcgi_out_small(out, rec, sizeof(rec));
}

int
fcgi_out_unknown_type(struct evbuffer *out, uint8_t type)
{
	uint8_t	 rec[16];

	fcgi_unknown_type_encode(rec, type);
	return fcgi_out_small(out, rec, sizeof(rec));
}
