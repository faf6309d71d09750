// SPDX-License-Identifier: GPL-2.0
/*
 * A poll in a source's line of the daemon's report: a measurement, a
 * failure, and a poll the source held back (not due) - which is neither,
 * and must not read as the source being unreachable.
 */
#include <errno.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "daemon/daemon_report.h"
#include "sync/source.h"

static const struct measurement sample = {
	.offset_ns = 1234, .delay_ns = 50000, .bound_ns = 30000,
	.base_ns = 7, .stratum = 2, .refid = "GPS", .rejected = 1,
};

TEST(measurement_is_kept)
{
	struct source_report s = { .state = SRC_INIT };

	ASSERT_TRUE(source_report_poll(&s, 0, &sample, ""));
	EXPECT_EQ(1, s.reach);
	EXPECT_EQ(1, s.polls);
	EXPECT_EQ(0, s.failures);
	EXPECT_TRUE(s.measured);
	EXPECT_EQ(1234, s.offset_ns);
	EXPECT_EQ(30000, s.bound_ns);
	EXPECT_EQ(1, s.rejected);
	EXPECT_STREQ("GPS", s.refid);
	EXPECT_STREQ("", s.error);
}

TEST(failure_marks_it_unreachable)
{
	struct source_report s = { .state = SRC_SELECTED };

	ASSERT_TRUE(source_report_poll(&s, 0, &sample, ""));
	ASSERT_FALSE(source_report_poll(&s, -ETIMEDOUT, NULL, "no answer"));
	EXPECT_EQ(2, s.reach);		/* 0b10 */
	EXPECT_EQ(2, s.polls);
	EXPECT_EQ(1, s.failures);
	EXPECT_EQ(SRC_UNREACHABLE, s.state);
	EXPECT_STREQ("no answer", s.error);
	/* The last measurement stays, for the report. */
	EXPECT_EQ(1234, s.offset_ns);
}

/*
 * An NTP source asked not to come back yet (KoD RATE) or a public server
 * within its 64 s spacing sends nothing: nothing happened to it, and chrony's
 * reach register, for one, moves only with a poll that was sent.
 */
TEST(poll_not_due_changes_nothing)
{
	struct source_report s = { .state = SRC_SELECTED };
	struct source_report before;

	ASSERT_TRUE(source_report_poll(&s, 0, &sample, ""));
	s.state = SRC_SELECTED;
	before = s;
	EXPECT_FALSE(source_report_poll(&s, -EAGAIN, NULL, "not asked again for 60 s"));
	EXPECT_EQ(before.reach, s.reach);
	EXPECT_EQ(before.polls, s.polls);
	EXPECT_EQ(0, s.failures);
	EXPECT_EQ(SRC_SELECTED, s.state);
	EXPECT_STREQ("", s.error);
}


/* Measured, but on another timescale with no UTC offset: a failed poll. */
TEST(unusable_measurement_is_a_failure)
{
	struct source_report s = { .state = SRC_SELECTED };

	ASSERT_TRUE(source_report_poll(&s, 0, &sample, ""));
	source_report_unusable(&s, "the clock counts UTC but the source gives TAI");
	EXPECT_EQ(0, s.reach);
	EXPECT_EQ(1, s.polls);
	EXPECT_EQ(1, s.failures);
	EXPECT_EQ(SRC_UNREACHABLE, s.state);
	EXPECT_STREQ("the clock counts UTC but the source gives TAI", s.error);
}

TEST_HARNESS_MAIN
