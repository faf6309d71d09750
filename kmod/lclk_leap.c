// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: a leap second, stepped on time by the module (LCLK_SET_LEAP), as
 * the kernel steps CLOCK_REALTIME: whoever announced it may be gone by
 * then. Two CLOCK_MONOTONIC timers, armed under the writer's lock after
 * every change, because the base time of a logical instant moves with
 * the model (a sync, a rate, a step):
 *
 * - "near", where logical time reaches 1 s before the instant: the bound
 *   takes 1 s more (LCLK_CHANGE_LEAP_NEAR);
 * - "due", where it reaches the instant: the step, and the 1 s back
 *   (LCLK_CHANGE_LEAP_DUE).
 *
 * Truth steps at the instant, logical time when "due" runs: the 1 s
 * covers readings in between, however late "due" is. What is left is a
 * "near" more than 1 s late: a reading past the instant before it runs
 * is off by 1 s beyond its bound. Timers that fire for a leap since
 * cancelled or stepped do nothing (-EALREADY); one that fires early
 * (rounding, or a change that moved the instant as it ran) is re-armed.
 * What the changes do to the model is lclk_state.h's.
 */
#include <linux/errno.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "lclk_compat.h"
#include "lclk_dev.h"

static void lclk_leap_by(struct lclk_dev *ld, const struct lclk_change *c)
{
	unsigned long irqflags;
	int err = lclk_apply(ld, c);

	if (err == -EAGAIN) {
		raw_spin_lock_irqsave(&ld->lock, irqflags);
		lclk_leap_arm(ld);
		raw_spin_unlock_irqrestore(&ld->lock, irqflags);
	} else if (err && err != -EALREADY) {
		atomic64_inc(&ld->ctr.rejected);
	}
}

static enum hrtimer_restart lclk_leap_near_fn(struct hrtimer *t)
{
	struct lclk_dev *ld = container_of(t, struct lclk_dev, leap_near_timer);
	struct lclk_change c = { .modes = LCLK_CHANGE_LEAP_NEAR };

	lclk_leap_by(ld, &c);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart lclk_leap_due_fn(struct hrtimer *t)
{
	struct lclk_dev *ld = container_of(t, struct lclk_dev, leap_due_timer);
	struct lclk_change c = {
		.modes = LCLK_CHANGE_LEAP_DUE,
		.flags = LCLK_ALLOW_BACKWARD,	/* an insertion steps back */
	};

	lclk_leap_by(ld, &c);
	return HRTIMER_NORESTART;
}

void lclk_leap_init(struct lclk_dev *ld)
{
	lclk_hrtimer_setup(&ld->leap_near_timer, lclk_leap_near_fn,
			   CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	lclk_hrtimer_setup(&ld->leap_due_timer, lclk_leap_due_fn,
			   CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
}

/* No change can be made any more: the last file and mapping are gone. */
void lclk_leap_fini(struct lclk_dev *ld)
{
	hrtimer_cancel(&ld->leap_near_timer);
	hrtimer_cancel(&ld->leap_due_timer);
}

/*
 * Under ld->lock, after a change: the timers are armed for the pending
 * leap on the model as it is now. The callbacks take the lock without
 * holding the timer base's, so arming under it cannot deadlock with them.
 */
void lclk_leap_arm(struct lclk_dev *ld)
{
	const struct lclk_state *s = &ld->state;

	if (!s->params.leap)
		return;
	if (!s->leap_near)
		hrtimer_start(&ld->leap_near_timer,
			      ns_to_ktime(lclk_leap_base(&s->params, s->leap_ns -
							 LCLK_LEAP_STEP_NS)),
			      HRTIMER_MODE_ABS);
	hrtimer_start(&ld->leap_due_timer,
		      ns_to_ktime(lclk_leap_base(&s->params, s->leap_ns)),
		      HRTIMER_MODE_ABS);
}
