/*
 * fcgi_out.c: FastCGI records onto a connection's output, its stage or
 * its queue.  Content is aligned to 8 bytes: records carry at most
 * FCGI_MAX_ALIGNED bytes and are padded.
 */
#include <sys/types.h>

#include <stdint.h>
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

/*
 * Copies are packed (queue_copy): into what the last chain has left, then
 * new chains of at most OUT_PIECE bytes, which libevent allocates as 8 KiB
 * with its chain header inside.  evbuffer_add sized a new chain to a power
 * of two over the whole copy and its header: 32 KiB for a 16 KiB copy, and
 * a slow reader's queue of a share of 23 KiB spanned two of them, 64 KiB of
 * heap.  Blocks of the copy's size added by reference cost a 1 KiB chain
 * each besides.  Now a queue takes its bytes, what its first chain has
 * sent already (4 KiB on average) and the last chain's room.  With
 * fo_small (a slow reader's queue in a spike, when its share is a few
 * KiB) the chains are 4 KiB and that slack half: 3 KiB of evfcgid's RSS
 * a reader at 10,000 of them, for about a tenth more processor a byte
 * copied.
 */
#define OUT_PIECE	(8192 - 64)
#define OUT_PIECE_SMALL	(4096 - 64)

static int	out_stream(struct fcgi_out *, uint16_t, enum how,
		    const uint8_t *, struct evbuffer *, size_t);
static int	out_whole(struct fcgi_out *, uint8_t, uint16_t, const void *,
		    size_t);
static int	out_copy(struct fcgi_out *, const void *, size_t);
static int	out_ref(struct fcgi_out *, const void *, size_t);
static uint8_t	*out_reserve(struct fcgi_out *, size_t,
		    struct evbuffer_iovec *);
static int	out_commit(struct fcgi_out *, size_t, struct evbuffer_iovec *);
static int	queue_copy(const struct fcgi_out *, const void *, size_t);
static int	stage_copied(const struct fcgi_stage *, const void *);
static struct iovec *stage_copy_tail(struct fcgi_stage *);

static const uint8_t	zeros[8];

void
fcgi_out_stage(struct fcgi_out *o, struct fcgi_stage *st, size_t cap)
{
	st->fs_niov = 0;
	st->fs_len = 0;
	st->fs_used = 0;
	st->fs_cap = cap;
	o->fo_stage = st;
}

int
fcgi_out_spill(struct fcgi_out *o, size_t skip)
{
	struct fcgi_stage	*st = o->fo_stage;
	const uint8_t		*p;
	size_t			 n;
	int			 i, rc = 0;

	if (st == NULL)
		return 0;
	o->fo_stage = NULL;
	for (i = 0; i < st->fs_niov && rc == 0; i++) {
		n = st->fs_iov[i].iov_len;
		if (skip >= n) {
			skip -= n;
			continue;
		}
		p = (const uint8_t *)st->fs_iov[i].iov_base + skip;
		n -= skip;
		skip = 0;
		if (stage_copied(st, p))
			rc = queue_copy(o, p, n);
		else
			rc = evbuffer_add_reference(o->fo_queue, p, n, NULL,
			    NULL);
	}
	return rc;
}

size_t
fcgi_out_len(const struct fcgi_out *o)
{
	return evbuffer_get_length(o->fo_queue) +
	    (o->fo_stage != NULL ? o->fo_stage->fs_len : 0);
}

struct evbuffer *
fcgi_out_queue(struct fcgi_out *o)
{
	return fcgi_out_spill(o, 0) == -1 ? NULL : o->fo_queue;
}

/* Whether p lies in st's scratch (a copy), not elsewhere (a reference). */
static int
stage_copied(const struct fcgi_stage *st, const void *p)
{
	const uint8_t	*b = p;

	return b >= st->fs_buf && b < st->fs_buf + sizeof(st->fs_buf);
}

/* st's last extent when it is a copy (a new copy extends it), or NULL. */
static struct iovec *
stage_copy_tail(struct fcgi_stage *st)
{
	struct iovec	*last;

	if (st->fs_niov == 0)
		return NULL;
	last = &st->fs_iov[st->fs_niov - 1];
	return stage_copied(st, last->iov_base) ? last : NULL;
}

/*
 * n bytes of room in o: in its stage, else (the stage spilled) reserved in
 * its queue with v.  NULL when the queue could not grow.
 */
static uint8_t *
out_reserve(struct fcgi_out *o, size_t n, struct evbuffer_iovec *v)
{
	struct fcgi_stage	*st = o->fo_stage;

	if (st != NULL) {
		if (n <= sizeof(st->fs_buf) - st->fs_used &&
		    n <= st->fs_cap - st->fs_len &&
		    (stage_copy_tail(st) != NULL ||
		    st->fs_niov < FCGI_STAGE_IOV))
			return st->fs_buf + st->fs_used;
		if (fcgi_out_spill(o, 0) == -1)
			return NULL;
	}
	if (evbuffer_reserve_space(o->fo_queue, (ev_ssize_t)n, v, 1) < 1)
		return NULL;
	return v->iov_base;
}

/* The n bytes written at out_reserve()'s room are output now. */
static int
out_commit(struct fcgi_out *o, size_t n, struct evbuffer_iovec *v)
{
	struct fcgi_stage	*st = o->fo_stage;
	struct iovec		*last;

	if (st == NULL) {
		v->iov_len = n;
		return evbuffer_commit_space(o->fo_queue, v, 1);
	}
	/* Copies made one after another are one extent. */
	if ((last = stage_copy_tail(st)) != NULL)
		last->iov_len += n;
	else
		st->fs_iov[st->fs_niov++] = (struct iovec){
			.iov_base = st->fs_buf + st->fs_used, .iov_len = n };
	st->fs_used += n;
	st->fs_len += n;
	return 0;
}

/* A copy of len bytes: staged if they fit, else added to the queue. */
static int
out_copy(struct fcgi_out *o, const void *p, size_t len)
{
	struct evbuffer_iovec	 v;
	uint8_t			*dst;

	if (o->fo_stage != NULL && len <= sizeof(o->fo_stage->fs_buf)) {
		if ((dst = out_reserve(o, len, &v)) == NULL)
			return -1;
		memcpy(dst, p, len);
		return out_commit(o, len, &v);
	}
	if (fcgi_out_spill(o, 0) == -1)
		return -1;
	return queue_copy(o, p, len);
}

/* len bytes by reference: an extent of the stage, else a queue chain. */
static int
out_ref(struct fcgi_out *o, const void *p, size_t len)
{
	struct fcgi_stage	*st = o->fo_stage;

	if (st != NULL && st->fs_niov < FCGI_STAGE_IOV &&
	    len <= st->fs_cap - st->fs_len) {
		st->fs_iov[st->fs_niov++] = (struct iovec){
			.iov_base = (void *)(uintptr_t)p, .iov_len = len };
		st->fs_len += len;
		return 0;
	}
	if (fcgi_out_spill(o, 0) == -1)
		return -1;
	return evbuffer_add_reference(o->fo_queue, p, len, NULL, NULL);
}

/*
 * A copy of len bytes onto o's queue, packed (see OUT_PIECE).  Not
 * evbuffer_add: it sizes a new chain after the last chain holding data,
 * so behind a 64 KiB slice added by reference it would allocate 64 KiB to
 * hold 8 bytes (malloc churn that glibc trims and takes back by brk at
 * every request).
 * evbuffer_reserve_space over two extents fills the last chain's room and
 * makes a new chain only as large as the rest asks.
 */
static int
queue_copy(const struct fcgi_out *o, const void *p, size_t len)
{
	struct evbuffer		*q = o->fo_queue;
	struct evbuffer_iovec	 v[2];
	const uint8_t		*b = p;
	size_t			 n, m, left, piece;
	int			 nv, i, used;

	piece = o->fo_small ? OUT_PIECE_SMALL : OUT_PIECE;
	while (len > 0) {
		n = len < piece ? len : piece;
		if ((nv = evbuffer_reserve_space(q, (ev_ssize_t)n, v, 2)) < 1)
			return -1;
		for (i = used = 0, left = n; i < nv && left > 0; i++, used++) {
			m = v[i].iov_len < left ? v[i].iov_len : left;
			memcpy(v[i].iov_base, b, m);
			v[i].iov_len = m;
			b += m;
			left -= m;
		}
		if (left > 0 || evbuffer_commit_space(q, v, used) == -1)
			return -1;
		len -= n;
	}
	return 0;
}

int
fcgi_out_small(struct fcgi_out *o, const void *p, size_t len)
{
	struct evbuffer_iovec	 v;
	uint8_t			*dst;

	if ((dst = out_reserve(o, len, &v)) == NULL)
		return -1;
	memcpy(dst, p, len);
	return out_commit(o, len, &v);
}

/*
 * One record of at most OUT_WHOLE_MAX bytes of content, header, content
 * and padding copied into one reserved extent.
 */
static int
out_whole(struct fcgi_out *o, uint8_t type, uint16_t id, const void *data,
    size_t len)
{
	struct evbuffer_iovec	 v;
	uint8_t			 pad = fcgi_padding(len), *p;
	size_t			 total = FCGI_HEADER_LEN + len + pad;

	if ((p = out_reserve(o, total, &v)) == NULL)
		return -1;
	fcgi_header_encode(p, type, id, (uint16_t)len, pad);
	if (len > 0)
		memcpy(p + FCGI_HEADER_LEN, data, len);
	memset(p + FCGI_HEADER_LEN + len, 0, pad);
	return out_commit(o, total, &v);
}

int
fcgi_out_record(struct fcgi_out *o, uint8_t type, uint16_t id,
    const void *data, size_t len)
{
	uint8_t	 hdr[FCGI_HEADER_LEN];
	uint8_t	 pad = fcgi_padding(len);

	if (len > FCGI_MAX_CONTENT)
		return -1;
	if (len <= OUT_WHOLE_MAX)
		return out_whole(o, type, id, data, len);
	fcgi_header_encode(hdr, type, id, (uint16_t)len, pad);
	if (fcgi_out_small(o, hdr, sizeof(hdr)) == -1 ||
	    out_copy(o, data, len) == -1 ||
	    (pad > 0 && fcgi_out_small(o, zeros, pad) == -1))
		return -1;
	return 0;
}

/*
 * The one framing loop: len bytes from p (copied or by reference) or from
 * src (moved), in aligned STDOUT records.  0, or -1 when out could not grow.
 */
static int
out_stream(struct fcgi_out *o, uint16_t id, enum how how, const uint8_t *p,
    struct evbuffer *src, size_t len)
{
	uint8_t	 hdr[FCGI_HEADER_LEN], pad;
	size_t	 n;
	int	 rc;

	/* Moved content cannot be staged: what is staged goes first. */
	if (how == HOW_MOVE && fcgi_out_spill(o, 0) == -1)
		return -1;
	while (len > 0) {
		n = len < FCGI_MAX_ALIGNED ? len : FCGI_MAX_ALIGNED;
		if (how == HOW_COPY && n <= OUT_WHOLE_MAX)
			rc = out_whole(o, FCGI_STDOUT, id, p, n);
		else {
			pad = fcgi_padding(n);
			fcgi_header_encode(hdr, FCGI_STDOUT, id, (uint16_t)n,
			    pad);
			if (fcgi_out_small(o, hdr, sizeof(hdr)) == -1)
				return -1;
			if (how == HOW_COPY)
				rc = out_copy(o, p, n);
			else if (how == HOW_REF)
				rc = out_ref(o, p, n);
			else
				rc = evbuffer_remove_buffer(src, o->fo_queue,
				    n) == (int)n ? 0 : -1;
			if (rc == 0 && pad > 0)
				rc = fcgi_out_small(o, zeros, pad);
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
fcgi_out_stdout_copy(struct fcgi_out *o, uint16_t id, const void *data,
    size_t len)
{
	return out_stream(o, id, HOW_COPY, data, NULL, len);
}

int
fcgi_out_stdout_ref(struct fcgi_out *o, uint16_t id, const void *data,
    size_t len)
{
	return out_stream(o, id, HOW_REF, data, NULL, len);
}

int
fcgi_out_stdout_move(struct fcgi_out *o, uint16_t id, struct evbuffer *src,
    size_t len)
{
	if (len > evbuffer_get_length(src))
		return -1;
	return out_stream(o, id, HOW_MOVE, NULL, src, len);
}

int
fcgi_out_finish(struct fcgi_out *o, uint16_t id)
{
	uint8_t	 rec[FCGI_HEADER_LEN + 16];

	/* One small chain for both: they usually leave in one write. */
	fcgi_header_encode(rec, FCGI_STDOUT, id, 0, 0);
	fcgi_end_encode(rec + FCGI_HEADER_LEN, id, 0, FCGI_REQUEST_COMPLETE);
	return fcgi_out_small(o, rec, sizeof(rec));
}

int
fcgi_out_end_request(struct fcgi_out *o, uint16_t id,
    uint8_t protocol_status)
{
	uint8_t	 rec[16];

	fcgi_end_encode(rec, id, 0, protocol_status);
	return fcgi_out_small(o, rec, sizeof(rec));
}

int
fcgi_out_cut(struct fcgi_out *o)
{
	static const uint8_t	 mark[FCGI_HEADER_LEN] = { 0, FCGI_STDOUT };

	return fcgi_out_small(o, mark, sizeof(mark));
}

int
fcgi_out_unknown_type(struct fcgi_out *o, uint8_t type)
{
	uint8_t	 rec[16];

	fcgi_unknown_type_encode(rec, type);
	return fcgi_out_small(o, rec, sizeof(rec));
}
