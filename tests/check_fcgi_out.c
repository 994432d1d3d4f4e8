/*
 * check_fcgi_out.c: the record writer.  What it appends is parsed back
 * with the codec record by record: every record whole, 8-aligned, of the
 * right type and id, and the content equal to what went in, by copy, by
 * reference and by move, at every length around the record boundaries.
 * Staged, the same records come out in the same order: whole from the
 * stage, after any part of them was written, and when the stage fills.
 */
#include <check.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fcgi_out.h"
#include "fcgi_proto.h"
#include "tests/suite.h"

/* What parse_out found in a buffer. */
struct parsed {
	uint8_t		*stdout_bytes;
	size_t		 stdout_len;
	size_t		 records;
	int		 stdout_ended;	/* an empty STDOUT record */
	int		 ended;		/* END_REQUEST */
	uint8_t		 pstatus;
	uint8_t		 last_type;
};

/* Under AddressSanitizer malloc is its own: mallinfo2() counts nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define HEAP_COUNTED	0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_COUNTED	0
#endif
#endif
#ifndef HEAP_COUNTED
#define HEAP_COUNTED	1
#endif

static uint8_t	*src_bytes;
static struct fcgi_out	 fo;
static struct fcgi_stage	 stage;

/* q as a connection's output with no stage. */
static struct fcgi_out *
to(struct evbuffer *q)
{
	fo.fo_queue = q;
	fo.fo_stage = NULL;
	return &fo;
}

/* len bytes of a pattern that never repeats within 251 bytes. */
static const uint8_t *
src(size_t len)
{
	size_t	 i;

	free(src_bytes);
	ck_assert_ptr_nonnull(src_bytes = malloc(len + 1));
	for (i = 0; i < len; i++)
		src_bytes[i] = (uint8_t)(i % 251);
	return src_bytes;
}

/*
 * Parses everything in out as records for id (management records: id 0),
 * asserting each is whole and 8-aligned; fills p.
 */
static void
parse_out(struct evbuffer *out, uint16_t id, struct parsed *p)
{
	size_t			 len = evbuffer_get_length(out), off = 0;
	const uint8_t		*b = evbuffer_pullup(out, -1);
	struct fcgi_record	 rec;
	ssize_t			 n;

	memset(p, 0, sizeof(*p));
	ck_assert_ptr_nonnull(p->stdout_bytes = malloc(len + 1));
	while (off < len) {
		n = fcgi_parse(b + off, len - off, &rec);
		ck_assert_int_gt(n, 0);
		ck_assert_uint_eq((size_t)n % 8, 0);
		ck_assert_uint_eq(rec.hdr.request_id, id);
		ck_assert(!p->ended);
		p->records++;
		p->last_type = rec.hdr.type;
		if (rec.hdr.type == FCGI_STDOUT) {
			ck_assert(!p->stdout_ended);
			if (rec.hdr.content_length == 0)
				p->stdout_ended = 1;
			memcpy(p->stdout_bytes + p->stdout_len, rec.content,
			    rec.hdr.content_length);
			p->stdout_len += rec.hdr.content_length;
		} else if (rec.hdr.type == FCGI_END_REQUEST) {
			ck_assert_int_eq(fcgi_end_decode(rec.content,
			    rec.hdr.content_length, &(uint32_t){ 0 },
			    &p->pstatus), 0);
			p->ended = 1;
		}
		off += (size_t)n;
	}
}

static void
parsed_free(struct parsed *p)
{
	free(p->stdout_bytes);
}

/* Frames len bytes by how (0 copy, 1 reference, 2 move) and checks them. */
static void
stream_roundtrip(int how, size_t len)
{
	struct evbuffer	*out = evbuffer_new(), *from = evbuffer_new();
	const uint8_t	*data = src(len);
	struct parsed	 p;
	int		 rc;

	ck_assert_ptr_nonnull(out);
	ck_assert_ptr_nonnull(from);
	if (how == 0)
		rc = fcgi_out_stdout_copy(to(out), 7, data, len);
	else if (how == 1)
		rc = fcgi_out_stdout_ref(to(out), 7, data, len);
	else {
		ck_assert_int_eq(evbuffer_add(from, data, len), 0);
		ck_assert_int_eq(evbuffer_add(from, "rest", 4), 0);
		rc = fcgi_out_stdout_move(to(out), 7, from, len);
		ck_assert_uint_eq(evbuffer_get_length(from), 4);
	}
	ck_assert_int_eq(rc, 0);
	parse_out(out, 7, &p);
	ck_assert_uint_eq(p.stdout_len, len);
	ck_assert_uint_eq(p.records, (len + FCGI_MAX_ALIGNED - 1) /
	    FCGI_MAX_ALIGNED);
	ck_assert(!p.stdout_ended);
	ck_assert(len == 0 || memcmp(p.stdout_bytes, data, len) == 0);
	parsed_free(&p);
	evbuffer_free(out);
	evbuffer_free(from);
}

START_TEST(record_copy)
{
	struct evbuffer		*out = evbuffer_new();
	struct fcgi_record	 rec;
	const uint8_t		*b;

	ck_assert_int_eq(fcgi_out_record(to(out), FCGI_GET_VALUES_RESULT, 0,
	    "abcde", 5), 0);
	ck_assert_uint_eq(evbuffer_get_length(out), 16);
	b = evbuffer_pullup(out, -1);
	ck_assert_int_eq(fcgi_parse(b, 16, &rec), 16);
	ck_assert_int_eq(rec.hdr.type, FCGI_GET_VALUES_RESULT);
	ck_assert_int_eq(rec.hdr.content_length, 5);
	ck_assert_int_eq(rec.hdr.padding_length, 3);
	ck_assert_mem_eq(rec.content, "abcde", 5);
	evbuffer_free(out);
}
END_TEST

START_TEST(record_empty_and_largest)
{
	struct evbuffer		*out = evbuffer_new();
	struct fcgi_record	 rec;
	const uint8_t		*big = src(FCGI_MAX_CONTENT);

	ck_assert_int_eq(fcgi_out_record(to(out), FCGI_STDOUT, 1, NULL, 0), 0);
	ck_assert_uint_eq(evbuffer_get_length(out), 8);
	ck_assert_int_eq(fcgi_out_record(to(out), FCGI_STDOUT, 1, big,
	    FCGI_MAX_CONTENT), 0);
	ck_assert_uint_eq(evbuffer_get_length(out), 8 + 8 + 65536);
	evbuffer_drain(out, 8);
	ck_assert_int_eq(fcgi_parse(evbuffer_pullup(out, -1),
	    evbuffer_get_length(out), &rec), 8 + 65536);
	ck_assert_int_eq(rec.hdr.padding_length, 1);
	evbuffer_free(out);
}
END_TEST

START_TEST(stream_by_copy)
{
	stream_roundtrip(0, 5);
}
END_TEST

START_TEST(stream_by_reference_is_not_copied)
{
	struct evbuffer	*out = evbuffer_new();
	uint8_t		 data[64];
	struct parsed	 p;

	memset(data, 'a', sizeof(data));
	ck_assert_int_eq(fcgi_out_stdout_ref(to(out), 3, data, sizeof(data)), 0);
	/* The buffer holds the caller's bytes: a change shows through. */
	data[10] = 'Z';
	parse_out(out, 3, &p);
	ck_assert_uint_eq(p.stdout_len, 64);
	ck_assert_int_eq(p.stdout_bytes[10], 'Z');
	parsed_free(&p);
	evbuffer_free(out);
}
END_TEST

START_TEST(stream_by_move)
{
	stream_roundtrip(2, 100000);
}
END_TEST

START_TEST(finish_and_end)
{
	struct evbuffer	*out = evbuffer_new();
	struct parsed	 p;

	ck_assert_int_eq(fcgi_out_stdout_copy(to(out), 9, "hi", 2), 0);
	ck_assert_int_eq(fcgi_out_finish(to(out), 9), 0);
	parse_out(out, 9, &p);
	ck_assert(p.stdout_ended && p.ended);
	ck_assert_int_eq(p.pstatus, FCGI_REQUEST_COMPLETE);
	ck_assert_uint_eq(p.records, 3);
	parsed_free(&p);
	evbuffer_drain(out, evbuffer_get_length(out));
	ck_assert_int_eq(fcgi_out_end_request(to(out), 9, FCGI_OVERLOADED), 0);
	parse_out(out, 9, &p);
	ck_assert(p.ended && !p.stdout_ended);
	ck_assert_int_eq(p.pstatus, FCGI_OVERLOADED);
	parsed_free(&p);
	evbuffer_free(out);
}
END_TEST

START_TEST(unknown_type)
{
	struct evbuffer		*out = evbuffer_new();
	struct fcgi_record	 rec;

	ck_assert_int_eq(fcgi_out_unknown_type(to(out), 77), 0);
	ck_assert_int_eq(fcgi_parse(evbuffer_pullup(out, -1), 16, &rec), 16);
	ck_assert_int_eq(rec.hdr.type, FCGI_UNKNOWN_TYPE);
	ck_assert_int_eq(rec.hdr.request_id, 0);
	ck_assert_int_eq(rec.content[0], 77);
	evbuffer_free(out);
}
END_TEST

/* Every length around one and two record boundaries, all three ways. */
START_TEST(stream_every_boundary)
{
	static const size_t	 base[] = { 0, FCGI_MAX_ALIGNED,
	    2 * FCGI_MAX_ALIGNED };
	size_t			 i;
	int			 d, how;

	for (how = 0; how < 3; how++)
		for (i = 0; i < sizeof(base) / sizeof(base[0]); i++)
			for (d = -9; d <= 9; d++)
				if ((long)base[i] + d >= 0)
					stream_roundtrip(how,
					    (size_t)((long)base[i] + d));
}
END_TEST

START_TEST(move_more_than_there_is)
{
	struct evbuffer	*out = evbuffer_new(), *from = evbuffer_new();

	ck_assert_int_eq(evbuffer_add(from, "abc", 3), 0);
	ck_assert_int_eq(fcgi_out_stdout_move(to(out), 1, from, 4), -1);
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	ck_assert_uint_eq(evbuffer_get_length(from), 3);
	evbuffer_free(out);
	evbuffer_free(from);
}
END_TEST

START_TEST(record_too_long)
{
	struct evbuffer	*out = evbuffer_new();

	ck_assert_int_eq(fcgi_out_record(to(out), FCGI_STDOUT, 1, src(65536),
	    65536), -1);
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	evbuffer_free(out);
}
END_TEST

/* A buffer that cannot grow: every writer says so. */
START_TEST(buffer_cannot_grow)
{
	struct evbuffer	*out = evbuffer_new(), *from = evbuffer_new();

	ck_assert_int_eq(evbuffer_add(from, "abc", 3), 0);
	ck_assert_int_eq(evbuffer_freeze(out, 0), 0);
	ck_assert_int_eq(fcgi_out_small(to(out), "x", 1), -1);
	ck_assert_int_eq(fcgi_out_record(to(out), FCGI_STDOUT, 1, "x", 1), -1);
	ck_assert_int_eq(fcgi_out_stdout_copy(to(out), 1, "x", 1), -1);
	ck_assert_int_eq(fcgi_out_stdout_ref(to(out), 1, "x", 1), -1);
	ck_assert_int_eq(fcgi_out_stdout_move(to(out), 1, from, 3), -1);
	ck_assert_int_eq(fcgi_out_finish(to(out), 1), -1);
	ck_assert_int_eq(fcgi_out_end_request(to(out), 1, 0), -1);
	ck_assert_int_eq(fcgi_out_unknown_type(to(out), 99), -1);
	ck_assert_uint_eq(evbuffer_get_length(out), 0);
	evbuffer_free(out);
	evbuffer_free(from);
}
END_TEST

/*
 * The records of a /hello and more, each kind of writer in turn, by ref
 * pointing at body.  0 each, or the first failure.
 */
static int
write_some(struct fcgi_out *o, const uint8_t *body, struct evbuffer *from)
{
	if (fcgi_out_stdout_copy(o, 5, "Status: 200 OK\r\n\r\n", 18) == -1 ||
	    fcgi_out_stdout_ref(o, 5, body, 100000) == -1 ||
	    fcgi_out_record(o, FCGI_STDERR, 5, "warn", 4) == -1 ||
	    fcgi_out_stdout_copy(o, 5, body, 5000) == -1 ||
	    fcgi_out_small(o, "", 0) == -1)
		return -1;
	if (from != NULL && fcgi_out_stdout_move(o, 5, from,
	    evbuffer_get_length(from)) == -1)
		return -1;
	if (fcgi_out_finish(o, 5) == -1 ||
	    fcgi_out_end_request(o, 6, FCGI_OVERLOADED) == -1 ||
	    fcgi_out_unknown_type(o, 77) == -1)
		return -1;
	return 0;
}

/* What write_some() queues with no stage: the bytes to expect. */
static struct evbuffer *
expected(const uint8_t *body, int move)
{
	struct evbuffer	*q = evbuffer_new(), *from = evbuffer_new();

	ck_assert_ptr_nonnull(q);
	ck_assert_ptr_nonnull(from);
	ck_assert_int_eq(evbuffer_add(from, "moved", 5), 0);
	ck_assert_int_eq(write_some(to(q), body, move ? from : NULL), 0);
	evbuffer_free(from);
	return q;
}

/* Whether the stage's extents, then q, are the bytes of want. */
static void
assert_same(struct evbuffer *want, const struct fcgi_stage *st,
    struct evbuffer *q)
{
	size_t		 len = evbuffer_get_length(want), off = 0;
	const uint8_t	*w = evbuffer_pullup(want, -1);
	int		 i;

	for (i = 0; st != NULL && i < st->fs_niov; i++) {
		ck_assert_uint_le(off + st->fs_iov[i].iov_len, len);
		ck_assert_mem_eq(w + off, st->fs_iov[i].iov_base,
		    st->fs_iov[i].iov_len);
		off += st->fs_iov[i].iov_len;
	}
	ck_assert_uint_eq(evbuffer_get_length(q), len - off);
	ck_assert(len == off ||
	    memcmp(w + off, evbuffer_pullup(q, -1), len - off) == 0);
}

/* Staged, everything stays in the stage, byte for byte as queued. */
START_TEST(staged_as_queued)
{
	const uint8_t	*body = src(100000);
	struct evbuffer	*want = expected(body, 0), *q = evbuffer_new();

	fcgi_out_stage(to(q), &stage, 1 << 20);
	ck_assert_int_eq(write_some(&fo, body, NULL), 0);
	ck_assert_ptr_eq(fo.fo_stage, &stage);
	ck_assert_uint_eq(evbuffer_get_length(q), 0);
	ck_assert_uint_eq(fcgi_out_len(&fo), evbuffer_get_length(want));
	ck_assert_uint_eq(stage.fs_len, evbuffer_get_length(want));
	assert_same(want, &stage, q);
	ck_assert_int_eq(fcgi_out_spill(&fo, 0), 0);
	ck_assert_ptr_null(fo.fo_stage);
	assert_same(want, NULL, q);
	evbuffer_free(want);
	evbuffer_free(q);
}
END_TEST

/*
 * What a slow reader's queued output costs in the heap: 16 KiB copies (the
 * demo's /stream chunk) queued and read in part, as a socket takes them,
 * down to about a share, straight and spilled from a stage.  libevent
 * packed the copies into chains of 32 KiB (a power of two over a copy and
 * the chain's header), and a share of 24 KiB spanned two of them.  Now
 * they are packed into chains of 8 KiB, or of 4 KiB with fo_small (in a
 * spike): about the bytes left, what the first chain has sent already and
 * the last chain's room, a chain's size at most between the two.  Returns
 * the heap taken.
 */
static size_t
slow_queue(int staged, size_t len, size_t share, int small)
{
	const uint8_t	*body = src(len);
	struct evbuffer	*q = evbuffer_new();
	size_t		 before, heap, left, i, chain = small ? 4096 : 8192;

	before = mallinfo2().uordblks;
	for (i = 0; i < 40; i++) {
		if (staged)
			fcgi_out_stage(to(q), &stage, 1 << 20);
		else
			to(q);
		fo.fo_small = small;
		ck_assert_int_eq(fcgi_out_stdout_copy(&fo, 1, body, len), 0);
		ck_assert_int_eq(fcgi_out_spill(&fo, 0), 0);
		left = evbuffer_get_length(q);
		if (left > share)
			ck_assert_int_eq(evbuffer_drain(q, left - share +
			    i * 97 % chain), 0);
	}
	left = evbuffer_get_length(q);
	heap = mallinfo2().uordblks - before;
	ck_assert_msg(heap <= left + 2 * chain,
	    "%s copies of %zu B in %zu B chains, %zu B left queued, took %zu B "
	    "of heap", staged ? "staged" : "direct", len, chain, left, heap);
	evbuffer_free(q);
	fo.fo_small = 0;
	return heap;
}

START_TEST(copies_cost_their_size)
{
	size_t	 big, small;

	(void)slow_queue(0, 16384, 24 * 1024, 0);
	(void)slow_queue(1, 12000, 24 * 1024, 0);
	/* The share of 10,000 slow readers on the defaults: in 4 KiB
	   chains, less than in 8 KiB. */
	big = slow_queue(0, 16384, 12 * 1024, 0);
	small = slow_queue(0, 16384, 12 * 1024, 1);
	if (HEAP_COUNTED)
		ck_assert_msg(small < big, "4 KiB chains took %zu B, 8 KiB "
		    "%zu B", small, big);
	(void)slow_queue(1, 12000, 12 * 1024, 1);
}
END_TEST

/* A /hello's records, copied one after another, are one extent. */
START_TEST(copies_are_one_extent)
{
	struct evbuffer	*q = evbuffer_new();

	fcgi_out_stage(to(q), &stage, 1 << 20);
	ck_assert_int_eq(fcgi_out_stdout_copy(&fo, 1, "Status: 200 OK\r\n"
	    "Content-Type: text/plain\r\n\r\nHello, world!\n", 58), 0);
	ck_assert_int_eq(fcgi_out_finish(&fo, 1), 0);
	ck_assert_int_eq(stage.fs_niov, 1);
	ck_assert_uint_eq(stage.fs_len, 8 + 64 + 24);
	(void)fcgi_out_spill(&fo, SIZE_MAX);
	ck_assert_uint_eq(evbuffer_get_length(q), 0);
	evbuffer_free(q);
}
END_TEST

/* Staged by reference, the caller's bytes are pointed at, not copied. */
START_TEST(staged_reference_is_not_copied)
{
	struct evbuffer	*q = evbuffer_new();
	uint8_t		 data[64];

	memset(data, 'a', sizeof(data));
	fcgi_out_stage(to(q), &stage, 1 << 20);
	ck_assert_int_eq(fcgi_out_stdout_ref(&fo, 3, data, sizeof(data)), 0);
	ck_assert_int_eq(stage.fs_niov, 2);
	ck_assert_ptr_eq(stage.fs_iov[1].iov_base, data);
	ck_assert_uint_eq(stage.fs_used, 8);
	(void)fcgi_out_spill(&fo, 0);
	data[10] = 'Z';
	ck_assert_int_eq(evbuffer_pullup(q, -1)[8 + 10], 'Z');
	evbuffer_free(q);
}
END_TEST

/* Part written (every cut around the extents): the rest is queued. */
START_TEST(spill_after_a_partial_write)
{
	const uint8_t	*body = src(100000);
	struct evbuffer	*want = expected(body, 0), *q;
	size_t		 len = evbuffer_get_length(want), skip, cuts[40];
	size_t		 ncut = 0, off = 0;
	int		 i, d;

	/* The edges of every extent of a staged run, and next to them. */
	q = evbuffer_new();
	fcgi_out_stage(to(q), &stage, 1 << 20);
	ck_assert_int_eq(write_some(&fo, body, NULL), 0);
	for (i = 0; i < stage.fs_niov && ncut + 3 <= 40; i++) {
		for (d = -1; d <= 1; d++)
			if ((long)off + d >= 0)
				cuts[ncut++] = (size_t)((long)off + d);
		off += stage.fs_iov[i].iov_len;
	}
	cuts[ncut++] = len;
	(void)fcgi_out_spill(&fo, SIZE_MAX);
	evbuffer_free(q);
	for (i = 0; i < (int)ncut; i++) {
		skip = cuts[i];
		q = evbuffer_new();
		fcgi_out_stage(to(q), &stage, 1 << 20);
		ck_assert_int_eq(write_some(&fo, body, NULL), 0);
		ck_assert_int_eq(fcgi_out_spill(&fo, skip), 0);
		ck_assert_uint_eq(evbuffer_get_length(q), len - skip);
		ck_assert(len == skip || memcmp(evbuffer_pullup(want, -1) +
		    skip, evbuffer_pullup(q, -1), len - skip) == 0);
		evbuffer_free(q);
	}
	evbuffer_free(want);
}
END_TEST

/*
 * A stage that fills (its cap, its scratch, its extents) or meets moved
 * content spills: the stage's part and then the queue are still the bytes
 * in order, and the stage is taken back at the first record it could not
 * take.
 */
START_TEST(full_stage_spills_in_order)
{
	const uint8_t		*body = src(100000);
	static const size_t	 caps[] = { 0, 8, 30, 100, 100100, 1 << 20 };
	struct evbuffer		*want, *q, *from;
	struct fcgi_out		 plain;
	size_t			 i;
	int			 n, move;

	for (move = 0; move < 2; move++)
		for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
			want = expected(body, move);
			q = evbuffer_new();
			from = evbuffer_new();
			ck_assert_int_eq(evbuffer_add(from, "moved", 5), 0);
			fcgi_out_stage(to(q), &stage, caps[i]);
			ck_assert_int_eq(write_some(&fo, body,
			    move ? from : NULL), 0);
			ck_assert_uint_le(stage.fs_len, caps[i]);
			ck_assert_uint_eq(fcgi_out_len(&fo),
			    evbuffer_get_length(want));
			ck_assert(fo.fo_stage == NULL || (!move &&
			    caps[i] == 1 << 20));
			assert_same(want, fo.fo_stage != NULL ? &stage : NULL,
			    q);
			(void)fcgi_out_spill(&fo, SIZE_MAX);
			evbuffer_free(want);
			evbuffer_free(q);
			evbuffer_free(from);
		}
	/* More records than the scratch (copied) or the extents (by
	   reference) hold; the bytes are the same either way. */
	for (n = 0; n < 2; n++) {
		want = evbuffer_new();
		q = evbuffer_new();
		plain.fo_queue = want;
		plain.fo_stage = NULL;
		fcgi_out_stage(to(q), &stage, 1 << 20);
		for (i = 0; i < 3000; i++) {
			ck_assert_int_eq(fcgi_out_stdout_copy(&plain, 1,
			    body + i, 7), 0);
			ck_assert_int_eq(n == 0 ?
			    fcgi_out_stdout_copy(&fo, 1, body + i, 7) :
			    fcgi_out_stdout_ref(&fo, 1, body + i, 7), 0);
		}
		ck_assert_ptr_null(fo.fo_stage);
		assert_same(want, NULL, q);
		evbuffer_free(want);
		evbuffer_free(q);
	}
}
END_TEST

/* A stage's records need no queue; spilling them onto a frozen one fails. */
START_TEST(spill_cannot_grow)
{
	struct evbuffer	*q = evbuffer_new();

	ck_assert_int_eq(evbuffer_freeze(q, 0), 0);
	fcgi_out_stage(to(q), &stage, 1 << 20);
	ck_assert_int_eq(fcgi_out_stdout_copy(&fo, 1, "x", 1), 0);
	ck_assert_int_eq(fcgi_out_finish(&fo, 1), 0);
	ck_assert_ptr_null(fcgi_out_queue(&fo));
	ck_assert_ptr_null(fo.fo_stage);
	ck_assert_uint_eq(evbuffer_get_length(q), 0);
	evbuffer_free(q);
}
END_TEST

static Suite *
out_suite(void)
{
	Suite	*s = suite_create("fcgi_out");

	suite_add_case(s, "core", NULL, NULL, 0, record_copy,
	    record_empty_and_largest, stream_by_copy,
	    stream_by_reference_is_not_copied, stream_by_move, finish_and_end,
	    unknown_type, staged_as_queued, copies_are_one_extent,
	    staged_reference_is_not_copied, copies_cost_their_size, NULL);
	suite_add_case(s, "partial", NULL, NULL, 0, stream_every_boundary,
	    spill_after_a_partial_write, full_stage_spills_in_order, NULL);
	suite_add_case(s, "malformed", NULL, NULL, 0, move_more_than_there_is,
	    record_too_long, buffer_cannot_grow, spill_cannot_grow, NULL);
	return s;
}

int
main(void)
{
	int	 rc = suite_run(out_suite());

	free(src_bytes);
	return rc;
}
