// SPDX-License-Identifier: GPL-2.0
/* Source selection: intersection (Marzullo), falsetickers, combination. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/select.h"

static struct measurement meas(int64_t offset, int64_t bound, int64_t base)
{
	struct measurement m = {
		.offset_ns = offset, .bound_ns = bound, .base_ns = base,
		.delay_ns = 2 * bound, .stratum = 2, .samples = 8,
	};

	strcpy(m.refid, "X");
	return m;
}

static const bool all[8] = { true, true, true, true, true, true, true, true };

TEST(one_source_passes_through)
{
	struct measurement m = meas(1000, 200, 5), out;
	enum select_state st;

	ASSERT_EQ(select_combine(&m, all, 1, 0, 5, &st, &out), 0);
	EXPECT_EQ(st, SELECT_SURVIVOR);
	EXPECT_EQ(out.offset_ns, 1000);
	EXPECT_EQ(out.bound_ns, 200);
	EXPECT_EQ(out.base_ns, 5);
}

TEST(agreeing_sources_narrow_the_bound)
{
	struct measurement m[] = { meas(100, 300, 0), meas(-100, 300, 0), meas(0, 1000, 0) };
	enum select_state st[3];
	struct measurement out;

	ASSERT_EQ(select_combine(m, all, 3, 0, 0, st, &out), 0);
	EXPECT_EQ(st[0], SELECT_SURVIVOR);
	EXPECT_EQ(st[1], SELECT_SURVIVOR);
	EXPECT_EQ(st[2], SELECT_SURVIVOR);
	/* Intersection [-200, 200]: the bound is at most its width. */
	EXPECT_GE(out.offset_ns, -200);
	EXPECT_LE(out.offset_ns, 200);
	EXPECT_LE(out.bound_ns, 400);
	EXPECT_LE(llabs(out.offset_ns) + 0, out.bound_ns);
	EXPECT_EQ(out.samples, 24);
}

TEST(falseticker_is_voted_out)
{
	struct measurement m[] = { meas(0, 100, 0), meas(50, 100, 0), meas(1000000, 100, 0) };
	enum select_state st[3];
	struct measurement out;

	ASSERT_EQ(select_combine(m, all, 3, 0, 0, st, &out), 0);
	EXPECT_EQ(st[2], SELECT_FALSETICKER);
	EXPECT_EQ(st[0], SELECT_SURVIVOR);
	EXPECT_EQ(st[1], SELECT_SURVIVOR);
	EXPECT_LE(llabs(out.offset_ns - 25), 75);
}

TEST(two_disagreeing_cannot_be_resolved)
{
	struct measurement m[] = { meas(0, 100, 0), meas(1000, 100, 0) };
	enum select_state st[2];
	struct measurement out;

	EXPECT_EQ(select_combine(m, all, 2, 0, 0, st, &out), -EDOM);
	EXPECT_EQ(st[0], SELECT_FALSETICKER);
}

TEST(invalid_inputs_skipped)
{
	struct measurement m[] = { meas(0, 100, 0), meas(1000000, 1, 0) };
	bool valid[] = { true, false };
	enum select_state st[2];
	struct measurement out;

	ASSERT_EQ(select_combine(m, valid, 2, 0, 0, st, &out), 0);
	EXPECT_EQ(st[1], SELECT_UNUSED);
	valid[0] = false;
	EXPECT_EQ(select_combine(m, valid, 2, 0, 0, st, &out), -ENODATA);
}

TEST(mixed_timescales_refused)
{
	struct measurement m[] = { meas(0, 100, 0), meas(0, 100, 0) };
	enum select_state st[2];
	struct measurement out;

	m[1].tai = true;
	EXPECT_EQ(select_combine(m, all, 2, 0, 0, st, &out), -EINVAL);
}

/* The result keeps the UTC offset the survivors know, for sync to convert with. */
TEST(utc_offset_carried_unless_survivors_disagree)
{
	struct measurement m[] = { meas(0, 100, 0), meas(0, 100, 0) };
	enum select_state st[2];
	struct measurement out;

	m[1].utc_offset_valid = true;
	m[1].utc_offset = 37;
	ASSERT_EQ(select_combine(m, all, 2, 0, 0, st, &out), 0);
	EXPECT_TRUE(out.utc_offset_valid);
	EXPECT_EQ(37, out.utc_offset);
	m[0].utc_offset_valid = true;
	m[0].utc_offset = 36;		/* one has not seen the leap second yet */
	ASSERT_EQ(select_combine(m, all, 2, 0, 0, st, &out), 0);
	EXPECT_FALSE(out.utc_offset_valid);
}

/* One source's leap indicator is not a leap: the survivors' majority is. */
TEST(leap_by_majority_of_survivors)
{
	struct measurement m[] = { meas(0, 100, 0), meas(10, 100, 0), meas(20, 100, 0),
				   meas(1000000, 100, 0) };
	enum select_state st[4];
	struct measurement out;

	m[0].leap = 1;		/* the tightest one, alone */
	m[0].bound_ns = 50;
	ASSERT_EQ(select_combine(m, all, 3, 0, 0, st, &out), 0);
	EXPECT_EQ(out.leap, 0);
	m[1].leap = 1;
	ASSERT_EQ(select_combine(m, all, 3, 0, 0, st, &out), 0);
	EXPECT_EQ(out.leap, 1);
	/* A falseticker's indicator does not count. */
	m[1].leap = 0;
	m[3].leap = 1;
	ASSERT_EQ(select_combine(m, all, 4, 0, 0, st, &out), 0);
	EXPECT_EQ(st[3], SELECT_FALSETICKER);
	EXPECT_EQ(out.leap, 0);
}

TEST(aging_widens_by_drift)
{
	struct measurement m = meas(0, 1000, 0), out;
	enum select_state st;

	/* 2 s at 50 ppm: 100 us more. */
	ASSERT_EQ(select_combine(&m, all, 1, 50000, 2000000000LL, &st, &out), 0);
	EXPECT_EQ(out.bound_ns, 101000);
	EXPECT_EQ(select_aged_bound(&m, 50000, -2000000000LL), 101000);
}

/* Fewer than half of the sources lie, arbitrarily: the truth stays inside. */
TEST(bound_holds_with_a_minority_of_liars)
{
	struct measurement m[8], out;
	enum select_state st[8];
	int trial, i;

	srandom(2);
	for (trial = 0; trial < 20000; trial++) {
		int n = 1 + random() % 8, liars = random() % ((n + 1) / 2);
		int64_t truth = random() % 1000000;

		for (i = 0; i < n; i++) {
			int64_t b = 1 + random() % 10000;

			m[i] = meas(truth + random() % (2 * b + 1) - b, b, 0);
			if (i < liars)
				m[i] = meas(random() % 3000000 - 1000000, 1 + random() % 10000, 0);
		}
		if (select_combine(m, all, n, 0, 0, st, &out))
			continue;	/* no majority: nothing claimed */
		ASSERT_LE(llabs(out.offset_ns - truth), out.bound_ns)
			TH_LOG("trial %d n %d liars %d", trial, n, liars);
	}
}

TEST_HARNESS_MAIN
