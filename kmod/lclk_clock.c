// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the clock model of one instance and the page that publishes it
 * (the kernel's reader of that page is in lclk_page.h).
 *
 * The page is the only copy readers see, userspace and kernel alike, and
 * is written under the protocol that include/lclk.h expects: seq is made
 * odd, the fields change, seq is made even again. Writers are serialised
 * by lclk_dev.lock, a raw spinlock held with interrupts off, so that no
 * writer can be preempted or interrupted while seq is odd and readers are
 * spinning on it.
 *
 * Every change re-anchors the model at "now", a CLOCK_MONOTONIC reading
 * taken after seq has gone odd: t0 becomes now and offset becomes
 * logical(now) - now. Every reading a reader completed under the old model
 * was therefore taken before now and is at most logical(now), and every
 * reading under the new model is at least logical(now) unless the change
 * steps backwards, which the caller has to allow explicitly. That is what
 * keeps logical time monotonic per CPU across updates.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "lclk_dev.h"

/* ---- the sequence count on the page -------------------------------------- */

static void lclk_write_begin(struct lclk_page *p)
{
	WRITE_ONCE(p->seq, p->seq + 1);
	/*
	 * Full barrier: the odd seq must be visible before any field changes
	 * and before the caller reads the clock for "now", so that a reader
	 * that saw the even seq took its own clock reading before that now.
	 */
	smp_mb();
}

static void lclk_write_end(struct lclk_page *p)
{
	smp_wmb();	/* the fields before the even seq */
	WRITE_ONCE(p->seq, p->seq + 1);
}

/*
 * Copy the writer's model to the page; seq is odd. Plain stores, as the
 * vDSO's writer makes: readers that race with them retry (lclk_page.h).
 */
static void lclk_publish(struct lclk_page *p, const struct lclk_state *s)
{
	p->params = s->params;
}

/* ---- setting up --------------------------------------------------------- */

/*
 * CLOCK_BOOTTIME - CLOCK_MONOTONIC: the time the system has slept since
 * boot, as the kernel measured it (a nonstop clocksource, else the RTC).
 */
static s64 lclk_boot_offset_ns(void)
{
	return ktime_to_ns(ktime_mono_to_any(0, TK_OFFS_BOOT));
}

int lclk_clock_init(struct lclk_dev *ld, u32 drift_ppb, s64 holdover_ns)
{
	struct lclk_state *s = &ld->state;
	struct lclk_params *m = &s->params;
	struct lclk_page *p;
	s64 now;

	raw_spin_lock_init(&ld->lock);

	/* One entry per possible CPU id; more than one page on large hosts. */
	ld->page_size = PAGE_ALIGN(struct_size(p, cpu_offset_ns, nr_cpu_ids));
	p = vmalloc_user(ld->page_size);	/* zeroed */
	if (!p)
		return -ENOMEM;
	ld->page = p;

	/*
	 * Start where a NIC's PTP clock starts, at CLOCK_REALTIME, so that
	 * an unsynchronised clock is at least in the right epoch. The status
	 * says UNSYNCED and the bound is unknown until someone sets one. The
	 * rest of the model starts at zero (ld is zeroed): no rate, no flags.
	 */
	now = ktime_get_ns();
	m->t0_ns = now;
	m->offset_ns = ktime_get_real_ns() - now;
	m->holdover_ns = holdover_ns;
	m->max_drift_ppb = drift_ppb;
	m->drift_mult = lclk_ppb_to_mult(drift_ppb);
	m->status = LCLK_STATUS_UNSYNCED;
	s->boot_offset_ns = lclk_boot_offset_ns();

	p->magic = LCLK_PAGE_MAGIC;
	p->abi_version = LCLK_ABI_VERSION;
	p->ncpus = nr_cpu_ids;
	lclk_publish(p, s);
	return 0;
}

void lclk_clock_free(struct lclk_dev *ld)
{
	vfree(ld->page);
	ld->page = NULL;
}

/* ---- changing the model ------------------------------------------------- */

static bool lclk_offset_ok(s64 offset)
{
	return offset >= -LCLK_MAX_OFFSET_NS && offset <= LCLK_MAX_OFFSET_NS;
}

/* The checks that do not depend on the current model or time. */
static int lclk_check_change(const struct lclk_dev *ld,
			     const struct lclk_change *c)
{
	if (c->flags & ~LCLK_ALL_FLAGS)
		return -EINVAL;
	/* A sync and an unsync at once contradict each other. */
	if ((c->modes & LCLK_SET_BOUND) && (c->modes & LCLK_SET_UNSYNC))
		return -EINVAL;
	if ((c->modes & (LCLK_SET_OFFSET | LCLK_SET_BOUND)) && c->t0_ns < 0)
		return -EINVAL;
	if ((c->modes & LCLK_SET_OFFSET) && !lclk_offset_ok(c->offset_ns))
		return -EINVAL;
	if ((c->modes & LCLK_SET_RATE) &&
	    (c->rate_ppt > ld->max_rate_ppt || c->rate_ppt < -ld->max_rate_ppt))
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
	return 0;
}

/*
 * Build the new state from the old one and the change, re-anchored at now.
 * Returns 0 or -EOVERFLOW if the result leaves the ranges the ABI promises.
 */
static int lclk_build(const struct lclk_state *old,
		      const struct lclk_change *c, s64 now,
		      struct lclk_state *s)
{
	const struct lclk_params *o = &old->params;
	struct lclk_params *m = &s->params;
	s64 anchored, step;

	*s = *old;

	/* Same line, new anchor: logical(now) does not change. */
	m->t0_ns = now;
	m->offset_ns = o->offset_ns +
		       lclk_scale(now - o->t0_ns, o->rate_mult);
	anchored = m->offset_ns;

	if (c->modes & LCLK_SET_RATE) {
		m->rate_ppt = c->rate_ppt;
		m->rate_mult = lclk_ppt_to_mult(c->rate_ppt);
	}
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
	if (!lclk_offset_ok(m->offset_ns))
		return -EOVERFLOW;

	if (c->modes & LCLK_SET_MAX_DRIFT) {
		m->max_drift_ppb = c->max_drift_ppb;
		m->drift_mult = lclk_ppb_to_mult(c->max_drift_ppb);
	}
	if (c->modes & LCLK_SET_HOLDOVER)
		m->holdover_ns = c->holdover_ns;
	if (c->modes & LCLK_SET_FLAGS)
		m->model_flags = c->model_flags;
	if (c->modes & LCLK_SET_BOUND) {
		s64 t0 = c->t0_ns ? c->t0_ns : now;
		s64 bound = c->bound_ns;

		/* The bound was measured at t0; it has grown since. */
		if (now > t0)
			bound += lclk_scale(now - t0, m->drift_mult);
		if (bound > LCLK_MAX_BOUND_NS)
			return -EOVERFLOW;
		m->bound0_ns = bound;
		m->last_update_ns = now;
		m->status = LCLK_STATUS_SYNCED;
	}
	if (c->modes & LCLK_SET_UNSYNC)
		m->status = LCLK_STATUS_UNSYNCED;
	if ((c->modes & LCLK_CHANGE_WIDEN) &&
	    m->status != LCLK_STATUS_UNSYNCED) {
		/* Both offsets are within LCLK_MAX_OFFSET_NS: no overflow. */
		step = abs(m->offset_ns - anchored);
		if (m->bound0_ns > LCLK_MAX_BOUND_NS - step)
			m->status = LCLK_STATUS_UNSYNCED;
		else
			m->bound0_ns += step;
	}
	return 0;
}

static void lclk_count_step(struct lclk_dev *ld, s64 before, s64 after)
{
	atomic64_inc(&ld->ctr.updates);
	if (after != before)
		atomic64_inc(&ld->ctr.steps);
	if (after < before)
		atomic64_inc(&ld->ctr.backward_steps);
}

/*
 * Apply a change atomically. -EINVAL for values out of range, -ERANGE for
 * a backward step without LCLK_ALLOW_BACKWARD, -EOVERFLOW when the result
 * would leave the offset or bound range. The caller counts rejections.
 */
int lclk_apply(struct lclk_dev *ld, const struct lclk_change *c)
{
	struct lclk_state next;
	unsigned long irqflags;
	s64 now, before, after;
	int err;

	err = lclk_check_change(ld, c);
	if (err)
		return err;

	raw_spin_lock_irqsave(&ld->lock, irqflags);
	lclk_write_begin(ld->page);
	now = ktime_get_ns();
	err = lclk_build(&ld->state, c, now, &next);
	before = lclk_logical(now, ld->state.params.t0_ns,
			      ld->state.params.offset_ns,
			      ld->state.params.rate_mult);
	after = now + next.params.offset_ns;	/* next t0_ns == now */
	if (!err && after < before && !(c->flags & LCLK_ALLOW_BACKWARD))
		err = -ERANGE;
	if (!err) {
		ld->state = next;
		lclk_publish(ld->page, &next);
	}
	/* On failure the page is unchanged; readers merely retry once. */
	lclk_write_end(ld->page);
	raw_spin_unlock_irqrestore(&ld->lock, irqflags);

	if (!err)
		lclk_count_step(ld, before, after);
	return err;
}

/*
 * Per-CPU offsets. cpu has been checked against nr_cpu_ids and clamped
 * with array_index_nospec() by the caller.
 */
int lclk_set_cpu_offset(struct lclk_dev *ld, unsigned int cpu, s64 offset_ns,
			u32 flags)
{
	struct lclk_page *p = ld->page;
	unsigned long irqflags;
	s64 old;

	if (flags & ~LCLK_ALL_FLAGS)
		return -EINVAL;
	if (offset_ns < -LCLK_MAX_CPU_OFFSET_NS ||
	    offset_ns > LCLK_MAX_CPU_OFFSET_NS)
		return -EINVAL;

	raw_spin_lock_irqsave(&ld->lock, irqflags);
	old = p->cpu_offset_ns[cpu];
	if (offset_ns < old && !(flags & LCLK_ALLOW_BACKWARD)) {
		raw_spin_unlock_irqrestore(&ld->lock, irqflags);
		return -ERANGE;
	}
	if (!old && offset_ns)
		ld->nonzero_cpu_offsets++;
	else if (old && !offset_ns)
		ld->nonzero_cpu_offsets--;

	lclk_write_begin(p);
	WRITE_ONCE(p->cpu_offset_ns[cpu], offset_ns);
	/* Readers skip the CPU number and the table while all are zero. */
	WRITE_ONCE(p->flags, ld->nonzero_cpu_offsets ?
			     p->flags | LCLK_PAGE_CPU_OFFSETS :
			     p->flags & ~LCLK_PAGE_CPU_OFFSETS);
	lclk_write_end(p);
	raw_spin_unlock_irqrestore(&ld->lock, irqflags);

	lclk_count_step(ld, old, offset_ns);
	return 0;
}

s64 lclk_get_cpu_offset(struct lclk_dev *ld, unsigned int cpu)
{
	/* Only the writer changes it, with one aligned 64-bit store. */
	return READ_ONCE(ld->page->cpu_offset_ns[cpu]);
}

/* ---- system sleep -------------------------------------------------------- */

/*
 * The most the kernel's measurement of a sleep can be off: the RTC it
 * falls back to counts whole seconds.
 */
#define LCLK_SLEEP_ERROR_NS	NSEC_PER_SEC

/*
 * Fold a system sleep into the model. CLOCK_MONOTONIC stood still while
 * the system slept, so logical time is behind by the sleep, and neither
 * the bound's growth nor the holdover clock (both measured on
 * CLOCK_MONOTONIC) saw it. Make the model what it would be had the base
 * clock run through the sleep: logical time steps forward by the sleep,
 * the last update moves back by it (so the bound grows by max_drift over
 * it), the bound takes the sleep measurement's error, and the status is
 * HOLDOVER, because no one disciplined the clock while it slept.
 *
 * Called on resume before user space is thawed, so that no reader of the
 * page, which cannot see the sleep without a system call, reads the
 * model from before it.
 */
void lclk_resume(struct lclk_dev *ld)
{
	struct lclk_state *s = &ld->state;
	struct lclk_params *m = &s->params;
	unsigned long irqflags;
	s64 now, slept, boot;

	raw_spin_lock_irqsave(&ld->lock, irqflags);
	boot = lclk_boot_offset_ns();
	slept = boot - s->boot_offset_ns;
	if (slept <= 0) {
		raw_spin_unlock_irqrestore(&ld->lock, irqflags);
		return;
	}
	lclk_write_begin(ld->page);
	now = ktime_get_ns();
	m->offset_ns += lclk_scale(now - m->t0_ns, m->rate_mult);
	m->t0_ns = now;
	m->offset_ns = min(m->offset_ns + slept, (s64)LCLK_MAX_OFFSET_NS);
	s->boot_offset_ns = boot;
	if (m->status != LCLK_STATUS_UNSYNCED) {
		m->last_update_ns -= slept;
		m->bound0_ns += LCLK_SLEEP_ERROR_NS;
		m->status = LCLK_STATUS_HOLDOVER;
		if (m->bound0_ns > LCLK_MAX_BOUND_NS)
			m->status = LCLK_STATUS_UNSYNCED;
	}
	lclk_publish(ld->page, s);
	lclk_write_end(ld->page);
	raw_spin_unlock_irqrestore(&ld->lock, irqflags);

	atomic64_inc(&ld->ctr.steps);
}

/* ---- reading ------------------------------------------------------------- */

/*
 * A consistent copy of the model and the base time it is for, taken from
 * the page under its seqcount as every other reader does: readers are
 * anyone who may open the device, and must never take the writer's lock
 * (a raw spinlock with interrupts off) and so delay a writer.
 */
void lclk_snapshot(struct lclk_dev *ld, struct lclk_params *m, s64 *now)
{
	const struct lclk_page *p = ld->page;
	u32 seq;

	do {
		seq = lclk_read_begin(p);
		lclk_page_params(p, m);
		*now = ktime_get_ns();
	} while (lclk_read_retry(p, seq));
}
