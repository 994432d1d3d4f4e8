/*
 * fcgi_proto.h: the FastCGI 1.0 wire format as pure functions over bytes.
 *
 * Nothing here does I/O, allocates or exits: the daemon, the tools and the
 * tests all share it.  Wire integers are decoded byte by byte.
 */
#ifndef FCGI_PROTO_H
#define FCGI_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define FCGI_VERSION_1		1
#define FCGI_HEADER_LEN		8
#define FCGI_MAX_CONTENT	65535
/* Largest content length that needs no padding to stay 8-aligned. */
#define FCGI_MAX_ALIGNED	65528
/* Header plus the largest content and padding: the most one record needs. */
#define FCGI_MAX_RECORD		(FCGI_HEADER_LEN + FCGI_MAX_CONTENT + 255)

enum fcgi_type {
	FCGI_BEGIN_REQUEST = 1,
	FCGI_ABORT_REQUEST = 2,
	FCGI_END_REQUEST = 3,
	FCGI_PARAMS = 4,
	FCGI_STDIN = 5,
	FCGI_STDOUT = 6,
	FCGI_STDERR = 7,
	FCGI_DATA = 8,
	FCGI_GET_VALUES = 9,
	FCGI_GET_VALUES_RESULT = 10,
	FCGI_UNKNOWN_TYPE = 11
};

enum fcgi_role {
	FCGI_RESPONDER = 1,
	FCGI_AUTHORIZER = 2,
	FCGI_FILTER = 3
};

#define FCGI_KEEP_CONN		1

enum fcgi_protocol_status {
	FCGI_REQUEST_COMPLETE = 0,
	FCGI_CANT_MPX_CONN = 1,
	FCGI_OVERLOADED = 2,
	FCGI_UNKNOWN_ROLE = 3
};

struct fcgi_header {
	uint8_t		version;
	uint8_t		type;
	uint16_t	request_id;
	uint16_t	content_length;
	uint8_t		padding_length;
};

/* One parsed record; content points into the caller's buffer. */
struct fcgi_record {
	struct fcgi_header	 hdr;
	const uint8_t		*content;
};

/* One name-value pair; both point into the caller's buffer, not NUL-ended. */
struct fcgi_nv {
	const uint8_t	*name;
	size_t		 name_len;
	const uint8_t	*value;
	size_t		 value_len;
};

/*
 * Decodes the 8-byte header at buf.  Returns 1 when len holds a whole
 * header, 0 when more bytes are needed, -1 when the version is not 1.
 */
int	fcgi_header_decode(const uint8_t *buf, size_t len, struct fcgi_header *h);

/* Writes an 8-byte header into out (which must hold 8 bytes). */
void	fcgi_header_encode(uint8_t *out, uint8_t type, uint16_t request_id,
	    uint16_t content_length, uint8_t padding_length);

/*
 * Parses one whole record (header, content, padding) from buf.  Returns the
 * bytes it spans, 0 when buf holds only part of it, -1 when it is malformed.
 * rec->content points into buf and is valid as long as buf is.
 */
ssize_t	fcgi_parse(const uint8_t *buf, size_t len, struct fcgi_record *rec);

/* The bytes a record spans on the wire: header, content and padding. */
size_t	fcgi_record_len(const struct fcgi_header *h);

/* Padding that brings a content length up to a multiple of 8. */
uint8_t	fcgi_padding(size_t content_length);

/*
 * Parses the 8-byte body of a BEGIN_REQUEST record.  Returns 0, or -1 when
 * len is not 8.
 */
int	fcgi_begin_decode(const uint8_t *content, size_t len, uint16_t *role,
	    uint8_t *flags);

/* Encodes a whole BEGIN_REQUEST record (16 bytes) into out. */
void	fcgi_begin_encode(uint8_t *out, uint16_t request_id, uint16_t role,
	    uint8_t flags);

/* Encodes a whole END_REQUEST record (16 bytes) into out. */
void	fcgi_end_encode(uint8_t *out, uint16_t request_id, uint32_t app_status,
	    uint8_t protocol_status);

/*
 * Decodes the 8-byte body of an END_REQUEST record.  Returns 0, or -1 when
 * len is not 8.
 */
int	fcgi_end_decode(const uint8_t *content, size_t len, uint32_t *app_status,
	    uint8_t *protocol_status);

/* Encodes a whole UNKNOWN_TYPE record (16 bytes) into out. */
void	fcgi_unknown_type_encode(uint8_t *out, uint8_t type);

/*
 * Parses one name-value pair (1- or 4-byte lengths) from buf.  Returns the
 * bytes it spans, 0 when buf ends inside it, -1 when a length is malformed.
 */
ssize_t	fcgi_nv_parse(const uint8_t *buf, size_t len, struct fcgi_nv *nv);

/*
 * Encodes one name-value pair into out when it fits in outlen.  Returns the
 * bytes the pair needs whether or not it fitted, so a caller can size out.
 */
size_t	fcgi_nv_encode(uint8_t *out, size_t outlen, const void *name,
	    size_t name_len, const void *value, size_t value_len);

/* The name of a record type for logs, "UNKNOWN" for others. */
const char *fcgi_type_name(unsigned type);

#endif /* FCGI_PROTO_H */
