// SPDX-License-Identifier: GPL-2.0
/* The daemon's decisions: which source steers, step or slew, the bound published. */
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/sync_policy.h"
#include "uapi/linux/lclk.h"

static void config(struct daemon_config *c)
{
	static const struct { const char *url; enum source_class class; } s[] = {
		{ "ntp://a", CLASS_NTP }, { "ptp://eth0", CLASS_PTP },
		{ "ntp://b", CLASS_NTP }, { "ntp://peer", CLASS_PEER },
	};
	unsigned int i;

	config_defaults(c);
	for (i = 0; i < 4; i++) {
		snprintf(c->sources[i].url, sizeof(c->sources[i].url), "%s", s[i].url);
		c->sources[i].class = s[i].class;
	}
	c->nsources = 4;
}

TEST(pick_prefers_class_then_prefer_then_bound)
{
	struct measurement m[4] = {
		{ .bound_ns = 100, .base_ns = 1000 }, { .bound_ns = 5000, .base_ns = 1000 },
		{ .bound_ns = 50, .base_ns = 1000 }, { .bound_ns = 1, .base_ns = 1000 },
	};
	enum select_state st[4] = { SELECT_SURVIVOR, SELECT_SURVIVOR, SELECT_SURVIVOR,
				    SELECT_SURVIVOR };
	struct daemon_config c;

	config(&c);
	EXPECT_EQ(1, sync_pick(&c, m, st, 4, 0, 1000, -1));		/* PTP first, though worst */
	st[1] = SELECT_FALSETICKER;
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000, -1));		/* then the best NTP */
	c.sources[0].prefer = true;
	EXPECT_EQ(0, sync_pick(&c, m, st, 4, 0, 1000, -1));		/* "prefer" within NTP */
	st[0] = st[2] = SELECT_UNUSED;
	EXPECT_EQ(3, sync_pick(&c, m, st, 4, 0, 1000, -1));		/* peers last */
	st[3] = SELECT_FALSETICKER;
	EXPECT_EQ(-1, sync_pick(&c, m, st, 4, 0, 1000, -1));
	/* "preference peer ntp ptp" reverses the order. */
	st[0] = st[1] = st[2] = st[3] = SELECT_SURVIVOR;
	c.class_rank[CLASS_PEER] = 0;
	c.class_rank[CLASS_NTP] = 1;
	c.class_rank[CLASS_PTP] = 2;
	EXPECT_EQ(3, sync_pick(&c, m, st, 4, 0, 1000, -1));
}

TEST(pick_ages_bounds)
{
	struct measurement m[2] = {
		{ .bound_ns = 1000, .base_ns = 0 },		/* old: grows by 100 ppm */
		{ .bound_ns = 50000, .base_ns = 999000000 },
	};
	enum select_state st[2] = { SELECT_SURVIVOR, SELECT_SURVIVOR };
	struct daemon_config c;

	config(&c);
	c.sources[1].class = CLASS_NTP;
	EXPECT_EQ(1, sync_pick(&c, m, st, 2, 100000, 1000000000, -1));
}

/*
 * Two equal servers: whichever bound is a little smaller this poll must not
 * take over, or the selection flips every poll and each flip resets the
 * servo and drops the poll interval to minpoll (as the bench's two loopback
 * chronyd did). A clearly better source, or a better class, still wins.
 */
TEST(pick_keeps_the_selected_source_among_equals)
{
	struct measurement m[4] = {
		{ .bound_ns = 40000, .base_ns = 1000 }, { .bound_ns = 5000, .base_ns = 1000 },
		{ .bound_ns = 38000, .base_ns = 1000 }, { .bound_ns = 1, .base_ns = 1000 },
	};
	enum select_state st[4] = { SELECT_SURVIVOR, SELECT_FALSETICKER, SELECT_SURVIVOR,
				    SELECT_FALSETICKER };
	struct daemon_config c;

	config(&c);
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000, -1));	/* none before: the best */
	EXPECT_EQ(0, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* 2 us better: no flip */
	m[2].bound_ns = 15000;
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* less than half: switch */
	m[2].bound_ns = 310000;
	m[0].bound_ns = 400000;
	EXPECT_EQ(0, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* within 100 us of 400 us */
	m[2].bound_ns = 299000;
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* beyond chrony's reselectdist */
	st[1] = SELECT_SURVIVOR;
	EXPECT_EQ(1, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* class first, always */
	st[0] = SELECT_FALSETICKER;
	st[1] = SELECT_FALSETICKER;
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000, 0));	/* the selected one is gone */
}

/*
 * TAI - UTC since 2017: 37 s, exactly 37000000000 ns. A PHC in TAI, or a
 * grandmaster on the PTP timescale whose currentUtcOffset is not valid,
 * gives offsets against TAI; the daemon steering a UTC clock must not take
 * them as they are (a clock 37 s off with a microsecond bound), only
 * converted with a UTC offset the source knows, else not at all.
 */
#define TAI_UTC_NS	37000000000LL

/* One daemon cycle over m: the index of the source it steers by, or -1. */
static int cycle(struct daemon_config *c, bool clock_tai, struct measurement *m,
		 bool *valid, char (*why)[SYNC_WHY_MAX], unsigned int n)
{
	enum select_state st[4];
	struct measurement combined;
	int err;

	return sync_select(c, clock_tai, m, valid, why, n, 0, 1000, -1, st, &err, &combined);
}

TEST(tai_without_utc_offset_is_not_steered_by_on_a_utc_clock)
{
	/* The truth: the clock is 20 us behind UTC; the source says so in TAI. */
	struct measurement m[2] = {
		{ .offset_ns = TAI_UTC_NS + 20000, .bound_ns = 50000, .base_ns = 1000,
		  .tai = true },
	};
	char why[2][SYNC_WHY_MAX];
	bool valid[2] = { true };
	struct daemon_config c;
	int best;

	config(&c);
	best = cycle(&c, false, m, valid, why, 1);
	if (best >= 0)
		TH_LOG("would steer by %lld ns +- %lld ns; the truth is 20000 ns",
		       (long long)m[best].offset_ns, (long long)m[best].bound_ns);
	EXPECT_EQ(-1, best);
	EXPECT_FALSE(valid[0]);
	EXPECT_NE('\0', why[0][0]);
	TH_LOG("why: %s", why[0]);
	/* The same on a TAI clock is taken as it is. */
	valid[0] = true;
	m[0].offset_ns = 20000;
	EXPECT_EQ(0, cycle(&c, true, m, valid, why, 1));
	EXPECT_EQ(20000, m[0].offset_ns);
	EXPECT_EQ('\0', why[0][0]);
}

TEST(tai_with_valid_utc_offset_is_converted)
{
	struct measurement m[1] = {
		{ .offset_ns = TAI_UTC_NS + 20000, .bound_ns = 50000, .base_ns = 1000,
		  .tai = true, .utc_offset_valid = true, .utc_offset = 37 },
	};
	char why[1][SYNC_WHY_MAX];
	bool valid[1] = { true };
	struct daemon_config c;

	config(&c);
	ASSERT_EQ(0, cycle(&c, false, m, valid, why, 1));
	TH_LOG("steers by %lld ns +- %lld ns; the truth is 20000 ns",
	       (long long)m[0].offset_ns, (long long)m[0].bound_ns);
	EXPECT_LE(llabs(m[0].offset_ns - 20000), m[0].bound_ns);
	EXPECT_EQ(20000, m[0].offset_ns);
	EXPECT_FALSE(m[0].tai);
	EXPECT_TRUE(valid[0]);
	EXPECT_EQ('\0', why[0][0]);
}

/* A UTC source (NTP, or PTP already moved to UTC) on a TAI clock, both ways. */
TEST(utc_on_a_tai_clock)
{
	struct measurement m[1] = {
		{ .offset_ns = 20000 - TAI_UTC_NS, .bound_ns = 50000, .base_ns = 1000 },
	};
	char why[1][SYNC_WHY_MAX];
	bool valid[1] = { true };
	struct daemon_config c;

	config(&c);
	EXPECT_EQ(-1, cycle(&c, true, m, valid, why, 1));
	EXPECT_FALSE(valid[0]);
	valid[0] = true;
	m[0].utc_offset_valid = true;
	m[0].utc_offset = 37;
	ASSERT_EQ(0, cycle(&c, true, m, valid, why, 1));
	EXPECT_EQ(20000, m[0].offset_ns);
	EXPECT_TRUE(m[0].tai);
}

/*
 * A PHC in TAI beside an NTP server, on a UTC clock: the PHC is left out
 * and NTP steers, where a mixed set used to leave the clock with none.
 */
TEST(unconvertible_source_is_left_out_of_the_cycle)
{
	struct measurement m[2] = {
		{ .offset_ns = 30000, .bound_ns = 100000, .base_ns = 1000 },
		{ .offset_ns = TAI_UTC_NS + 20000, .bound_ns = 1000, .base_ns = 1000,
		  .tai = true },
	};
	char why[2][SYNC_WHY_MAX];
	bool valid[2] = { true, true };
	struct daemon_config c;

	config(&c);		/* source 1 is PTP: it would be picked first */
	EXPECT_EQ(0, cycle(&c, false, m, valid, why, 2));
	EXPECT_TRUE(valid[0]);
	EXPECT_FALSE(valid[1]);
	EXPECT_EQ('\0', why[0][0]);
	EXPECT_NE('\0', why[1][0]);
	EXPECT_EQ(30000, m[0].offset_ns);
}

TEST(step_only_when_unsynced_or_configured)
{
	struct daemon_config c;

	config(&c);
	EXPECT_TRUE(sync_should_step(&c, true, 0, -5));	/* first sync, any direction */
	EXPECT_TRUE(sync_should_step(&c, true, 9, 5000000000LL));
	EXPECT_FALSE(sync_should_step(&c, false, 0, 5000000000LL));	/* default: never again */
	c.makestep_ns = 1000000;
	c.makestep_limit = 3;
	EXPECT_TRUE(sync_should_step(&c, false, 2, 2000000));
	EXPECT_FALSE(sync_should_step(&c, false, 3, 2000000));	/* past the limit */
	EXPECT_FALSE(sync_should_step(&c, false, 0, 999999));	/* below the threshold */
	EXPECT_FALSE(sync_should_step(&c, false, 0, -2000000));	/* backwards needs allowbackward */
	c.allow_backward = true;
	EXPECT_TRUE(sync_should_step(&c, false, 0, -2000000));
	c.makestep_limit = -1;
	EXPECT_TRUE(sync_should_step(&c, false, 100000, 2000000));
}

TEST(bound_adds_residual_measurement_and_growth)
{
	EXPECT_EQ(1500, sync_bound(-1000, 500, 0, 0, 0));
	EXPECT_EQ(500, sync_bound(0, 500, 0, 0, 1000000000));
	/* Growing 10 ppm faster than the kernel will charge, for 0.5 s: 5 us more. */
	EXPECT_EQ(1000 + 500 + 5000, sync_bound(1000, 500, 110000000, 100000, 500000000));
	/* What the kernel charges already is not added twice. */
	EXPECT_EQ(1500, sync_bound(1000, 500, 100000000, 100000, 500000000));
	EXPECT_EQ(1500, sync_bound(1000, 500, 90000000, 100000, 500000000));
	/* Rounded up, never down. */
	EXPECT_EQ(501, sync_bound(0, 500, 1, 0, 1));
	EXPECT_EQ(LCLK_MAX_BOUND_NS, sync_bound(INT64_MAX / 2, INT64_MAX / 2, 0, 0, 0));
}

/*
 * The servo's frequency estimate fell from 150 ppm to 0 at this sample.
 * Since the measurement's base the clock ran at the old rate, so its error
 * grew at up to 100 ppm (the oscillator) + 150 ppm; the new model charges
 * 100 ppm over that time. The bound published at the base, plus what the
 * kernel adds for the time since, must cover the growth at the old rate.
 */
TEST(bound_covers_the_rate_that_ran_not_the_new_one)
{
	const int64_t elapsed = 500000000, offset = 2000, meas = 1000;
	const uint32_t charged_ppb = 100000;		/* drift_at(0) */
	const int64_t growth_ppt = 250000000;		/* 100 + 150 ppm */
	int64_t published = sync_bound(offset, meas, growth_ppt, charged_ppb, elapsed);
	int64_t covered = published + charged_ppb * elapsed / 1000000000;

	EXPECT_LE(offset + meas + growth_ppt * elapsed / 1000000000000LL, covered);
}

TEST_HARNESS_MAIN
