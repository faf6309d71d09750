/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Leap seconds: which one the clock should expect, from what its sources
 * announce, the way chrony's reference.c takes it: a leap indicator counts
 * only on the last day of June or December (the days IERS puts them on;
 * an indicator on any other day is a source's error, not a leap), and only
 * when more than half of the sources that agree on the time announce it.
 */
#ifndef LCLK_LEAP_H
#define LCLK_LEAP_H

#include <stdint.h>

/* As NTP's leap indicator, and the module's LCLK_LEAP_*. */
#define LEAP_NONE	0
#define LEAP_INSERT	1	/* the day's last minute has 61 s */
#define LEAP_DELETE	2	/* ... 59 s */

/* The leap more than half of n sources announce, else LEAP_NONE. */
int leap_vote(const int *leaps, int n);

/*
 * The leap to expect at the end of the UTC day of utc_ns, if leap may come
 * then (the last day of June or December), else LEAP_NONE.
 */
int leap_on_day(int leap, int64_t utc_ns);

/*
 * UTC (POSIX seconds since the epoch, in ns) at which the clock steps for
 * a leap at the end of utc_ns's day: back 1 s at midnight for an insertion
 * (23:59:60 reads as 23:59:59 again, as the kernel's CLOCK_REALTIME does),
 * forward 1 s at 23:59:59 for a deletion.
 */
int64_t leap_instant(int leap, int64_t utc_ns);

/*
 * Around a leap's instant the daemon neither changes the leap nor syncs:
 * the module steps at the instant (lclk(4)), logical time repeats (or
 * skips) a second, and a measurement taken on one side of the step and
 * applied on the other would be off by it.
 */
#define LEAP_QUIET_NS	(2 * 1000000000LL)

/* Whether logical UTC utc_ns is within LEAP_QUIET_NS of a leap at at_ns. */
int leap_quiet(int64_t at_ns, int64_t utc_ns);

/*
 * The leap the clock should hold at logical time utc_ns, for the leap its
 * sources announce, on a clock of timescale clock_tai (which has none):
 * leap_on_day()'s, with its instant in *at_ns (0 for none).
 */
int leap_wanted(int announced, int clock_tai, int64_t utc_ns, int64_t *at_ns);

#endif /* LCLK_LEAP_H */
