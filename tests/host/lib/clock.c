// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel CLOCK_REALTIME stamps on the target clock (the NTP client's
 * SO_TIMESTAMPING stamps) when REALTIME was stepped between the stamp and
 * its conversion. This process's CLOCK_REALTIME is CLOCK_MONOTONIC +
 * fake_d: the machine's clock is never touched. A logical clock of the
 * test's: the logical time of CLOCK_MONOTONIC m is m + LOGICAL.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lib/clock.h"
#include "lib/clock_offset.h"

#define MS		1000000LL
#define D0		(1700000000LL * 1000 * MS)	/* REALTIME - MONOTONIC */
#define LOGICAL		(1700000000LL * 1000 * MS + 123456789)

static int64_t fake_d = D0;

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

static void fake_clock(struct target_clock *tc, struct lclk_page *page)
{
	memset(page, 0, sizeof(*page));
	page->magic = LCLK_PAGE_MAGIC;
	page->params.status = LCLK_STATUS_SYNCED;
	page->params.offset_ns = LOGICAL;
	page->params.bound0_ns = 1000;
	page->params.last_update_ns = 1;
	page->params.holdover_ns = INT64_MAX / 2;
	memset(tc, 0, sizeof(*tc));
	tc->logical = true;
	tc->lc.fd = -1;
	tc->lc.page = page;
	tc->path = "/dev/null";
}

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

	fake_clock(&tc, &page);
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
