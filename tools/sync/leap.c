// SPDX-License-Identifier: GPL-2.0
/* Leap seconds announced by sources: see leap.h. */
#include <time.h>

#include "leap.h"

#define NS_PER_SEC	1000000000LL
#define NS_PER_DAY	(86400 * NS_PER_SEC)

int leap_vote(const int *leaps, int n)
{
	int i, ins = 0, del = 0;

	for (i = 0; i < n; i++) {
		ins += leaps[i] == LEAP_INSERT;
		del += leaps[i] == LEAP_DELETE;
	}
	if (2 * ins > n)
		return LEAP_INSERT;
	if (2 * del > n)
		return LEAP_DELETE;
	return LEAP_NONE;
}

/* The start of utc_ns's UTC day, floored for times before the epoch. */
static int64_t day_start(int64_t utc_ns)
{
	int64_t day = utc_ns / NS_PER_DAY;

	if (utc_ns % NS_PER_DAY < 0)
		day--;
	return day * NS_PER_DAY;
}

int leap_on_day(int leap, int64_t utc_ns)
{
	time_t tomorrow = (time_t)((day_start(utc_ns) + NS_PER_DAY) / NS_PER_SEC);
	struct tm tm;

	if (leap != LEAP_INSERT && leap != LEAP_DELETE)
		return LEAP_NONE;
	/* The last day of June or December: tomorrow is 1 July or 1 January. */
	if (!gmtime_r(&tomorrow, &tm) || tm.tm_mday != 1 ||
	    (tm.tm_mon != 0 && tm.tm_mon != 6))
		return LEAP_NONE;
	return leap;
}

int64_t leap_instant(int leap, int64_t utc_ns)
{
	int64_t midnight = day_start(utc_ns) + NS_PER_DAY;

	return leap == LEAP_DELETE ? midnight - NS_PER_SEC : midnight;
}

int leap_quiet(int64_t at_ns, int64_t utc_ns)
{
	int64_t d = utc_ns - at_ns;

	return at_ns && d >= -LEAP_QUIET_NS && d <= LEAP_QUIET_NS;
}

int leap_wanted(int announced, int clock_tai, int64_t utc_ns, int64_t *at_ns)
{
	int leap = clock_tai ? LEAP_NONE : leap_on_day(announced, utc_ns);

	*at_ns = leap ? leap_instant(leap, utc_ns) : 0;
	return leap;
}
