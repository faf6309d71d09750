// SPDX-License-Identifier: GPL-2.0
/*
 * Which leap second the clock expects, against the calendar: the dates
 * and instants are the ones IERS Bulletin C gave (2016-12-31, the last
 * leap, 1483228800 s is 2017-01-01T00:00:00Z).
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/leap.h"

#define S	1000000000LL
#define NEW_YEAR_2017	(1483228800LL * S)
#define JULY_2015	(1435708800LL * S)	/* 2015-07-01T00:00:00Z */

TEST(vote)
{
	int ins3[] = { LEAP_INSERT, LEAP_INSERT, LEAP_NONE };
	int split[] = { LEAP_INSERT, LEAP_NONE };
	int del[] = { LEAP_DELETE };
	int mixed[] = { LEAP_INSERT, LEAP_DELETE, LEAP_INSERT, LEAP_DELETE };

	EXPECT_EQ(LEAP_INSERT, leap_vote(ins3, 3));
	EXPECT_EQ(LEAP_NONE, leap_vote(split, 2));	/* half is not more */
	EXPECT_EQ(LEAP_DELETE, leap_vote(del, 1));
	EXPECT_EQ(LEAP_NONE, leap_vote(mixed, 4));
	EXPECT_EQ(LEAP_NONE, leap_vote(NULL, 0));
}

TEST(only_on_the_last_day_of_june_or_december)
{
	/* any time of 2016-12-31 and of 2015-06-30 */
	EXPECT_EQ(LEAP_INSERT, leap_on_day(LEAP_INSERT, NEW_YEAR_2017 - 1));
	EXPECT_EQ(LEAP_INSERT, leap_on_day(LEAP_INSERT, NEW_YEAR_2017 - 86400 * S));
	EXPECT_EQ(LEAP_DELETE, leap_on_day(LEAP_DELETE, JULY_2015 - 3600 * S));
	/* the day before, the day after, another month's end */
	EXPECT_EQ(LEAP_NONE, leap_on_day(LEAP_INSERT, NEW_YEAR_2017 - 86400 * S - 1));
	EXPECT_EQ(LEAP_NONE, leap_on_day(LEAP_INSERT, NEW_YEAR_2017));
	EXPECT_EQ(LEAP_NONE, leap_on_day(LEAP_INSERT, (1488326400LL - 1) * S)); /* 2017-02-28 */
	EXPECT_EQ(LEAP_NONE, leap_on_day(LEAP_NONE, NEW_YEAR_2017 - 1));
	EXPECT_EQ(LEAP_NONE, leap_on_day(3, NEW_YEAR_2017 - 1));	/* unsynchronised */
}

TEST(instants)
{
	EXPECT_EQ(NEW_YEAR_2017, leap_instant(LEAP_INSERT, NEW_YEAR_2017 - 5 * S));
	EXPECT_EQ(NEW_YEAR_2017 - S, leap_instant(LEAP_DELETE, NEW_YEAR_2017 - 5 * S));
	/* before the epoch the day still starts at midnight */
	EXPECT_EQ(0, leap_instant(LEAP_INSERT, -1));
}

/*
 * What the daemon asks of the module: the day's leap with its instant;
 * none on a TAI clock; quiet within 2 s of the instant, on both sides
 * (after an insertion logical time repeats the second before it).
 */
TEST(wanted_and_quiet)
{
	int64_t at;

	EXPECT_EQ(LEAP_INSERT, leap_wanted(LEAP_INSERT, 0, NEW_YEAR_2017 - 3600 * S, &at));
	EXPECT_EQ(NEW_YEAR_2017, at);
	EXPECT_EQ(LEAP_DELETE, leap_wanted(LEAP_DELETE, 0, JULY_2015 - 3600 * S, &at));
	EXPECT_EQ(JULY_2015 - S, at);
	EXPECT_EQ(LEAP_NONE, leap_wanted(LEAP_INSERT, 1, NEW_YEAR_2017 - 3600 * S, &at));
	EXPECT_EQ(0, at);
	EXPECT_EQ(LEAP_NONE, leap_wanted(LEAP_INSERT, 0, NEW_YEAR_2017 + S, &at));
	EXPECT_EQ(0, at);
	EXPECT_FALSE(leap_quiet(NEW_YEAR_2017, NEW_YEAR_2017 - 2 * S - 1));
	EXPECT_TRUE(leap_quiet(NEW_YEAR_2017, NEW_YEAR_2017 - 2 * S));
	EXPECT_TRUE(leap_quiet(NEW_YEAR_2017, NEW_YEAR_2017 - S / 2));	/* repeated */
	EXPECT_TRUE(leap_quiet(NEW_YEAR_2017, NEW_YEAR_2017 + 2 * S));
	EXPECT_FALSE(leap_quiet(NEW_YEAR_2017, NEW_YEAR_2017 + 2 * S + 1));
	EXPECT_FALSE(leap_quiet(0, 0));				/* no leap */
}

TEST_HARNESS_MAIN
