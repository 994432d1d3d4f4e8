/*
 * check_fcgi_proto.c: the codec, byte by byte.  Every truncated prefix of
 * valid input is fed from the end of a buffer that touches an unmapped
 * page, so a read past the end faults even without sanitizers.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fcgi_proto.h"
#include "tests/guard.h"
#include "tests/suite.h"

/* A STDOUT record of 5 content bytes and 3 padding bytes. */
static size_t
sample_record(uint8_t *buf)
{
	fcgi_header_encode(buf, FCGI_STDOUT, 0x1234, 5, 3);
	memcpy(buf + 8, "hello", 5);
	memset(buf + 13, 0xee, 3);
	return 16;
}

START_TEST(header_roundtrip)
{
	uint8_t			 b[8];
	struct fcgi_header	 h;

	fcgi_header_encode(b, FCGI_PARAMS, 0xabcd, 0xfedc, 0x7f);
	ck_assert_int_eq(b[0], 1);
	ck_assert_int_eq(b[2], 0xab);
	ck_assert_int_eq(b[3], 0xcd);
	ck_assert_int_eq(b[4], 0xfe);
	ck_assert_int_eq(b[5], 0xdc);
	ck_assert_int_eq(fcgi_header_decode(at_guard(b, 8), 8, &h), 1);
	ck_assert_int_eq(h.type, FCGI_PARAMS);
	ck_assert_int_eq(h.request_id, 0xabcd);
	ck_assert_int_eq(h.content_length, 0xfedc);
	ck_assert_int_eq(h.padding_length, 0x7f);
}
END_TEST

START_TEST(record_whole)
{
	uint8_t			 b[16];
	struct fcgi_record	 rec;
	const uint8_t		*p;

	sample_record(b);
	p = at_guard(b, sizeof(b));
	ck_assert_int_eq(fcgi_parse(p, sizeof(b), &rec), 16);
	ck_assert_int_eq(rec.hdr.request_id, 0x1234);
	ck_assert_ptr_eq(rec.content, p + 8);
	ck_assert_int_eq(memcmp(rec.content, "hello", 5), 0);
}
END_TEST

START_TEST(record_largest)
{
	static uint8_t		 b[FCGI_MAX_RECORD + 8];
	struct fcgi_record	 rec;

	fcgi_header_encode(b, FCGI_STDIN, 1, FCGI_MAX_CONTENT, 255);
	ck_assert_int_eq(fcgi_parse(b, sizeof(b), &rec), FCGI_MAX_RECORD);
	ck_assert_int_eq(fcgi_parse(b, FCGI_MAX_RECORD - 1, &rec), 0);
	ck_assert_int_eq(rec.hdr.content_length, 65535);
}
END_TEST

START_TEST(record_two_in_a_row)
{
	uint8_t			 b[32];
	struct fcgi_record	 rec;
	ssize_t			 n;

	sample_record(b);
	sample_record(b + 16);
	b[16 + 1] = FCGI_STDERR;
	n = fcgi_parse(b, sizeof(b), &rec);
	ck_assert_int_eq(n, 16);
	ck_assert_int_eq(fcgi_parse(b + n, sizeof(b) - 16, &rec), 16);
	ck_assert_int_eq(rec.hdr.type, FCGI_STDERR);
}
END_TEST

START_TEST(begin_end_unknown)
{
	uint8_t		 b[16];
	uint16_t	 role;
	uint8_t		 flags, ps;
	uint32_t	 app;

	fcgi_begin_encode(b, 7, FCGI_RESPONDER, FCGI_KEEP_CONN);
	ck_assert_int_eq(b[1], FCGI_BEGIN_REQUEST);
	ck_assert_int_eq(fcgi_begin_decode(b + 8, 8, &role, &flags), 0);
	ck_assert_int_eq(role, FCGI_RESPONDER);
	ck_assert_int_eq(flags, FCGI_KEEP_CONN);

	fcgi_end_encode(b, 9, 0x01020304, FCGI_OVERLOADED);
	ck_assert_int_eq(b[1], FCGI_END_REQUEST);
	ck_assert_int_eq(fcgi_end_decode(b + 8, 8, &app, &ps), 0);
	ck_assert_uint_eq(app, 0x01020304);
	ck_assert_int_eq(ps, FCGI_OVERLOADED);

	fcgi_unknown_type_encode(b, 0x42);
	ck_assert_int_eq(b[1], FCGI_UNKNOWN_TYPE);
	ck_assert_int_eq(b[2] | b[3], 0);
	ck_assert_int_eq(b[8], 0x42);
}
END_TEST

START_TEST(padding_values)
{
	ck_assert_int_eq(fcgi_padding(0), 0);
	ck_assert_int_eq(fcgi_padding(1), 7);
	ck_assert_int_eq(fcgi_padding(7), 1);
	ck_assert_int_eq(fcgi_padding(8), 0);
	ck_assert_int_eq(fcgi_padding(65535), 1);
	ck_assert_int_eq(fcgi_padding(FCGI_MAX_ALIGNED), 0);
}
END_TEST

START_TEST(nv_short_and_long)
{
	static uint8_t	 out[300000], value[200000];
	struct fcgi_nv	 nv;
	size_t		 n;
	const char	*name127 = NULL;
	char		 name[200];

	/* 1-byte lengths. */
	n = fcgi_nv_encode(out, sizeof(out), "A", 1, "bc", 2);
	ck_assert_uint_eq(n, 5);
	ck_assert_int_eq(out[0], 1);
	ck_assert_int_eq(out[1], 2);
	ck_assert_int_eq(fcgi_nv_parse(out, n, &nv), 5);
	ck_assert_uint_eq(nv.name_len, 1);
	ck_assert_int_eq(memcmp(nv.value, "bc", 2), 0);

	/* 127 fits one byte, 128 needs four. */
	memset(name, 'n', sizeof(name));
	name127 = name;
	n = fcgi_nv_encode(out, sizeof(out), name127, 127, "", 0);
	ck_assert_uint_eq(n, 2 + 127);
	n = fcgi_nv_encode(out, sizeof(out), name, 128, "", 0);
	ck_assert_uint_eq(n, 4 + 1 + 128);
	ck_assert_int_eq(out[0], 0x80);
	ck_assert_int_eq(out[3], 128);

	memset(value, 'v', sizeof(value));
	n = fcgi_nv_encode(out, sizeof(out), "BIG", 3, value, sizeof(value));
	ck_assert_uint_eq(n, 1 + 4 + 3 + sizeof(value));
	ck_assert_int_eq(fcgi_nv_parse(out, n, &nv), (ssize_t)n);
	ck_assert_uint_eq(nv.value_len, sizeof(value));
	ck_assert_int_eq(memcmp(nv.name, "BIG", 3), 0);
}
END_TEST

START_TEST(nv_encode_too_small)
{
	uint8_t	 out[4] = { 9, 9, 9, 9 };

	ck_assert_uint_eq(fcgi_nv_encode(out, sizeof(out), "NAME", 4, "v", 1),
	    7);
	ck_assert_int_eq(out[0], 9);
	ck_assert_uint_eq(fcgi_nv_encode(NULL, 0, "N", 1, "v", 1), 4);
}
END_TEST

START_TEST(type_names)
{
	ck_assert_str_eq(fcgi_type_name(FCGI_BEGIN_REQUEST), "BEGIN_REQUEST");
	ck_assert_str_eq(fcgi_type_name(FCGI_UNKNOWN_TYPE), "UNKNOWN_TYPE");
	ck_assert_str_eq(fcgi_type_name(200), "UNKNOWN");
}
END_TEST

/* partial: every truncated prefix asks for more, never reads past it. */
START_TEST(record_every_prefix)
{
	uint8_t			 b[16];
	struct fcgi_record	 rec;
	size_t			 len;

	sample_record(b);
	for (len = 0; len < sizeof(b); len++)
		ck_assert_int_eq(fcgi_parse(at_guard(b, len), len, &rec), 0);
	for (len = 0; len < 8; len++)
		ck_assert_int_eq(fcgi_header_decode(at_guard(b, len), len,
		    &rec.hdr), 0);
}
END_TEST

START_TEST(nv_every_prefix)
{
	static uint8_t	 out[1200];
	char		 value[1000];
	struct fcgi_nv	 nv;
	size_t		 n, len;

	memset(value, 'x', sizeof(value));
	n = fcgi_nv_encode(out, sizeof(out), "HTTP_COOKIE", 11, value,
	    sizeof(value));
	for (len = 0; len < n; len++)
		ck_assert_int_eq(fcgi_nv_parse(at_guard(out, len), len, &nv),
		    0);
	ck_assert_int_eq(fcgi_nv_parse(at_guard(out, n), n, &nv), (ssize_t)n);
}
END_TEST

/* A stream of pairs split at every point parses to the same pairs. */
START_TEST(nv_split_anywhere)
{
	uint8_t		 buf[600], acc[600];
	char		 big[300];
	struct fcgi_nv	 nv;
	size_t		 n = 0, cut, have, off, pairs;
	ssize_t		 used;

	memset(big, 'q', sizeof(big));
	n += fcgi_nv_encode(buf + n, sizeof(buf) - n, "A", 1, "1", 1);
	n += fcgi_nv_encode(buf + n, sizeof(buf) - n, "LONG", 4, big,
	    sizeof(big));
	n += fcgi_nv_encode(buf + n, sizeof(buf) - n, big, 130, "", 0);
	for (cut = 0; cut <= n; cut++) {
		/* Deliver the first cut bytes, parse, then the rest. */
		memcpy(acc, buf, cut);
		have = cut;
		off = 0;
		pairs = 0;
		while ((used = fcgi_nv_parse(acc + off, have - off, &nv)) > 0) {
			off += (size_t)used;
			pairs++;
		}
		ck_assert_int_eq(used, 0);
		memcpy(acc + have, buf + cut, n - cut);
		have = n;
		while ((used = fcgi_nv_parse(acc + off, have - off, &nv)) > 0) {
			off += (size_t)used;
			pairs++;
		}
		ck_assert_uint_eq(off, n);
		ck_assert_uint_eq(pairs, 3);
	}
}
END_TEST

START_TEST(bad_versions)
{
	uint8_t			 b[16];
	struct fcgi_record	 rec;
	static const uint8_t	 versions[] = { 0, 2, 3, 0x80, 0xff };
	size_t			 i;

	for (i = 0; i < sizeof(versions); i++) {
		sample_record(b);
		b[0] = versions[i];
		ck_assert_int_eq(fcgi_parse(at_guard(b, 16), 16, &rec), -1);
		ck_assert_int_eq(fcgi_header_decode(b, 8, &rec.hdr), -1);
	}
}
END_TEST

START_TEST(bad_type_zero)
{
	uint8_t			 b[16];
	struct fcgi_record	 rec;

	sample_record(b);
	b[1] = 0;
	ck_assert_int_eq(fcgi_parse(b, 16, &rec), -1);
}
END_TEST

START_TEST(bad_begin_and_end_length)
{
	uint8_t		 b[16] = { 0 };
	uint16_t	 role;
	uint8_t		 flags, ps;
	uint32_t	 app;

	ck_assert_int_eq(fcgi_begin_decode(b, 7, &role, &flags), -1);
	ck_assert_int_eq(fcgi_begin_decode(b, 9, &role, &flags), -1);
	ck_assert_int_eq(fcgi_end_decode(b, 0, &app, &ps), -1);
}
END_TEST

START_TEST(bad_nv_lengths)
{
	/* Two 31-bit lengths that together pass 2 GiB. */
	static const uint8_t	 b[] = { 0xff, 0xff, 0xff, 0xff,
	    0xc0, 0, 0, 0, 'x' };
	struct fcgi_nv		 nv;

	ck_assert_int_eq(fcgi_nv_parse(at_guard(b, sizeof(b)), sizeof(b),
	    &nv), -1);
}
END_TEST

static Suite *
proto_suite(void)
{
	Suite	*s = suite_create("fcgi_proto");

	suite_add_case(s, "core", guard_setup, guard_teardown, 0, header_roundtrip,
	    record_whole, record_largest, record_two_in_a_row,
	    begin_end_unknown, padding_values, nv_short_and_long,
	    nv_encode_too_small, type_names, NULL);
	suite_add_case(s, "partial", guard_setup, guard_teardown, 0,
	    record_every_prefix, nv_every_prefix, nv_split_anywhere, NULL);
	suite_add_case(s, "malformed", guard_setup, guard_teardown, 0,
	    bad_versions, bad_type_zero, bad_begin_and_end_length,
	    bad_nv_lengths, NULL);
	return s;
}

int
main(void)
{
	return suite_run(proto_suite());
}
