// SPDX-License-Identifier: GPL-2.0
/* REALTIME stamps on CLOCK_MONOTONIC across REALTIME steps. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lib/realtime_track.h"

#define MS	1000000LL
#define OFF	(1700000000LL * 1000 * MS)	/* REALTIME - MONOTONIC */

TEST(no_step_converts_within_the_bracket)
{
	struct realtime_track t;
	int64_t mono, err;

	realtime_track_init(&t, OFF, 50, 1000 * MS);
	EXPECT_FALSE(realtime_track_update(&t, OFF + 80, 40, 1010 * MS));
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 1005 * MS, INT64_MIN, 1010 * MS,
					    &mono, &err));
	EXPECT_EQ(1005 * MS - 80, mono);
	EXPECT_EQ(40, err);
	/* Never after it was read, never before it was sent. */
	EXPECT_EQ(-ERANGE, realtime_track_to_mono(&t, OFF + 1011 * MS, INT64_MIN, 1010 * MS,
						  &mono, &err));
	EXPECT_EQ(-ERANGE, realtime_track_to_mono(&t, OFF + 900 * MS, 1000 * MS, 1010 * MS,
						  &mono, &err));
}

TEST(step_is_placed_or_refused)
{
	struct realtime_track t;
	int64_t mono, err;

	realtime_track_init(&t, OFF, 50, 1000 * MS);
	/* REALTIME stepped back 1 s between 1000 and 1010 ms. */
	EXPECT_TRUE(realtime_track_update(&t, OFF - 1000 * MS, 50, 1010 * MS));
	/* Stamped at 995 ms, before the step: only the old difference fits. */
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 995 * MS, INT64_MIN, 1020 * MS,
					    &mono, &err));
	EXPECT_EQ(995 * MS, mono);
	/*
	 * Stamped at 1015 ms, after it (REALTIME reads 15 ms): at 15 ms
	 * before it, had it waited a second, or at 1015 after. What came
	 * before it on the socket (at 1000 ms) tells.
	 */
	EXPECT_EQ(-ERANGE, realtime_track_to_mono(&t, OFF + 15 * MS, INT64_MIN, 1020 * MS,
						  &mono, &err));
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 15 * MS, 1000 * MS, 1020 * MS,
					    &mono, &err));
	EXPECT_EQ(1015 * MS, mono);
	/*
	 * Read at 2500 ms, REALTIME says 1005 ms: 1005 before the step or
	 * 2005 after it. Both fit: refused.
	 */
	EXPECT_EQ(-ERANGE, realtime_track_to_mono(&t, OFF + 1005 * MS, 900 * MS, 2500 * MS,
						  &mono, &err));
	/* A small update later, no new step: the old one still resolves. */
	EXPECT_FALSE(realtime_track_update(&t, OFF - 1000 * MS + 30, 50, 3000 * MS));
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 2900 * MS - 1000 * MS, INT64_MIN,
					    3000 * MS, &mono, &err));
	EXPECT_EQ(2900 * MS - 30, mono);
}

/*
 * Two steps while a message waited in its socket: stamped at 995 ms, under
 * the first difference; REALTIME stepped +3 ms between 1000 and 1010 ms,
 * then -5 ms between 1010 and 1020 ms; read at 1020 ms, the message before
 * it on the socket stamped at 991 ms. Neither of the last two differences
 * is the stamp's own: converted with either, it is off by milliseconds.
 */
TEST(stamp_from_before_two_steps)
{
	struct realtime_track t;
	int64_t mono, err;
	int r;

	realtime_track_init(&t, OFF, 50, 1000 * MS);
	EXPECT_TRUE(realtime_track_update(&t, OFF + 3 * MS, 50, 1010 * MS));
	EXPECT_TRUE(realtime_track_update(&t, OFF - 2 * MS, 50, 1020 * MS));
	r = realtime_track_to_mono(&t, OFF + 995 * MS, 990 * MS, 1020 * MS, &mono, &err);
	if (!r)
		EXPECT_LE(llabs(mono - 995 * MS), err)
			TH_LOG("at %lld ns +- %lld, stamped at 995 ms", (long long)mono,
			       (long long)err);
	/* After the first step, before the second: the middle difference. */
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 3 * MS + 1012 * MS, 1011 * MS, 1014 * MS,
					    &mono, &err));
	EXPECT_EQ(1012 * MS, mono);
	/* Before both, with the bracket to tell: the first difference. */
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 995 * MS, 994 * MS, 997 * MS, &mono, &err));
	EXPECT_EQ(995 * MS, mono);
}

/*
 * The system clock at a monotonic instant: the difference in force then,
 * none if a step may lie between.
 */
TEST(realtime_of_an_instant)
{
	struct realtime_track t;
	int64_t rt, err;

	realtime_track_init(&t, OFF, 50, 1000 * MS);
	ASSERT_EQ(0, realtime_track_to_rt(&t, 900 * MS, 10, &rt, &err));
	EXPECT_EQ(OFF + 900 * MS, rt);
	EXPECT_EQ(60, err);
	EXPECT_TRUE(realtime_track_update(&t, OFF + 3 * MS, 50, 1010 * MS));
	ASSERT_EQ(0, realtime_track_to_rt(&t, 1015 * MS, 10, &rt, &err));
	EXPECT_EQ(OFF + 3 * MS + 1015 * MS, rt);
	EXPECT_EQ(-ERANGE, realtime_track_to_rt(&t, 1005 * MS, 10, &rt, &err));
	ASSERT_EQ(0, realtime_track_to_rt(&t, 995 * MS, 10, &rt, &err));
	EXPECT_EQ(OFF + 995 * MS, rt);
}

/*
 * A step hidden by a wide measurement: at 1000 ms the difference is
 * measured to 50 ns, at 1010 ms only to 2 ms (the thread was preempted
 * between its readings), at 1020 ms to 50 ns again, 1.5 ms from the first:
 * REALTIME stepped in between, though neither pair of neighbours tells. A
 * stamp taken at 1005 ms, read at 1020 ms, is placed where it was taken, or
 * refused.
 */
TEST(step_hidden_by_a_wide_measurement)
{
	struct realtime_track t;
	int64_t mono, err;
	int r;

	realtime_track_init(&t, OFF, 50, 1000 * MS);
	EXPECT_FALSE(realtime_track_update(&t, OFF + 1 * MS, 2 * MS, 1010 * MS));
	EXPECT_TRUE(realtime_track_update(&t, OFF + 1500000, 50, 1020 * MS));
	r = realtime_track_to_mono(&t, OFF + 1005 * MS, 1001 * MS, 1020 * MS, &mono, &err);
	if (!r)
		EXPECT_LE(llabs(mono - 1005 * MS), err)
			TH_LOG("at %lld ns +- %lld, stamped at 1005 ms", (long long)mono,
			       (long long)err);
	/* A stamp after it, with the bracket to tell: the difference of now. */
	ASSERT_EQ(0, realtime_track_to_mono(&t, OFF + 1500000 + 1019 * MS, 1018 * MS, 1020 * MS,
					    &mono, &err));
	EXPECT_EQ(1019 * MS, mono);
}

TEST_HARNESS_MAIN
