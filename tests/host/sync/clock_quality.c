// SPDX-License-Identifier: GPL-2.0
/*
 * What bounds computed in userspace (a served NTP reply's dispersion, a
 * measurement's) assume of the target clock's drift: never less than what
 * the module grows its own bound with, which a rate set through the PTP
 * clock widens beyond max_drift.
 */
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lclk_model.h"
#include "sync/clock_quality.h"

static uint32_t drift_of(__u32 max_drift_ppb, __s64 drift_mult)
{
	static struct lclk_page page;
	struct target_clock tc = { .logical = true };

	memset(&page, 0, sizeof(page));
	page.params.max_drift_ppb = max_drift_ppb;
	page.params.drift_mult = drift_mult;
	tc.lc.page = &page;
	return clock_quality_drift_ppb(&tc);
}

TEST(drift_is_the_growth_the_module_uses)
{
	/*
	 * 50 ppm as set: the multiplier rounded up, and a unit more for the
	 * rate's truncation, is 50000.0006 ppb, rounded up again
	 */
	EXPECT_EQ(50001, drift_of(50000, lclk_ppb_to_mult(50000)));
	/* widened by a +500 ppm adjfine: 550 ppm, whatever max_drift says */
	EXPECT_LE(550000, drift_of(50000, lclk_ppb_to_mult(50000) +
				   lclk_ppb_to_mult(500000)));
	EXPECT_GE(550003, drift_of(50000, lclk_ppb_to_mult(50000) +
				   lclk_ppb_to_mult(500000)));
	EXPECT_EQ(0, drift_of(0, 0));
	EXPECT_EQ(1, drift_of(0, lclk_ppb_to_mult(0)));
}

TEST(the_system_clock_is_phi)
{
	struct target_clock tc = { .logical = false };

	EXPECT_EQ(CLOCK_QUALITY_SYSTEM_DRIFT_PPB, clock_quality_drift_ppb(&tc));
}

TEST_HARNESS_MAIN
