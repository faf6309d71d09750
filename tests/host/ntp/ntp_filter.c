// SPDX-License-Identifier: GPL-2.0
/* The NTP clock filter: delay tests, minimum delay, interval intersection. */
#include <errno.h>
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ntp/ntp_filter.h"

/* A sample of true offset theta with one-way delays f (out) and b (back). */
static struct ntp_sample sample(int64_t theta, int64_t f, int64_t b, int64_t base)
{
	struct ntp_sample s = {
		.offset_ns = theta + (f - b) / 2,
		.delay_ns = f + b,
		.err_ns = 2,
		.root_ns = 0,
		.base_ns = base,
	};

	return s;
}

static const struct ntp_filter_opts defaults = NTP_FILTER_DEFAULTS;

TEST(one_sample_is_its_root_distance)
{
	struct ntp_sample s = sample(500, 3000, 1000, 7);
	struct ntp_filter_result r;

	s.root_ns = 100;
	ASSERT_EQ(ntp_filter(&s, 1, &defaults, &r, NULL), 0);
	EXPECT_EQ(r.offset_ns, s.offset_ns);
	EXPECT_EQ(r.bound_ns, 4000 / 2 + 2 + 100);
	EXPECT_EQ(r.delay_ns, 4000);
	EXPECT_EQ(r.base_ns, 7);
	EXPECT_EQ(r.used, 1);
	EXPECT_LE(llabs(r.offset_ns - 500), r.bound_ns);
}

TEST(minimum_delay_anchors)
{
	struct ntp_sample s[] = {
		sample(0, 5000, 5000, 0), sample(0, 1000, 1200, 1), sample(0, 9000, 1000, 2),
	};
	struct ntp_filter_result r;

	ASSERT_EQ(ntp_filter(s, 3, &defaults, &r, NULL), 0);
	EXPECT_EQ(r.best, 1);
	EXPECT_EQ(r.delay_ns, 2200);
	EXPECT_LE(llabs(r.offset_ns), r.bound_ns);
}

/*
 * One-way jitter on both directions, in different samples: the
 * intersection keeps the least delayed request and the least delayed
 * reply, better than any single sample.
 */
TEST(intersection_takes_best_of_each_direction)
{
	struct ntp_sample s[] = {
		sample(10000, 100, 900, 0), sample(10000, 900, 100, 0), sample(10000, 500, 500, 0),
	};
	struct ntp_filter_result r;

	ASSERT_EQ(ntp_filter(s, 3, &defaults, &r, NULL), 0);
	EXPECT_LE(llabs(r.offset_ns - 10000), 3);
	EXPECT_LE(r.bound_ns, 100 + 2 + 1);
	EXPECT_LE(llabs(r.offset_ns - 10000), r.bound_ns);
}

TEST(delay_tests)
{
	struct ntp_filter_opts o = defaults;
	struct ntp_sample s[8];
	struct ntp_filter_result r;
	bool used[8];
	int i;

	for (i = 0; i < 8; i++)
		s[i] = sample(0, 1000 + i, 1000 + i, i);
	/* Queued for 1 ms: far above 10 x the spread of offsets. */
	s[5] = sample(0, 1001000, 1000, 5);
	ASSERT_EQ(ntp_filter(s, 8, &o, &r, used), 0);
	EXPECT_FALSE(used[5]);
	EXPECT_EQ(r.used, 7);
	/* maxdelay */
	o.max_delay_ns = 2005;
	ASSERT_EQ(ntp_filter(s, 8, &o, &r, used), 0);
	EXPECT_EQ(r.used, 3);
	/* maxdelayratio */
	o = defaults;
	o.max_delay_dev_ratio = 0;
	o.max_delay_ratio = 1.002;
	ASSERT_EQ(ntp_filter(s, 8, &o, &r, used), 0);
	EXPECT_EQ(r.used, 3);
	o.max_delay_ns = 10;
	EXPECT_EQ(ntp_filter(s, 8, &o, &r, used), -ENODATA);
	EXPECT_EQ(ntp_filter(s, 0, &defaults, &r, NULL), -ENODATA);
}

TEST(negative_delay_never_used)
{
	struct ntp_sample s[] = { sample(0, 1000, 1000, 0), sample(0, 1000, 1000, 0) };
	struct ntp_filter_result r;
	bool used[2];

	s[1].delay_ns = -5;
	ASSERT_EQ(ntp_filter(s, 2, &defaults, &r, used), 0);
	EXPECT_TRUE(used[0]);
	EXPECT_FALSE(used[1]);
}

TEST(inconsistent_burst_falls_back_to_best)
{
	struct ntp_sample s[] = { sample(0, 1000, 1000, 0), sample(1000000, 1100, 1100, 1) };
	struct ntp_filter_result r;

	ASSERT_EQ(ntp_filter(s, 2, &defaults, &r, NULL), 0);
	EXPECT_TRUE(r.inconsistent);
	EXPECT_EQ(r.offset_ns, 0);
	EXPECT_EQ(r.bound_ns, 1002);
}

/* Samples spread in time widen by drift: 1 s at 50 ppm is 50 us. */
TEST(drift_widens_older_samples)
{
	struct ntp_filter_opts o = defaults;
	struct ntp_sample s[] = {
		sample(0, 1000, 1000, 0), sample(0, 1001, 1001, 1000000000LL),
	};
	struct ntp_filter_result r;

	o.drift_ppb = 50000;
	/* The second one's true offset moved by 40 us within the drift. */
	s[1].offset_ns += 40000;
	ASSERT_EQ(ntp_filter(s, 2, &o, &r, NULL), 0);
	EXPECT_FALSE(r.inconsistent);
	EXPECT_EQ(r.base_ns, 0);
	EXPECT_LE(llabs(r.offset_ns), r.bound_ns);
}

/*
 * The server's clock moves against ours too: one slewing at 500 ppm (the
 * most the kernel slews for ntpd) during a burst 5 ms apart, against a
 * perfect target. Widened by the target's drift alone, the later samples
 * pulled the intersection off the best sample's true offset (0) without
 * the intervals becoming disjoint: offset 8.25 us, bound 1.75 us.
 */
TEST(server_slewing_within_the_burst)
{
	struct ntp_sample s[8];
	struct ntp_filter_result r;
	struct ntp_filter_opts o = defaults;
	int i;

	o.drift_ppb = 0;
	s[0] = sample(0, 10000, 10000, 0);
	s[0].err_ns = 0;
	for (i = 1; i < 8; i++) {
		s[i] = sample(2500 * i, 11000, 11000, 5000000LL * i);
		s[i].err_ns = 0;
	}
	ASSERT_EQ(ntp_filter(s, 8, &o, &r, NULL), 0);
	EXPECT_EQ(0, r.best);
	EXPECT_LE(llabs(r.offset_ns), r.bound_ns)
		TH_LOG("offset %lld bound %lld", (long long)r.offset_ns, (long long)r.bound_ns);
}

/* The send-path shift moves the estimate, but never out of the intersection. */
TEST(shift_stays_inside)
{
	struct ntp_sample s = sample(0, 3000, 5000, 0);
	struct ntp_filter_result r;

	s.shift_ns = 1000;
	ASSERT_EQ(ntp_filter(&s, 1, &defaults, &r, NULL), 0);
	EXPECT_EQ(r.offset_ns, s.offset_ns + 1000);
	EXPECT_EQ(r.bound_ns, 4000 + 2 + 1000);
	s.shift_ns = 100000;
	ASSERT_EQ(ntp_filter(&s, 1, &defaults, &r, NULL), 0);
	EXPECT_EQ(r.offset_ns, s.offset_ns + 4002);
	EXPECT_EQ(r.bound_ns, 8004);
}

/* Random bursts with random asymmetric delays: the truth is always inside. */
TEST(bound_always_holds)
{
	struct ntp_filter_result r;
	struct ntp_sample s[16];
	int trial, i;

	srandom(1);
	for (trial = 0; trial < 20000; trial++) {
		int64_t theta = random() % 2000000 - 1000000;
		int n = 1 + random() % 16;

		for (i = 0; i < n; i++) {
			s[i] = sample(theta, 50 + random() % 100000, 50 + random() % (1 + random() % 100000), i);
			s[i].shift_ns = random() % 20000;
		}
		ASSERT_EQ(ntp_filter(s, n, &defaults, &r, NULL), 0);
		ASSERT_LE(llabs(r.offset_ns - theta), r.bound_ns)
			TH_LOG("trial %d: offset %lld bound %lld theta %lld", trial,
			       (long long)r.offset_ns, (long long)r.bound_ns, (long long)theta);
	}
}

TEST_HARNESS_MAIN
