/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the model's transition function. Every change to the model - an
 * ioctl, the PTP clock, a resume from system sleep - is checked, built
 * and counted here, by the same code. It is pure: no lock, no clock, no
 * page; the caller (lclk_apply()) brings "now" and publishes the result.
 * So it builds on the host too: tests/host/lclk_state.c runs it, with
 * tests/host/kernel_shim.h for the kernel's types and helpers, against
 * exact arithmetic.
 */
#ifndef _LCLK_STATE_H
#define _LCLK_STATE_H

#ifdef __KERNEL__
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/time64.h>
#include <linux/types.h>
#endif

#include "lclk_model.h"

/* The model as its writer keeps it: what the page publishes, and more. */
struct lclk_state {
	struct lclk_params params;	/* copied to the page as a whole */
	s64 boot_offset_ns;	/* CLOCK_BOOTTIME - CLOCK_MONOTONIC, folded in */
	s64 slew_base;		/* the system clock's slew at the last sync */
	s64 slew_widened;	/* what drift_mult took for slews since */
	/*
	 * The correction that runs (LCLK_SET_CORRECTION), if corr_end_ns is
	 * not 0: params.rate_ppt is corr_free_ppt plus its rate until the
	 * base time corr_end_ns, and params.drift_mult holds corr_growth on
	 * top of what it would be without it. corr_owner is the file that set
	 * it, compared, never dereferenced.
	 */
	s64 corr_end_ns;
	s64 corr_free_ppt;
	s64 corr_growth;
	const void *corr_owner;
	s64 leap_ns;		/* logical time of the pending leap's step */
	bool leap_near;		/* bound0 has the leap's 1 s: LCLK_CHANGE_LEAP_NEAR */
};

struct lclk_counters {
	atomic64_t updates;
	atomic64_t steps;
	atomic64_t backward_steps;
	atomic64_t rejected;
	atomic64_t phc_adjustments;
};

/*
 * Internal change modes, beyond the uapi LCLK_SET_* bits, for STEP, the
 * PTP clock's settime and resume.
 */
#define LCLK_CHANGE_STEP	BIT(16)	/* add step_ns to the offset */
#define LCLK_CHANGE_TIME	BIT(17)	/* logical(now) becomes time_ns */
/*
 * An unmeasured change (the PTP clock's settime, adjtime and adjfine): the
 * bound grows by the size of a step, within which the reference still
 * lies, and by what a change of rate moves the line over time (see
 * lclk_widen_rate()).
 */
#define LCLK_CHANGE_WIDEN	BIT(18)
/* The system slept sleep_ns (> 0) that the base clock did not count. */
#define LCLK_CHANGE_SLEEP	BIT(19)
/*
 * The system clock's slew is now slew (lclk_slew.c): widen the growth if
 * it has moved further from the one at the last sync than it allows for.
 */
#define LCLK_CHANGE_SLEW	BIT(20)
/*
 * The end of a correction, by the module's timer: if one runs and its end
 * has come (else -EALREADY); and on the release of the file owner, if it
 * set the correction that runs (else -EALREADY). Each comes alone.
 */
#define LCLK_CHANGE_CORR_DUE	BIT(24)
#define LCLK_CHANGE_CORR_CLOSE	BIT(25)
/*
 * A pending leap second (LCLK_SET_LEAP) is near: logical time has reached
 * 1 s before its step. The bound takes 1 s more, which covers readings
 * between the instant and the step: truth has stepped there, logical time
 * only when LCLK_CHANGE_LEAP_DUE comes (a timer, lclk_leap.c, which may
 * be late). The same line on the same anchor, as LCLK_CHANGE_SLEW.
 */
#define LCLK_CHANGE_LEAP_NEAR	BIT(21)
/* Logical time has reached the leap's step: make it, take the 1 s back. */
#define LCLK_CHANGE_LEAP_DUE	BIT(22)

/* What a leap second steps logical time by, and widens the bound by. */
#define LCLK_LEAP_STEP_NS	NSEC_PER_SEC

/* One change to the model, from an ioctl, the PTP clock or a resume. */
struct lclk_change {
	u32 modes;		/* LCLK_SET_* | LCLK_CHANGE_* */
	u32 flags;		/* LCLK_ALLOW_BACKWARD */
	s64 t0_ns;		/* 0 = now */
	s64 offset_ns;
	s64 rate_ppt;
	s64 bound_ns;
	s64 holdover_ns;
	u32 max_drift_ppb;
	u32 model_flags;
	s64 step_ns;
	s64 time_ns;
	s64 sleep_ns;
	u32 leap;		/* LCLK_SET_LEAP: LCLK_LEAP_* */
	s64 leap_ns;		/* ... the logical time of its step */
	s32 tai_offset_s;	/* ... TAI - UTC, 0 if unknown */
	/*
	 * CLOCK_MONOTONIC_RAW per ns of CLOCK_MONOTONIC, minus 1, in
	 * 2^-LCLK_RATE_SHIFT: how adjtimex slews the base clock now. Taken
	 * by a sync (the base of the widening) and LCLK_CHANGE_SLEW.
	 */
	s64 slew;
	s64 corr_ppt;		/* LCLK_SET_CORRECTION, on top of rate_ppt */
	s64 corr_ns;		/* ... for this long */
	u64 vmclock_marker;	/* LCLK_SET_VMCLOCK: the setter's */
	const void *owner;	/* the file it came through; NULL if none */
};

/*
 * How far the system clock's slew can be from 0: adjtimex allows a tick
 * 10 % off and 500 ppm of frequency and of offset on top; 1/4 is ample
 * and keeps every product below in range.
 */
#define LCLK_MAX_SLEW		(1LL << (LCLK_RATE_SHIFT - 2))

/*
 * The most the kernel's measurement of a sleep can be off: the RTC it
 * falls back to counts whole seconds.
 */
#define LCLK_SLEEP_ERROR_NS	NSEC_PER_SEC

static inline bool lclk_offset_ok(s64 offset)
{
	return offset >= -LCLK_MAX_OFFSET_NS && offset <= LCLK_MAX_OFFSET_NS;
}

/* The checks that do not depend on the current model or time. */
static inline int lclk_check_change(const struct lclk_change *c,
				    s64 max_rate_ppt)
{
	if (c->flags & ~LCLK_ALL_FLAGS)
		return -EINVAL;
	/* A condition on a change, not a change. */
	if (c->modes == LCLK_SET_VMCLOCK)
		return -EINVAL;
	/* A sync and an unsync at once contradict each other. */
	if ((c->modes & LCLK_SET_BOUND) && (c->modes & LCLK_SET_UNSYNC))
		return -EINVAL;
	if ((c->modes & (LCLK_SET_OFFSET | LCLK_SET_BOUND)) && c->t0_ns < 0)
		return -EINVAL;
	if ((c->modes & LCLK_SET_OFFSET) && !lclk_offset_ok(c->offset_ns))
		return -EINVAL;
	if ((c->modes & LCLK_SET_RATE) &&
	    (c->rate_ppt > max_rate_ppt || c->rate_ppt < -max_rate_ppt))
		return -EINVAL;
	if ((c->modes & LCLK_SET_BOUND) &&
	    (c->bound_ns < 0 || c->bound_ns > LCLK_MAX_BOUND_NS))
		return -EINVAL;
	if ((c->modes & LCLK_SET_HOLDOVER) && c->holdover_ns < 0)
		return -EINVAL;
	if ((c->modes & LCLK_SET_MAX_DRIFT) &&
	    c->max_drift_ppb > LCLK_MAX_DRIFT_PPB)
		return -EINVAL;
	if ((c->modes & LCLK_SET_FLAGS) && (c->model_flags & ~LCLK_MODEL_TAI))
		return -EINVAL;
	if ((c->modes & LCLK_CHANGE_STEP) && !lclk_offset_ok(c->step_ns))
		return -EINVAL;
	/* A sleep is folded alone: it happened under the model as it was. */
	if ((c->modes & LCLK_CHANGE_SLEEP) &&
	    (c->modes != LCLK_CHANGE_SLEEP || c->sleep_ns <= 0))
		return -EINVAL;
	/* So is a slew: the line does not change, only what it vouches for. */
	if ((c->modes & LCLK_CHANGE_SLEW) && c->modes != LCLK_CHANGE_SLEW)
		return -EINVAL;
	if (c->slew < -LCLK_MAX_SLEW || c->slew > LCLK_MAX_SLEW)
		return -EINVAL;
	if ((c->modes & LCLK_CHANGE_CORR_DUE) &&
	    c->modes != LCLK_CHANGE_CORR_DUE)
		return -EINVAL;
	if ((c->modes & LCLK_CHANGE_CORR_CLOSE) &&
	    (c->modes != LCLK_CHANGE_CORR_CLOSE || !c->owner))
		return -EINVAL;
	/*
	 * A correction rides on a free-running rate given with it, so that
	 * the rate it makes can be checked here, against the limit, as any
	 * other; it has a rate and a length, or it is not one.
	 */
	if ((c->modes & LCLK_SET_CORRECTION) &&
	    (!(c->modes & LCLK_SET_RATE) || !c->corr_ppt ||
	     c->corr_ppt > 2 * max_rate_ppt || c->corr_ppt < -2 * max_rate_ppt ||
	     c->rate_ppt + c->corr_ppt > max_rate_ppt ||
	     c->rate_ppt + c->corr_ppt < -max_rate_ppt ||
	     c->corr_ns <= 0 || c->corr_ns > LCLK_MAX_CORR_NS))
		return -EINVAL;
	if ((c->modes & LCLK_SET_LEAP) &&
	    (c->leap > LCLK_LEAP_DELETE ||
	     !c->leap != !c->leap_ns ||	/* an instant for a leap only */
	     c->tai_offset_s < 0 || c->tai_offset_s > LCLK_MAX_TAI_OFFSET_S))
		return -EINVAL;
	/* The leap's own changes come alone, from its timers. */
	if ((c->modes & (LCLK_CHANGE_LEAP_NEAR | LCLK_CHANGE_LEAP_DUE)) &&
	    c->modes != LCLK_CHANGE_LEAP_NEAR && c->modes != LCLK_CHANGE_LEAP_DUE)
		return -EINVAL;
	return 0;
}

/*
 * Fold a system sleep into the model, re-anchored at now: o is the model
 * before, m the one being built. The base clock stood still while the
 * system slept, so logical time is behind by the sleep, and neither the
 * bound's growth nor the holdover clock (both measured on the base clock)
 * saw it. Make the model what it would be had the base clock run through
 * the sleep: logical time at now is the old line at now + sleep, the
 * learned rate included (a sleep of 8 h at 500 ppm is 14.4 s more), the
 * last update moves back by the sleep (so the bound grows by max_drift
 * over it), the bound takes the sleep measurement's error, and the status
 * is HOLDOVER, because no one disciplined the clock while it slept.
 *
 * A sleep cannot be refused as a change can: it has happened, and the
 * model from before it is now wrong by the sleep while its bound claims
 * otherwise. So where the result leaves the ranges the ABI promises, the
 * clock says it no longer knows the time: UNSYNCED, as an unmeasured step
 * whose bound would overflow does (LCLK_CHANGE_WIDEN). An offset beyond
 * LCLK_MAX_OFFSET_NS (146 years) is not taken: logical time runs on from
 * where it was. Never a clamped offset, which would be a wrong time under
 * a bound that claims it right.
 */
static inline void lclk_fold_sleep(const struct lclk_params *o, s64 now,
				   s64 sleep, struct lclk_params *m)
{
	s64 span, offset, last;

	/* One scaling over the whole span, t0 to now + sleep: one rounding. */
	if (check_add_overflow(now - o->t0_ns, sleep, &span) ||
	    check_add_overflow(o->offset_ns, sleep, &offset) ||
	    check_add_overflow(offset, lclk_scale(span, o->rate_mult),
			       &offset) ||
	    !lclk_offset_ok(offset)) {
		m->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	m->offset_ns = offset;
	if (m->status == LCLK_STATUS_UNSYNCED)
		return;
	if (check_sub_overflow(m->last_update_ns, sleep, &last) ||
	    m->bound0_ns > LCLK_MAX_BOUND_NS - LCLK_SLEEP_ERROR_NS - 1) {
		m->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	m->last_update_ns = last;
	m->bound0_ns += LCLK_SLEEP_ERROR_NS + 1;	/* +1: the fold's floor */
	m->status = LCLK_STATUS_HOLDOVER;
}

/*
 * The most the bound's growth may be widened to (4000 ppm, twice the
 * largest difference of two rates) before the clock stops vouching for
 * itself: rates set one after another by someone else (phc2sys steering
 * the PTP clock) add up here until the next sync.
 */
#define LCLK_MAX_WIDE_DRIFT_MULT	(4 * lclk_ppt_to_mult(LCLK_MAX_RATE_PPT))

/*
 * A rate nobody measured (adjfine through the PTP clock): the line before
 * it was within the bound of the reference, and the new one leaves it by
 * |d| = |new rate - old rate| per ns, either way from now. So the bound
 * grows by |d| per ns of age from now on, and bound0 takes |d| over the
 * age at now, which covers a stamp taken between the last sync and now
 * (that the new line, extrapolated back, moves by up to |d| * (now - t))
 * and one from before the sync alike. Until the next sync: a measurement
 * resets the growth to max_drift (LCLK_SET_BOUND).
 */
static inline void lclk_widen_rate(s64 from_mult, s64 now,
				   struct lclk_params *m)
{
	s64 d = m->rate_mult - from_mult;
	s64 age = now - m->last_update_ns;

	if (d < 0)
		d = -d;
	if (age < 0)
		age = -age;
	/*
	 * Each multiplier is its rate truncated by less than one unit, so d
	 * may fall short of the exact change by less than two: +2 covers it.
	 */
	if (d)
		d += 2;
	if (m->drift_mult > LCLK_MAX_WIDE_DRIFT_MULT - d) {
		m->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	m->drift_mult += d;
	m->bound0_ns += lclk_scale(age, d) + 1;		/* +1: the floor */
	if (m->bound0_ns > LCLK_MAX_BOUND_NS)
		m->status = LCLK_STATUS_UNSYNCED;
}

/*
 * What the growth needs for the system clock's slew. Logical time runs on
 * CLOCK_MONOTONIC, a CLOCK_MONOTONIC ns lasts 1 + slew raw ns, and a raw
 * ns (the oscillator, CLOCK_MONOTONIC_RAW) 1 + e true ns. A sync sets the
 * rate right for the clock as it runs then: 1 + rate = (1 + slew_base)
 * (1 + e) to within max_drift, which vouches for how e wanders since. Then
 * logical time leaves the truth per ns by max_drift and by
 * |d| (1 + |e|) more, d = slew - slew_base, where |e| is at most
 * (|rate| + |slew_base|) / (1 - |slew_base|) + 2 max_drift, and below
 * twice the sum since |slew_base| <= LCLK_MAX_SLEW = 1/4. +3: the slews
 * are each truncated by less than one unit, and so is the product.
 */
static inline s64 lclk_slew_need(const struct lclk_state *s, s64 slew)
{
	const struct lclk_params *m = &s->params;
	s64 d = slew - s->slew_base, base = s->slew_base;
	s64 rate = m->rate_mult < 0 ? -m->rate_mult : m->rate_mult;

	if (!d)
		return 0;
	if (d < 0)
		d = -d;
	if (base < 0)
		base = -base;
	return d + lclk_scale(d, 2 * (rate + base +
				      lclk_ppb_to_mult(m->max_drift_ppb))) + 3;
}

/*
 * Whether a slew widens the growth: the largest need since the sync is
 * what it was widened by, so a slew that comes and goes widens it once.
 * Only a clock that vouches for a bound has one to widen.
 */
static inline bool lclk_slew_widens(const struct lclk_state *s, s64 slew)
{
	return s->params.status != LCLK_STATUS_UNSYNCED &&
	       lclk_slew_need(s, slew) > s->slew_widened;
}

/*
 * Widen for a slew that lclk_slew_widens(). Not bound0: a stamp taken
 * before the slew began was converted right, and one taken since is
 * within the growth's |t - last_update| of it, which the slew began
 * after. Past LCLK_MAX_WIDE_DRIFT_MULT (a tick 10 % off, chronyd's
 * default 83,333 ppm slew) the bound means nothing: UNSYNCED.
 */
static inline void lclk_widen_slew(struct lclk_state *s, s64 slew)
{
	struct lclk_params *m = &s->params;
	s64 more = lclk_slew_need(s, slew) - s->slew_widened;

	if (m->drift_mult > LCLK_MAX_WIDE_DRIFT_MULT - more) {
		m->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	m->drift_mult += more;
	s->slew_widened += more;
}

/*
 * bound0 takes what a growth of g per ns (on top of max_drift) has added
 * over the age at now, and one for the floor; UNSYNCED if that overflows.
 */
static inline void lclk_bound_keep(s64 g, s64 now, struct lclk_params *m)
{
	s64 age = now - m->last_update_ns;

	if (m->status == LCLK_STATUS_UNSYNCED)
		return;
	if (age < 0)
		age = -age;
	m->bound0_ns += lclk_scale(age, g) + 1;
	if (m->bound0_ns > LCLK_MAX_BOUND_NS)
		m->status = LCLK_STATUS_UNSYNCED;
}

/*
 * A correction, of corr_ppt for corr_ns, starts at now on top of the free
 * rate m->rate_ppt: the line leaves the free one by c = |its multiplier -
 * the free one's| (+2 for the truncation of each) per ns.
 *
 * The bound grows by c on top of max_drift while it runs, and does not
 * trust the setter's plan (a servo's correction is meant to move the
 * clock towards the reference by no more than the offset it measured)
 * nor the end's coming on time: the module's timer fires late by however
 * long interrupts, a busy CPU or a stalled vCPU hold it, and readers read
 * on meanwhile, so no widening made when it fires could cover them. Its
 * rate is in the growth from the start instead: a line whose slope is
 * within max_drift + c of the truth's is within bound0 + (max_drift + c)
 * * |t - last_update| of it, at any t, for as long as it runs, late end
 * included. That the correction starts at now and not at the last update
 * is lclk_widen_rate()'s case: bound0 takes c over the age at now, which
 * covers a stamp taken between the two.
 */
static inline void lclk_corr_start(const struct lclk_change *c, s64 now,
				   struct lclk_state *s)
{
	struct lclk_params *m = &s->params;
	s64 free_mult = m->rate_mult;

	s->corr_free_ppt = m->rate_ppt;
	m->rate_ppt += c->corr_ppt;
	m->rate_mult = lclk_ppt_to_mult(m->rate_ppt);
	s->corr_growth = m->rate_mult - free_mult;
	if (s->corr_growth < 0)
		s->corr_growth = -s->corr_growth;
	s->corr_growth += 2;
	m->drift_mult += s->corr_growth;
	s->corr_end_ns = now + c->corr_ns;	/* both below 2^62: no overflow */
	s->corr_owner = c->owner;
	lclk_bound_keep(s->corr_growth, now, m);
}

/*
 * The correction ends at now: the rate is the free one again, the growth
 * max_drift's again, and bound0 keeps what the correction's part of the
 * growth has added since the last update (c * |now - last_update|). That
 * covers every t: the old line was within bound0 + (max_drift + c) *
 * |t - last_update| of the truth; the new one is the same up to now and
 * from now on leaves it by at most max_drift per ns; before the last
 * update it is the free line through the new line's point at the last
 * update, which is within bound0 + c * age of the truth there.
 */
static inline void lclk_corr_end(s64 now, struct lclk_state *s)
{
	struct lclk_params *m = &s->params;

	m->rate_ppt = s->corr_free_ppt;
	m->rate_mult = lclk_ppt_to_mult(m->rate_ppt);
	m->drift_mult -= s->corr_growth;
	lclk_bound_keep(s->corr_growth, now, m);
	s->corr_end_ns = 0;
	s->corr_free_ppt = 0;
	s->corr_growth = 0;
	s->corr_owner = NULL;
}

/*
 * Whether the change ends the correction that runs: its end has come, its
 * setter's file is released, or a rate is set without one (it replaces a
 * correction as it replaces a rate).
 */
static inline bool lclk_corr_ends(const struct lclk_state *s,
				  const struct lclk_change *c, s64 now)
{
	if (!s->corr_end_ns)
		return false;
	return (c->modes & LCLK_SET_RATE) ||
	       ((c->modes & LCLK_CHANGE_CORR_DUE) && now >= s->corr_end_ns) ||
	       ((c->modes & LCLK_CHANGE_CORR_CLOSE) && c->owner == s->corr_owner);
}

/*
 * How far ahead a leap second may be set: within the UTC day it ends, as
 * NTP's leap indicator says it (a day and its leap second), so that the
 * page's leap is what "lclkctl serve" may pass on as that indicator.
 */
#define LCLK_LEAP_MAX_AHEAD_NS	(86401 * NSEC_PER_SEC)

/*
 * Take (near) or give back the leap's 1 s of bound0. While a leap is near
 * and the clock vouches for its bound, bound0 holds that 1 s: a sync adds
 * it to what it measured (lclk_build()), so giving it back leaves bound0
 * what was measured and what grew since. An unsynced clock's bound0 means
 * nothing, and the next sync sets it.
 */
static inline void lclk_leap_widen(struct lclk_state *s, bool near)
{
	struct lclk_params *m = &s->params;

	if (near == s->leap_near)
		return;
	s->leap_near = near;
	if (near && m->bound0_ns > LCLK_MAX_BOUND_NS - LCLK_LEAP_STEP_NS)
		m->status = LCLK_STATUS_UNSYNCED;
	else if (near)
		m->bound0_ns += LCLK_LEAP_STEP_NS;
	else if (m->status != LCLK_STATUS_UNSYNCED)
		m->bound0_ns -= LCLK_LEAP_STEP_NS;
}

/*
 * SET_LEAP: the leap to expect, on the model m has after the rest of the
 * change, anchored at now. Its instant must lie ahead, and a leap whose
 * instant logical time has reached is the timer's to step: no change of
 * the leap then. Near already (within 1 s of the instant), it takes the
 * bound's 1 s at once, not when the timer comes.
 */
static inline int lclk_set_leap(struct lclk_state *s,
				const struct lclk_change *c, s64 now)
{
	struct lclk_params *m = &s->params;
	s64 l = now + m->offset_ns;	/* m is anchored at now */

	if (m->leap && l >= s->leap_ns)
		return -EBUSY;
	if (c->leap &&
	    (c->leap_ns <= l || c->leap_ns - l > LCLK_LEAP_MAX_AHEAD_NS))
		return -EINVAL;
	m->leap = c->leap;
	m->tai_offset_s = c->tai_offset_s;
	s->leap_ns = c->leap ? c->leap_ns : 0;
	lclk_leap_widen(s, c->leap && l >= c->leap_ns - LCLK_LEAP_STEP_NS);
	return 0;
}

/*
 * LEAP_DUE: the step of a leap whose instant logical time has reached
 * (logical time at now on the model before the change is now +
 * anchored), as CLOCK_REALTIME steps: back 1 s for an insertion, forward
 * for a deletion. -EALREADY when there is none (cancelled, or stepped),
 * -EAGAIN when logical time has not reached it (the model moved it).
 */
static inline int lclk_leap_due(struct lclk_state *s, s64 anchored, s64 now)
{
	struct lclk_params *m = &s->params;
	bool insert = m->leap == LCLK_LEAP_INSERT;

	if (!m->leap)
		return -EALREADY;
	if (now + anchored < s->leap_ns)
		return -EAGAIN;
	m->offset_ns += insert ? -LCLK_LEAP_STEP_NS : LCLK_LEAP_STEP_NS;
	if (m->tai_offset_s)
		m->tai_offset_s += insert ? 1 : -1;
	lclk_leap_widen(s, false);
	m->leap = LCLK_LEAP_NONE;
	s->leap_ns = 0;
	return 0;
}

/*
 * The first base time at which logical time on m's line reaches l (or
 * t0, if it had reached it by then): where the leap's timers are armed
 * (lclk_leap.c). Base time runs 1 / (1 + rate) as fast as logical time;
 * each round takes the remaining distance at 1 - rate, which leaves
 * rate^2 of it (10^-6 at most), so two rounds are ample even a year ahead
 * and the rest only takes the floors, which may overshoot by a ns: the
 * last loop steps back over it. tests/host/lclk_state.c checks that it is
 * the first, to the ns.
 */
static inline s64 lclk_leap_base(const struct lclk_params *m, s64 l)
{
	s64 t = m->t0_ns, d;
	int i;

	for (i = 0; i < 8; i++) {
		d = l - lclk_logical(t, m->t0_ns, m->offset_ns, m->rate_mult);
		if (d <= 0)
			break;
		t += d - lclk_scale(d, m->rate_mult);
	}
	for (i = 0; i < 4 && t > m->t0_ns &&
	     lclk_logical(t - 1, m->t0_ns, m->offset_ns, m->rate_mult) >= l; i++)
		t--;
	return t;
}

/*
 * Build the new state from the old one and the change, re-anchored at now.
 * Returns 0, -EOVERFLOW if the result leaves the ranges the ABI promises,
 * or -EALREADY for the end of a correction that does not run.
 */
static inline int lclk_build(const struct lclk_state *old,
			     const struct lclk_change *c, s64 now,
			     struct lclk_state *s)
{
	const struct lclk_params *o = &old->params;
	struct lclk_params *m = &s->params;
	s64 anchored, step, from_mult;

	*s = *old;
	if (c->modes & LCLK_CHANGE_SLEW) {
		if (lclk_slew_widens(s, c->slew))
			lclk_widen_slew(s, c->slew);
		return 0;	/* the same line, on the same anchor */
	}
	if (c->modes & LCLK_CHANGE_LEAP_NEAR) {
		if (!m->leap || s->leap_near)
			return -EALREADY;
		if (lclk_logical(now, o->t0_ns, o->offset_ns, o->rate_mult) <
		    s->leap_ns - LCLK_LEAP_STEP_NS)
			return -EAGAIN;
		lclk_leap_widen(s, true);
		return 0;	/* the same line, on the same anchor */
	}

	/* Same line, new anchor: logical(now) does not change. */
	m->t0_ns = now;
	m->offset_ns = o->offset_ns +
		       lclk_scale(now - o->t0_ns, o->rate_mult);
	anchored = m->offset_ns;

	if (c->modes & LCLK_CHANGE_SLEEP) {
		s->boot_offset_ns += c->sleep_ns;
		lclk_fold_sleep(o, now, c->sleep_ns, m);
		return 0;
	}
	/* The rate a rate nobody measured is widened from (CHANGE_WIDEN). */
	from_mult = o->rate_mult;
	if (lclk_corr_ends(s, c, now)) {
		lclk_corr_end(now, s);
		from_mult = m->rate_mult;
	} else if (c->modes & (LCLK_CHANGE_CORR_DUE | LCLK_CHANGE_CORR_CLOSE)) {
		return -EALREADY;
	}
	if (c->modes & LCLK_SET_RATE) {
		m->rate_ppt = c->rate_ppt;
		m->rate_mult = lclk_ppt_to_mult(c->rate_ppt);
	}
	if (c->modes & LCLK_SET_CORRECTION)
		lclk_corr_start(c, now, s);
	if (c->modes & LCLK_SET_OFFSET) {
		s64 t0 = c->t0_ns ? c->t0_ns : now;

		/* offset_ns held at t0, and the (new) rate ran since. */
		m->offset_ns = c->offset_ns +
			       lclk_scale(now - t0, m->rate_mult);
	}
	if ((c->modes & LCLK_CHANGE_STEP) &&
	    check_add_overflow(m->offset_ns, c->step_ns, &m->offset_ns))
		return -EOVERFLOW;
	if ((c->modes & LCLK_CHANGE_TIME) &&
	    check_sub_overflow(c->time_ns, now, &m->offset_ns))
		return -EOVERFLOW;
	if (c->modes & LCLK_CHANGE_LEAP_DUE) {
		int err = lclk_leap_due(s, anchored, now);

		if (err)
			return err;
	}
	if (!lclk_offset_ok(m->offset_ns))
		return -EOVERFLOW;

	if (c->modes & LCLK_SET_MAX_DRIFT) {
		/* What a rate set through the PTP clock added stays added. */
		m->drift_mult += lclk_ppb_to_mult(c->max_drift_ppb) -
				 lclk_ppb_to_mult(m->max_drift_ppb);
		m->max_drift_ppb = c->max_drift_ppb;
	}
	if (c->modes & LCLK_SET_HOLDOVER)
		m->holdover_ns = c->holdover_ns;
	if (c->modes & LCLK_SET_FLAGS)
		m->model_flags = c->model_flags;
	if (c->modes & LCLK_SET_BOUND) {
		s64 t0 = c->t0_ns ? c->t0_ns : now;
		s64 bound = c->bound_ns;

		/*
		 * A measurement: the growth is max_drift's again, not widened,
		 * and the running correction's; slews count from this one's.
		 */
		m->drift_mult = lclk_ppb_to_mult(m->max_drift_ppb) +
				s->corr_growth;
		s->slew_base = c->slew;
		s->slew_widened = 0;
		/* The bound was measured at t0; it has grown since (+1: floor). */
		if (now > t0)
			bound += lclk_scale(now - t0, m->drift_mult) + 1;
		/* Truth may step at the leap before logical time does. */
		if (s->leap_near)
			bound += LCLK_LEAP_STEP_NS;
		if (bound > LCLK_MAX_BOUND_NS)
			return -EOVERFLOW;
		m->bound0_ns = bound;
		m->last_update_ns = now;
		m->status = LCLK_STATUS_SYNCED;
	}
	if (c->modes & LCLK_SET_LEAP) {
		int err = lclk_set_leap(s, c, now);

		if (err)
			return err;
	}
	/* A TAI clock has no leap seconds: a leap on it is someone's error. */
	if ((m->model_flags & LCLK_MODEL_TAI) && m->leap)
		return -EINVAL;
	if (c->modes & LCLK_SET_UNSYNC)
		m->status = LCLK_STATUS_UNSYNCED;
	/*
	 * Re-anchoring floors the rate term once: the new line may run up to
	 * 1 ns below the old one, which no measurement saw. A sync measures
	 * the clock as it reads and starts afresh.
	 */
	if (!(c->modes & LCLK_SET_BOUND) && m->status != LCLK_STATUS_UNSYNCED) {
		if (m->bound0_ns >= LCLK_MAX_BOUND_NS)
			m->status = LCLK_STATUS_UNSYNCED;
		else
			m->bound0_ns++;
	}
	if ((c->modes & LCLK_CHANGE_WIDEN) &&
	    m->status != LCLK_STATUS_UNSYNCED) {
		/* Both offsets are within LCLK_MAX_OFFSET_NS: no overflow. */
		step = m->offset_ns - anchored;
		if (step < 0)
			step = -step;
		if (m->bound0_ns > LCLK_MAX_BOUND_NS - step)
			m->status = LCLK_STATUS_UNSYNCED;
		else
			m->bound0_ns += step;
		if ((c->modes & LCLK_SET_RATE) && m->status != LCLK_STATUS_UNSYNCED)
			lclk_widen_rate(from_mult, now, m);
	}
	return 0;
}

/*
 * The PTP clock's calls as changes (lclk_ptp.c makes them; the host tests
 * make the same ones). None says how right the clock is after it, so each
 * widens the bound: settime and adjtime by the size of their step (the
 * reference that was within the bound before the step is within
 * bound + |step| after it), adjfine by the change of rate until the next
 * sync (lclk_widen_rate()).
 */
static inline void lclk_phc_settime(s64 ns, struct lclk_change *c)
{
	*c = (struct lclk_change){
		.modes = LCLK_CHANGE_TIME | LCLK_CHANGE_WIDEN,
		.time_ns = ns,
	};
}

static inline void lclk_phc_adjtime(s64 delta, struct lclk_change *c)
{
	*c = (struct lclk_change){
		.modes = LCLK_CHANGE_STEP | LCLK_CHANGE_WIDEN,
		.step_ns = delta,
	};
}

/*
 * scaled_ppm is ppm with a 16-bit binary fraction, so ppt = scaled_ppm *
 * 10^6 / 2^16 = scaled_ppm * 15625 / 2^10, truncated towards zero. The PTP
 * core's check against max_adj does not bound it: scaled_ppm_to_ppb()
 * overflows for large values, which then pass, so any long may arrive
 * here. What holds the rate to the instance's limit is the clamps: of
 * scaled_ppm first (to one unit past the limit, which the second clamp
 * then takes back), so that the product cannot overflow, then of the rate.
 */
static inline void lclk_phc_adjfine(long scaled_ppm, s64 max_rate_ppt,
				    struct lclk_change *c)
{
	long lim = div_s64(max_rate_ppt * 1024, 15625) + 1;

	scaled_ppm = clamp(scaled_ppm, -lim, lim);
	*c = (struct lclk_change){ .modes = LCLK_SET_RATE | LCLK_CHANGE_WIDEN };
	c->rate_ppt = div_s64((s64)scaled_ppm * 15625, 1024);
	c->rate_ppt = clamp(c->rate_ppt, -max_rate_ppt, max_rate_ppt);
}

/*
 * Logical time at now just before and just after a change: what it
 * stepped by, for the refusal of backward steps and for the counters.
 */
struct lclk_step_at {
	s64 before;
	s64 after;
};

/*
 * The next state, at base time now, or -EOVERFLOW (lclk_build()),
 * -EALREADY for the end of a correction that does not run (any more), or
 * -ERANGE for a backward step without LCLK_ALLOW_BACKWARD. The change has
 * passed lclk_check_change().
 */
static inline int lclk_next(const struct lclk_state *old,
			    const struct lclk_change *c, s64 now,
			    struct lclk_state *next, struct lclk_step_at *at)
{
	const struct lclk_params *o = &old->params;
	int err;

	err = lclk_build(old, c, now, next);
	if (err)
		return err;
	at->before = lclk_logical(now, o->t0_ns, o->offset_ns, o->rate_mult);
	at->after = lclk_logical(now, next->params.t0_ns,
				 next->params.offset_ns, next->params.rate_mult);
	if (at->after < at->before && !(c->flags & LCLK_ALLOW_BACKWARD))
		return -ERANGE;
	return 0;
}

/*
 * Count a change that was made (of the model, or of a CPU's offset): every
 * one is an update, one that moved logical time at its instant is a step
 * as well, and a backward one both.
 */
static inline void lclk_count_step(struct lclk_counters *ctr, s64 before,
				   s64 after)
{
	atomic64_inc(&ctr->updates);
	if (after != before)
		atomic64_inc(&ctr->steps);
	if (after < before)
		atomic64_inc(&ctr->backward_steps);
}

#endif /* _LCLK_STATE_H */
