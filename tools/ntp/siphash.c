// SPDX-License-Identifier: GPL-2.0
/* SipHash-2-4, from the paper's description: 2 rounds a word, 4 to finish. */
#include <string.h>

#include "siphash.h"

static inline uint64_t rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static inline void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = rotl(v[1], 13); v[1] ^= v[0]; v[0] = rotl(v[0], 32);
	v[2] += v[3]; v[3] = rotl(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl(v[1], 17); v[1] ^= v[2]; v[2] = rotl(v[2], 32);
}

static inline void compress(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

/* 8 bytes, little-endian whatever the host. */
static uint64_t le64(const uint8_t *p, size_t n)
{
	uint64_t m = 0;

	while (n--)
		m = m << 8 | p[n];
	return m;
}

uint64_t siphash24(const uint64_t key[2], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t v[4] = {
		key[0] ^ 0x736f6d6570736575ULL, key[1] ^ 0x646f72616e646f6dULL,
		key[0] ^ 0x6c7967656e657261ULL, key[1] ^ 0x7465646279746573ULL,
	};
	size_t left = len;

	for (; left >= 8; p += 8, left -= 8)
		compress(v, le64(p, 8));
	/* The last block: the leftover bytes and the length's low byte on top. */
	compress(v, le64(p, left) | (uint64_t)(len & 0xff) << 56);
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}
