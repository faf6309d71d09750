/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An lclk page and a hypervisor's vmclock page, built in memory as the
 * module and the hypervisor write them, for the host tests of their
 * readers (include/lclk.h, the tracer's clock). No module, no VM.
 */
#ifndef LCLK_TEST_VM_PAGES_H
#define LCLK_TEST_VM_PAGES_H

#include <stdlib.h>

#include "lclk.h"

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

#endif /* LCLK_TEST_VM_PAGES_H */
