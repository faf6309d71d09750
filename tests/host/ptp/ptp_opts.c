// SPDX-License-Identifier: GPL-2.0
/*
 * The PTP backends' timescale rule (ptp_opts.h): what offset a measurement
 * against a TAI or UTC reference carries, whether it is marked TAI, and
 * the UTC offset it keeps for sync and the daemon to convert with.
 */
#include <errno.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/ptp_opts.h"

#define TAI_UTC_NS	37000000000LL	/* 37 s, since 2017 */

static struct measurement ts(const char *spec, bool ref_tai, int announced)
{
	struct measurement m = { .offset_ns = TAI_UTC_NS + 500 };
	struct ptp_opts o;
	char err[128];

	if (ptp_opts_parse(&o, spec, "utc_offset timescale", err, sizeof(err)))
		m.offset_ns = -1;
	else
		ptp_opts_timescale(&o, &m, ref_tai, announced);
	return m;
}

TEST(announced_offset_moves_tai_to_utc_and_is_kept)
{
	struct measurement m = ts("eth0?utc_offset=36", true, 37);

	EXPECT_EQ(500, m.offset_ns);	/* the Announce wins over the option */
	EXPECT_FALSE(m.tai);
	EXPECT_TRUE(m.utc_offset_valid);
	EXPECT_EQ(37, m.utc_offset);
}

TEST(option_offset_when_none_announced)
{
	struct measurement m = ts("eth0?utc_offset=37", true, -1);

	EXPECT_EQ(500, m.offset_ns);
	EXPECT_FALSE(m.tai);
	EXPECT_TRUE(m.utc_offset_valid);
}

TEST(no_offset_leaves_tai_marked)
{
	struct measurement m = ts("eth0", true, -1);

	EXPECT_EQ(TAI_UTC_NS + 500, m.offset_ns);
	EXPECT_TRUE(m.tai);
	EXPECT_FALSE(m.utc_offset_valid);
}

TEST(timescale_tai_keeps_tai_with_its_offset)
{
	struct measurement m = ts("eth0?timescale=tai", true, 37);

	EXPECT_EQ(TAI_UTC_NS + 500, m.offset_ns);
	EXPECT_TRUE(m.tai);
	EXPECT_TRUE(m.utc_offset_valid);
	EXPECT_EQ(37, m.utc_offset);
}

TEST(utc_reference_keeps_the_offset_for_a_tai_clock)
{
	struct measurement m = ts("eth0?utc_offset=37", false, -1);

	EXPECT_EQ(TAI_UTC_NS + 500, m.offset_ns);
	EXPECT_FALSE(m.tai);
	EXPECT_TRUE(m.utc_offset_valid);
}

TEST(arb_is_taken_as_it_is)
{
	struct measurement m = ts("eth0?timescale=arb", true, 37);

	EXPECT_EQ(TAI_UTC_NS + 500, m.offset_ns);
	EXPECT_FALSE(m.tai);
	EXPECT_FALSE(m.utc_offset_valid);
}

TEST_HARNESS_MAIN
