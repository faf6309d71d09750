// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the system clock's slew, watched.
 *
 * Logical time runs on CLOCK_MONOTONIC, which adjtimex slews: chronyd by
 * up to 83,333 ppm, adjtime() by 500 ppm, a changed tick by up to 10 %.
 * The bound assumes only max_drift, of the oscillator, which is what
 * CLOCK_MONOTONIC_RAW counts and what nothing slews. The timekeeper runs
 * both off one clocksource with one shift, CLOCK_MONOTONIC at its NTP
 * multiplier and CLOCK_MONOTONIC_RAW at the clocksource's own, so the slew
 * is (raw mult - mono mult) / mono mult while the multipliers stand; and
 * they change only when the timekeeper updates, which then calls the
 * pvclock_gtod notifiers (KVM follows the host clock that way)
 * with the timekeeper still locked. So each instance learns of a slew as
 * it takes effect, and widens its bound for it (LCLK_CHANGE_SLEW in
 * lclk_state.h) before the timekeeper lets go.
 *
 * What that leaves: the vDSO's readers see the new multiplier from just
 * before the notifiers run, and a widening waits for an irq_work when a
 * writer held the instance's lock (that writer may be waiting for the
 * timekeeper). A reading in that window - microseconds, on the CPU that
 * updates the timekeeper - is off by the slew over it beyond its bound:
 * 5 % of 2 us is 100 ns.
 */
#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/notifier.h>
#include <linux/pvclock_gtod.h>
#include <linux/timekeeper_internal.h>

#include "lclk_dev.h"

/* CLOCK_MONOTONIC_RAW per ns of CLOCK_MONOTONIC, minus 1, as lclk_change.slew. */
static s64 lclk_slew_of(u32 mono, u32 raw)
{
	u64 d = mul_u64_u64_div_u64(raw > mono ? raw - mono : mono - raw,
				    1ULL << LCLK_RATE_SHIFT, mono);

	/* Beyond what adjtimex allows; the bound is long gone by then. */
	d = min_t(u64, d, LCLK_MAX_SLEW);
	return raw > mono ? (s64)d : -(s64)d;
}

static int lclk_slew_notify(struct notifier_block *nb, unsigned long was_set,
			    void *priv)
{
	struct lclk_dev *ld = container_of(nb, struct lclk_dev, slew_nb);
	const struct timekeeper *tk = priv;
	/*
	 * Without the one unit the timekeeper adds or not, tick by tick, to
	 * keep CLOCK_MONOTONIC on NTP's line (ntp_error): that dither stays
	 * within a tick's worth of one unit, under a nanosecond, and counted
	 * as a slew it would widen the bound after every sync.
	 */
	u32 mono = tk->tkr_mono.mult - tk->ntp_err_mult, raw = tk->tkr_raw.mult;
	s64 slew;

	/* tk_setup_internals() gives both the clocksource's shift. */
	if (WARN_ON_ONCE(tk->tkr_mono.shift != tk->tkr_raw.shift))
		return NOTIFY_DONE;
	if (mono == ld->slew_mono_mult && raw == ld->slew_raw_mult)
		return NOTIFY_DONE;	/* every tick but a few */
	WRITE_ONCE(ld->slew_mono_mult, mono);
	ld->slew_raw_mult = raw;
	slew = lclk_slew_of(mono, raw);
	WRITE_ONCE(ld->slew, slew);
	if (lclk_widen_for_slew(ld, slew, true) == -EBUSY)
		irq_work_queue(&ld->slew_work);
	return NOTIFY_OK;
}

/* The widening the notifier could not make: the timekeeper is free now. */
static void lclk_slew_work(struct irq_work *work)
{
	struct lclk_dev *ld = container_of(work, struct lclk_dev, slew_work);

	lclk_widen_for_slew(ld, READ_ONCE(ld->slew), false);
}

/*
 * Watch the slew from before anyone can sync the instance: a sync takes
 * the slew of its moment as the one its rate is right for. The first
 * timekeeper update after registration (one per tick) says what it is;
 * without it the bound cannot be vouched for, and the instance fails.
 */
int lclk_slew_start(struct lclk_dev *ld)
{
	int err, ms;

	init_irq_work(&ld->slew_work, lclk_slew_work);
	ld->slew_nb.notifier_call = lclk_slew_notify;
	err = pvclock_gtod_register_notifier(&ld->slew_nb);
	if (err)
		return err;
	for (ms = 0; ms < 1000 && !READ_ONCE(ld->slew_mono_mult); ms++)
		usleep_range(1000, 2000);
	if (READ_ONCE(ld->slew_mono_mult))
		return 0;
	pr_err("lclk%u: no timekeeper update in 1 s: cannot watch its slew\n",
	       ld->index);
	lclk_slew_stop(ld);
	return -ETIME;
}

/* No notifier runs once unregistered (both under the timekeeper's lock). */
void lclk_slew_stop(struct lclk_dev *ld)
{
	pvclock_gtod_unregister_notifier(&ld->slew_nb);
	irq_work_sync(&ld->slew_work);
}
