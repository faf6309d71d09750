// SPDX-License-Identifier: GPL-2.0
/* A grandmaster's clock quality: traceability and accuracy. */
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/ptp_quality.h"

#define TRACEABLE	(PTP_FLAG_PTP_TIMESCALE | PTP_FLAG_TIME_TRACEABLE)

TEST(accuracy_table)
{
	EXPECT_EQ(1, ptp_clock_accuracy_ns(0x17));	/* 1 ps, rounded up */
	EXPECT_EQ(1, ptp_clock_accuracy_ns(0x1d));	/* 1 ns */
	EXPECT_EQ(3, ptp_clock_accuracy_ns(0x1e));	/* 2.5 ns */
	EXPECT_EQ(25, ptp_clock_accuracy_ns(0x20));
	EXPECT_EQ(100, ptp_clock_accuracy_ns(0x21));
	EXPECT_EQ(250, ptp_clock_accuracy_ns(0x22));
	EXPECT_EQ(1000, ptp_clock_accuracy_ns(0x23));
	EXPECT_EQ(2500, ptp_clock_accuracy_ns(0x24));
	EXPECT_EQ(100000, ptp_clock_accuracy_ns(0x27));
	EXPECT_EQ(1000000, ptp_clock_accuracy_ns(0x29));
	EXPECT_EQ(250000000, ptp_clock_accuracy_ns(0x2e));
	EXPECT_EQ(1000000000, ptp_clock_accuracy_ns(0x2f));
	EXPECT_EQ(10000000000LL, ptp_clock_accuracy_ns(0x30));
	EXPECT_EQ(-1, ptp_clock_accuracy_ns(0x31));	/* > 10 s */
	EXPECT_EQ(-1, ptp_clock_accuracy_ns(0xfe));	/* unknown */
	EXPECT_EQ(-1, ptp_clock_accuracy_ns(0x16));	/* reserved */
}

TEST(traceability)
{
	struct ptp_announce a = { .quality = { .clock_class = 6, .accuracy = 0x21 } };
	const char *why;

	EXPECT_EQ(NULL, ptp_gm_untraceable(&a, TRACEABLE));
	a.quality.clock_class = 7;
	EXPECT_EQ(NULL, ptp_gm_untraceable(&a, TRACEABLE));
	/* linuxptp's defaults: 248, accuracy unknown, on a system clock ARB. */
	a.quality.clock_class = 248;
	why = ptp_gm_untraceable(&a, TRACEABLE);
	ASSERT_NE(NULL, why);
	EXPECT_NE(NULL, strstr(why, "248"));
	EXPECT_NE(NULL, ptp_gm_untraceable(&a, 0));
	a.quality.clock_class = 255;
	EXPECT_NE(NULL, ptp_gm_untraceable(&a, TRACEABLE));
	a.quality.clock_class = 52;
	EXPECT_NE(NULL, ptp_gm_untraceable(&a, TRACEABLE));
	a.quality.clock_class = 6;
	why = ptp_gm_untraceable(&a, PTP_FLAG_TIME_TRACEABLE);
	ASSERT_NE(NULL, why);
	EXPECT_NE(NULL, strstr(why, "ARB"));
	EXPECT_NE(NULL, ptp_gm_untraceable(&a, PTP_FLAG_PTP_TIMESCALE));
	a.quality.accuracy = 0xfe;
	why = ptp_gm_untraceable(&a, TRACEABLE);
	ASSERT_NE(NULL, why);
	EXPECT_NE(NULL, strstr(why, "clockAccuracy"));
}

TEST_HARNESS_MAIN
