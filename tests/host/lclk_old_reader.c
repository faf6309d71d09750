// SPDX-License-Identifier: GPL-2.0
/*
 * Host test: a reader built before the vmclock (include/lclk.h as of
 * 1119e8c, tests/host/compat/lclk_pre_vmclock.h) on the page of a VM
 * with a vmclock, built in memory with the flags the module sets
 * (tests/guest/lclk_mmap.c checks that it sets them). Such a reader does
 * not know LCLK_PAGE_VMCLOCK and never compares the disruption marker:
 * it must not read the page's SYNCED and bound, but ask the kernel
 * (here fd -1: EBADF, UNSYNCED), which compares. Prints TAP.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "compat/lclk_pre_vmclock.h"

/* What kmod/lclk_clock.c's lclk_clock_init() sets where there is a vmclock */
#define KERNEL_VMCLOCK_PAGE_FLAGS	(LCLK_PAGE_VMCLOCK | LCLK_PAGE_REFUSED)

static int tests, failures;

static __attribute__((format(printf, 2, 3)))
void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tests++;
	if (!cond)
		failures++;
	printf("%s %d - ", cond ? "ok" : "not ok", tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

int main(void)
{
	size_t size = sizeof(struct lclk_page) + sizeof(__s64);
	struct lclk_page *p = calloc(1, size);
	struct lclk_clock c = { .fd = -1, .page = p, .size = size };
	struct lclk_params m;
	struct lclk_now n;

	if (!p)
		abort();
	/* synced, then a restore the old reader cannot see */
	p->magic = LCLK_PAGE_MAGIC;
	p->ncpus = 1;
	p->params.status = LCLK_STATUS_SYNCED;
	p->params.last_update_ns = lclk_monotonic_ns();
	p->params.holdover_ns = 1000000000000LL;
	p->params.bound0_ns = 10;
	p->flags = KERNEL_VMCLOCK_PAGE_FLAGS;

	ok(lclk_now(&c, &n) == -EBADF && n.status == LCLK_STATUS_UNSYNCED &&
	   n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "old lclk_now on a vmclock VM's page asks the kernel");
	lclk_from_base(&c, lclk_monotonic_ns(), -1, &n);
	ok(n.status == LCLK_STATUS_UNSYNCED && n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "old lclk_from_base on a vmclock VM's page asks the kernel");
	ok(lclk_get_model(&c, &m) == -EBADF,
	   "old lclk_get_model on a vmclock VM's page asks the kernel");
	free(p);
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
