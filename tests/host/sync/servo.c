// SPDX-License-Identifier: GPL-2.0
/*
 * The servos on a simulated clock: a reference that runs f_true faster than
 * CLOCK_MONOTONIC, offsets measured with noise, the servo's rate applied
 * until the next sample. Both servos must converge, keep every rate within
 * the limit, never move the clock past the reference by more than the
 * noise, and converge again after the poll interval backs off.
 */
#include <math.h>
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/servo.h"

#define NS_PER_S	1000000000LL
#define MAX_RATE	500000000LL	/* 500 ppm */

struct sim {
	double offset_ns;	/* reference - clock, the truth */
	double f_true_ppt;
	int64_t local_ns;
	unsigned int seed;
};

/* Gaussian-ish noise in [-amp, amp] from a sum of uniforms. */
static double noise(struct sim *sim, double amp)
{
	double sum = 0;
	int i;

	for (i = 0; i < 4; i++)
		sum += (double)rand_r(&sim->seed) / RAND_MAX - 0.5;
	return sum / 2 * amp;
}

/* Run n samples at interval; returns the worst |offset| of the last `tail`. */
static double run(struct servo *s, struct sim *sim, int n, int64_t interval,
		  double noise_ns, int tail, int64_t *max_rate_seen)
{
	double worst = 0;
	int i;

	for (i = 0; i < n; i++) {
		double measured = sim->offset_ns + noise(sim, noise_ns);
		int64_t rate = servo_sample(s, llround(measured), sim->local_ns, interval);

		if (llabs(rate) > *max_rate_seen)
			*max_rate_seen = llabs(rate);
		sim->offset_ns += (sim->f_true_ppt - (double)rate) * 1e-12 * (double)interval;
		sim->local_ns += interval;
		if (i >= n - tail && fabs(sim->offset_ns) > worst)
			worst = fabs(sim->offset_ns);
	}
	return worst;
}

static struct servo *make(enum servo_type type)
{
	struct daemon_config c;

	config_defaults(&c);
	c.servo = type;
	return servo_create(&c, MAX_RATE, 0);
}

static void converges(struct __test_metadata *_metadata, enum servo_type type)
{
	struct sim sim = { .offset_ns = 50000, .f_true_ppt = 37e6, .local_ns = NS_PER_S, .seed = 1 };
	struct servo *s = make(type);
	int64_t seen = 0;
	double worst;

	ASSERT_NE(NULL, s);
	/* 50 us off and 37 ppm fast, 100 ns of noise, 1 s polls. */
	worst = run(s, &sim, 60, NS_PER_S, 100, 20, &seen);
	EXPECT_LT(worst, 500) TH_LOG("worst offset %.0f ns after 40 polls", worst);
	EXPECT_LT(llabs(servo_freq(s) - 37000000), 1000000)
		TH_LOG("freq %lld ppt", (long long)servo_freq(s));
	EXPECT_LE(seen, MAX_RATE);

	/* Back off to 16 s, then 64 s: still converged. */
	worst = run(s, &sim, 20, 16 * NS_PER_S, 100, 10, &seen);
	EXPECT_LT(worst, 1000) TH_LOG("at 16 s: %.0f ns", worst);
	worst = run(s, &sim, 20, 64 * NS_PER_S, 100, 10, &seen);
	EXPECT_LT(worst, 2000) TH_LOG("at 64 s: %.0f ns", worst);
	servo_destroy(s);
}

TEST(pi_converges) { converges(_metadata, SERVO_PI); }
TEST(linreg_converges) { converges(_metadata, SERVO_LINREG); }

/* A large offset is slewed at no more than the limit, never stepped. */
static void large_offset(struct __test_metadata *_metadata, enum servo_type type)
{
	struct sim sim = { .offset_ns = 20e6, .local_ns = NS_PER_S, .seed = 2 };
	struct servo *s = make(type);
	int64_t seen = 0;
	double before, worst;
	int i;

	ASSERT_NE(NULL, s);
	for (i = 0; i < 30; i++) {
		before = fabs(sim.offset_ns);
		run(s, &sim, 1, NS_PER_S, 0, 1, &seen);
		/* 500 ppm for 1 s moves 500 us at most. */
		EXPECT_GE(before - fabs(sim.offset_ns), -1.0);
		EXPECT_LE(before - fabs(sim.offset_ns), 500001.0);
	}
	EXPECT_EQ(MAX_RATE, seen);
	worst = run(s, &sim, 80, NS_PER_S, 0, 10, &seen);
	EXPECT_LT(worst, 100) TH_LOG("still %.0f ns off", worst);
	servo_destroy(s);
}

TEST(pi_large_offset_slews_at_limit) { large_offset(_metadata, SERVO_PI); }
TEST(linreg_large_offset_slews_at_limit) { large_offset(_metadata, SERVO_LINREG); }

/*
 * The contract of servo.h: the correction part of a rate (rate - freq)
 * moves the clock towards the reference by no more than the offset given,
 * over the interval given. Checked on a noisy, drifting clock.
 */
static void correction_within_offset(struct __test_metadata *_metadata,
				     enum servo_type type)
{
	struct sim sim = { .offset_ns = 80000, .f_true_ppt = -20e6, .local_ns = NS_PER_S, .seed = 3 };
	struct servo *s = make(type);
	int i;

	ASSERT_NE(NULL, s);
	for (i = 0; i < 60; i++) {
		int64_t interval = (i < 30 ? 1 : 8) * NS_PER_S;
		int64_t measured = llround(sim.offset_ns + noise(&sim, 200));
		int64_t rate = servo_sample(s, measured, sim.local_ns, interval);
		double moved = (double)(rate - servo_freq(s)) * 1e-12 * (double)interval;

		bool ok = measured >= 0 ? moved >= -1 && moved <= measured + 1 :
					  moved <= 1 && moved >= measured - 1;

		EXPECT_TRUE(ok) TH_LOG("sample %d: offset %lld, correction moved %.1f ns",
				       i, (long long)measured, moved);
		sim.offset_ns += (sim.f_true_ppt - (double)rate) * 1e-12 * (double)interval;
		sim.local_ns += interval;
	}
	servo_destroy(s);
}

TEST(pi_correction_within_offset) { correction_within_offset(_metadata, SERVO_PI); }
TEST(linreg_correction_within_offset) { correction_within_offset(_metadata, SERVO_LINREG); }

/* After a reset (the daemon stepped) the frequency is kept, the offset history not. */
TEST(linreg_reset_keeps_frequency)
{
	struct sim sim = { .offset_ns = 0, .f_true_ppt = 10e6, .local_ns = NS_PER_S, .seed = 4 };
	struct servo *s = make(SERVO_LINREG);
	int64_t seen = 0, before;
	double worst;

	ASSERT_NE(NULL, s);
	run(s, &sim, 30, NS_PER_S, 0, 1, &seen);
	before = servo_freq(s);
	EXPECT_LT(llabs(before - 10000000), 10000);
	servo_reset(s, before);
	sim.offset_ns += 3000;		/* a new source, 3 us away */
	worst = run(s, &sim, 30, NS_PER_S, 0, 5, &seen);
	EXPECT_LT(worst, 10);
	EXPECT_LT(llabs(servo_freq(s) - 10000000), 10000)
		TH_LOG("freq %lld -> %lld", (long long)before, (long long)servo_freq(s));
	servo_destroy(s);
}

/*
 * One sample of offset_ns at local_ns, the next due in interval_ns: even
 * read as all frequency error, it moves the estimate by at most offset_ns
 * over over_ns, the time it built up over.
 */
static void moves_freq_at_most(struct __test_metadata *_metadata, struct servo *s,
			       int64_t offset_ns, int64_t local_ns, int64_t interval_ns,
			       int64_t over_ns)
{
	int64_t before = servo_freq(s);

	servo_sample(s, offset_ns, local_ns, interval_ns);
	EXPECT_LE(llabs(servo_freq(s) - before), (int64_t)(offset_ns * 1e12 / (double)over_ns))
		TH_LOG("freq %lld -> %lld ppt for %lld ns over %lld ns", (long long)before,
		       (long long)servo_freq(s), (long long)offset_ns, (long long)over_ns);
}

/*
 * The integral learns from the time the offset built up over, the time
 * since the previous sample, not from the interval until the next one: when
 * a large offset drops the poll from 64 s to 1 s, an offset grown over 64 s
 * must not read as a frequency error 64 times larger.
 */
static void interval_drop(struct __test_metadata *_metadata, enum servo_type type)
{
	struct sim sim = { .offset_ns = 0, .f_true_ppt = 10e6, .local_ns = NS_PER_S, .seed = 5 };
	struct servo *s = make(type);
	int64_t seen = 0;

	ASSERT_NE(NULL, s);
	run(s, &sim, 60, NS_PER_S, 0, 1, &seen);
	run(s, &sim, 20, 64 * NS_PER_S, 0, 1, &seen);
	ASSERT_LT(llabs(servo_freq(s) - 10000000), 100000);
	/* 2 ms off after 64 s (a disturbance), the next poll in 1 s. */
	moves_freq_at_most(_metadata, s, 2000000, sim.local_ns + 64 * NS_PER_S, NS_PER_S,
			   64 * NS_PER_S);
	servo_destroy(s);
}

TEST(pi_interval_drop) { interval_drop(_metadata, SERVO_PI); }
TEST(linreg_interval_drop) { interval_drop(_metadata, SERVO_LINREG); }

/*
 * A measurement's time is its burst's best sample, which may come early in
 * one burst and late in the last: two samples 0.1 s apart at a 1 s poll.
 * The offset built up over the poll the previous correction ran for, so
 * it must not read as a frequency error ten times larger.
 */
static void early_sample(struct __test_metadata *_metadata, enum servo_type type)
{
	struct sim sim = { .offset_ns = 0, .f_true_ppt = 10e6, .local_ns = NS_PER_S, .seed = 7 };
	struct servo *s = make(type);
	int64_t seen = 0;

	ASSERT_NE(NULL, s);
	run(s, &sim, 60, NS_PER_S, 0, 1, &seen);
	/* run() leaves local_ns a poll past its last sample: 20 us, 0.1 s after it. */
	moves_freq_at_most(_metadata, s, 20000, sim.local_ns - NS_PER_S + NS_PER_S / 10, NS_PER_S,
			   NS_PER_S);
	servo_destroy(s);
}

TEST(pi_early_sample) { early_sample(_metadata, SERVO_PI); }
TEST(linreg_early_sample) { early_sample(_metadata, SERVO_LINREG); }

/* The limit holds for the estimate too (anti-windup), and reset keeps a frequency. */
TEST(limits_and_reset)
{
	struct servo *s = make(SERVO_PI);
	int i;

	ASSERT_NE(NULL, s);
	for (i = 0; i < 100; i++)
		ASSERT_LE(llabs(servo_sample(s, 1000000000, (i + 1) * NS_PER_S, NS_PER_S)), MAX_RATE);
	EXPECT_EQ(MAX_RATE, servo_freq(s));
	servo_reset(s, 2 * MAX_RATE);
	EXPECT_EQ(MAX_RATE, servo_freq(s));
	servo_reset(s, -1234);
	EXPECT_EQ(-1234, servo_freq(s));
	servo_destroy(s);
}

TEST_HARNESS_MAIN
