/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_REALTIME for host tests of timestamp conversions, never the
 * machine's: as this process reads it, it is CLOCK_MONOTONIC + fake_d, so
 * that a test steps it (sets fake_d) without touching the system clock.
 * Include in one file of a test binary: it defines clock_gettime().
 */
#ifndef LCLK_TEST_FAKE_REALTIME_H
#define LCLK_TEST_FAKE_REALTIME_H

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock_offset.h"

#define FAKE_D0		(1700000000LL * 1000000000LL)	/* REALTIME - MONOTONIC */

static int64_t fake_d = FAKE_D0;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, clk == CLOCK_REALTIME ? CLOCK_MONOTONIC : clk,
			     ts);

	if (!r && clk == CLOCK_REALTIME) {
		int64_t ns = timespec_ns(ts) + fake_d;

		ts->tv_sec = ns / 1000000000LL;
		ts->tv_nsec = ns % 1000000000LL;
	}
	return r;
}

#endif /* LCLK_TEST_FAKE_REALTIME_H */
