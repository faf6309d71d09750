// SPDX-License-Identifier: GPL-2.0
#include <errno.h>

#include "clock_offset.h"

int clock_offset_from_mono(clockid_t clk, int tries, int64_t *offset, int64_t *width)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < tries; i++) {
		struct timespec a, c, b;
		int64_t w;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (clock_gettime(clk, &c))
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &b);
		w = timespec_ns(&b) - timespec_ns(&a);
		if (w < best) {
			best = w;
			*offset = timespec_ns(&c) - (timespec_ns(&a) + w / 2);
		}
	}
	*width = best;
	return 0;
}
