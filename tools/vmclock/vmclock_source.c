// SPDX-License-Identifier: GPL-2.0
/*
 * vmclock:[PATH] - the time the hypervisor publishes in its vmclock page
 * (/dev/vmclock0 by default; vmclock:///dev/vmclock0 says the same), as
 * the reference. A reading pairs the x86 TSC with CLOCK_MONOTONIC: the
 * TSC read between two CLOCK_MONOTONIC reads, all inside one pass of the
 * page's seq_count, so the page's fields, its disruption marker and the
 * counter belong together; the page turns the counter into its time
 * (vmclock_page.h). No network, no protocol: the burst keeps the reading
 * with the narrowest CLOCK_MONOTONIC window.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock_offset.h"
#include "lib/priv.h"
#include "sync/source.h"
#include "vmclock_page.h"

#define VMCLOCK_DEFAULT_PATH	"/dev/vmclock0"
#define VMCLOCK_MAP_LEN		4096	/* the device maps exactly one page */

struct vmclock_source {
	char path[256];
	const struct vmclock_abi_page *page;
	size_t len;		/* of the page, or of a shorter file */
};

/* One reading: the page's fields as they were, the counter, the bracket. */
struct vmclock_reading {
	struct vmclock_abi_page copy;
	size_t len;		/* of copy: the page's, or the file's */
	uint64_t counter;
	int64_t lo_ns, hi_ns;	/* CLOCK_MONOTONIC before and after it */
};

static const char *spec_path(const char *spec)
{
	if (!*spec)
		return VMCLOCK_DEFAULT_PATH;
	/* vmclock:///dev/vmclock0, as a file: URL writes it */
	return strncmp(spec, "//", 2) ? spec : spec + 2;
}

static int vmclock_src_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	struct vmclock_source *vs = calloc(1, sizeof(*vs));
	struct stat st;
	void *map;
	int fd, e;

	if (!vs)
		return -ENOMEM;
	snprintf(vs->path, sizeof(vs->path), "%s", spec_path(spec));
	fd = open(vs->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		e = -errno;
		snprintf(err, errlen, "%s: %s", vs->path, strerror(errno));
		goto fail;
	}
	/* a file (the tests' pages) maps as long as it is; the device one page */
	vs->len = S_ISREG(st.st_mode) && st.st_size < VMCLOCK_MAP_LEN ?
		  (size_t)st.st_size : VMCLOCK_MAP_LEN;
	map = vs->len ? mmap(NULL, vs->len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
	if (map == MAP_FAILED) {
		e = vs->len ? -errno : -EINVAL;
		snprintf(err, errlen, "%s: cannot map the vmclock page: %s", vs->path,
			 vs->len ? strerror(errno) : "empty");
		goto fail;
	}
	close(fd);
	vs->page = map;
	src->priv = vs;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(vs);
	return e;
}

/*
 * The TSC, neither before the instructions ahead of it are done (the
 * CLOCK_MONOTONIC read before) nor after those behind it start (the one
 * after): LFENCE on both sides, as the kernel's rdtsc_ordered().
 */
static uint64_t tsc_read(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
#else
	return 0;	/* never used: vmclock_parse() refuses every counter here */
#endif
}

/*
 * How long a reading waits for the hypervisor to finish writing its page,
 * as ptp_vmclock.c does (VMCLOCK_MAX_WAIT): it writes in microseconds.
 */
#define VMCLOCK_WAIT_NS		100000000LL

/*
 * The page and the counter under one even seq_count, retried while the
 * hypervisor writes (as vmclock-abi.h asks), for VMCLOCK_WAIT_NS at most.
 * Returns 0, or -EBUSY.
 */
static int read_page(const struct vmclock_source *vs, struct vmclock_reading *r)
{
	const uint32_t *seqp = &vs->page->seq_count;
	int64_t deadline = monotonic_ns() + VMCLOCK_WAIT_NS;
	uint32_t seq;

	r->len = vs->len < sizeof(r->copy) ? vs->len : sizeof(r->copy);
	do {
		seq = __atomic_load_n(seqp, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			lclk_cpu_relax();
			continue;
		}
		/* may copy a write in progress: the second seq_count says */
		memcpy(&r->copy, (const void *)vs->page, r->len);
		r->lo_ns = monotonic_ns();
		r->counter = tsc_read();
		r->hi_ns = monotonic_ns();
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(seqp, __ATOMIC_RELAXED) == seq)
			return 0;
	} while (monotonic_ns() < deadline);
	return -EBUSY;
}

/*
 * The page's disruption marker must be the target's: the one the
 * measurement is marked with (the runner reads it before measuring), so
 * that a set under it is one of this page's time. Another marker is a
 * disruption while measuring, or a page that is not this VM's vmclock.
 */
static int check_marker(const struct target_clock *tc, uint64_t marker,
			char *err, size_t errlen)
{
	struct vmclock_mark mark;

	target_mark(tc, &mark);
	if (!mark.vmclock || !mark.known || mark.marker == marker)
		return 0;
	snprintf(err, errlen, "its disruption marker %llu is not the VM's (%llu, %s): a disruption while measuring, or not this VM's vmclock",
		 (unsigned long long)marker, (unsigned long long)mark.marker, target_name(tc));
	return -ESTALE;
}

static int vmclock_src_measure(struct source *src, const struct target_clock *tc,
			       struct measurement *m, char *err, size_t errlen)
{
	struct vmclock_source *vs = src->priv;
	unsigned int i, n = src->opts.samples ? src->opts.samples : 1;
	struct vmclock_reading r;
	struct vmclock_params p, best_p = { 0 };
	struct vmclock_time t, best = { 0 };
	int64_t lo = 0, hi = 0, half, base;
	char why[192];
	int e = 0;

	for (i = 0; i < n; i++) {
		e = read_page(vs, &r);
		if (e) {
			snprintf(why, sizeof(why), "the hypervisor kept writing the page (seq_count odd or changing)");
			break;
		}
		e = vmclock_parse(&r.copy, r.len, &p, why, sizeof(why));
		if (e)
			break;
		e = vmclock_time_at(&p, r.counter, &t);
		if (e == -EDOM) {
			snprintf(why, sizeof(why), "its UTC time (at counter_value %llu) would be extrapolated across the leap second it announces",
				 (unsigned long long)p.counter_value);
			break;
		}
		if (e) {
			snprintf(why, sizeof(why), "the TSC (%llu) is too far from the page's counter_value (%llu)",
				 (unsigned long long)r.counter,
				 (unsigned long long)p.counter_value);
			break;
		}
		if (i && r.hi_ns - r.lo_ns >= hi - lo)
			continue;
		best = t;
		best_p = p;
		lo = r.lo_ns;
		hi = r.hi_ns;
	}
	if (e) {
		snprintf(err, errlen, "%s: %s", vs->path, why);
		return e;
	}
	e = check_marker(tc, best_p.marker, why, sizeof(why));
	if (e) {
		snprintf(err, errlen, "%s: %s", vs->path, why);
		return e;
	}
	/*
	 * The TSC was read at some CLOCK_MONOTONIC in [lo, hi + 1) (each
	 * read is truncated to the ns): taken at the middle, off by half that
	 * at most, in CLOCK_MONOTONIC ns, which are true ns within 500 ppm
	 * (adjtimex's limit): 1/2000 more, rounded up, and 1 ns of the
	 * logical clock's rounding.
	 */
	half = (hi - lo + 2) / 2;
	base = lo + (hi - lo) / 2;
	memset(m, 0, sizeof(*m));
	m->base_ns = base;
	m->offset_ns = best.time_ns - target_from_base(tc, base);
	m->bound_ns = best.bound_ns + half + half / 2000 + 1 + (tc->logical ? 1 : 0);
	m->delay_ns = hi - lo;
	m->stratum = 1;
	m->leap = best_p.leap;
	m->tai = best_p.tai;
	m->utc_offset_valid = best_p.utc_offset_valid;
	m->utc_offset = best_p.utc_offset;
	m->samples = n;
	snprintf(m->refid, sizeof(m->refid), "VMCLOCK");
	if (src->opts.verbose >= 2)
		fprintf(stderr, "%s: %lld counts from counter_value, window %lld ns, page bound %lld ns%s%s\n",
			src->url, (long long)best.delta, (long long)(hi - lo),
			(long long)best.bound_ns,
			best_p.flags & VMCLOCK_FLAG_DISRUPTION_SOON ? ", disruption soon" : "",
			best_p.flags & VMCLOCK_FLAG_DISRUPTION_IMMINENT ? ", disruption imminent" : "");
	return 0;
}

static void vmclock_src_close(struct source *src)
{
	struct vmclock_source *vs = src->priv;

	munmap((void *)vs->page, vs->len);
	free(vs);
	src->priv = NULL;
}

/* /dev/vmclock0 is root's, 0600: read-only opens need CAP_DAC_READ_SEARCH. */
static uint64_t vmclock_src_caps(const char *spec)
{
	(void)spec;
	return PRIV_CAP(CAP_DAC_READ_SEARCH);
}

const struct source_ops vmclock_source_ops = {
	.scheme = "vmclock",
	.sep = ":",
	.open = vmclock_src_open,
	.measure = vmclock_src_measure,
	.close = vmclock_src_close,
	.caps = vmclock_src_caps,
};
