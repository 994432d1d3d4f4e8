/*
 * fcgi_proto.c: FastCGI 1.0 record and name-value codec (see fcgi_proto.h).
 */
#include <string.h>

#include "fcgi_proto.h"

static size_t	nv_len_decode(const uint8_t *buf, size_t len, size_t *out);
static size_t	nv_len_encode(uint8_t *out, size_t n);

int
fcgi_header_decode(const uint8_t *buf, size_t len, struct fcgi_header *h)
{
	if (len < FCGI_HEADER_LEN)
		return 0;
	if (buf[0] != FCGI_VERSION_1)
		return -1;
	h->version = buf[0];
	h->type = buf[1];
	h->request_id = (uint16_t)(buf[2] << 8 | buf[3]);
	h->content_length = (uint16_t)(buf[4] << 8 | buf[5]);
	h->padding_length = buf[6];
	/* buf[7] is reserved and ignored. */
	return 1;
}

void
fcgi_header_encode(uint8_t *out, uint8_t type, uint16_t request_id,
    uint16_t content_length, uint8_t padding_length)
{
	out[0] = FCGI_VERSION_1;
	out[1] = type;
	out[2] = (uint8_t)(request_id >> 8);
	out[3] = (uint8_t)request_id;
	out[4] = (uint8_t)(content_length >> 8);
	out[5] = (uint8_t)content_length;
	out[6] = padding_length;
	out[7] = 0;
}

ssize_t
fcgi_parse(const uint8_t *buf, size_t len, struct fcgi_record *rec)
{
	size_t	 total;
	int	 r;

	if ((r = fcgi_header_decode(buf, len, &rec->hdr)) <= 0)
		return r;
	/* Type 0 does not exist; every other byte value may be a future type. */
	if (rec->hdr.type == 0)
		return -1;
	total = fcgi_record_len(&rec->hdr);
	if (len < total)
		return 0;
	rec->content = buf + FCGI_HEADER_LEN;
	return (ssize_t)total;
}

uint8_t
fcgi_padding(size_t content_length)
{
	return (uint8_t)((8 - (content_length & 7)) & 7);
}

size_t
fcgi_record_len(const struct fcgi_header *h)
{
	return FCGI_HEADER_LEN + (size_t)h->content_length + h->padding_length;
}

int
fcgi_begin_decode(const uint8_t *content, size_t len, uint16_t *role,
    uint8_t *flags)
{
	if (len != 8)
		return -1;
	*role = (uint16_t)(content[0] << 8 | content[1]);
	*flags = content[2];
	return 0;
}

void
fcgi_begin_encode(uint8_t *out, uint16_t request_id, uint16_t role,
    uint8_t flags)
{
	fcgi_header_encode(out, FCGI_BEGIN_REQUEST, request_id, 8, 0);
	memset(out + FCGI_HEADER_LEN, 0, 8);
	out[8] = (uint8_t)(role >> 8);
	out[9] = (uint8_t)role;
	out[10] = flags;
}

void
fcgi_end_encode(uint8_t *out, uint16_t request_id, uint32_t app_status,
    uint8_t protocol_status)
{
	fcgi_header_encode(out, FCGI_END_REQUEST, request_id, 8, 0);
	out[8] = (uint8_t)(app_status >> 24);
	out[9] = (uint8_t)(app_status >> 16);
	out[10] = (uint8_t)(app_status >> 8);
	out[11] = (uint8_t)app_status;
	out[12] = protocol_status;
	out[13] = out[14] = out[15] = 0;
}

int
fcgi_end_decode(const uint8_t *content, size_t len, uint32_t *app_status,
    uint8_t *protocol_status)
{
	if (len != 8)
		return -1;
	*app_status = (uint32_t)content[0] << 24 | (uint32_t)content[1] << 16 |
	    (uint32_t)content[2] << 8 | content[3];
	*protocol_status = content[4];
	return 0;
}

void
fcgi_unknown_type_encode(uint8_t *out, uint8_t type)
{
	fcgi_header_encode(out, FCGI_UNKNOWN_TYPE, 0, 8, 0);
	memset(out + FCGI_HEADER_LEN, 0, 8);
	out[8] = type;
}

/*
 * Decodes one length (1 byte below 128, else 4 bytes with the top bit set).
 * Returns the bytes it took, 0 when buf ends inside it.
 */
static size_t
nv_len_decode(const uint8_t *buf, size_t len, size_t *out)
{
	if (len < 1)
		return 0;
	if ((buf[0] & 0x80) == 0) {
		*out = buf[0];
		return 1;
	}
	if (len < 4)
		return 0;
	*out = (size_t)(buf[0] & 0x7f) << 24 | (size_t)buf[1] << 16 |
	    (size_t)buf[2] << 8 | buf[3];
	return 4;
}

ssize_t
fcgi_nv_parse(const uint8_t *buf, size_t len, struct fcgi_nv *nv)
{
	size_t	 off, n, nlen, vlen;

	if ((n = nv_len_decode(buf, len, &nlen)) == 0)
		return 0;
	off = n;
	if ((n = nv_len_decode(buf + off, len - off, &vlen)) == 0)
		return 0;
	off += n;
	/* Each length fits 31 bits; a pair over 2 GiB is no real parameter. */
	if (nlen + vlen > 0x7fffffffu)
		return -1;
	if (len - off < nlen + vlen)
		return 0;
	nv->name = buf + off;
	nv->name_len = nlen;
	nv->value = buf + off + nlen;
	nv->value_len = vlen;
	return (ssize_t)(off + nlen + vlen);
}

/* Encodes one length into out (room for 4 bytes); returns bytes written. */
static size_t
nv_len_encode(uint8_t *out, size_t n)
{
	if (n < 128) {
		out[0] = (uint8_t)n;
		return 1;
	}
	out[0] = (uint8_t)((n >> 24) | 0x80);
	out[1] = (uint8_t)(n >> 16);
	out[2] = (uint8_t)(n >> 8);
	out[3] = (uint8_t)n;
	return 4;
}

size_t
fcgi_nv_encode(uint8_t *out, size_t outlen, const void *name, size_t name_len,
    const void *value, size_t value_len)
{
	uint8_t	 lens[8];
	size_t	 hl, need;

	hl = nv_len_encode(lens, name_len);
	hl += nv_len_encode(lens + hl, value_len);
	need = hl + name_len + value_len;
	if (out == NULL || outlen < need)
		return need;
	memcpy(out, lens, hl);
	memcpy(out + hl, name, name_len);
	memcpy(out + hl + name_len, value, value_len);
	return need;
}

const char *
fcgi_type_name(unsigned type)
{
	static const char *const names[] = {
		"0", "BEGIN_REQUEST", "ABORT_REQUEST", "END_REQUEST", "PARAMS",
		"STDIN", "STDOUT", "STDERR", "DATA", "GET_VALUES",
		"GET_VALUES_RESULT", "UNKNOWN_TYPE"
	};

	if (type < sizeof(names) / sizeof(names[0]))
		return names[type];
	return "UNKNOWN";
}
