/*
 * fuzz_multipart.c: libFuzzer target for the multipart/form-data parser.
 * The input's first line is the boundary, the rest the body.  The body is
 * parsed twice: whole, then in pieces whose sizes the input's first byte
 * picks, the consumer pausing at every other piece; both runs must come
 * to the same end and hand over the same parts and bytes (a delimiter
 * split anywhere is still one), every callback within the caps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "multipart.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct run {
	uint64_t	 hash;		/* of every event and byte, in order */
	size_t		 parts;
	size_t		 header_max;
	unsigned	 flip;		/* pause every other data call */
	int		 pausing;
};

static void
mix(struct run *r, const void *p, size_t len)
{
	const unsigned char	*s = p;
	size_t			 i;

	for (i = 0; i < len; i++)
		r->hash = (r->hash ^ s[i]) * 1099511628211ULL;
}

static int
f_part(struct mp *m, const struct evfcgi_part *p)
{
	struct run	*r = m->m_ctx;

	r->parts++;
	if (r->parts > EVFCGI_MP_MAX_PARTS)
		abort();
	mix(r, "P", 1);
	mix(r, p->name, strlen(p->name) + 1);
	if (p->filename != NULL)
		mix(r, p->filename, strlen(p->filename) + 1);
	if (p->ctype != NULL)
		mix(r, p->ctype, strlen(p->ctype) + 1);
	return 0;
}

static int
f_data(struct mp *m, const struct evfcgi_part *p, const void *d, size_t len)
{
	struct run	*r = m->m_ctx;

	if (len == 0 || p->filename == NULL)
		abort();
	mix(r, d, len);
	return r->pausing && (r->flip++ & 1) ? EVFCGI_MP_PAUSE : 0;
}

static int
f_end(struct mp *m, const struct evfcgi_part *p)
{
	struct run	*r = m->m_ctx;

	mix(r, "E", 1);
	if (p->filename == NULL) {
		if (p->value == NULL || strlen(p->value) > p->value_len ||
		    p->value_len > EVFCGI_MP_MAX_FIELD)
			abort();
		mix(r, p->value, p->value_len);
	}
	return 0;
}

static const struct mp_ops fops = { f_part, f_data, f_end };

/* Parses body in pieces of step bytes (0: whole); the outcome. */
static int
parse(const char *b, const uint8_t *body, size_t len, size_t step,
    struct run *r)
{
	struct mp	 m;
	struct evbuffer	*in = evbuffer_new();
	size_t		 off = 0, k;
	int		 rc = MP_MORE;

	if (in == NULL || mp_init(&m, b, &fops, r, NULL) == -1)
		abort();
	while (rc == MP_MORE && off < len) {
		k = step == 0 || len - off < step ? len - off : step;
		evbuffer_add(in, body + off, k);
		off += k;
		while ((rc = mp_feed(&m, in)) == MP_PAUSED)
			;
	}
	if (rc == MP_MORE)
		rc = mp_feed(&m, in);
	mp_fini(&m);
	evbuffer_free(in);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	const uint8_t	*nl = memchr(data, '\n', len < 80 ? len : 80);
	struct run	 a = { .hash = 0 }, c = { .hash = 0 };
	char		 ct[128], b[71];
	size_t		 blen, step;
	int		 ra, rc;

	if (nl == NULL)
		return 0;
	blen = (size_t)(nl - data);
	memcpy(ct, "multipart/form-data; boundary=", 30);
	memcpy(ct + 30, data, blen);
	ct[30 + blen] = '\0';
	if (mp_boundary(ct, b) == -1)
		return 0;
	step = len > blen + 1 ? data[blen + 1] % 97 + 1 : 1;
	ra = parse(b, nl + 1, len - blen - 1, 0, &a);
	c.pausing = 1;
	rc = parse(b, nl + 1, len - blen - 1, step, &c);
	if (ra != rc || (ra != 413 && a.hash != c.hash))
		abort();
	return 0;
}
