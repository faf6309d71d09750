// SPDX-License-Identifier: GPL-2.0
/* poll() timeouts from nanosecond waits, long ones included. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <limits.h>

#include "kselftest_harness.h"
#include "lib/timeout.h"

#define MS 1000000LL
#define DAY (86400 * 1000000000LL)

TEST(rounds_up)
{
	EXPECT_EQ(0, timeout_ms(0));
	EXPECT_EQ(1, timeout_ms(1));
	EXPECT_EQ(1, timeout_ms(MS));
	EXPECT_EQ(2, timeout_ms(MS + 1));
	EXPECT_EQ(0, timeout_ms(-5 * MS));
}

/*
 * The config accepts timeouts and polls of days; beyond 24.8 days the
 * int cast wrapped negative, and poll() waits forever on that.
 */
TEST(long_waits_are_capped_never_negative)
{
	EXPECT_EQ(INT_MAX, timeout_ms(25 * DAY));
	EXPECT_EQ(INT_MAX, timeout_ms(52 * DAY));
	EXPECT_EQ(INT_MAX, timeout_ms(INT64_MAX));
	EXPECT_EQ(86400000, timeout_ms(DAY));
}

TEST_HARNESS_MAIN
