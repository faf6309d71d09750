// SPDX-License-Identifier: GPL-2.0
/*
 * tools/perfetto/pb.h, the protobuf wire format of the Perfetto writers and the
 * merge's reader: varints of every length round-trip, both where the
 * encoder writes straight into the buffer and in its last ten bytes,
 * where it goes through a copy, and decode alike whether the decoder
 * reads them eight bytes at once or byte by byte; a message that does not
 * fit is flagged, never cut short; a truncated or over-long varint is not
 * read; fixed-width fields are little-endian; the unchecked writers
 * agree with the checked ones.
 */
#include <stdint.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "perfetto/pb.h"

/* 0, and for each length 1..10 its smallest and largest value. */
static const uint64_t values[] = {
	0, 1, 0x7f, 0x80, 0x3fff, 0x4000, 0x1fffff, 0x200000, 0xfffffff,
	0x10000000, 0x7ffffffffULL, 0x800000000ULL, 0x3ffffffffffULL,
	0x40000000000ULL, 0x1ffffffffffffULL, 0x2000000000000ULL,
	0xffffffffffffffULL, 0x100000000000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, UINT64_MAX,
};
#define NVALUES (sizeof(values) / sizeof(values[0]))

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

static void decodes_back(struct __test_metadata *_metadata, const struct pb *b,
			 size_t from)
{
	const uint8_t *p = b->buf + from, *end = b->buf + b->len;
	uint64_t v;
	size_t i;

	for (i = 0; i < NVALUES; i++) {
		ASSERT_TRUE(pb_get_varint(&p, end, &v));
		EXPECT_EQ(values[i], v);
	}
	EXPECT_EQ(end, p);
}

TEST(varints_of_every_length_round_trip)
{
	struct pb b;
	size_t i, want = 0;

	pb_reset(&b);
	for (i = 0; i < NVALUES; i++) {
		pb_varint(&b, values[i]);
		want += varint_len(values[i]);
	}
	ASSERT_FALSE(b.overflow);
	ASSERT_EQ(want, b.len);
	EXPECT_EQ(0x80, b.buf[3]);	/* 0x80: low bits 0 with the continuation */
	EXPECT_EQ(0x01, b.buf[4]);
	decodes_back(_metadata, &b, 0);
}

/* Each value at each of the last 30 offsets: every length meets every room. */
TEST(varints_in_the_last_ten_bytes_are_exact_and_fill_the_buffer)
{
	struct pb b;
	size_t start, i, n;

	for (start = sizeof(b.buf) - 30; start <= sizeof(b.buf); start++) {
		for (i = 0; i < NVALUES; i++) {
			n = varint_len(values[i]);
			pb_reset(&b);
			b.len = start;
			pb_varint(&b, values[i]);
			if (start + n > sizeof(b.buf)) {
				/* Nothing of it is kept, and the message is marked. */
				EXPECT_TRUE(b.overflow);
				EXPECT_EQ(start, b.len);
			} else {
				ASSERT_FALSE(b.overflow);
				ASSERT_EQ(start + n, b.len);
			}
		}
	}
	/* Exactly full: a last one-byte varint in the last byte. */
	pb_reset(&b);
	b.len = sizeof(b.buf) - 1;
	pb_varint(&b, 5);
	EXPECT_FALSE(b.overflow);
	EXPECT_EQ(sizeof(b.buf), b.len);
	EXPECT_EQ(5, b.buf[sizeof(b.buf) - 1]);
	pb_varint(&b, 0);
	EXPECT_TRUE(b.overflow);
	EXPECT_EQ(sizeof(b.buf), b.len);
}

TEST(a_truncated_varint_is_not_read)
{
	struct pb b;
	const uint8_t *p;
	uint64_t v = 42;
	size_t n;

	pb_reset(&b);
	pb_varint(&b, UINT64_MAX);
	for (n = 0; n < b.len; n++) {
		p = b.buf;
		EXPECT_FALSE(pb_get_varint(&p, b.buf + n, &v));
		EXPECT_EQ(42, v);
	}
}

/*
 * With eight or more bytes readable the decoder takes eight at once: each
 * value, followed by none to 22 bytes with and without their continuation
 * bit, reads back exactly, and stops where its own bytes end.
 */
TEST(varints_followed_by_more_bytes_read_back_exactly)
{
	static const uint8_t pads[] = { 0x00, 0x80, 0xff };
	uint8_t buf[32];
	const uint8_t *p;
	struct pb b;
	size_t i, j;
	uint64_t v;

	size_t more;

	for (i = 0; i < NVALUES; i++) {
		for (j = 0; j < sizeof(pads); j++) {
			pb_reset(&b);
			pb_varint(&b, values[i]);
			memset(buf, pads[j], sizeof(buf));
			memcpy(buf, b.buf, b.len);
			for (more = 0; b.len + more <= sizeof(buf); more++) {
				p = buf;
				ASSERT_TRUE(pb_get_varint(&p, buf + b.len + more, &v));
				EXPECT_EQ(values[i], v);
				EXPECT_EQ(buf + b.len, p);
			}
		}
	}
}

/* Eleven bytes or more, or a tenth byte that goes on: not a 64-bit value. */
TEST(a_varint_longer_than_ten_bytes_is_not_read)
{
	uint8_t buf[32];
	const uint8_t *p;
	uint64_t v = 42;
	size_t n;

	memset(buf, 0xff, sizeof(buf));
	for (n = 0; n <= sizeof(buf); n++) {
		p = buf;
		EXPECT_FALSE(pb_get_varint(&p, buf + n, &v));
		EXPECT_EQ((const uint8_t *)buf, p);
	}
	buf[10] = 0x01;		/* the end, one byte too late */
	p = buf;
	EXPECT_FALSE(pb_get_varint(&p, buf + sizeof(buf), &v));
	EXPECT_EQ(42, v);
}

/* Fixed-width fields are little-endian, and one cut short is not read. */
TEST(fixed_fields_read_little_endian_and_not_past_the_end)
{
	static const uint8_t msg[] = {
		1 << 3 | PB_WIRE_I64, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88,
		2 << 3 | PB_WIRE_I32, 0xfe, 0xff, 0xff, 0x7f,
	};
	const uint8_t *p = msg;
	struct pb_field f;
	size_t n;

	ASSERT_TRUE(pb_next(&p, msg + sizeof(msg), &f));
	EXPECT_EQ(1, f.num);
	EXPECT_EQ(0x8807060504030201ULL, f.val);
	ASSERT_TRUE(pb_next(&p, msg + sizeof(msg), &f));
	EXPECT_EQ(2, f.num);
	EXPECT_EQ(0x7ffffffeULL, f.val);
	EXPECT_FALSE(pb_next(&p, msg + sizeof(msg), &f));
	for (n = 1; n < 9; n++) {
		p = msg;
		EXPECT_FALSE(pb_next(&p, msg + n, &f));
	}
	for (n = 10; n < sizeof(msg); n++) {
		p = msg + 9;
		EXPECT_FALSE(pb_next(&p, msg + n, &f));
	}
}

/*
 * A field taken by number: with a tag of one byte or two, only of its own
 * number and wire type, and neither a value nor a length cut short by the
 * end; a field not taken leaves the position where it was.
 */
TEST(a_field_is_taken_only_when_it_is_the_one_expected)
{
	static const uint8_t name[] = "poll";
	const uint8_t *p, *buf;
	uint8_t msg[64];
	struct pb b;
	size_t n, len;
	uint64_t v;

	pb_reset(&b);
	pb_uint(&b, 9, 300);
	pb_bytes(&b, 23, name, 4);
	pb_uint(&b, 23, 1);
	memcpy(msg, b.buf, b.len);

	p = msg;
	EXPECT_FALSE(pb_take_varint(&p, msg + b.len, 11, &v));	/* another number */
	EXPECT_FALSE(pb_take_bytes(&p, msg + b.len, 9, &buf, &len));	/* another type */
	EXPECT_EQ((const uint8_t *)msg, p);
	ASSERT_TRUE(pb_take_varint(&p, msg + b.len, 9, &v));
	EXPECT_EQ(300, v);
	ASSERT_TRUE(pb_take_bytes(&p, msg + b.len, 23, &buf, &len));	/* a tag of two bytes */
	ASSERT_EQ(4, len);
	EXPECT_EQ(0, memcmp(buf, name, 4));
	EXPECT_FALSE(pb_take_bytes(&p, msg + b.len, 23, &buf, &len));
	ASSERT_TRUE(pb_take_varint(&p, msg + b.len, 23, &v));
	EXPECT_EQ(1, v);
	EXPECT_EQ(msg + b.len, p);

	/* cut short anywhere: not taken, and nothing consumed */
	for (n = 0; n < 3; n++) {
		p = msg;
		EXPECT_FALSE(pb_take_varint(&p, msg + n, 9, &v));
		EXPECT_EQ((const uint8_t *)msg, p);
	}
	for (n = 3; n < 3 + 3 + 4; n++) {
		p = msg + 3;
		EXPECT_FALSE(pb_take_bytes(&p, msg + n, 23, &buf, &len));
		EXPECT_EQ(msg + 3, p);
	}
}

/*
 * The unchecked writers make the bytes the checked ones make, in the
 * sizes pb_*_size() gave, and write nothing past them.
 */
TEST(sized_writing_matches_the_checked_encoder)
{
	static const uint8_t bytes[] = "debug annotation";
	uint8_t out[64];
	struct pb b;
	uint8_t *o;
	size_t i;

	for (i = 0; i < NVALUES; i++) {
		EXPECT_EQ(varint_len(values[i]), pb_varint_size(values[i]));

		memset(out, 0xa5, sizeof(out));
		o = pb_put_varint(out, values[i]);
		EXPECT_EQ(varint_len(values[i]), (size_t)(o - out));
		pb_reset(&b);
		pb_varint(&b, values[i]);
		EXPECT_EQ(0, memcmp(b.buf, out, b.len));
		EXPECT_EQ(0xa5, *o);

		o = pb_put_uint(out, 23, values[i]);
		EXPECT_EQ(pb_uint_size(23, values[i]), (size_t)(o - out));
		pb_reset(&b);
		pb_uint(&b, 23, values[i]);
		ASSERT_EQ(b.len, (size_t)(o - out));
		EXPECT_EQ(0, memcmp(b.buf, out, b.len));

		o = pb_put_fixed64(out, 47, values[i]);
		EXPECT_EQ(pb_fixed64_size(47), (size_t)(o - out));
		pb_reset(&b);
		pb_fixed64(&b, 47, values[i]);
		ASSERT_EQ(b.len, (size_t)(o - out));
		EXPECT_EQ(0, memcmp(b.buf, out, b.len));
	}
	o = pb_put_bytes(out, 4, bytes, sizeof(bytes));
	EXPECT_EQ(pb_bytes_size(4, sizeof(bytes)), (size_t)(o - out));
	pb_reset(&b);
	pb_bytes(&b, 4, bytes, sizeof(bytes));
	ASSERT_EQ(b.len, (size_t)(o - out));
	EXPECT_EQ(0, memcmp(b.buf, out, b.len));
}

TEST_HARNESS_MAIN
