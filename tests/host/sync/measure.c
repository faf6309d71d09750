// SPDX-License-Identifier: GPL-2.0
/* The burst options query and sync start from. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <string.h>

#include "kselftest_harness.h"
#include "sync/measure.h"

/*
 * query and sync keep their options on the stack: every field must be set
 * by the defaults, or a burst takes whatever was there (first_samples left
 * unset made sync's bursts 35-64 exchanges long instead of 8).
 */
TEST(defaults_set_every_field)
{
	struct source_opts o;

	memset(&o, 0xa5, sizeof(o));
	measure_default_opts(&o, 2);
	EXPECT_EQ(8, o.samples);
	EXPECT_EQ(0, o.first_samples);
	EXPECT_EQ(-1, o.interval_ns);
	EXPECT_EQ(1000000000LL, o.timeout_ns);
	EXPECT_EQ(2, o.verbose);
}

TEST_HARNESS_MAIN
