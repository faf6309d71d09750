// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel CLOCK_REALTIME stamps on the target clock (the NTP client's
 * SO_TIMESTAMPING stamps) when REALTIME was stepped between the stamp and
 * its conversion, on a logical clock of the test's, with this process's
 * CLOCK_REALTIME stepped (fake_realtime.h): the machine's clock is never
 * touched.
 */
#include <errno.h>
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "fake_logical.h"
#include "fake_realtime.h"

#define MS		1000000LL
#define D0		FAKE_D0
#define LOGICAL		FAKE_LOGICAL

/*
 * A reply stamped 5 ms ago (its request sent 6 ms ago, REALTIME - MONOTONIC
 * measured then), REALTIME stepped by step since: on the logical clock it
 * is where it was stamped, to the error the conversion gives, or refused
 * if the track cannot tell which side of the step it is on. Returns
 * whether it was placed.
 */
static bool stamp_after_step(struct __test_metadata *_metadata, int64_t step)
{
	static struct lclk_page page;
	struct target_clock tc;
	struct realtime_track track;
	int64_t stamped = monotonic_ns() - 5 * MS, rt = stamped + D0, t, base, err;
	int r;

	fake_logical(&tc, &page);
	fake_d = D0;
	realtime_track_init(&track, D0, 50, stamped - 1 * MS);
	fake_d = D0 + step;
	EXPECT_EQ(0, realtime_track_measure(&track));
	r = target_from_realtime(&tc, &track, rt, stamped - 1 * MS, monotonic_ns(), &t, &base,
				 &err);
	fake_d = D0;
	if (r) {
		EXPECT_EQ(-ERANGE, r);
		return false;
	}
	EXPECT_LE(llabs(base - stamped), err)
		TH_LOG("REALTIME stepped %+lld ms: stamp %lld ns off, error %lld ns",
		       (long long)(step / MS), (long long)(base - stamped), (long long)err);
	EXPECT_LE(llabs(t - (LOGICAL + stamped)), err);
	return true;
}

TEST(stamp_without_step)
{
	EXPECT_TRUE(stamp_after_step(_metadata, 0));
}

/* Under the difference after the step it would be 3 ms before the send. */
TEST(stamp_after_forward_step)
{
	EXPECT_TRUE(stamp_after_step(_metadata, 3 * MS));
}

/* Under the one after it, 2 ms ago: either fits, refused. */
TEST(stamp_after_backward_step)
{
	EXPECT_FALSE(stamp_after_step(_metadata, -3 * MS));
}

/* Stepped back further than the wait: placed. */
TEST(stamp_after_large_backward_step)
{
	EXPECT_TRUE(stamp_after_step(_metadata, -1000 * MS));
}

TEST_HARNESS_MAIN
