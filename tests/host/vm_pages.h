/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An lclk page and a hypervisor's vmclock page, built in memory as the
 * module and the hypervisor write them, for the host tests of their
 * readers (include/lclk.h, the tracer's clock, the vmclock: source). No
 * module, no VM.
 */
#ifndef LCLK_TEST_VM_PAGES_H
#define LCLK_TEST_VM_PAGES_H

#include <stdlib.h>

#include "lclk.h"
#include "vmclock/vmclock_page.h"

/* The page's flags on a VM with a vmclock: REFUSED for the readers before it. */
#define TEST_PAGE_VMCLOCK_FLAGS	(LCLK_PAGE_VMCLOCK | LCLK_PAGE_REFUSED)

/* A zeroed page (UNSYNCED) with ncpus offsets; its mapped size in *size. */
static inline struct lclk_page *test_page_new(unsigned int ncpus, size_t *size)
{
	struct lclk_page *p;

	*size = sizeof(*p) + ncpus * sizeof(__s64);
	p = calloc(1, *size);
	if (!p)
		abort();
	p->magic = LCLK_PAGE_MAGIC;
	p->abi_version = LCLK_ABI_VERSION;
	p->ncpus = ncpus;
	return p;
}

/*
 * A sync now, as the module publishes one under the page's seqcount:
 * logical = CLOCK_MONOTONIC + offset_ns from now on (rate 0), bound
 * bound_ns growing at 50 ppm, SYNCED for 1000 s, made under the vmclock's
 * marker (kept only where the page says LCLK_PAGE_VMCLOCK).
 */
static inline void test_page_sync(struct lclk_page *p, __s64 offset_ns,
				  __s64 bound_ns, __u64 marker)
{
	__s64 now = lclk_monotonic_ns();

	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
	p->params.t0_ns = now;
	p->params.offset_ns = offset_ns;
	p->params.rate_ppt = 0;
	p->params.rate_mult = 0;
	p->params.bound0_ns = bound_ns;
	p->params.drift_mult = lclk_ppb_to_mult(50000);
	p->params.last_update_ns = now;
	p->params.holdover_ns = 1000000000000LL;
	p->params.status = LCLK_STATUS_SYNCED;
	p->vmclock_marker = marker;
	__atomic_store_n(&p->seq, p->seq + 1, __ATOMIC_RELEASE);
}

/* The head of a hypervisor's vmclock page (a whole page), at marker. */
static inline struct lclk_vmclock_head *test_vmclock_new(__u64 marker)
{
	struct lclk_vmclock_head *v = calloc(1, 4096);

	if (!v)
		abort();
	v->magic = 0x4b4c4356;	/* "VCLK" */
	v->size = 4096;
	v->version = 1;
	v->seq_count = 2;
	v->disruption_marker = marker;
	return v;
}

/* A snapshot restored or a migration: the hypervisor's new marker. */
static inline void test_vmclock_disrupt(struct lclk_vmclock_head *v,
					__u64 marker)
{
	__atomic_store_n(&v->seq_count, v->seq_count + 1, __ATOMIC_RELEASE);
	v->disruption_marker = marker;
	__atomic_store_n(&v->seq_count, v->seq_count + 1, __ATOMIC_RELEASE);
}

/*
 * A page whose time a hypervisor fills, as AWS's does and QEMU's does not:
 * UTC time_sec + time_frac / 2^64 s at counter_value of the x86 TSC,
 * whose period is period / 2^(64 + shift) s within period_maxerror, the
 * time within maxerror_ns; SYNCHRONIZED, no leap.
 */
static inline void test_vmclock_time(struct vmclock_abi_page *v, __u64 counter_value,
				     __u64 time_sec, __u64 time_frac, __u64 maxerror_ns,
				     __u64 period, __u8 shift, __u64 period_maxerror)
{
	v->counter_id = VMCLOCK_COUNTER_X86_TSC;
	v->time_type = VMCLOCK_TIME_UTC;
	v->flags = VMCLOCK_FLAG_TIME_MAXERROR_VALID | VMCLOCK_FLAG_PERIOD_MAXERROR_VALID;
	v->clock_status = VMCLOCK_STATUS_SYNCHRONIZED;
	v->leap_indicator = VMCLOCK_LEAP_NONE;
	v->counter_value = counter_value;
	v->counter_period_frac_sec = period;
	v->counter_period_shift = shift;
	v->counter_period_maxerror_rate_frac_sec = period_maxerror;
	v->time_sec = time_sec;
	v->time_frac_sec = time_frac;
	v->time_maxerror_nanosec = maxerror_ns;
}

#endif /* LCLK_TEST_VM_PAGES_H */
