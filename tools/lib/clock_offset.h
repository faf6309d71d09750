/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * Offsets between a clock and CLOCK_MONOTONIC, the base of every lclk
 * timestamp. Kernel timestamps that come in another clock (SO_TIMESTAMPING
 * software stamps are CLOCK_REALTIME, PHC reads are device time) are moved
 * to the monotonic base by reading both clocks back to back.
 */
#ifndef LCLK_CLOCK_OFFSET_H
#define LCLK_CLOCK_OFFSET_H

#include <stdint.h>
#include <time.h>

static inline int64_t timespec_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

static inline int64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return timespec_ns(&ts);
}

/*
 * clk - CLOCK_MONOTONIC at one instant: the reading of clk against the
 * middle of the narrowest of `tries` monotonic-clk-monotonic windows.
 * *width gets that window (the offset is within width / 2). Returns 0 or
 * -errno if clk cannot be read.
 */
int clock_offset_from_mono(clockid_t clk, int tries, int64_t *offset, int64_t *width);

#endif /* LCLK_CLOCK_OFFSET_H */
