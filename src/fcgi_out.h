/*
 * fcgi_out.h: the FastCGI record writer.  Appends whole records to an
 * evbuffer: small records (headers, padding, END_REQUEST) without big
 * chains, and stream content framed into STDOUT records by copy, by
 * reference or by moving it out of another evbuffer.
 *
 * Nothing here does I/O or keeps state.  Every function returns 0, or -1
 * when the evbuffer could not grow; a record may then be cut, so the caller
 * must give up the whole connection, whose stream is no longer valid.
 */
#ifndef FCGI_OUT_H
#define FCGI_OUT_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* Appends len bytes (a few: a header, padding) in a chain of their size. */
int	fcgi_out_small(struct evbuffer *out, const void *p, size_t len);

/* Appends one record of type with a copy of len <= 65535 bytes. */
int	fcgi_out_record(struct evbuffer *out, uint8_t type, uint16_t id,
	    const void *data, size_t len);

/* Frames len bytes of data as STDOUT records for id, copying them. */
int	fcgi_out_stdout_copy(struct evbuffer *out, uint16_t id,
	    const void *data, size_t len);

/*
 * Frames len bytes of data as STDOUT records by reference: data must stay
 * valid and unchanged until the records have left out.
 */
int	fcgi_out_stdout_ref(struct evbuffer *out, uint16_t id,
	    const void *data, size_t len);

/*
 * Frames the first len bytes of src as STDOUT records, moving them out of
 * src without copying.  -1 also when src holds fewer than len bytes.
 */
int	fcgi_out_stdout_move(struct evbuffer *out, uint16_t id,
	    struct evbuffer *src, size_t len);

/* Ends the STDOUT stream of id (an empty record), then END_REQUEST. */
int	fcgi_out_finish(struct evbuffer *out, uint16_t id);

/* END_REQUEST alone, for a request refused or aborted. */
int	fcgi_out_end_request(struct evbuffer *out, uint16_t id,
	    uint8_t protocol_status);

/* UNKNOWN_TYPE for a management record of a type not known. */
int	fcgi_out_unknown_type(struct evbuffer *out, uint8_t type);

#endif /* FCGI_OUT_H */
