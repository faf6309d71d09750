/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Seeded random numbers for the model's host tests (splitmix64): the same
 * seed gives the same cases, so a failure can be replayed.
 */
#ifndef LCLK_TEST_RAND_H
#define LCLK_TEST_RAND_H

#include <linux/types.h>

static __u64 test_rng = 0x9e3779b97f4a7c15ULL;

static inline __u64 test_rand(void)
{
	__u64 z = (test_rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi], both within __s64. */
static inline __s64 test_between(__s64 lo, __s64 hi)
{
	return lo + (__s64)(test_rand() % ((__u64)(hi - lo) + 1));
}

#endif /* LCLK_TEST_RAND_H */
