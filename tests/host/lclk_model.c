// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of the model arithmetic in include/lclk_model.h, the
 * same code the module runs, at the edges of its ranges, and of the mmap
 * reader in include/lclk.h on a page built in memory. No module needed.
 * Prints TAP.
 */
#include <limits.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lclk.h"
#include "rand.h"
#include "vm_pages.h"

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

#define MAX_MULT 1099511627LL	/* 10^9 ppt * 2^40 / 10^12, truncated */

static void test_mult(void)
{
	__s64 ppt, prev;
	int distinct = 1;

	ok(lclk_ppt_to_mult(0) == 0, "ppt_to_mult(0) == 0");
	ok(lclk_ppt_to_mult(LCLK_MAX_RATE_PPT) == MAX_MULT,
	   "ppt_to_mult(max) == %lld", (long long)MAX_MULT);
	ok(lclk_ppt_to_mult(-LCLK_MAX_RATE_PPT) == -MAX_MULT,
	   "ppt_to_mult(-max) == -ppt_to_mult(max)");
	ok(lclk_ppt_to_mult(1) == 1 && lclk_ppt_to_mult(-1) == -1,
	   "1 ppt is representable");
	ok(lclk_ppt_to_mult(123456789) == 135742175,
	   "ppt_to_mult(123456789) == 135742175");
	/* 10^9 ppt * 2^40 / 10^12 = 1099511627.776: up to ...628, + 1 unit */
	ok(lclk_ppb_to_mult(LCLK_MAX_DRIFT_PPB) == MAX_MULT + 2,
	   "ppb_to_mult(max drift) rounds 1000 ppm up and adds a unit");
	ok(lclk_ppb_to_mult(0) == 1,
	   "ppb_to_mult(0) is the rate's truncation alone: one unit");
	ok(MAX_MULT < (1LL << LCLK_RATE_SHIFT),
	   "|rate_mult| < 2^%d, so the rate cannot run time backwards",
	   LCLK_RATE_SHIFT);

	/* ppb resolution: every ppb step gives a distinct multiplier */
	prev = lclk_ppt_to_mult(-LCLK_MAX_RATE_PPT);
	for (ppt = -LCLK_MAX_RATE_PPT + 1000; ppt <= LCLK_MAX_RATE_PPT;
	     ppt += 1000) {
		__s64 m = lclk_ppt_to_mult(ppt);

		if (m <= prev)
			distinct = 0;
		prev = m;
	}
	ok(distinct, "every ppb in +-1000 ppm has its own multiplier");
}

static void test_scale(void)
{
	int i, good = 1;

	ok(lclk_scale(LLONG_MAX, MAX_MULT) == 9223372030345215LL,
	   "scale(S64_MAX, +max) exact, no overflow");
	ok(lclk_scale(LLONG_MAX, -MAX_MULT) == -9223372030345216LL,
	   "scale(S64_MAX, -max) exact, no overflow");
	ok(lclk_scale(LLONG_MIN, MAX_MULT) == -9223372030345216LL,
	   "scale(S64_MIN, +max) exact, no overflow");
	ok(lclk_scale(LLONG_MIN, -MAX_MULT) == 9223372030345216LL,
	   "scale(S64_MIN, -max) exact, no overflow");
	ok(lclk_scale(123456789, 0) == 0, "scale(x, 0) == 0");
	ok(lclk_scale(1LL << 40, 777) == 777, "scale(2^40, m) == m");
	ok(lclk_scale(1, 1) == 0 && lclk_scale(-1, 1) == -1,
	   "scale rounds towards minus infinity");

	/* Accuracy: the error of the truncated multiplier is < 1 ppt. */
	for (i = 0; i < 200000; i++) {
		__s64 ppt = test_between(-LCLK_MAX_RATE_PPT, LCLK_MAX_RATE_PPT);
		__s64 dt = test_between(0, 1LL << 62);
		__int128 exact = (__int128)dt * ppt / 1000000000000LL;
		__int128 err = lclk_scale(dt, lclk_ppt_to_mult(ppt)) - exact;

		if (err < 0)
			err = -err;
		if (err > dt / 1000000000000LL + 2)
			good = 0;
	}
	ok(good, "scale(dt, ppt) within dt * 1e-12 + 2 ns of exact, dt < 2^62");
}

static int step_ok(__s64 t, __s64 t0, __s64 off, __s64 mult)
{
	__s64 a = lclk_logical(t, t0, off, mult);
	__s64 b = lclk_logical(t + 1, t0, off, mult);

	return b - a >= 0 && b - a <= 2;
}

static void test_monotonic(void)
{
	static const __s64 mults[] = { MAX_MULT, -MAX_MULT, 0, 1, -1 };
	__s64 t0 = 1000000000LL, off = 5;
	unsigned int m;
	int i, good = 1;

	for (m = 0; m < sizeof(mults) / sizeof(mults[0]); m++) {
		for (i = -3; i <= 3; i++)
			good &= step_ok(t0 + i, t0, off, mults[m]);
		for (i = -3; i <= 3; i++)
			good &= step_ok(t0 + (1LL << 62) + i, t0, off, mults[m]);
		for (i = 0; i < 100000; i++)
			good &= step_ok(test_between(0, 1LL << 62), t0, off, mults[m]);
	}
	ok(good, "logical(t + 1) - logical(t) in [0, 2] at every rate, near t0 and far");
}

/*
 * The module re-anchors the model at each update: t0' = now, offset' =
 * offset + scale(now - t0). Afterwards logical time is at most 1 ns lower
 * than before, never higher, and logical(now) itself is unchanged.
 */
static void test_reanchor(void)
{
	int i, at_now = 1, after = 1;

	for (i = 0; i < 500000; i++) {
		__s64 mult = lclk_ppt_to_mult(test_between(-LCLK_MAX_RATE_PPT,
						       LCLK_MAX_RATE_PPT));
		__s64 t0 = test_between(0, 1LL << 61);
		__s64 now = t0 + test_between(0, 1LL << 60);
		__s64 t = now + test_between(0, 1LL << 40);
		__s64 off = test_between(-LCLK_MAX_OFFSET_NS / 2,
				    LCLK_MAX_OFFSET_NS / 2);
		__s64 off2 = off + lclk_scale(now - t0, mult);
		__s64 d;

		if (lclk_logical(now, now, off2, mult) !=
		    lclk_logical(now, t0, off, mult))
			at_now = 0;
		d = lclk_logical(t, now, off2, mult) -
		    lclk_logical(t, t0, off, mult);
		if (d < -1 || d > 0)
			after = 0;
	}
	ok(at_now, "re-anchoring keeps logical(now) exactly");
	ok(after, "re-anchoring moves later logical time by 0 or -1 ns");
}

static void test_bound_status(void)
{
	__s64 h = 10 * 1000000000LL;

	ok(lclk_bound(5, LCLK_STATUS_UNSYNCED, 1, 0, MAX_MULT) ==
	   LCLK_BOUND_UNKNOWN, "bound is unknown while unsynced");
	/*
	 * A time before the last sync is as far from the measurement as one
	 * after it: a true clock within max_drift strays as far either way.
	 */
	/*
	 * ppb_to_mult(50000) = 54975581.39 up to ...582, + 1 = 54975583;
	 * 1 s of it is 50000.0006 ns, floored, and 2 ns for the floors.
	 */
	ok(lclk_bound(0, LCLK_STATUS_SYNCED, 7, 1000000000LL,
		      lclk_ppb_to_mult(50000)) == 7 + 50000 + 2,
	   "1 s before last_update at 50 ppm adds 50 us, as 1 s after does");
	ok(lclk_bound(0, LCLK_STATUS_SYNCED, 7, LLONG_MAX, MAX_MULT) ==
	   7 + 9223372030345215LL + 2,
	   "the largest age backwards does not overflow");
	/* 2^64 - 1 ns at 1099511627 / 2^40: 18446744060690431 ns, floored */
	ok(lclk_bound(LLONG_MIN, LCLK_STATUS_SYNCED, 7, LLONG_MAX, MAX_MULT) ==
	   7 + 18446744060690431LL + 2,
	   "an age past 2^63 - 1 is exact, never wrapped or negative");
	/* past the module's widest growth (6 times the largest rate), same age */
	ok(lclk_bound(LLONG_MAX, LCLK_STATUS_SYNCED, LCLK_MAX_BOUND_NS,
		      LLONG_MIN, 8 * MAX_MULT) ==
	   LCLK_MAX_BOUND_NS + 147573952485523455LL + 2,
	   "largest bound0, age and widened drift do not overflow");
	ok(lclk_bound(1000000000LL, LCLK_STATUS_SYNCED, 7, 0,
		      lclk_ppb_to_mult(50000)) == 7 + 50000 + 2,
	   "1 s at 50 ppm adds 50 us, rounded up");
	ok(lclk_bound(LLONG_MAX, LCLK_STATUS_SYNCED, LCLK_MAX_BOUND_NS, 0,
		      MAX_MULT) == LCLK_MAX_BOUND_NS + 9223372030345215LL + 2,
	   "largest bound at largest age and drift does not overflow");
	ok(lclk_status(h, LCLK_STATUS_SYNCED, 0, h) == LCLK_STATUS_SYNCED,
	   "SYNCED at exactly the holdover period");
	ok(lclk_status(h + 1, LCLK_STATUS_SYNCED, 0, h) == LCLK_STATUS_HOLDOVER,
	   "HOLDOVER 1 ns after it");
	ok(lclk_status(LLONG_MAX, LCLK_STATUS_UNSYNCED, 0, 0) ==
	   LCLK_STATUS_UNSYNCED, "UNSYNCED stays UNSYNCED");
}

/* The branch-free forms in lclk_model.h against their plain definitions. */
static __s64 ref_bound(__s64 t, __u32 status, __s64 bound0, __s64 last,
		       __s64 drift_mult)
{
	__int128 age = (__int128)t - last;

	if (status == LCLK_STATUS_UNSYNCED)
		return LCLK_BOUND_UNKNOWN;
	if (age < 0)
		age = -age;
	/* exact: age < 2^64 and drift_mult < 2^34 fit 128 bits */
	return bound0 + (__s64)((age * drift_mult) >> LCLK_RATE_SHIFT) +
	       LCLK_BOUND_ROUNDING_NS;
}

static __u32 ref_status(__s64 t, __u32 status, __s64 last, __s64 holdover)
{
	if (status == LCLK_STATUS_SYNCED && t - last > holdover)
		return LCLK_STATUS_HOLDOVER;
	return status;
}

static void test_reference(void)
{
	int i, bound_same = 1, status_same = 1;

	for (i = 0; i < 1000000; i++) {
		__s64 last = test_between(0, 1LL << 62);
		__s64 t = i & 1 ? last + test_between(-1000, 1000) :
			  i & 4 ? (__s64)test_rand() : test_between(0, 1LL << 62);
		__u32 st = test_rand() % 3;	/* stored: UNSYNCED, SYNCED, HOLDOVER */
		__s64 b0 = test_between(0, LCLK_MAX_BOUND_NS);
		/* past the widest the module makes it (6 times the largest rate) */
		__s64 dm = i & 8 ? test_between(0, 8 * MAX_MULT) :
			   lclk_ppb_to_mult(test_rand() % (LCLK_MAX_DRIFT_PPB + 1));
		__s64 h = i & 2 ? test_between(0, 2000) : test_between(0, 1LL << 62);

		if (lclk_bound(t, st, b0, last, dm) !=
		    ref_bound(t, st, b0, last, dm))
			bound_same = 0;
		if (lclk_status(t, st, last, h) != ref_status(t, st, last, h))
			status_same = 0;
	}
	ok(bound_same, "lclk_bound() is its plain definition, 10^6 random cases");
	ok(status_same, "lclk_status() is its plain definition, 10^6 random cases");
}

/* The reader of include/lclk.h, on a page that lives in this process. */
static void test_reader(void)
{
	size_t size = sizeof(struct lclk_page) + 4 * sizeof(__s64);
	struct lclk_page *p = calloc(1, size);
	struct lclk_clock c = { .fd = -1, .page = p, .size = size };
	struct lclk_now n;
	cpu_set_t set;

	if (!p)
		abort();
	p->magic = LCLK_PAGE_MAGIC;
	p->ncpus = 4;
	p->params.status = LCLK_STATUS_SYNCED;
	p->params.t0_ns = 1000;
	p->params.offset_ns = 1000000;
	p->params.rate_ppt = 500000000;
	p->params.rate_mult = lclk_ppt_to_mult(p->params.rate_ppt);
	p->params.drift_mult = lclk_ppb_to_mult(50000);
	p->params.bound0_ns = 10;
	p->params.last_update_ns = 1000;
	p->params.holdover_ns = 1000000000;
	p->cpu_offset_ns[2] = 77;

	ok(offsetof(struct lclk_page, params) == 24 &&
	   sizeof(struct lclk_params) == 80 &&
	   offsetof(struct lclk_page, cpu_offset_ns) == 152,
	   "page layout of ABI %d", LCLK_ABI_VERSION);
	lclk_from_base(&c, 1000 + 1000000000LL, -1, &n);
	ok(n.time_ns == 1000 + 1000000000LL + 1000000 + 500000 - 1 &&
	   n.bound_ns == 10 + 50000 + 2 && n.status == LCLK_STATUS_SYNCED &&
	   n.cpu == -1, "lclk_from_base: 1 s after t0 at 500 ppm");
	lclk_from_base(&c, 1000, 2, &n);
	ok(n.time_ns == 1000 + 1000000 + 77, "lclk_from_base applies cpu 2's offset");
	lclk_from_base(&c, 1000, 9, &n);
	ok(n.time_ns == 1000 + 1000000, "a CPU beyond ncpus gets no offset");
	lclk_from_base(&c, 1000 + 2000000000LL, -1, &n);
	ok(n.status == LCLK_STATUS_HOLDOVER, "holdover seen by the reader");

	lclk_now(&c, &n);
	ok(n.cpu == -1, "lclk_now skips the CPU number without offsets");
	p->flags = LCLK_PAGE_CPU_OFFSETS;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) == 0) {
		lclk_now(&c, &n);
		ok(n.cpu == 0, "lclk_now reads the CPU with offsets");
	} else {
		ok(1, "# SKIP cannot pin to CPU 0");
	}

	/*
	 * The page a process in another time namespace maps says REFUSED:
	 * the reader asks the kernel (here fd -1: EBADF, UNSYNCED) instead
	 * of evaluating a model that is not there.
	 */
	p->flags |= LCLK_PAGE_REFUSED;
	ok(lclk_now(&c, &n) == -EBADF && n.status == LCLK_STATUS_UNSYNCED &&
	   n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "lclk_now on a refused page reads the ioctl");
	lclk_from_base(&c, 1000, -1, &n);
	ok(n.status == LCLK_STATUS_UNSYNCED && n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "lclk_from_base on a refused page reads the ioctl");
	free(p);
}

/*
 * A VM with a vmclock: the reader compares the hypervisor's disruption
 * marker with the page's as of the last sync, and a reading that claims a
 * bound claims none once they differ; without the vmclock page mapped it
 * asks the kernel (fd -1: EBADF, UNSYNCED), never the page's bound.
 */
static void test_reader_vmclock(void)
{
	size_t size;
	struct lclk_page *p = test_page_new(1, &size);
	struct lclk_vmclock_head *v = test_vmclock_new(7);
	struct lclk_clock c = { .fd = -1, .page = p, .size = size };
	struct lclk_now n;

	ok(offsetof(struct lclk_vmclock_head, seq_count) == 12 &&
	   offsetof(struct lclk_vmclock_head, disruption_marker) == 16,
	   "vmclock head layout as linux/vmclock-abi.h's");
	ok(offsetof(struct lclk_page, vmclock_marker) == 104 &&
	   offsetof(struct lclk_page, cpu_offset_ns) == 152,
	   "vmclock_marker in the page's reserved words, the layout kept");
	test_page_sync(p, 0, 10, 7);
	/* as the module sets them: REFUSED for the readers before the flag */
	p->flags = TEST_PAGE_VMCLOCK_FLAGS;

	ok(lclk_now(&c, &n) == -EBADF && n.status == LCLK_STATUS_UNSYNCED &&
	   n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "no vmclock mapped: lclk_now asks the kernel");
	lclk_from_base(&c, lclk_monotonic_ns(), -1, &n);
	ok(n.status == LCLK_STATUS_UNSYNCED && n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "no vmclock mapped: lclk_from_base asks the kernel");
	c.vmclock = v;
	{
		struct lclk_params m;

		ok(lclk_get_model(&c, &m) == -EBADF,
		   "lclk_get_model asks the kernel, whose status is DISRUPTED");
	}
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_SYNCED &&
	   n.bound_ns != LCLK_BOUND_UNKNOWN, "same marker: SYNCED, a bound");
	p->flags |= LCLK_PAGE_CPU_OFFSETS;
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_SYNCED &&
	   n.bound_ns != LCLK_BOUND_UNKNOWN, "with offsets: SYNCED, a bound");
	p->flags &= ~LCLK_PAGE_CPU_OFFSETS;
	test_vmclock_disrupt(v, 8);
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_DISRUPTED &&
	   n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "marker changed: DISRUPTED, the bound unknown");
	lclk_from_base(&c, lclk_monotonic_ns(), -1, &n);
	ok(n.status == LCLK_STATUS_DISRUPTED && n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "lclk_from_base: DISRUPTED too");
	p->params.last_update_ns -= 2000000000000LL;
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_DISRUPTED,
	   "HOLDOVER turns DISRUPTED too");
	p->params.status = LCLK_STATUS_UNSYNCED;
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_UNSYNCED,
	   "UNSYNCED stays UNSYNCED");
	test_page_sync(p, 0, 10, 8);
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_SYNCED,
	   "a sync that saw the new marker: SYNCED again");
	/*
	 * A vmclock page whose seq_count stays odd (a hypervisor that died
	 * or stalled mid-write): the reader must not spin forever, and the
	 * marker it could not read is no proof of "not disrupted".
	 */
	v->seq_count |= 1;
	alarm(20);	/* a reader that spins forever fails the test */
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_DISRUPTED &&
	   n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "seq_count stuck odd: lclk_now returns, DISRUPTED, no bound");
	lclk_from_base(&c, lclk_monotonic_ns(), -1, &n);
	ok(n.status == LCLK_STATUS_DISRUPTED && n.bound_ns == LCLK_BOUND_UNKNOWN,
	   "seq_count stuck odd: lclk_from_base returns, DISRUPTED");
	alarm(0);
	v->seq_count++;
	p->flags = 0;
	v->disruption_marker = 9;
	ok(lclk_now(&c, &n) == 0 && n.status == LCLK_STATUS_SYNCED,
	   "without LCLK_PAGE_VMCLOCK the vmclock page is not read");
	free(v);
	free(p);
}

int main(void)
{
	test_mult();
	test_scale();
	test_monotonic();
	test_reanchor();
	test_bound_status();
	test_reference();
	test_reader();
	test_reader_vmclock();
	printf("1..%d\n", tests);
	return failures ? 1 : 0;
}
