// SPDX-License-Identifier: GPL-2.0
/* The polling schedule: fast at start, backing off, fast again after a disturbance. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/poll_sched.h"

#define S 1000000000LL

TEST(backs_off_and_returns)
{
	struct poll_sched ps;
	int i;

	poll_sched_init(&ps, 1 * S, 64 * S, 4, 1000000);
	EXPECT_EQ(1 * S, ps.interval_ns);
	for (i = 0; i < 4; i++) {
		poll_sched_update(&ps, 1000, false);
		EXPECT_EQ(1 * S, ps.interval_ns);
	}
	for (i = 1; i <= 6; i++) {
		poll_sched_update(&ps, 1000, false);
		EXPECT_EQ((1LL << i) * S, ps.interval_ns);
	}
	poll_sched_update(&ps, 1000, false);
	EXPECT_EQ(64 * S, ps.interval_ns);	/* stays at the maximum */

	/* A large offset: fast again, for fastpolls more polls. */
	poll_sched_update(&ps, -2000000, false);
	EXPECT_EQ(1 * S, ps.interval_ns);
	EXPECT_EQ(4, ps.fast_left);
	/* An explicit disturbance (step, new source) does the same. */
	for (i = 0; i < 8; i++)
		poll_sched_update(&ps, 0, false);
	EXPECT_GT(ps.interval_ns, 1 * S);
	poll_sched_update(&ps, 0, true);
	EXPECT_EQ(1 * S, ps.interval_ns);
}

TEST(failures_back_off_too)
{
	struct poll_sched ps;
	int i;

	poll_sched_init(&ps, 1 * S, 16 * S, 2, 1000000);
	for (i = 0; i < 2; i++) {
		poll_sched_failed(&ps);
		EXPECT_EQ(1 * S, ps.interval_ns);
	}
	for (i = 0; i < 10; i++)
		poll_sched_failed(&ps);
	EXPECT_EQ(16 * S, ps.interval_ns);
}

TEST(odd_maximum_is_reached_exactly)
{
	struct poll_sched ps;
	int i;

	poll_sched_init(&ps, 3 * S, 20 * S, 0, 1000000);
	for (i = 0; i < 5; i++)
		poll_sched_update(&ps, 0, false);
	EXPECT_EQ(20 * S, ps.interval_ns);
}

TEST_HARNESS_MAIN
