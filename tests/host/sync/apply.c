// SPDX-License-Identifier: GPL-2.0
/*
 * The sync apply policy: step or slew, refusals, and that the bound the
 * module ends up with holds at every instant of a slew, however it ends,
 * checked against a model of the module's SET_MODEL semantics
 * (include/uapi/linux/lclk.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "sync/apply.h"
#include "lclk_model.h"

#define MS 1000000LL
#define S 1000000000LL

static const struct lclk_info info = { .max_rate_ppt = 500000000LL };	/* 500 ppm */

static struct lclk_params model0(void)
{
	struct lclk_params m = {
		.t0_ns = 100 * S, .offset_ns = 1700000000LL * S, .rate_ppt = 2000000,
		.max_drift_ppb = 50000, .holdover_ns = 60 * S,
	};

	return m;
}

static int64_t logical(const struct lclk_params *m, int64_t t)
{
	return lclk_logical(t, m->t0_ns, m->offset_ns, lclk_ppt_to_mult(m->rate_ppt));
}

static int64_t bound(const struct lclk_params *m, int64_t t)
{
	return lclk_bound(t, LCLK_STATUS_SYNCED, m->bound0_ns, m->last_update_ns,
			  lclk_ppb_to_mult(m->max_drift_ppb));
}

/* The module's SET_MODEL, as the ABI header describes it; -ERANGE as it does. */
static int set_model(struct lclk_params *m, const struct lclk_set_model *c, int64_t now)
{
	struct lclk_params n = *m;
	int64_t t0 = c->t0_ns ? c->t0_ns : now;

	n.t0_ns = now;
	n.offset_ns = logical(m, now) - now;
	if (c->modes & LCLK_SET_RATE)
		n.rate_ppt = c->rate_ppt;
	if (c->modes & LCLK_SET_OFFSET)
		n.offset_ns = c->offset_ns + lclk_scale(now - t0, lclk_ppt_to_mult(n.rate_ppt));
	if (c->modes & LCLK_SET_MAX_DRIFT)
		n.max_drift_ppb = c->max_drift_ppb;
	if (c->modes & LCLK_SET_BOUND) {
		n.bound0_ns = c->bound_ns + lclk_scale(now - t0, lclk_ppb_to_mult(n.max_drift_ppb));
		n.last_update_ns = now;
	}
	if (logical(&n, now) < logical(m, now) && !(c->flags & LCLK_ALLOW_BACKWARD))
		return -ERANGE;
	*m = n;
	return 0;
}

static struct measurement meas(int64_t offset, int64_t b, int64_t base)
{
	struct measurement m = { .offset_ns = offset, .bound_ns = b, .base_ns = base };

	return m;
}

static const struct apply_opts opts = { .step_threshold_ns = MS };

TEST(far_off_forward_is_a_step)
{
	struct lclk_params m = model0(), before = m;
	struct measurement me = meas(5 * MS, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.action, APPLY_STEP);
	EXPECT_EQ(p.start.flags, 0);
	ASSERT_EQ(set_model(&m, &p.start, 200 * S + 3 * MS), 0);
	/* Stepped by exactly the offset, rate kept, bound from the measurement. */
	EXPECT_LE(llabs(logical(&m, 201 * S) - logical(&before, 201 * S) - 5 * MS), 2);
	EXPECT_EQ(m.rate_ppt, before.rate_ppt);
	EXPECT_GE(bound(&m, 200 * S + 3 * MS), 20000 + 150);
}

TEST(backward_step_needs_permission)
{
	struct lclk_params m = model0();
	struct measurement me = meas(-5 * MS, 20000, 200 * S);
	struct apply_opts o = opts;
	struct apply_plan p;
	char err[128];

	EXPECT_EQ(apply_plan(&me, &m, &info, &o, &p, err, sizeof(err)), -ERANGE);
	EXPECT_NE(strstr(err, "--allow-backward"), NULL);
	o.allow_backward = true;
	ASSERT_EQ(apply_plan(&me, &m, &info, &o, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.action, APPLY_STEP);
	EXPECT_EQ(p.start.flags, LCLK_ALLOW_BACKWARD);
}

/*
 * The timescale rule sync shares with the daemon (apply_timescale()): a
 * measurement against the other timescale is moved by its UTC offset,
 * exactly 37 s = 37000000000 ns, or refused without one.
 */
TEST(other_timescale_converted_with_a_valid_utc_offset)
{
	struct lclk_params m = model0();
	struct measurement me = meas(37000000000LL + 100000, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	me.tai = true;
	me.utc_offset_valid = true;
	me.utc_offset = 37;
	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(APPLY_SLEW, p.action);
	EXPECT_EQ(100000, p.m.offset_ns);
	EXPECT_FALSE(p.m.tai);
	EXPECT_EQ(100000 + 20000 + 2, p.start.bound_ns);
	/* A UTC measurement on a TAI clock: the other way. */
	m.model_flags = LCLK_MODEL_TAI;
	me = meas(100000 - 37000000000LL, 20000, 200 * S);
	me.utc_offset_valid = true;
	me.utc_offset = 37;
	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(100000, p.m.offset_ns);
	EXPECT_TRUE(p.m.tai);
	me.utc_offset_valid = false;
	EXPECT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), -EINVAL);
	TH_LOG("%s", err);
}

TEST(refusals)
{
	struct lclk_params m = model0();
	struct measurement me = meas(100000, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	me.tai = true;		/* against TAI, on a UTC clock, no UTC offset */
	EXPECT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), -EINVAL);
	me.tai = false;
	me.bound_ns = LCLK_MAX_BOUND_NS;
	EXPECT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), -EINVAL);
	me.bound_ns = 20000;
	m.rate_ppt = info.max_rate_ppt;
	EXPECT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), -EDOM);
	/* At the limit, a slew the other way is still possible. */
	me.offset_ns = -100000;
	EXPECT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
}

TEST(small_offset_is_a_slew_within_the_rate_limit)
{
	struct lclk_params m = model0();
	struct measurement me = meas(-300000, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.action, APPLY_SLEW);
	EXPECT_LE(llabs(p.start.rate_ppt), info.max_rate_ppt);
	EXPECT_LT(p.slew_ppt, 0);
	EXPECT_LE(llabs(p.slew_ppt * p.slew_ns / 1000000000000LL - me.offset_ns), 1);
	EXPECT_EQ(p.start.bound_ns, 300000 + 20000 + 2);
	EXPECT_GE(p.start.max_drift_ppb, m.max_drift_ppb + llabs(p.slew_ppt) / 1000);
	EXPECT_FALSE(p.start.modes & LCLK_SET_OFFSET);
}

/*
 * Run a slew for true offsets anywhere in the measured interval, end it at
 * various times (early, on time, late, never), and check the module's
 * bound against the truth on a fine grid, up to 10 s later.
 */
static void slew_and_check(struct __test_metadata *_metadata, int64_t offset, int64_t truth,
			   int64_t end_at, bool end)
{
	struct lclk_params m = model0(), before = m;
	struct measurement me = meas(offset, 20000, 200 * S);
	int64_t t_start = 200 * S + 50 * MS, t, left;
	struct lclk_set_model e;
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	ASSERT_EQ(p.action, APPLY_SLEW);
	ASSERT_EQ(set_model(&m, &p.start, t_start), 0);
	for (t = t_start; t < t_start + 10 * S; t += MS) {
		/* The reference runs 50 ppm (the max drift) fast against before. */
		int64_t ref = logical(&before, t) + truth + (t - 200 * S) / 20000;

		if (end && t >= t_start + end_at && t < t_start + end_at + MS) {
			apply_slew_end(&p, &m, t, &e, &left);
			ASSERT_EQ(set_model(&m, &e, t + 5000), 0);
			EXPECT_EQ(m.rate_ppt, before.rate_ppt);
			EXPECT_EQ(m.max_drift_ppb, before.max_drift_ppb);
			if (left >= 0)
				EXPECT_LE(llabs(logical(&m, t + MS) - logical(&before, t + MS) - offset), 2);
		}
		ASSERT_LE(llabs(ref - logical(&m, t)), bound(&m, t))
			TH_LOG("offset %lld truth %lld end %lld: t - start %lld err %lld bound %lld",
			       (long long)offset, (long long)truth, (long long)end_at,
			       (long long)(t - t_start), (long long)(ref - logical(&m, t)),
			       (long long)bound(&m, t));
	}
}

TEST(bound_holds_through_any_slew)
{
	static const int64_t offsets[] = { 300000, -300000, 999999, -5000, 1 };
	static const int64_t ends[] = { 0, 100 * MS, 590 * MS, 600 * MS, 700 * MS, 3 * S };
	unsigned int i, k, d;

	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		for (d = 0; d < 3; d++)
			for (k = 0; k <= sizeof(ends) / sizeof(ends[0]); k++) {
				int64_t truth = offsets[i] + ((int64_t)d - 1) * 20000;
				bool end = k < sizeof(ends) / sizeof(ends[0]);

				slew_and_check(_metadata, offsets[i], truth, end ? ends[k] : 0, end);
			}
}

TEST(slew_end_lands_exactly)
{
	struct lclk_params m = model0(), before = m;
	struct measurement me = meas(400000, 20000, 200 * S);
	struct lclk_set_model e;
	struct apply_plan p;
	int64_t t_start = 200 * S, t_end, left;
	char err[128];

	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	ASSERT_EQ(set_model(&m, &p.start, t_start), 0);
	/* A little early, as apply_execute ends a positive slew. */
	t_end = t_start + p.slew_ns - p.slew_ns / 100 - 100000;
	apply_slew_end(&p, &m, t_end, &e, &left);
	EXPECT_GE(left, 0);
	EXPECT_TRUE(e.modes & LCLK_SET_OFFSET);
	ASSERT_EQ(set_model(&m, &e, t_end + 10000), 0);
	EXPECT_LE(llabs(logical(&m, t_end + S) - logical(&before, t_end + S) - 400000), 2);
}

TEST_HARNESS_MAIN
