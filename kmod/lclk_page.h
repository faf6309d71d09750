/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the kernel's reader of an instance's page, inline because it is
 * the whole of the GET_TIME ioctl and of the PTP clock's gettimex64. It is
 * include/lclk.h's lclk_now() in kernel terms: the same seqcount protocol,
 * the same fields, the same arithmetic from lclk_model.h, so that kernel
 * and userspace compute the same logical time for the same base reading.
 */
#ifndef _LCLK_PAGE_H
#define _LCLK_PAGE_H

#include <linux/compiler.h>
#include <linux/processor.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#include "lclk_model.h"

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
 * Evaluate the clock now. cpu >= 0 adds that CPU's offset; the caller keeps
 * preemption off so that cpu is the one ktime_get_ns() ran on. sts may be
 * NULL; otherwise it brackets the base clock reading for the PTP core.
 */
static __always_inline void lclk_page_read(const struct lclk_page *p, int cpu,
					   struct ptp_system_timestamp *sts,
					   struct lclk_reading *r)
{
	s64 t, last;
	u32 seq, status;

	do {
		seq = lclk_read_begin(p);
		ptp_read_system_prets(sts);
		t = ktime_get_ns();
		ptp_read_system_postts(sts);

		status = READ_ONCE(p->status);
		last = READ_ONCE(p->last_update_ns);
		r->base_ns = t;
		r->logical_ns = lclk_logical(t, READ_ONCE(p->t0_ns),
					     READ_ONCE(p->offset_ns),
					     READ_ONCE(p->rate_mult));
		if (cpu >= 0)
			r->logical_ns += READ_ONCE(p->cpu_offset_ns[cpu]);
		r->bound_ns = lclk_bound(t, status, READ_ONCE(p->bound0_ns),
					 last, READ_ONCE(p->drift_mult));
		r->status = lclk_status(t, status, last,
					READ_ONCE(p->holdover_ns));
	} while (lclk_read_retry(p, seq));
}

#endif /* _LCLK_PAGE_H */
