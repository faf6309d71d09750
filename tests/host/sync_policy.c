// SPDX-License-Identifier: GPL-2.0
/* The daemon's decisions: which source steers, step or slew, the bound published. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync_policy.h"
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
	EXPECT_EQ(1, sync_pick(&c, m, st, 4, 0, 1000));		/* PTP first, though worst */
	st[1] = SELECT_FALSETICKER;
	EXPECT_EQ(2, sync_pick(&c, m, st, 4, 0, 1000));		/* then the best NTP */
	c.sources[0].prefer = true;
	EXPECT_EQ(0, sync_pick(&c, m, st, 4, 0, 1000));		/* "prefer" within NTP */
	st[0] = st[2] = SELECT_UNUSED;
	EXPECT_EQ(3, sync_pick(&c, m, st, 4, 0, 1000));		/* peers last */
	st[3] = SELECT_FALSETICKER;
	EXPECT_EQ(-1, sync_pick(&c, m, st, 4, 0, 1000));
	/* "preference peer ntp ptp" reverses the order. */
	st[0] = st[1] = st[2] = st[3] = SELECT_SURVIVOR;
	c.class_rank[CLASS_PEER] = 0;
	c.class_rank[CLASS_NTP] = 1;
	c.class_rank[CLASS_PTP] = 2;
	EXPECT_EQ(3, sync_pick(&c, m, st, 4, 0, 1000));
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
	EXPECT_EQ(1, sync_pick(&c, m, st, 2, 100000, 1000000000));
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

TEST(bound_adds_residual_measurement_and_correction)
{
	EXPECT_EQ(1500, sync_bound(-1000, 500, 0, 0));
	EXPECT_EQ(500, sync_bound(0, 500, 0, 1000000000));
	/* 10 ppm of correction for 0.5 s: 5 us more. */
	EXPECT_EQ(1000 + 500 + 5000, sync_bound(1000, 500, -10000000, 500000000));
	/* Rounded up, never down. */
	EXPECT_EQ(501, sync_bound(0, 500, 1, 1));
	EXPECT_EQ(LCLK_MAX_BOUND_NS, sync_bound(INT64_MAX / 2, INT64_MAX / 2, 0, 0));
}

TEST_HARNESS_MAIN
