// SPDX-License-Identifier: GPL-2.0
/*
 * Corrections (LCLK_SET_CORRECTION) in the model's transition function,
 * kmod/lclk_state.h, built on the host: a rate on top of the free-running
 * one, for a length of base time, that the module ends by itself - at its
 * end (its timer, late or not), or when the file that set it is released,
 * or when a rate replaces it.
 *
 * The truth the bound is held to is a true clock that this file alone
 * keeps, in exact arithmetic (10^-12 ns): within the bound of the clock at
 * the last sync, and running at the free rate plus a deviation within
 * max_drift, as the bound assumes. A correction, its end and the end's
 * lateness cannot move it. At every state, the promise is checked at base
 * times before, at and after the last update and the correction: |logical
 * - true| <= bound.
 */
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kernel_shim.h"
#include "rand.h"

#define S		1000000000LL
#define MS		1000000LL
#define PS		((__int128)1000000000000LL)	/* 10^-12 ns per ns */
#define MAX_RATE_PPT	500000000LL	/* the module's default limit, 500 ppm */

static const int daemon_file, other_file;

static int apply(struct lclk_state *st, const struct lclk_change *c, s64 now)
{
	return lclk_apply_state(st, NULL, c, now, MAX_RATE_PPT);
}

/* What lclkctl daemon sends: free rate, correction on top, a sync. */
static struct lclk_change slew(s64 free_ppt, s64 corr_ppt, s64 len,
			       s64 bound, u32 drift_ppb)
{
	struct lclk_change c = {
		.modes = LCLK_SET_RATE | LCLK_SET_CORRECTION | LCLK_SET_BOUND |
			 LCLK_SET_MAX_DRIFT,
		.rate_ppt = free_ppt,
		.corr_ppt = corr_ppt,
		.corr_ns = len,
		.bound_ns = bound,
		.max_drift_ppb = drift_ppb,
		.owner = &daemon_file,
	};

	return c;
}

static struct lclk_change due(void)
{
	struct lclk_change c = { .modes = LCLK_CHANGE_CORR_DUE };

	return c;
}

static struct lclk_change closed(const void *file)
{
	struct lclk_change c = { .modes = LCLK_CHANGE_CORR_CLOSE, .owner = file };

	return c;
}

static s64 logical(const struct lclk_state *st, s64 t)
{
	const struct lclk_params *m = &st->params;

	return lclk_logical(t, m->t0_ns, m->offset_ns, m->rate_mult);
}

static s64 bound(const struct lclk_state *st, s64 t)
{
	const struct lclk_params *m = &st->params;

	return lclk_bound(t, m->status, m->bound0_ns, m->last_update_ns,
			  m->drift_mult);
}

/*
 * The true clock: at base time at it reads at_ps (10^-12 ns) and runs at
 * 1 + (free_ppt + dev_ppt) / 10^12, |dev_ppt| <= max_drift.
 */
struct truth {
	s64 at;
	__int128 at_ps;
	s64 rate_ppt;
};

static __int128 true_ps(const struct truth *tr, s64 t)
{
	return tr->at_ps + (__int128)(t - tr->at) * (PS + tr->rate_ppt);
}

/* A true clock at the edge (or anywhere) of a sync's bound at now. */
static struct truth truth_at(const struct lclk_state *st, s64 now, s64 b,
			     s64 free_ppt, u32 drift_ppb)
{
	struct truth tr = { .at = now };
	s64 e = test_rand() & 1 ? b : test_between(-b, b);
	s64 dev = (s64)drift_ppb * 1000;

	tr.at_ps = ((__int128)logical(st, now) + e) * PS;
	tr.rate_ppt = free_ppt + (test_rand() & 1 ? dev : test_between(-dev, dev));
	if (test_rand() & 1)
		tr.rate_ppt = 2 * free_ppt - tr.rate_ppt;	/* the other edge */
	return tr;
}

/* By how much the promise fails at t, in ns (<= 0: it holds). */
static s64 excess(const struct lclk_state *st, const struct truth *tr, s64 t)
{
	__int128 err = (__int128)logical(st, t) * PS - true_ps(tr, t);

	if (err < 0)
		err = -err;
	err -= (__int128)bound(st, t) * PS;
	/* Rounded away from zero: a fraction of a ns past the bound fails. */
	return (s64)(err > 0 ? (err + PS - 1) / PS : err / PS);
}

/* The worst excess at base times around now, back to from and on to to. */
static s64 worst(const struct lclk_state *st, const struct truth *tr,
		 s64 from, s64 to)
{
	s64 w = excess(st, tr, from), t;
	int i;

	for (i = 0; i <= 64; i++) {
		t = from + (to - from) / 64 * i;
		if (excess(st, tr, t) > w)
			w = excess(st, tr, t);
	}
	return w;
}

/*
 * The case of issue 30: a daemon corrects 200 us at 140 ppm over a 1 s
 * poll on a free rate of 60 ppm, and is never heard from again. The
 * correction ends at its end, here 0.3 s late (the timer's lateness is
 * the kernel's to cover), and the clock runs on at the free rate, the
 * bound covering the truth at every instant, late end and all.
 */
TEST(a_correction_ends_by_itself)
{
	struct lclk_state st = {};
	struct lclk_change c = slew(60000000, 140000000, S, 200000, 80000);
	struct truth tr;
	s64 before;

	st.params.status = LCLK_STATUS_UNSYNCED;
	ASSERT_EQ(0, apply(&st, &c, 10 * S));
	tr = truth_at(&st, 10 * S, 200000, 60000000, 80000);
	EXPECT_EQ(200000000, st.params.rate_ppt);
	EXPECT_EQ(11 * S, st.corr_end_ns);
	EXPECT_GE(0, worst(&st, &tr, 0, 20 * S));

	/* Not due before its end: nothing changes. */
	c = due();
	EXPECT_EQ(-EALREADY, apply(&st, &c, 11 * S - 1));
	EXPECT_EQ(200000000, st.params.rate_ppt);

	before = logical(&st, 11300 * MS);
	ASSERT_EQ(0, apply(&st, &c, 11300 * MS));
	EXPECT_EQ(before, logical(&st, 11300 * MS));	/* no step */
	EXPECT_EQ(60000000, st.params.rate_ppt);
	EXPECT_EQ(0, st.corr_end_ns);
	EXPECT_EQ(lclk_ppb_to_mult(80000), st.params.drift_mult);
	EXPECT_GE(0, worst(&st, &tr, 0, 3600 * S));
	/* Once only. */
	EXPECT_EQ(-EALREADY, apply(&st, &c, 12 * S));
}

/* Its setter's file closes (the daemon died): it ends at once. */
TEST(a_correction_ends_with_its_file)
{
	struct lclk_state st = {};
	struct lclk_change c = slew(-3000000, -400000000, 4 * S, 1000, 20000);
	struct truth tr;

	st.params.status = LCLK_STATUS_UNSYNCED;
	ASSERT_EQ(0, apply(&st, &c, 5 * S));
	tr = truth_at(&st, 5 * S, 1000, -3000000, 20000);
	c = closed(&other_file);
	EXPECT_EQ(-EALREADY, apply(&st, &c, 5200 * MS));
	EXPECT_EQ(-403000000, st.params.rate_ppt);
	c = closed(&daemon_file);
	ASSERT_EQ(0, apply(&st, &c, 5200 * MS));
	EXPECT_EQ(-3000000, st.params.rate_ppt);
	EXPECT_EQ(0, st.corr_end_ns);
	EXPECT_EQ(NULL, st.corr_owner);
	EXPECT_GE(0, worst(&st, &tr, 0, 3600 * S));
	/* Its timer fires later, for nothing. */
	c = due();
	EXPECT_EQ(-EALREADY, apply(&st, &c, 9 * S));
}

/*
 * A rate set without a correction (lclkctl set --rate, the PTP clock's
 * adjfine) replaces it; adjfine widens from the free rate, not from the
 * corrected one: the free line is what the bound vouches for.
 */
TEST(a_rate_replaces_a_correction)
{
	struct lclk_state st = {};
	struct lclk_change c = slew(0, 300000000, 10 * S, 5000, 50000);
	struct truth tr;

	st.params.status = LCLK_STATUS_UNSYNCED;
	ASSERT_EQ(0, apply(&st, &c, S));
	tr = truth_at(&st, S, 5000, 0, 50000);
	/* adjfine to the corrected rate itself: 300 ppm from the free one. */
	lclk_phc_adjfine(300000000LL * 1024 / 15625, MAX_RATE_PPT, &c);
	ASSERT_EQ(0, apply(&st, &c, 3 * S));
	EXPECT_EQ(0, st.corr_end_ns);
	EXPECT_LE(lclk_ppb_to_mult(50000) + lclk_ppt_to_mult(299000000),
		  st.params.drift_mult);
	EXPECT_GE(0, worst(&st, &tr, 0, 3600 * S));

	c = slew(0, 300000000, 10 * S, 5000, 50000);
	ASSERT_EQ(0, apply(&st, &c, 4 * S));
	tr = truth_at(&st, 4 * S, 5000, 0, 50000);
	c = (struct lclk_change){ .modes = LCLK_SET_RATE, .rate_ppt = 0 };
	ASSERT_EQ(0, apply(&st, &c, 6 * S));
	EXPECT_EQ(0, st.params.rate_ppt);
	EXPECT_EQ(0, st.corr_end_ns);
	EXPECT_GE(0, worst(&st, &tr, 0, 3600 * S));
}

/* A correction set between syncs is as far from the last one as now. */
TEST(a_correction_after_the_sync)
{
	struct lclk_state st = {};
	struct lclk_change c = slew(20000000, 0, 0, 10000, 30000);
	struct truth tr;

	c.modes &= ~LCLK_SET_CORRECTION;
	st.params.status = LCLK_STATUS_UNSYNCED;
	ASSERT_EQ(0, apply(&st, &c, S));
	tr = truth_at(&st, S, 10000, 20000000, 30000);
	c = slew(20000000, -500000000 - 20000000, 2 * S, 0, 0);
	c.modes &= ~(LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT);
	ASSERT_EQ(0, apply(&st, &c, 50 * S));
	EXPECT_GE(0, worst(&st, &tr, 0, 100 * S));
	c = due();
	ASSERT_EQ(0, apply(&st, &c, 53 * S));
	EXPECT_GE(0, worst(&st, &tr, 0, 3600 * S));
}

TEST(a_correction_is_checked)
{
	struct lclk_change c = slew(0, 100, S, 0, 0);

	EXPECT_EQ(0, lclk_check_change(&c, MAX_RATE_PPT));
	c.modes &= ~LCLK_SET_RATE;	/* a correction needs its free rate */
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 0, S, 0, 0);	/* a rate */
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 100, 0, 0, 0);	/* and a length */
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 100, -S, 0, 0);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 100, LCLK_MAX_CORR_NS, 0, 0);
	EXPECT_EQ(0, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 100, LCLK_MAX_CORR_NS + 1, 0, 0);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	/* The rate it makes is within the limit, whichever side. */
	c = slew(MAX_RATE_PPT, -2 * MAX_RATE_PPT, S, 0, 0);
	EXPECT_EQ(0, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(MAX_RATE_PPT, 1, S, 0, 0);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(-MAX_RATE_PPT, -1, S, 0, 0);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = slew(0, 0x7fffffffffffffffLL, S, 0, 0);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	/* Its ends come alone; a close names its file. */
	c = due();
	EXPECT_EQ(0, lclk_check_change(&c, MAX_RATE_PPT));
	c.modes |= LCLK_SET_RATE;
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = closed(NULL);
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
	c = closed(&daemon_file);
	c.modes |= LCLK_CHANGE_CORR_DUE;
	EXPECT_EQ(-EINVAL, lclk_check_change(&c, MAX_RATE_PPT));
}

/*
 * Random runs of what a daemon and its accidents do: slews with and
 * without a sync, ends on time, late or never (a hung daemon's next
 * slew replaces it), closes, steps that widen, sleeps. The true clock
 * is re-placed at each sync within its bound; the promise must hold at
 * every sampled instant, before, at and after the last update.
 */
TEST(random_corrections_keep_the_promise)
{
	const s64 free_ppt = test_between(-MAX_RATE_PPT / 2, MAX_RATE_PPT / 2);
	const u32 drift = (u32)test_between(0, 100000);
	struct lclk_state st = {};
	struct truth tr = {};
	s64 now = S, w, worst_seen = -1;
	int i, synced = 0, bad = 0, ends = 0;

	st.params.status = LCLK_STATUS_UNSYNCED;
	for (i = 0; i < 200000; i++) {
		struct lclk_change c = {};
		s64 room = MAX_RATE_PPT - (free_ppt < 0 ? -free_ppt : free_ppt);
		s64 b = test_between(0, MS);

		now += test_between(1, 3 * S);
		switch (test_rand() % 6) {
		case 0:
		case 1:
			c = slew(free_ppt, test_between(1, room) *
				 (test_rand() & 1 ? 1 : -1),
				 test_between(1, 4 * S), b, drift);
			if (test_rand() & 1)
				c.modes &= ~(LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT);
			break;
		case 2:
			c = due();
			break;
		case 3:
			c = closed(test_rand() & 1 ? &daemon_file : &other_file);
			break;
		case 4:
			lclk_phc_adjtime(test_between(-MS, MS), &c);
			break;
		default:
			c = (struct lclk_change){
				.modes = LCLK_CHANGE_SLEEP,
				.sleep_ns = test_between(1, 100 * S),
			};
		}
		if (apply(&st, &c, now))
			continue;
		ends += !st.corr_end_ns;
		if (c.modes & LCLK_SET_BOUND) {
			tr = truth_at(&st, now, b, free_ppt, drift);
			synced = 1;
		}
		if (c.modes & LCLK_CHANGE_SLEEP) {
			/* The truth ran through the sleep; the base clock did not. */
			tr.at -= c.sleep_ns;
		}
		if (!synced || st.params.status == LCLK_STATUS_UNSYNCED)
			continue;
		w = worst(&st, &tr, st.params.last_update_ns - 10 * S,
			  now + 10 * S);
		if (w > worst_seen)
			worst_seen = w;
		bad += w > 0;
	}
	TH_LOG("free rate %lld ppt, drift %u ppb: %d states without a correction, worst excess %lld ns",
	       (long long)free_ppt, drift, ends, (long long)worst_seen);
	EXPECT_EQ(0, bad);
}

TEST_HARNESS_MAIN
