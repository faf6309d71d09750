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
 * keeps logical time monotonic per CPU across updates. What a change does
 * to the model, and how it is checked and counted, is lclk_state.h's.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/mm.h>
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

/*
 * A sync (LCLK_SET_BOUND) measured the clock before its ioctl: the
 * vmclock's disruption marker its readers compare with (lclk_page.h) is
 * the one read at the start of the ioctl, before the lock and before
 * "now", so that a disruption during the ioctl is seen by every reader
 * as one since the sync. One between the measurement and the ioctl only
 * the setter can see: with LCLK_SET_VMCLOCK the marker read here must be
 * the one it read before measuring (lclk_apply()).
 */
static void lclk_publish_marker(struct lclk_page *p,
				const struct lclk_change *c, u64 marker)
{
	if (lclk_vmclock.abi && (c->modes & LCLK_SET_BOUND))
		WRITE_ONCE(p->vmclock_marker, marker);
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
	lclk_corr_init(ld);
	lclk_leap_init(ld);

	/* One entry per possible CPU id; more than one page on large hosts. */
	ld->page_size = PAGE_ALIGN(struct_size(p, cpu_offset_ns, nr_cpu_ids));
	p = vmalloc_user(ld->page_size);	/* zeroed */
	if (!p)
		return -ENOMEM;
	ld->page = p;

	/*
	 * What a process maps where the page would be wrong (lclk_fops.c):
	 * no model, so that a reader that does not know the flag reads
	 * UNSYNCED with no bound rather than a wrong time with one.
	 */
	ld->refused = vmalloc_user(ld->page_size);
	if (!ld->refused) {
		lclk_clock_free(ld);
		return -ENOMEM;
	}
	ld->refused->magic = LCLK_PAGE_MAGIC;
	ld->refused->abi_version = LCLK_ABI_VERSION;
	ld->refused->flags = LCLK_PAGE_REFUSED;

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
	if (lclk_vmclock.abi) {
		u64 marker = 0;

		/* UNSYNCED until a sync, which reads it again */
		if (!lclk_vmclock_marker(lclk_vmclock.abi, &marker))
			p->vmclock_marker = marker;
		/*
		 * REFUSED too: a reader built before LCLK_PAGE_VMCLOCK,
		 * which would read SYNCED and a bound after a restore, asks
		 * the kernel instead; one that knows the flag and has the
		 * vmclock page mapped reads the page (uapi lclk.h).
		 */
		p->flags = LCLK_PAGE_VMCLOCK | LCLK_PAGE_REFUSED;
	}
	lclk_publish(p, s);
	return 0;
}

void lclk_clock_free(struct lclk_dev *ld)
{
	lclk_corr_fini(ld);
	vfree(ld->refused);
	ld->refused = NULL;
	lclk_leap_fini(ld);
	vfree(ld->page);
	ld->page = NULL;
}

/* ---- changing the model ------------------------------------------------- */

/*
 * Apply a change atomically. -EINVAL for values out of range, -ERANGE for
 * a backward step without LCLK_ALLOW_BACKWARD, -EOVERFLOW when the result
 * would leave the offset or bound range. The caller counts rejections.
 */
int lclk_apply(struct lclk_dev *ld, const struct lclk_change *change)
{
	struct lclk_change c = *change;
	struct lclk_state next;
	struct lclk_step_at at;
	unsigned long irqflags;
	u64 marker = 0;
	int err;

	err = lclk_check_change(&c, ld->max_rate_ppt);
	if (err)
		return err;
	if ((c.modes & LCLK_SET_VMCLOCK) && !lclk_vmclock.abi)
		return -EOPNOTSUPP;
	/*
	 * Outside the lock: a hypervisor mid-write is waited for with
	 * interrupts on, and one that stays there refuses the sync (a bound
	 * with no marker could not be taken back by a disruption).
	 */
	if (lclk_vmclock.abi && (c.modes & (LCLK_SET_BOUND | LCLK_SET_VMCLOCK)) &&
	    lclk_vmclock_marker(lclk_vmclock.abi, &marker))
		return -EAGAIN;
	/* Restored or migrated since the setter began to measure. */
	if ((c.modes & LCLK_SET_VMCLOCK) && marker != c.vmclock_marker)
		return -ESTALE;

	raw_spin_lock_irqsave(&ld->lock, irqflags);
	/* A sync's rate is right for the base clock as it runs now. */
	c.slew = READ_ONCE(ld->slew);
	lclk_write_begin(ld->page);
	err = lclk_next(&ld->state, &c, ktime_get_ns(), &next, &at);
	if (!err) {
		s64 old_end = ld->state.corr_end_ns;

		ld->state = next;
		lclk_publish(ld->page, &next);
		lclk_publish_marker(ld->page, &c, marker);
		lclk_corr_arm(ld, old_end);
		lclk_leap_arm(ld);
	}
	/* On failure the page is unchanged; readers merely retry once. */
	lclk_write_end(ld->page);
	raw_spin_unlock_irqrestore(&ld->lock, irqflags);

	if (!err)
		lclk_count_step(&ld->ctr, at.before, at.after);
	return err;
}

/*
 * The system clock's slew is now slew (lclk_slew.c): widen the bound if
 * it needs it. From the timekeeper's notifier (from_timekeeper), the
 * timekeeper is locked and interrupts are off: the lock is only tried,
 * since a writer that holds it may be waiting for the timekeeper in
 * ktime_get_ns(), and -EBUSY tells the caller to come back. The change
 * keeps the line and its anchor, so it needs no "now".
 */
int lclk_widen_for_slew(struct lclk_dev *ld, s64 slew, bool from_timekeeper)
{
	struct lclk_change c = { .modes = LCLK_CHANGE_SLEW, .slew = slew };
	struct lclk_state next;
	struct lclk_step_at at;
	unsigned long irqflags;
	bool widens;
	int err = 0;

	if (!from_timekeeper)
		raw_spin_lock_irqsave(&ld->lock, irqflags);
	else if (!raw_spin_trylock_irqsave(&ld->lock, irqflags))
		return -EBUSY;
	widens = lclk_slew_widens(&ld->state, slew);
	if (widens) {
		lclk_write_begin(ld->page);
		err = lclk_next(&ld->state, &c, ld->state.params.t0_ns, &next,
				&at);
		if (!err) {
			ld->state = next;
			lclk_publish(ld->page, &next);
		}
		lclk_write_end(ld->page);
	}
	raw_spin_unlock_irqrestore(&ld->lock, irqflags);
	if (widens && !err)
		atomic64_inc(&ld->ctr.updates);
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

	lclk_count_step(&ld->ctr, old, offset_ns);
	return 0;
}

s64 lclk_get_cpu_offset(struct lclk_dev *ld, unsigned int cpu)
{
	/* Only the writer changes it, with one aligned 64-bit store. */
	return READ_ONCE(ld->page->cpu_offset_ns[cpu]);
}

/* ---- system sleep -------------------------------------------------------- */

/*
 * Fold the system sleep since the last resume into the model, through the
 * change path every other change takes (LCLK_CHANGE_SLEEP: what it does
 * is in lclk_state.h), so that it is checked and counted alike: an update
 * and a step.
 *
 * Called on resume before user space is thawed, so that no reader of the
 * page, which cannot see the sleep without a system call, reads the
 * model from before it. Only this function moves boot_offset_ns, and the
 * PM core resumes a device once at a time, so it may read it unlocked.
 */
void lclk_resume(struct lclk_dev *ld)
{
	struct lclk_change c = { .modes = LCLK_CHANGE_SLEEP };

	c.sleep_ns = lclk_boot_offset_ns() - ld->state.boot_offset_ns;
	if (c.sleep_ns > 0 && lclk_apply(ld, &c))
		atomic64_inc(&ld->ctr.rejected);
}

/* ---- reading ------------------------------------------------------------- */

/*
 * A consistent copy of the model and the base time it is for, taken from
 * the page under its seqcount as every other reader does: readers are
 * anyone who may open the device, and must never take the writer's lock
 * (a raw spinlock with interrupts off) and so delay a writer.
 */
void lclk_snapshot(struct lclk_dev *ld, struct lclk_params *m, s64 *now,
		   bool *disrupted)
{
	const struct lclk_page *p = ld->page;
	struct lclk_reading r = { .status = LCLK_STATUS_SYNCED };
	u32 seq, flags;
	u64 marker;

	do {
		seq = lclk_read_begin(p);
		lclk_page_params(p, m);
		*now = ktime_get_ns();
		flags = READ_ONCE(p->flags);
		marker = READ_ONCE(p->vmclock_marker);
	} while (lclk_read_retry(p, seq));
	lclk_check_disrupted(flags, marker, &r);
	*disrupted = r.status == LCLK_STATUS_DISRUPTED;
}
