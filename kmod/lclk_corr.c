// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the end of a correction (LCLK_SET_CORRECTION), which the module
 * enforces so that a correction outlives no setter: a daemon killed, hung
 * or crashed in the middle of one would otherwise leave the clock slewing
 * at up to the rate limit for ever. Two things end it without the setter:
 *
 * - a timer at its end, armed under the writer's lock whenever a change
 *   leaves a correction running, so that it is always armed for the end
 *   in the model (a change that replaces the correction re-arms it; one
 *   that ends it early leaves it to fire for nothing, -EALREADY);
 * - the release of the file it was set through, which a dead process's
 *   exit makes: the end comes at once, not at the planned end.
 *
 * What an end does to the model and its bound (the timer may fire late,
 * and the bound covers that) is lclk_state.h's.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>

#include "lclk_compat.h"
#include "lclk_dev.h"

static void lclk_corr_end_by(struct lclk_dev *ld, const struct lclk_change *c)
{
	int err = lclk_apply(ld, c);

	/* -EALREADY: it had ended (or been replaced) already. */
	if (err && err != -EALREADY)
		atomic64_inc(&ld->ctr.rejected);
}

static enum hrtimer_restart lclk_corr_timer_fn(struct hrtimer *t)
{
	struct lclk_dev *ld = container_of(t, struct lclk_dev, corr_timer);
	struct lclk_change c = { .modes = LCLK_CHANGE_CORR_DUE };

	lclk_corr_end_by(ld, &c);
	return HRTIMER_NORESTART;
}

void lclk_corr_init(struct lclk_dev *ld)
{
	lclk_hrtimer_setup(&ld->corr_timer, lclk_corr_timer_fn, CLOCK_MONOTONIC,
			   HRTIMER_MODE_ABS);
}

/* No change can be made any more: the last file and mapping are gone. */
void lclk_corr_fini(struct lclk_dev *ld)
{
	hrtimer_cancel(&ld->corr_timer);
}

/*
 * Under ld->lock, after a change: the timer is armed for the end of the
 * correction the model has, if that end is new. The timer's callback
 * takes the lock without holding the timer base's, so arming under it
 * cannot deadlock with it.
 */
void lclk_corr_arm(struct lclk_dev *ld, s64 old_end_ns)
{
	s64 end = ld->state.corr_end_ns;

	if (end && end != old_end_ns)
		hrtimer_start(&ld->corr_timer, ns_to_ktime(end), HRTIMER_MODE_ABS);
}

/*
 * The file is released: the correction it set, if any runs still, ends.
 * The unlocked look is only a shortcut for the files that set none (every
 * reader's close): a correction this file set was set by an ioctl that
 * has returned before its release, and no other file can make the owner
 * this one. The change itself decides under the lock.
 */
void lclk_corr_release(struct lclk_dev *ld, struct file *file)
{
	struct lclk_change c = {
		.modes = LCLK_CHANGE_CORR_CLOSE,
		.owner = file,
	};

	/* data_race: unlocked on purpose, see above */
	if (data_race(ld->state.corr_owner) == file)
		lclk_corr_end_by(ld, &c);
}
