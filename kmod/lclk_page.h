/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the kernel's reader of an instance's page, inline because it is
 * the whole of the GET_TIME ioctl and of the PTP clock's gettimex64. It is
 * include/lclk.h's lclk_now() in kernel terms: the same seqcount protocol,
 * the same model (struct lclk_params), the same arithmetic from
 * lclk_model.h, so that kernel and userspace compute the same logical time
 * for the same base reading.
 */
#ifndef _LCLK_PAGE_H
#define _LCLK_PAGE_H

#include <linux/compiler.h>
#include <linux/processor.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#include "lclk_model.h"
#include "lclk_vmclock.h"

/* One evaluation of the clock, as GET_TIME and the PTP clock return it. */
struct lclk_reading {
	s64 base_ns;
	s64 logical_ns;
	s64 bound_ns;
	u32 status;
};

static inline u32 lclk_read_begin(const struct lclk_page *p)
{
	u32 seq;

	while ((seq = READ_ONCE(p->seq)) & 1)
		cpu_relax();
	smp_rmb();	/* seq before the fields */
	return seq;
}

static inline bool lclk_read_retry(const struct lclk_page *p, u32 seq)
{
	smp_rmb();	/* the fields before seq again */
	return READ_ONCE(p->seq) != seq;
}

/*
 * Copy the model off the page; between lclk_read_begin() and
 * lclk_read_retry(), which alone makes the copy consistent.
 */
static __always_inline void lclk_page_params(const struct lclk_page *p,
					     struct lclk_params *m)
{
	/*
	 * A plain copy, as the vDSO reads its data page: it races with the
	 * writer by design, and lclk_read_retry() throws away a copy the
	 * writer tore. READ_ONCE() cannot copy a structure (and field by
	 * field it would be the field list again); data_race() tells KCSAN
	 * that the race is meant.
	 */
	*m = data_race(p->params);
}

/* The clock at base time t, without the per-CPU offset. */
static inline void lclk_eval(const struct lclk_params *m, s64 t,
			     struct lclk_reading *r)
{
	r->base_ns = t;
	r->logical_ns = lclk_logical(t, m->t0_ns, m->offset_ns, m->rate_mult);
	r->bound_ns = lclk_bound(t, m->status, m->bound0_ns,
				 m->last_update_ns, m->drift_mult);
	r->status = lclk_status(t, m->status, m->last_update_ns,
				m->holdover_ns);
}

/*
 * A reading that claims a bound (SYNCED, HOLDOVER) claims none once the
 * hypervisor has disrupted the clocks since the last sync: the vmclock's
 * disruption marker is no longer the one the sync saw (lclk_vmclock.h).
 * marker is the page's vmclock_marker, read with the model.
 */
static inline void lclk_check_disrupted(u32 page_flags, u64 marker,
					struct lclk_reading *r)
{
	const struct lclk_vmclock_abi *abi = lclk_vmclock.abi;
	u64 now;

	if (!(page_flags & LCLK_PAGE_VMCLOCK) || !abi ||
	    r->status == LCLK_STATUS_UNSYNCED)
		return;
	/* a marker that cannot be read proves nothing: no bound either */
	if (lclk_vmclock_marker(abi, &now) || now != marker) {
		r->status = LCLK_STATUS_DISRUPTED;
		r->bound_ns = LCLK_BOUND_UNKNOWN;
	}
}

/*
 * Evaluate the clock now. cpu >= 0 adds that CPU's offset; the caller keeps
 * preemption off so that cpu is the one ktime_get_ns() ran on. sts may be
 * NULL; otherwise it brackets the base clock reading for the PTP core.
 */
static __always_inline void lclk_page_read(const struct lclk_page *p, int cpu,
					   struct ptp_system_timestamp *sts,
					   struct lclk_reading *r)
{
	struct lclk_params m;
	s64 t, cpu_offset;
	u32 seq, flags;
	u64 marker;

	do {
		seq = lclk_read_begin(p);
		ptp_read_system_prets(sts);
		t = ktime_get_ns();
		ptp_read_system_postts(sts);
		lclk_page_params(p, &m);
		cpu_offset = cpu >= 0 ? READ_ONCE(p->cpu_offset_ns[cpu]) : 0;
		flags = READ_ONCE(p->flags);
		marker = READ_ONCE(p->vmclock_marker);
	} while (lclk_read_retry(p, seq));

	lclk_eval(&m, t, r);
	r->logical_ns += cpu_offset;
	/* after the clock reading: a disruption before it is seen */
	lclk_check_disrupted(flags, marker, r);
}

#endif /* _LCLK_PAGE_H */
