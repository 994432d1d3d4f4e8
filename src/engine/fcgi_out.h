/*
 * fcgi_out.h: the FastCGI record writer.  Appends whole records to a
 * connection's output: small records (headers, padding, END_REQUEST)
 * without big chains, and stream content framed into STDOUT records by
 * copy, by reference or by moving it out of another evbuffer.
 *
 * Output goes to a queue (an evbuffer) or, while one is lent, first to a
 * stage: records gathered during one callback of a connection whose queue
 * was empty, copied into the stage's scratch or pointed at by reference,
 * so that they leave in one writev() at the end of the callback without an
 * evbuffer chain allocated, committed, written and freed on the way.
 * Nothing waits in a stage: its owner writes what the kernel takes and
 * spills the rest onto the queue before the callback returns.  A record
 * the stage cannot take (its scratch, its extents or its cap are full, or
 * the content is moved out of an evbuffer) spills the stage first, so the
 * bytes keep their order.
 *
 * Nothing here does I/O.  Every function returns 0, or -1 when the queue
 * could not grow; a record may then be cut, so the caller must give up the
 * whole connection, whose stream is no longer valid.
 */
#ifndef FCGI_OUT_H
#define FCGI_OUT_H

#include <sys/types.h>
#include <sys/uio.h>

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

#define FCGI_STAGE_BYTES	16384	/* copied bytes a stage holds */
#define FCGI_STAGE_IOV		64	/* extents a stage holds */

/* Records gathered for one write: in fs_buf, or by reference. */
struct fcgi_stage {
	struct iovec	 fs_iov[FCGI_STAGE_IOV];
	int		 fs_niov;
	size_t		 fs_len;	/* bytes staged, copied or not */
	size_t		 fs_cap;	/* at most this many */
	size_t		 fs_used;	/* of fs_buf */
	uint8_t		 fs_buf[FCGI_STAGE_BYTES];
};

/* Where a connection's records go. */
struct fcgi_out {
	struct evbuffer		*fo_queue;
	struct fcgi_stage	*fo_stage;	/* gather here first; or NULL */
	unsigned		 fo_small;	/* copies in 4 KiB chains, not 8 */
};

/*
 * Lends o the empty stage st, to take at most cap bytes.  The caller makes
 * sure o's queue is empty, and takes st back with fcgi_out_spill().
 */
void	fcgi_out_stage(struct fcgi_out *o, struct fcgi_stage *st, size_t cap);

/*
 * Queues what o's stage holds past its first skip bytes (written by the
 * caller) and takes the stage back (its contents mean nothing until it is
 * lent again).  0, or -1 when the queue could not grow (the stage is
 * taken back all the same).
 */
int	fcgi_out_spill(struct fcgi_out *o, size_t skip);

/* Bytes in o: queued and staged. */
size_t	fcgi_out_len(const struct fcgi_out *o);

/* o's queue, its stage spilled onto it first; NULL if that failed. */
struct evbuffer *fcgi_out_queue(struct fcgi_out *o);

/* Appends len bytes (a few: a header, padding) in a chain of their size. */
int	fcgi_out_small(struct fcgi_out *o, const void *p, size_t len);

/* Appends one record of type with a copy of len <= 65535 bytes. */
int	fcgi_out_record(struct fcgi_out *o, uint8_t type, uint16_t id,
	    const void *data, size_t len);

/* Frames len bytes of data as STDOUT records for id, copying them. */
int	fcgi_out_stdout_copy(struct fcgi_out *o, uint16_t id,
	    const void *data, size_t len);

/*
 * Frames len bytes of data as STDOUT records by reference: data must stay
 * valid and unchanged until the records have left o.
 */
int	fcgi_out_stdout_ref(struct fcgi_out *o, uint16_t id,
	    const void *data, size_t len);

/*
 * Frames the first len bytes of src as STDOUT records, moving them out of
 * src without copying.  -1 also when src holds fewer than len bytes.
 */
int	fcgi_out_stdout_move(struct fcgi_out *o, uint16_t id,
	    struct evbuffer *src, size_t len);

/* Ends the STDOUT stream of id (an empty record), then END_REQUEST. */
int	fcgi_out_finish(struct fcgi_out *o, uint16_t id);

/* END_REQUEST alone, for a request refused or aborted. */
int	fcgi_out_end_request(struct fcgi_out *o, uint16_t id,
	    uint8_t protocol_status);

/*
 * The cut mark: a record header of version 0, which no FastCGI peer can
 * take.  Queued after the last bytes of an answer that is cut, it makes
 * the front end end its client's answer as an error (nginx: "upstream sent
 * unsupported FastCGI protocol version"), where a plain end of the stream
 * could pass for a whole answer: over a unix socket a close is only an
 * EOF, and nginx with buffering off ends a chunked answer cleanly at one.
 */
int	fcgi_out_cut(struct fcgi_out *o);

/* UNKNOWN_TYPE for a management record of a type not known. */
int	fcgi_out_unknown_type(struct fcgi_out *o, uint8_t type);

#endif /* FCGI_OUT_H */
