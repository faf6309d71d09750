// SPDX-License-Identifier: GPL-2.0
/*
 * The sync apply policy: step or slew, refusals, and that the bound the
 * module ends up with holds at every instant of a slew, however it ends:
 * ended by lclkctl, interrupted, its process killed (the device file is
 * released), or never ended at all. Each change goes through the module's
 * own transition function (kmod/lclk_state.h, tests/host/kernel_shim.h),
 * so the test checks the module's semantics, not its own idea of them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "kernel_shim.h"
#include "sync/apply.h"

#define MS 1000000LL
#define S 1000000000LL

static const struct lclk_info info = { .max_rate_ppt = 500000000LL };	/* 500 ppm */

/* The open device file of the lclkctl process: a correction's owner. */
static const int sync_file;

/* Synced at 100 s, 2 ppm fast, 50 ppm max drift. */
static struct lclk_state model0(void)
{
	struct lclk_state s;
	struct lclk_params *m = &s.params;

	memset(&s, 0, sizeof(s));
	m->t0_ns = 100 * S;
	m->offset_ns = 1700000000LL * S;
	m->rate_ppt = 2000000;
	m->rate_mult = lclk_ppt_to_mult(m->rate_ppt);
	m->last_update_ns = 100 * S;
	m->holdover_ns = 60 * S;
	m->max_drift_ppb = 50000;
	m->drift_mult = lclk_ppb_to_mult(m->max_drift_ppb);
	m->status = LCLK_STATUS_SYNCED;
	return s;
}

static int64_t logical(const struct lclk_params *m, int64_t t)
{
	return lclk_logical(t, m->t0_ns, m->offset_ns, m->rate_mult);
}

static int64_t bound(const struct lclk_params *m, int64_t t)
{
	return lclk_bound(t, m->status, m->bound0_ns, m->last_update_ns,
			  m->drift_mult);
}

/* SET_MODEL at base time now, as lclk_ioc_set_model() hands it on. */
static int set_model(struct lclk_state *st, const struct lclk_set_model *sm, int64_t now)
{
	struct lclk_change c = {
		.modes = sm->modes, .flags = sm->flags, .t0_ns = sm->t0_ns,
		.offset_ns = sm->offset_ns, .rate_ppt = sm->rate_ppt,
		.bound_ns = sm->bound_ns, .holdover_ns = sm->holdover_ns,
		.max_drift_ppb = sm->max_drift_ppb, .model_flags = sm->model_flags,
		.corr_ppt = sm->corr_ppt, .corr_ns = sm->corr_ns, .owner = &sync_file,
		.vmclock_marker = sm->vmclock_marker,
	};

	return lclk_apply_state(st, NULL, &c, now, info.max_rate_ppt);
}

/* The module's own ends of a correction: its timer, and the file's release. */
static void corr_event(struct lclk_state *st, u32 event, int64_t now)
{
	struct lclk_change c = { .modes = event, .owner = &sync_file };

	lclk_apply_state(st, NULL, &c, now, info.max_rate_ppt);
}

static struct measurement meas(int64_t offset, int64_t b, int64_t base)
{
	struct measurement m = { .offset_ns = offset, .bound_ns = b, .base_ns = base };

	return m;
}

static const struct apply_opts opts = { .step_threshold_ns = MS };

TEST(far_off_forward_is_a_step)
{
	struct lclk_state st = model0();
	struct lclk_params before = st.params, *m = &st.params;
	struct measurement me = meas(5 * MS, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.action, APPLY_STEP);
	EXPECT_EQ(p.start.flags, 0);
	ASSERT_EQ(set_model(&st, &p.start, 200 * S + 3 * MS), 0);
	/* Stepped by exactly the offset, rate kept, bound from the measurement. */
	EXPECT_LE(llabs(logical(m, 201 * S) - logical(&before, 201 * S) - 5 * MS), 2);
	EXPECT_EQ(m->rate_ppt, before.rate_ppt);
	EXPECT_GE(bound(m, 200 * S + 3 * MS), 20000 + 150);
}

TEST(backward_step_needs_permission)
{
	struct lclk_state st = model0();
	struct lclk_params m = st.params;
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
	struct lclk_state st = model0();
	struct lclk_params m = st.params;
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
	struct lclk_state st = model0();
	struct lclk_params m = st.params;
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
	struct lclk_state st = model0();
	struct lclk_params m = st.params;
	struct measurement me = meas(-300000, 20000, 200 * S);
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.action, APPLY_SLEW);
	EXPECT_LT(p.slew_ppt, 0);
	EXPECT_LE(llabs(p.slew_ppt * p.slew_ns / 1000000000000LL - me.offset_ns), 1);
	/* A correction whose end the module keeps, on the rate it had. */
	EXPECT_EQ(p.start.modes, LCLK_SET_RATE | LCLK_SET_CORRECTION | LCLK_SET_BOUND);
	EXPECT_EQ(p.start.rate_ppt, m.rate_ppt);
	EXPECT_EQ(p.start.corr_ppt, p.slew_ppt);
	EXPECT_EQ(p.start.corr_ns, p.slew_ns);
	EXPECT_LE(llabs(p.start.rate_ppt + p.start.corr_ppt), info.max_rate_ppt);
	EXPECT_EQ(p.start.bound_ns, 300000 + 20000 + 2);
	EXPECT_EQ(set_model(&st, &p.start, 200 * S + MS), 0);
	/* Nothing to slew: no correction, which the module would refuse. */
	st = model0();
	me = meas(0, 20000, 200 * S);
	ASSERT_EQ(apply_plan(&me, &m, &info, &opts, &p, err, sizeof(err)), 0);
	EXPECT_EQ(p.start.modes, LCLK_SET_BOUND);
	EXPECT_EQ(set_model(&st, &p.start, 200 * S + MS), 0);
}

/* How a slew ends, if it does. */
enum slew_end { ENDED, KILLED, NEVER };

/*
 * Run a slew for true offsets anywhere in the measured interval, end it at
 * various times (early, on time, late) as lclkctl does, or kill lclkctl
 * then (the module ends the correction when the file is released), or
 * never end it (the module's timer does, late by lateness), and check the
 * module's bound against the truth on a fine grid, up to 10 s later.
 */
static void slew_and_check(struct __test_metadata *_metadata, int64_t offset, int64_t truth,
			   int64_t end_at, enum slew_end how, int64_t lateness)
{
	struct lclk_state st = model0();
	struct lclk_params before = st.params, *m = &st.params;
	struct measurement me = meas(offset, 20000, 200 * S);
	int64_t t_start = 200 * S + 50 * MS, t, left, due, fired = 0;
	struct lclk_set_model e;
	struct apply_plan p;
	char err[128];

	ASSERT_EQ(apply_plan(&me, m, &info, &opts, &p, err, sizeof(err)), 0);
	ASSERT_EQ(p.action, APPLY_SLEW);
	ASSERT_EQ(set_model(&st, &p.start, t_start), 0);
	due = st.corr_end_ns;
	ASSERT_EQ(due, t_start + p.slew_ns);
	for (t = t_start; t < t_start + 10 * S; t += MS) {
		/* The reference runs 50 ppm (the max drift) fast against before. */
		int64_t ref = logical(&before, t) + truth + (t - 200 * S) / 20000;
		bool now = t >= t_start + end_at && t < t_start + end_at + MS;

		if (st.corr_end_ns && t >= st.corr_end_ns + lateness) {
			corr_event(&st, LCLK_CHANGE_CORR_DUE, t);
			fired = t;
		}
		if (how == ENDED && now) {
			apply_slew_end(&p, m, t, &e, &left);
			ASSERT_EQ(set_model(&st, &e, t + 5000), 0);
			EXPECT_EQ(m->rate_ppt, before.rate_ppt);
			EXPECT_EQ(m->max_drift_ppb, before.max_drift_ppb);
			EXPECT_EQ(st.corr_end_ns, 0);
			if (left >= 0)
				EXPECT_LE(llabs(logical(m, t + MS) - logical(&before, t + MS) - offset), 2);
		}
		if (how == KILLED && now) {
			corr_event(&st, LCLK_CHANGE_CORR_CLOSE, t);
			/* No slew outlives lclkctl: the rate is the one before. */
			EXPECT_EQ(m->rate_ppt, before.rate_ppt);
			EXPECT_EQ(st.corr_end_ns, 0);
		}
		ASSERT_LE(llabs(ref - logical(m, t)), bound(m, t))
			TH_LOG("offset %lld truth %lld end %lld how %d late %lld: t - start %lld err %lld bound %lld",
			       (long long)offset, (long long)truth, (long long)end_at, how,
			       (long long)lateness, (long long)(t - t_start),
			       (long long)(ref - logical(m, t)), (long long)bound(m, t));
	}
	/* Whoever ended it, the rate is the one before, and the drift. */
	EXPECT_EQ(m->rate_ppt, before.rate_ppt);
	EXPECT_EQ(m->drift_mult, lclk_ppb_to_mult(before.max_drift_ppb));
	if (how == NEVER)	/* the whole offset, and what the timer was late */
		EXPECT_LE(llabs(logical(m, t) - logical(&before, t) - offset),
			  (fired - due) * llabs(p.slew_ppt) / 1000000000000LL + 4)
			TH_LOG("offset %lld late %lld: landed %lld off", (long long)offset,
			       (long long)(fired - due),
			       (long long)(logical(m, t) - logical(&before, t) - offset));
}

TEST(bound_holds_through_any_slew)
{
	static const int64_t offsets[] = { 300000, -300000, 999999, -5000, 1 };
	static const int64_t ends[] = { 0, 100 * MS, 590 * MS, 600 * MS, 700 * MS, 3 * S };
	static const int64_t late[] = { 0, 3 * MS, 2 * S };
	unsigned int i, k, d;

	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++)
		for (d = 0; d < 3; d++) {
			int64_t truth = offsets[i] + ((int64_t)d - 1) * 20000;

			for (k = 0; k < sizeof(ends) / sizeof(ends[0]); k++) {
				slew_and_check(_metadata, offsets[i], truth, ends[k], ENDED, 0);
				slew_and_check(_metadata, offsets[i], truth, ends[k], KILLED, 0);
			}
			for (k = 0; k < sizeof(late) / sizeof(late[0]); k++)
				slew_and_check(_metadata, offsets[i], truth, 0, NEVER, late[k]);
		}
}

TEST(slew_end_lands_exactly)
{
	struct lclk_state st = model0();
	struct lclk_params before = st.params, *m = &st.params;
	struct measurement me = meas(400000, 20000, 200 * S);
	struct lclk_set_model e;
	struct apply_plan p;
	int64_t t_start = 200 * S, t_end, left;
	char err[128];

	ASSERT_EQ(apply_plan(&me, m, &info, &opts, &p, err, sizeof(err)), 0);
	ASSERT_EQ(set_model(&st, &p.start, t_start), 0);
	/* A little early, as apply_execute ends a positive slew. */
	t_end = t_start + p.slew_ns - p.slew_ns / 100 - 100000;
	apply_slew_end(&p, m, t_end, &e, &left);
	EXPECT_GE(left, 0);
	EXPECT_TRUE(e.modes & LCLK_SET_OFFSET);
	ASSERT_EQ(set_model(&st, &e, t_end + 10000), 0);
	EXPECT_LE(llabs(logical(m, t_end + S) - logical(&before, t_end + S) - 400000), 2);
}

/*
 * On a VM with a vmclock, every change made from a measurement (a step, a
 * slew's start and its end, which both set a bound from it) is made only
 * under the disruption marker read before the measurement: the module
 * refuses it after a restore (tests/vm/snapshot-restore -s checks that
 * part against a real vmclock).
 */
TEST(changes_from_a_measurement_are_conditional_on_its_vmclock_marker)
{
	static const int64_t offsets[] = { 5 * MS, 400000, 0 };
	struct vmclock_mark mark = { .vmclock = true, .known = true, .marker = 7 };
	struct lclk_set_model e;
	struct apply_plan p;
	int64_t left;
	char err[128];
	unsigned int i;

	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		struct lclk_state st = model0();
		struct measurement me = meas(offsets[i], 20000, 200 * S);

		me.vmclock = mark;
		ASSERT_EQ(apply_plan(&me, &st.params, &info, &opts, &p, err, sizeof(err)), 0);
		EXPECT_TRUE(p.start.modes & LCLK_SET_VMCLOCK);
		EXPECT_EQ(p.start.vmclock_marker, 7);
		/* the module's transition takes it with the rest */
		ASSERT_EQ(set_model(&st, &p.start, 200 * S), 0);
		if (p.action != APPLY_SLEW)
			continue;
		apply_slew_end(&p, &st.params, 200 * S + p.slew_ns, &e, &left);
		EXPECT_TRUE(e.modes & LCLK_SET_VMCLOCK);
		EXPECT_EQ(e.vmclock_marker, 7);
	}

	/* a vmclock whose page could not be read: nothing to set under */
	{
		struct lclk_state st = model0();
		struct measurement me = meas(5 * MS, 20000, 200 * S);

		me.vmclock.vmclock = true;
		EXPECT_EQ(apply_plan(&me, &st.params, &info, &opts, &p, err, sizeof(err)),
			  -EAGAIN);
	}
	/* no vmclock: an unconditional change, as before the vmclock */
	{
		struct lclk_state st = model0();
		struct measurement me = meas(5 * MS, 20000, 200 * S);

		ASSERT_EQ(apply_plan(&me, &st.params, &info, &opts, &p, err, sizeof(err)), 0);
		EXPECT_FALSE(p.start.modes & LCLK_SET_VMCLOCK);
	}
}

TEST_HARNESS_MAIN
