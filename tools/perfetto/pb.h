/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * The little of protobuf's wire format Perfetto traces need: varints,
 * fixed64 and length-delimited fields, encoded into a bounded buffer and
 * decoded from a byte range. Shared by the trace writer (perfetto.c), the
 * merge's reader (pftrace_read.c) and its writer (pftrace_write.c).
 */
#ifndef LCLK_PB_H
#define LCLK_PB_H

#include <endian.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PB_WIRE_VARINT	0
#define PB_WIRE_I64	1
#define PB_WIRE_LEN	2
#define PB_WIRE_I32	5

/* A message under construction; an overflow fails the whole packet. */
struct pb {
	uint8_t buf[1024];
	size_t len;
	bool overflow;
};

/*
 * Start (or restart) a message. Cheaper than an initialiser, which would
 * clear the whole buffer: that was a third of the merge's writing.
 */
static inline void pb_reset(struct pb *b)
{
	b->len = 0;
	b->overflow = false;
}

static inline void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (b->overflow || n > sizeof(b->buf) - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/*
 * Unchecked writing, for a message whose size is known before it is
 * written (the merge's events): pb_*_size() first, then pb_put_*() into
 * room the caller has made, with no check per field. Each returns where
 * the next field goes.
 */
static inline __attribute__((always_inline)) size_t
pb_varint_size(uint64_t v)
{
	/* ceil(bits / 7), as a multiply and a shift: no division */
	return ((63 - __builtin_clzll(v | 1)) * 9 + 73) >> 6;
}

static inline __attribute__((always_inline)) size_t
pb_uint_size(unsigned int field, uint64_t v)
{
	return pb_varint_size(field << 3) + pb_varint_size(v);
}

static inline __attribute__((always_inline)) size_t
pb_bytes_size(unsigned int field, size_t n)
{
	return pb_varint_size(field << 3) + pb_varint_size(n) + n;
}

static inline __attribute__((always_inline)) size_t
pb_fixed64_size(unsigned int field)
{
	return pb_varint_size(field << 3) + 8;
}

static inline __attribute__((always_inline)) uint8_t *
pb_put_varint(uint8_t *o, uint64_t v)
{
	while (v > 0x7f) {
		*o++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

static inline __attribute__((always_inline)) uint8_t *
pb_put_uint(uint8_t *o, unsigned int field, uint64_t v)
{
	return pb_put_varint(pb_put_varint(o, field << 3 | PB_WIRE_VARINT), v);
}

/* A length-delimited field's tag and length; its n bytes are the caller's. */
static inline __attribute__((always_inline)) uint8_t *
pb_put_len(uint8_t *o, unsigned int field, size_t n)
{
	return pb_put_varint(pb_put_varint(o, field << 3 | PB_WIRE_LEN), n);
}

static inline __attribute__((always_inline)) uint8_t *
pb_put_bytes(uint8_t *o, unsigned int field, const void *p, size_t n)
{
	o = pb_put_len(o, field, n);
	memcpy(o, p, n);
	return o + n;
}

static inline __attribute__((always_inline)) uint8_t *
pb_put_fixed64(uint8_t *o, unsigned int field, uint64_t v)
{
	uint64_t le = htole64(v);

	o = pb_put_varint(o, field << 3 | PB_WIRE_I64);
	memcpy(o, &le, sizeof(le));
	return o + sizeof(le);
}

static inline void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t out[10];

	/* Straight into the buffer when the longest varint fits. */
	if (!b->overflow && sizeof(b->buf) - b->len >= sizeof(out))
		b->len = pb_put_varint(b->buf + b->len, v) - b->buf;
	else
		pb_raw(b, out, pb_put_varint(out, v) - out);
}

static inline void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	pb_varint(b, field << 3 | PB_WIRE_VARINT);
	pb_varint(b, v);
}

/* int32/int64: two's complement as a 64-bit varint. */
static inline void pb_int(struct pb *b, unsigned int field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

static inline void pb_fixed64(struct pb *b, unsigned int field, uint64_t v)
{
	uint64_t le = htole64(v);

	pb_varint(b, field << 3 | PB_WIRE_I64);
	pb_raw(b, &le, sizeof(le));
}

static inline void pb_bytes(struct pb *b, unsigned int field, const void *p, size_t n)
{
	pb_varint(b, field << 3 | PB_WIRE_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

static inline void pb_str(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static inline void pb_msg(struct pb *b, unsigned int field, const struct pb *sub)
{
	if (sub->overflow)
		b->overflow = true;
	pb_bytes(b, field, sub->buf, sub->len);
}

/* One decoded field: its number, and a value (varint, fixed) or bytes. */
struct pb_field {
	unsigned int num;
	unsigned int wire;
	uint64_t val;
	const uint8_t *buf;
	size_t len;
};

/*
 * Seven bits a byte, little-endian: the bytes of the eight-byte word w
 * (the varint's first len, 2..8, without their continuation bits) folded
 * into one value, pairs, then fours, then the eight.
 */
static inline uint64_t pb_fold_varint(uint64_t w, unsigned int len)
{
	if (len < 8)
		w &= (1ULL << (8 * len)) - 1;
	w &= 0x7f7f7f7f7f7f7f7fULL;
	w = (w & 0x007f007f007f007fULL) | (w & 0x7f007f007f007f00ULL) >> 1;
	w = (w & 0x00003fff00003fffULL) | (w & 0x3fff00003fff0000ULL) >> 2;
	return (w & 0x000000000fffffffULL) | (w & 0x0fffffff00000000ULL) >> 4;
}

static inline bool pb_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	const uint8_t *q = *p, *lim;	/* not *p: a byte store may alias it */
	unsigned int shift;
	uint64_t x = 0;

	/* Tags and most lengths and small values: one byte. */
	if (q < end && *q < 0x80) {
		*v = *q;
		*p = q + 1;
		return true;
	}
	/*
	 * Timestamps and uuids take up to ten bytes: with eight readable, they
	 * are decoded as one word, without a branch per byte; a varint that
	 * goes on past them ends in the loop below.
	 */
	if (end - q >= 8) {
		uint64_t w, stops;

		memcpy(&w, q, sizeof(w));
		w = le64toh(w);
		stops = ~w & 0x8080808080808080ULL;
		if (stops) {
			unsigned int len = __builtin_ctzll(stops) / 8 + 1;

			*v = pb_fold_varint(w, len);
			*p = q + len;
			return true;
		}
		x = pb_fold_varint(w, 8);
		q += 8;
		shift = 56;
		lim = end - q < 2 ? end : q + 2;
	} else {
		shift = 0;
		lim = end;
	}
	/* Ten bytes at most (64 bits): one check per byte, not two. */
	for (; q < lim; shift += 7) {
		uint8_t b = *q++;

		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			*p = q;
			return true;
		}
	}
	return false;
}

/*
 * The next field of [*p, end); false at the end or on a malformed field.
 * Always inlined: the merge's loops over fields are most of its reading,
 * and gcc inlined this in some and not others, by turns as they changed.
 */
static inline __attribute__((always_inline)) bool
pb_next(const uint8_t **p, const uint8_t *end, struct pb_field *f)
{
	uint64_t tag, len;

	if (*p >= end || !pb_get_varint(p, end, &tag))
		return false;
	f->num = tag >> 3;
	f->wire = tag & 7;
	f->val = 0;
	f->buf = NULL;
	f->len = 0;
	switch (f->wire) {
	case PB_WIRE_VARINT:
		return pb_get_varint(p, end, &f->val);
	case PB_WIRE_LEN:
		if (!pb_get_varint(p, end, &len) || len > (uint64_t)(end - *p))
			return false;
		f->buf = *p;
		f->len = len;
		*p += len;
		return true;
	case PB_WIRE_I64:
	case PB_WIRE_I32:
		/* Two fixed-size copies: one of len bytes cost the merge 4.6 % more. */
		if (f->wire == PB_WIRE_I64) {
			uint64_t w;

			if (end - *p < 8)
				return false;
			memcpy(&w, *p, 8);
			f->val = le64toh(w);
			*p += 8;
		} else {
			uint32_t w;

			if (end - *p < 4)
				return false;
			memcpy(&w, *p, 4);
			f->val = le32toh(w);
			*p += 4;
		}
		return true;
	}
	return false;
}

/*
 * The field at *p if it is the one expected: field number num (below 2048:
 * a tag of one or two bytes) of the given wire type. A reader that knows
 * the order a writer keeps takes its fields so, comparing a tag's bytes
 * where pb_next() decodes each tag, and leaves the rest to pb_next(): the
 * fields are read in the same order either way. False, and *p unchanged,
 * for any other field or a malformed one.
 */
static inline __attribute__((always_inline)) bool
pb_take_tag(const uint8_t **p, const uint8_t *end, unsigned int num, unsigned int wire)
{
	unsigned int tag = num << 3 | wire;
	const uint8_t *q = *p;

	if (tag < 0x80) {
		if (q >= end || *q != tag)
			return false;
		*p = q + 1;
		return true;
	}
	if (end - q < 2 || q[0] != ((tag & 0x7f) | 0x80) || q[1] != tag >> 7)
		return false;
	*p = q + 2;
	return true;
}

static inline __attribute__((always_inline)) bool
pb_take_varint(const uint8_t **p, const uint8_t *end, unsigned int num, uint64_t *v)
{
	const uint8_t *q = *p;

	if (!pb_take_tag(&q, end, num, PB_WIRE_VARINT) || !pb_get_varint(&q, end, v))
		return false;
	*p = q;
	return true;
}

static inline __attribute__((always_inline)) bool
pb_take_bytes(const uint8_t **p, const uint8_t *end, unsigned int num,
	      const uint8_t **buf, size_t *len)
{
	const uint8_t *q = *p;
	uint64_t n;

	if (!pb_take_tag(&q, end, num, PB_WIRE_LEN) || !pb_get_varint(&q, end, &n) ||
	    n > (uint64_t)(end - q))
		return false;
	*buf = q;
	*len = n;
	*p = q + n;
	return true;
}

#endif /* LCLK_PB_H */
