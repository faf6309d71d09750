// SPDX-License-Identifier: GPL-2.0
/*
 * The model's transition function, kmod/lclk_state.h, built on the host
 * (tests/host/kernel_shim.h): the module's own code, checked against
 * exact arithmetic in 128-bit integers that it does not share. Mostly the
 * fold of a system sleep on resume: logical time must go on as the old
 * line would have, had the base clock run through the sleep, at the
 * learned rate; the bound must grow by max_drift over the sleep and the
 * sleep measurement's error; and it is an update and a step, counted by
 * the code that counts every other change.
 */
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kernel_shim.h"
#include "rand.h"

#define S		1000000000LL
#define HOUR		(3600 * S)
#define MAX_RATE_PPT	500000000LL	/* the module's default limit, 500 ppm */
#define ONE_NS		((__int128)1 << LCLK_RATE_SHIFT)

static int apply(struct lclk_state *st, struct lclk_counters *ctr,
		 const struct lclk_change *c, s64 now)
{
	return lclk_apply_state(st, ctr, c, now, MAX_RATE_PPT);
}

static struct lclk_state synced(s64 t0, s64 offset, s64 rate_ppt,
				u32 drift_ppb, s64 bound0, s64 last)
{
	struct lclk_state s;
	struct lclk_params *m = &s.params;

	memset(&s, 0, sizeof(s));
	m->t0_ns = t0;
	m->offset_ns = offset;
	m->rate_ppt = rate_ppt;
	m->rate_mult = lclk_ppt_to_mult(rate_ppt);
	m->bound0_ns = bound0;
	m->last_update_ns = last;
	m->holdover_ns = 60 * S;
	m->max_drift_ppb = drift_ppb;
	m->drift_mult = lclk_ppb_to_mult(drift_ppb);
	m->status = LCLK_STATUS_SYNCED;
	s.boot_offset_ns = 7 * S;
	return s;
}

static struct lclk_change sleep_of(s64 ns)
{
	struct lclk_change c = { .modes = LCLK_CHANGE_SLEEP, .sleep_ns = ns };

	return c;
}

static s64 logical(const struct lclk_params *m, s64 t)
{
	return lclk_logical(t, m->t0_ns, m->offset_ns, m->rate_mult);
}

static s64 bound(const struct lclk_params *m, s64 t)
{
	return lclk_bound(t, m->status, m->bound0_ns, m->last_update_ns,
			  m->drift_mult);
}

/* 2^40 times the old line at base time t, exactly: no rounding. */
static __int128 line_exact(const struct lclk_params *m, s64 t)
{
	return ((__int128)(t + m->offset_ns) << LCLK_RATE_SHIFT) +
	       (__int128)(t - m->t0_ns) * m->rate_mult;
}

/* 2^40 times the old bound at base time t, exactly. */
static __int128 bound_exact(const struct lclk_params *m, s64 t)
{
	return ((__int128)m->bound0_ns << LCLK_RATE_SHIFT) +
	       (__int128)(t - m->last_update_ns) * m->drift_mult;
}

static __int128 abs128(__int128 x)
{
	return x < 0 ? -x : x;
}

/*
 * What a fold of a sleep must give, from the model before it (o), the one
 * after it (n), the instant of the resume and the sleep. 0 if right, else
 * a number naming the first check that failed.
 */
static int check_fold(const struct lclk_params *o, const struct lclk_params *n,
		      s64 now, s64 sleep)
{
	s64 later = now + test_between(0, 1000 * S);
	s64 span = now + sleep - o->t0_ns;
	__int128 want;

	/* logical(now) is the old line at now + sleep, within 1 ns. */
	want = line_exact(o, now + sleep);
	if (abs128(((__int128)logical(n, now) << LCLK_RATE_SHIFT) - want) >
	    ONE_NS)
		return 1;
	/* ... and so it stays: at any later instant, within 2 ns. */
	want = line_exact(o, later + sleep);
	if (abs128(((__int128)logical(n, later) << LCLK_RATE_SHIFT) - want) >
	    2 * ONE_NS)
		return 2;
	/*
	 * Against the rate as set, in ppt, not its multiplier: the sleep ran
	 * at 1 + rate_ppt / 10^12, within the multiplier's truncation.
	 */
	want = (__int128)(now + sleep + o->offset_ns) * 1000000000000LL +
	       (__int128)span * o->rate_ppt;
	if (abs128((__int128)logical(n, now) * 1000000000000LL - want) >
	    (__int128)(span / 1000000000000LL + 2) * 1000000000000LL)
		return 3;
	/*
	 * The bound grew by max_drift over the sleep and its error, and 1 ns
	 * for the floor of the fold; a reading adds its own rounding.
	 */
	want = bound_exact(o, now) + (__int128)sleep * o->drift_mult +
	       ((__int128)(LCLK_SLEEP_ERROR_NS + 1 + LCLK_BOUND_ROUNDING_NS) <<
		LCLK_RATE_SHIFT);
	if (abs128(((__int128)bound(n, now) << LCLK_RATE_SHIFT) - want) >
	    ONE_NS)
		return 4;
	/*
	 * Against max_drift in ppb: the multiplier is rounded up, by up to 2
	 * units of 2^-40 per ns of the age and the sleep.
	 */
	want = (__int128)(bound(o, now) + LCLK_SLEEP_ERROR_NS + 1) * 1000000000 +
	       (__int128)sleep * o->max_drift_ppb;
	if (abs128((__int128)bound(n, now) * 1000000000 - want) >
	    (__int128)((now - o->last_update_ns + sleep) / 500000000000LL +
		       3) * 1000000000)
		return 5;
	/* No one disciplined the clock through the sleep. */
	if (lclk_status(now, n->status, n->last_update_ns, n->holdover_ns) !=
	    LCLK_STATUS_HOLDOVER)
		return 6;
	return 0;
}

/* The case of issue 30: 8 h asleep at 500 ppm is 14.4 s of logical time. */
TEST(eight_hours_at_500_ppm)
{
	struct lclk_state st = synced(100 * S, 1700000000LL * S, MAX_RATE_PPT,
				      50000, 1000000, 100 * S);
	struct lclk_change c = sleep_of(8 * HOUR);
	struct lclk_counters ctr = {};
	struct lclk_params o = st.params;
	s64 now = 200 * S;

	ASSERT_EQ(0, apply(&st, &ctr, &c, now));
	TH_LOG("logical time went on by %lld ns, the old line by %lld ns",
	       (long long)(logical(&st.params, now) - logical(&o, now)),
	       (long long)(logical(&o, now + 8 * HOUR) - logical(&o, now)));
	EXPECT_EQ(0, check_fold(&o, &st.params, now, 8 * HOUR));
	/*
	 * 8 h + 14.4 s, less the multipliers' truncation: under 2^-40 of the
	 * 8 h, 26 ns, and 1 ns of rounding.
	 */
	EXPECT_LE(8 * HOUR + 14400000000LL - 27,
		  logical(&st.params, now) - logical(&o, now));
	EXPECT_GE(8 * HOUR + 14400000000LL,
		  logical(&st.params, now) - logical(&o, now));
	/*
	 * 8 h at 50 ppm is 1.44 s of bound, the sleep's error 1 s and 1 ns
	 * for the fold's floor; the drift multiplier is rounded up, by up to
	 * 2 units of 2^-40 per ns: 53 ns over the 8 h.
	 */
	EXPECT_LE(bound(&o, now) + 1440000000LL + S, bound(&st.params, now));
	EXPECT_GE(bound(&o, now) + 1440000000LL + S + 1 + 53, bound(&st.params, now));
	EXPECT_EQ(7 * S + 8 * HOUR, st.boot_offset_ns);
	EXPECT_EQ(1, ctr.updates.counter);
	EXPECT_EQ(1, ctr.steps.counter);
	EXPECT_EQ(0, ctr.backward_steps.counter);
}

TEST(random_sleeps_fold_exactly)
{
	int i, bad = 0, first = 0, why = 0;

	for (i = 0; i < 200000; i++) {
		s64 t0 = test_between(0, 1LL << 50);
		s64 now = t0 + test_between(0, 1LL << 45);
		s64 last = test_between(0, now);
		s64 sleep = i & 1 ? test_between(1, 1000) : test_between(1, 1LL << 47);
		struct lclk_state st = synced(t0, test_between(-(1LL << 61), 1LL << 61),
					      test_between(-MAX_RATE_PPT, MAX_RATE_PPT),
					      (u32)test_between(0, LCLK_MAX_DRIFT_PPB),
					      test_between(0, 1LL << 40), last);
		struct lclk_change c = sleep_of(sleep);
		struct lclk_counters ctr = {};
		struct lclk_params o = st.params;
		int r;

		r = apply(&st, &ctr, &c, now) ? 7 : check_fold(&o, &st.params, now, sleep);
		if (!r && (ctr.updates.counter != 1 || ctr.steps.counter != 1 ||
			   ctr.backward_steps.counter))
			r = 8;
		if (r && !bad++) {
			first = i;
			why = r;
		}
	}
	if (bad)
		TH_LOG("%d of 200000 wrong, the first (#%d) by check %d", bad,
		       first, why);
	EXPECT_EQ(0, bad);
}

/* An unsynced clock goes on through the sleep and stays unsynced. */
TEST(unsynced_goes_on_unsynced)
{
	struct lclk_state st = synced(0, 5 * S, 100000000, 50000, 0, 0);
	struct lclk_change c = sleep_of(HOUR);
	struct lclk_counters ctr = {};
	struct lclk_params o;

	st.params.status = LCLK_STATUS_UNSYNCED;
	o = st.params;
	ASSERT_EQ(0, apply(&st, &ctr, &c, 10 * S));
	EXPECT_EQ(logical(&o, 10 * S + HOUR), logical(&st.params, 10 * S));
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, st.params.status);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, bound(&st.params, 10 * S));
	EXPECT_EQ(0, st.params.last_update_ns);
	EXPECT_EQ(1, ctr.steps.counter);
}

/*
 * A sleep past the offset's range is no error and no clamp: the clock
 * runs on from where it was and no longer claims to know the time. An
 * update, not a step.
 */
TEST(offset_overflow_unsyncs)
{
	struct lclk_state st = synced(0, LCLK_MAX_OFFSET_NS - 10 * S, 0, 50000,
				      1000, 0);
	struct lclk_change c = sleep_of(HOUR);
	struct lclk_counters ctr = {};
	struct lclk_params o = st.params;

	ASSERT_EQ(0, apply(&st, &ctr, &c, 5 * S));
	EXPECT_EQ(logical(&o, 5 * S), logical(&st.params, 5 * S));
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, st.params.status);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, bound(&st.params, 5 * S));
	EXPECT_EQ(7 * S + HOUR, st.boot_offset_ns);
	EXPECT_EQ(1, ctr.updates.counter);
	EXPECT_EQ(0, ctr.steps.counter);

	/* Far past it: no arithmetic overflow either. */
	st = synced(0, LCLK_MAX_OFFSET_NS, 0, 50000, 1000, 0);
	c = sleep_of(0x7fffffffffffffffLL);
	ASSERT_EQ(0, apply(&st, &ctr, &c, 5 * S));
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, st.params.status);
}

/* A bound past its range: the step is taken, the bound given up. */
TEST(bound_overflow_unsyncs)
{
	struct lclk_state st = synced(0, 0, 0, 50000, LCLK_MAX_BOUND_NS - 1, 0);
	struct lclk_change c = sleep_of(HOUR);
	struct lclk_counters ctr = {};

	ASSERT_EQ(0, apply(&st, &ctr, &c, 5 * S));
	EXPECT_EQ(5 * S + HOUR, logical(&st.params, 5 * S));
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, st.params.status);
	EXPECT_EQ(1, ctr.steps.counter);
}

TEST(a_sleep_is_positive_and_alone)
{
	struct lclk_change c = sleep_of(0);

	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c.sleep_ns = -S;
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c.sleep_ns = S;
	EXPECT_EQ(0, lclk_check_change(&c, MAX_RATE_PPT));
	c.modes |= LCLK_SET_RATE;
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
}

/*
 * Any run of changes, sleeps among them: every step is an update, every
 * backward step a step, and logical time at each change moves by what
 * the counters say.
 */
TEST(steps_are_updates)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 1000, 0);
	struct lclk_counters ctr = {};
	s64 now = S, updates = 0, steps = 0, back = 0;
	int i;

	for (i = 0; i < 100000; i++) {
		struct lclk_change c = { .flags = LCLK_ALLOW_BACKWARD };
		s64 before, after;

		now += test_between(0, 10 * S);
		switch (test_rand() % 5) {
		case 0:
			c = sleep_of(test_between(1, HOUR));
			break;
		case 1:
			c.modes = LCLK_CHANGE_STEP;
			c.step_ns = test_between(-S, S);
			break;
		case 2:
			c.modes = LCLK_SET_RATE;
			c.rate_ppt = test_between(-MAX_RATE_PPT, MAX_RATE_PPT);
			break;
		case 3:
			c.modes = LCLK_SET_BOUND;
			c.bound_ns = test_between(0, S);
			break;
		default:
			c.modes = LCLK_CHANGE_STEP | LCLK_CHANGE_WIDEN;
			c.step_ns = test_between(-S, S);
		}
		before = logical(&st.params, now);
		if (apply(&st, &ctr, &c, now))
			continue;
		after = logical(&st.params, now);
		updates++;
		steps += after != before;
		back += after < before;
	}
	EXPECT_EQ(updates, ctr.updates.counter);
	EXPECT_EQ(steps, ctr.steps.counter);
	EXPECT_EQ(back, ctr.backward_steps.counter);
	EXPECT_LE(ctr.steps.counter, ctr.updates.counter);
	EXPECT_LE(ctr.backward_steps.counter, ctr.steps.counter);
}

/*
 * The system clock slewed under the model (LCLK_CHANGE_SLEW, as
 * lclk_slew.c makes it at each change of the timekeeper's multiplier),
 * against a truth computed exactly: a CLOCK_MONOTONIC ns lasts
 * 1 + slew / 2^40 raw ns, a raw ns 1 + e true ns, e the oscillator's error
 * (up to 100 ppm) plus a wander that max_drift vouches for. A sync takes
 * the clock as it is, with the rate right for the clock as it runs then.
 * While the clock vouches for its bound, logical time is within it of the
 * truth at every check, the wander always pushing truth further away.
 */
#define PPM_MULT(ppm)	((s64)(ppm) * (1LL << LCLK_RATE_SHIFT) / 1000000)
#define PPT		1000000000000LL

TEST(random_slews_stay_within_the_bound)
{
	const u32 drift_ppb = 50000;
	/* the wander from a sync's: w (1 + 300 ppm) < max_drift - 1 ppb */
	const s64 w = (drift_ppb - 2) * 1000LL * 1000000 / 1000300;
	/* fast: a raw ns more than a true one adds to every slew's effect */
	const s64 osc = 100000000;	/* ppt */
	/* truth - base time, in units of 2^-40 ns / 10^12: no rounding */
	const __int128 unit = ONE_NS * PPT;
	struct lclk_state st;
	struct lclk_counters ctr = {};
	__int128 ahead = 0;
	s64 now = 0, slew = 0, e = osc, vouched = 0, unsynced = 0;
	int i, k, steady = 0;

	for (i = 0; i < 200000; i++) {
		struct lclk_change c = {};
		s64 len = test_between(1000000, 10 * S);

		if (i == 0 || ((test_rand() % 50 == 0 ||
				st.params.status == LCLK_STATUS_UNSYNCED) &&
			       llabs(slew) <= PPM_MULT(300))) {
			/*
			 * A sync, honest: the error as it is, the rate right
			 * for the oscillator, which has wandered back to osc.
			 */
			e = osc;
			__int128 err = (__int128)(logical(&st.params, now) - now) *
				       unit - ahead;

			if (i == 0)
				st = synced(0, 0, 0, drift_ppb, 0, 0);
			c.modes = LCLK_SET_BOUND | LCLK_SET_RATE;
			c.bound_ns = (s64)(abs128(err) / unit) + 1;
			c.rate_ppt = (s64)(((ONE_NS + slew) * (PPT + e)) >>
					   LCLK_RATE_SHIFT) - PPT;
			c.slew = slew;
			ASSERT_EQ(0, apply(&st, &ctr, &c, now));
			/* Half the time one slew for 50 steps: no slack. */
			steady = test_rand() % 2 ? 50 : 0;
		}
		/* The timekeeper changes its multiplier: a new slew. */
		if (steady == 50 || (!steady && test_rand() % 2))
			slew = test_rand() % 100 ?
			       test_between(-PPM_MULT(1500), PPM_MULT(1500)) :
			       test_between(-PPM_MULT(60000), PPM_MULT(60000));
		if (steady)
			steady--;
		c = (struct lclk_change){ .modes = LCLK_CHANGE_SLEW, .slew = slew };
		ASSERT_EQ(0, apply(&st, &ctr, &c, now));
		/* The wander, the way that takes truth further from logical. */
		e = (__int128)(logical(&st.params, now) - now) * unit > ahead ?
		    osc - w : osc + w;
		for (k = 1; k <= 4; k++) {
			s64 t = now + len * k / 4;
			__int128 a = ahead + (__int128)(t - now) *
				     ((ONE_NS + slew) * (PPT + e) - unit);
			__int128 err = abs128((__int128)(logical(&st.params, t) - t) *
					      unit - a);

			if (st.params.status == LCLK_STATUS_UNSYNCED) {
				unsynced++;
				continue;
			}
			vouched++;
			if (err > (__int128)bound(&st.params, t) * unit) {
				TH_LOG("step %d: error %lld ns over a bound of %lld ns",
				       i, (long long)(err / unit),
				       (long long)bound(&st.params, t));
				ASSERT_TRUE(0);
			}
		}
		ahead += (__int128)len * ((ONE_NS + slew) * (PPT + e) - unit);
		now += len;
	}
	TH_LOG("%lld checks vouched for, %lld unsynced", (long long)vouched,
	       (long long)unsynced);
	EXPECT_LT(unsynced, vouched);
	EXPECT_LT(0, unsynced);
}

/*
 * Leap seconds (LCLK_SET_LEAP), stepped as the kernel steps
 * CLOCK_REALTIME: the bound takes 1 s when logical time is 1 s from the
 * instant (LCLK_CHANGE_LEAP_NEAR), and at the instant (LCLK_CHANGE_LEAP_DUE)
 * logical time steps back 1 s for an insertion (forward for a deletion),
 * counted as a (backward) step, the 1 s given back, TAI - UTC moved by 1.
 */
static struct lclk_change leap_of(u32 leap, s64 at, s32 tai)
{
	struct lclk_change c = {
		.modes = LCLK_SET_LEAP, .leap = leap, .leap_ns = at,
		.tai_offset_s = tai,
	};

	return c;
}

static int leap_change(struct lclk_state *st, struct lclk_counters *ctr,
		       u32 mode, s64 now)
{
	struct lclk_change c = { .modes = mode, .flags = LCLK_ALLOW_BACKWARD };

	return apply(st, ctr, &c, now);
}

static void check_leap(struct __test_metadata *_metadata, u32 leap,
		       s64 step, s32 tai_after)
{
	/* 100 ppm fast, so that base and logical time differ in rate */
	struct lclk_state st = synced(0, 1000 * S, 100000000, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	s64 now = 10 * S, l0 = logical(&st.params, now), at = l0 + 3 * S;
	s64 b0, t_near, t_due, before;
	struct lclk_change c = leap_of(leap, at, 37);

	ASSERT_EQ(0, apply(&st, &ctr, &c, now));
	EXPECT_EQ(leap, st.params.leap);
	EXPECT_EQ(37, st.params.tai_offset_s);
	EXPECT_EQ(l0, logical(&st.params, now));
	EXPECT_FALSE(st.leap_near);
	b0 = st.params.bound0_ns;

	t_near = lclk_leap_base(&st.params, at - S);
	t_due = lclk_leap_base(&st.params, at);
	EXPECT_GE(logical(&st.params, t_near), at - S);
	EXPECT_LT(logical(&st.params, t_near - 1), at - S);
	EXPECT_GE(logical(&st.params, t_due), at);
	EXPECT_LT(logical(&st.params, t_due - 1), at);

	/* Early: refused, nothing changes. */
	EXPECT_EQ(-EAGAIN, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR,
				       t_near - 1));
	EXPECT_EQ(-EAGAIN, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE,
				       t_near));
	/* Near: the same line, bound0 + 1 s exactly. */
	before = logical(&st.params, t_near);
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR, t_near));
	EXPECT_EQ(b0 + S, st.params.bound0_ns);
	EXPECT_EQ(before, logical(&st.params, t_near));
	EXPECT_TRUE(st.leap_near);
	EXPECT_EQ(-EALREADY, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR,
					 t_near));
	EXPECT_EQ(-EAGAIN, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE,
				       t_due - 1));
	/* Due, 300 ms late: the step, 1 s back to bound0 (+1: re-anchor). */
	now = t_due + 300000000;
	before = logical(&st.params, now);
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE, now));
	EXPECT_EQ(before + step, logical(&st.params, now));
	EXPECT_EQ(b0 + 1, st.params.bound0_ns);
	EXPECT_EQ(LCLK_LEAP_NONE, st.params.leap);
	EXPECT_EQ(tai_after, st.params.tai_offset_s);
	EXPECT_FALSE(st.leap_near);
	EXPECT_EQ(0, st.leap_ns);
	EXPECT_EQ(LCLK_STATUS_SYNCED, st.params.status);
	/* set, near, due: three updates, one step, backward if an insertion */
	EXPECT_EQ(3, ctr.updates.counter);
	EXPECT_EQ(1, ctr.steps.counter);
	EXPECT_EQ(step < 0, ctr.backward_steps.counter);
	EXPECT_EQ(-EALREADY, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE, now));
	EXPECT_EQ(-EALREADY, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR, now));
}

TEST(leap_insert_steps_back_1s)
{
	check_leap(_metadata, LCLK_LEAP_INSERT, -S, 38);
}

TEST(leap_delete_steps_forward_1s)
{
	check_leap(_metadata, LCLK_LEAP_DELETE, S, 36);
}

/* Without LCLK_ALLOW_BACKWARD an insertion's step is refused, as any. */
TEST(leap_insert_is_a_backward_step)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	struct lclk_change c = leap_of(LCLK_LEAP_INSERT, 3 * S, 0);

	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	c = (struct lclk_change){ .modes = LCLK_CHANGE_LEAP_DUE };
	EXPECT_EQ(-ERANGE, apply(&st, &ctr, &c, 3 * S));
	/* unknown TAI - UTC stays unknown */
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE, 3 * S));
	EXPECT_EQ(0, st.params.tai_offset_s);
	EXPECT_EQ(2 * S, logical(&st.params, 3 * S));
}

/* A sync while the leap is near keeps its 1 s; a step is a sync's too. */
TEST(leap_sync_while_near_keeps_the_second)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	struct lclk_change c = leap_of(LCLK_LEAP_INSERT, 3 * S, 37);

	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR, 2 * S));
	c = (struct lclk_change){ .modes = LCLK_SET_BOUND, .bound_ns = 1000 };
	ASSERT_EQ(0, apply(&st, &ctr, &c, 2 * S + 1000));
	EXPECT_EQ(1000 + S, st.params.bound0_ns);
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE, 3 * S));
	EXPECT_EQ(1000 + 1, st.params.bound0_ns);
}

/* Set within 1 s of its instant, a leap is near at once. */
TEST(leap_set_near_widens_at_once)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	struct lclk_change c = leap_of(LCLK_LEAP_DELETE, S / 2, 0);
	s64 b0 = st.params.bound0_ns;

	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	EXPECT_TRUE(st.leap_near);
	EXPECT_EQ(b0 + 1 + S, st.params.bound0_ns);
	/* moved away again: the 1 s goes back */
	c = leap_of(LCLK_LEAP_DELETE, 5 * S, 0);
	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	EXPECT_FALSE(st.leap_near);
	EXPECT_EQ(b0 + 2, st.params.bound0_ns);
}

TEST(leap_cancel)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	struct lclk_change c = leap_of(LCLK_LEAP_INSERT, 3 * S, 37);
	s64 b0 = st.params.bound0_ns;

	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	ASSERT_EQ(0, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_NEAR, 2 * S));
	/* cancelled while near: the 1 s back, no step, the timers idle */
	c = leap_of(LCLK_LEAP_NONE, 0, 37);
	ASSERT_EQ(0, apply(&st, &ctr, &c, 2 * S));
	EXPECT_EQ(LCLK_LEAP_NONE, st.params.leap);
	EXPECT_EQ(37, st.params.tai_offset_s);
	EXPECT_EQ(b0 + 2, st.params.bound0_ns);
	EXPECT_EQ(-EALREADY, leap_change(&st, &ctr, LCLK_CHANGE_LEAP_DUE, 3 * S));
	EXPECT_EQ(3 * S, logical(&st.params, 3 * S));
	/* due already: the step is the timer's, no one else's */
	c = leap_of(LCLK_LEAP_INSERT, 4 * S, 37);
	ASSERT_EQ(0, apply(&st, &ctr, &c, 3 * S));
	c = leap_of(LCLK_LEAP_NONE, 0, 37);
	EXPECT_EQ(-EBUSY, apply(&st, &ctr, &c, 4 * S));
	c = leap_of(LCLK_LEAP_INSERT, 10 * S, 37);
	EXPECT_EQ(-EBUSY, apply(&st, &ctr, &c, 4 * S));
	EXPECT_EQ(LCLK_LEAP_INSERT, st.params.leap);
}

TEST(leap_refused)
{
	struct lclk_state st = synced(0, 0, 0, 50000, 5000, 0);
	struct lclk_counters ctr = {};
	struct lclk_change c;

	c = leap_of(LCLK_LEAP_INSERT, 10 * S, 37);	/* not ahead */
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 10 * S));
	c = leap_of(LCLK_LEAP_INSERT, 86401 * S + 1, 37);	/* not today */
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 86401 * S, 37);
	EXPECT_EQ(0, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_NONE, 0, 37);
	EXPECT_EQ(0, apply(&st, &ctr, &c, 0));
	c = leap_of(3, 10 * S, 37);
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_NONE, 10 * S, 37);	/* an instant for none */
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 0, 37);		/* no instant */
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 10 * S, -1);
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 10 * S, LCLK_MAX_TAI_OFFSET_S + 1);
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = (struct lclk_change){ .modes = LCLK_CHANGE_LEAP_DUE | LCLK_SET_BOUND };
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	/* a TAI clock has no leap seconds */
	c = (struct lclk_change){ .modes = LCLK_SET_FLAGS,
				  .model_flags = LCLK_MODEL_TAI };
	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 10 * S, 37);
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_NONE, 0, 37);		/* its offset it may have */
	EXPECT_EQ(0, apply(&st, &ctr, &c, 0));
	/* nor does a clock turn TAI with a leap pending */
	c.model_flags = 0;
	c.modes = LCLK_SET_FLAGS;
	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	c = leap_of(LCLK_LEAP_INSERT, 10 * S, 37);
	ASSERT_EQ(0, apply(&st, &ctr, &c, 0));
	c = (struct lclk_change){ .modes = LCLK_SET_FLAGS,
				  .model_flags = LCLK_MODEL_TAI };
	EXPECT_EQ(-EINVAL, apply(&st, &ctr, &c, 0));
	EXPECT_EQ(0, st.params.model_flags);
}

/*
 * Where the timers are armed: the first base time at which logical time
 * reaches the instant, for any rate, up to a year ahead.
 */
TEST(leap_base_is_the_first_at_the_instant)
{
	int i;

	for (i = 0; i < 200000; i++) {
		s64 rate = test_between(-MAX_RATE_PPT, MAX_RATE_PPT);
		struct lclk_state st = synced(test_between(0, HOUR),
					      test_between(-HOUR, HOUR), rate,
					      50000, 0, 0);
		s64 l = logical(&st.params, st.params.t0_ns) +
			test_between(1, 366LL * 86400 * S);
		s64 t = lclk_leap_base(&st.params, l);

		ASSERT_GE(logical(&st.params, t), l);
		ASSERT_LT(logical(&st.params, t - 1), l);
	}
}

TEST_HARNESS_MAIN
