/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * (tests/host/compat: include/lclk.h as released before the vmclock,
 * commit 1119e8c, kept as it was to test what old binaries do.)
 * Header-only userspace reader for /dev/lclkN.
 *
 *	struct lclk_clock c;
 *	struct lclk_now now;
 *
 *	if (lclk_open(&c, "/dev/lclk0") == 0 && lclk_now(&c, &now) == 0)
 *		printf("%lld +- %lld\n", now.time_ns, now.bound_ns);
 *
 * lclk_now() reads the model from the read-only mmap page under its
 * seqcount and CLOCK_MONOTONIC through the vDSO: no system call. When the
 * model has per-CPU offsets it also reads the CPU number (rseq-backed
 * sched_getcpu()) before and after the clock, and retries on migration, so
 * the offset applied is the one of the CPU the clock was read on.
 *
 * Per-CPU offsets make logical time monotonic per CPU, not per thread: a
 * thread that migrates between two reads can see time go back by the
 * difference of the two CPUs' offsets (at most 2 * LCLK_MAX_CPU_OFFSET_NS).
 *
 * Where the page cannot be used - the mapping is refused in a time
 * namespace whose CLOCK_MONOTONIC is shifted, the page a process inherited
 * into such a namespace says LCLK_PAGE_REFUSED, or the CPU number is not
 * known - lclk_now() and lclk_from_base() ask the kernel instead (one
 * ioctl), so that every reader computes the same logical time. A process
 * that setns() into such a namespace after lclk_open() must lclk_close()
 * and lclk_open() again: the kernel does not take back the page it mapped.
 */
#ifndef _LCLK_H
#define _LCLK_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "lclk_model.h"

/*
 * sched_getcpu() is declared only with _GNU_SOURCE, which does nothing
 * once a libc header has been included without it.
 */
#if defined(__GLIBC__) && !defined(__USE_GNU)
extern int sched_getcpu(void);
#endif

struct lclk_clock {
	int fd;
	const struct lclk_page *page;
	size_t size;
};

struct lclk_now {
	__s64 time_ns;		/* logical time */
	__s64 bound_ns;		/* error bound, LCLK_BOUND_UNKNOWN if unsynced */
	__s64 base_ns;		/* CLOCK_MONOTONIC it was computed for */
	__u32 status;		/* LCLK_STATUS_* */
	__s32 cpu;		/* CPU whose offset was applied, -1 if none */
};

/*
 * Field loads inside the seqcount section: single volatile loads, as the
 * kernel's READ_ONCE() and the vDSO do. (__atomic_load_n() would be the
 * same instruction, but gcc then keeps every field's address in a register
 * or on the stack, which costs the reader a quarter of its time.)
 */
#define LCLK_LOAD(field) (*(const volatile __typeof__(field) *)&(field))

static inline void lclk_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static inline __u32 lclk_read_begin(const struct lclk_page *p)
{
	__u32 seq;

	while ((seq = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE)) & 1)
		lclk_cpu_relax();
	return seq;
}

static inline int lclk_read_retry(const struct lclk_page *p, __u32 seq)
{
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return LCLK_LOAD(p->seq) != seq;
}

static inline __s64 lclk_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__s64)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Logical time for base time t from model m: the page's, read field by
 * field under its seqcount (only the fields evaluation needs), or a copy.
 * cpu >= 0 applies that CPU's offset from page p (the caller read t on
 * it); cpu < 0, or no page, applies none.
 */
static inline void lclk_eval(const struct lclk_params *m,
			     const struct lclk_page *p, __s64 t, __s32 cpu,
			     struct lclk_now *out)
{
	__u32 status = LCLK_LOAD(m->status);
	__s64 last = LCLK_LOAD(m->last_update_ns);

	out->base_ns = t;
	out->cpu = cpu;
	out->time_ns = lclk_logical(t, LCLK_LOAD(m->t0_ns),
				    LCLK_LOAD(m->offset_ns),
				    LCLK_LOAD(m->rate_mult));
	if (p && cpu >= 0 && (__u32)cpu < LCLK_LOAD(p->ncpus))
		out->time_ns += LCLK_LOAD(p->cpu_offset_ns[cpu]);
	out->bound_ns = lclk_bound(t, status, LCLK_LOAD(m->bound0_ns), last,
				   LCLK_LOAD(m->drift_mult));
	out->status = lclk_status(t, status, last, LCLK_LOAD(m->holdover_ns));
}

/*
 * The kernel's answer (GET_TIME), where the page cannot be used. A failed
 * ioctl still fills *out, UNSYNCED with an unknown bound, so that a caller
 * that ignores the return value reads nothing uninitialised.
 */
static inline int lclk_now_ioctl(const struct lclk_clock *c,
				 struct lclk_now *out)
{
	struct lclk_time t;

	memset(&t, 0, sizeof(t));
	if (ioctl(c->fd, LCLK_IOC_GET_TIME, &t) < 0) {
		out->time_ns = 0;
		out->bound_ns = LCLK_BOUND_UNKNOWN;
		out->base_ns = 0;
		out->status = LCLK_STATUS_UNSYNCED;
		out->cpu = -1;
		return -errno;
	}
	out->time_ns = t.logical_ns;
	out->bound_ns = t.bound_ns;
	out->base_ns = t.base_ns;
	out->status = t.status;
	out->cpu = (__s32)t.cpu;
	return 0;
}

/* Logical time now, on the calling CPU. Returns 0 or -errno. */
static inline int lclk_now(const struct lclk_clock *c, struct lclk_now *out)
{
	const struct lclk_page *p = c->page;

	if (!p)
		return lclk_now_ioctl(c, out);

	/*
	 * for (;;), not do/while: a migration must restart the read, and a
	 * "continue" in a do/while would test the seqcount instead and could
	 * return with *out never written.
	 */
	for (;;) {
		__u32 seq = lclk_read_begin(p);
		__u32 flags = LCLK_LOAD(p->flags);

		/* one test of the flags for both rare cases: no cost */
		if (__builtin_expect(flags & (LCLK_PAGE_CPU_OFFSETS |
					      LCLK_PAGE_REFUSED), 0)) {
			__s32 cpu;
			__s64 t;

			if (flags & LCLK_PAGE_REFUSED)	/* never changes */
				return lclk_now_ioctl(c, out);
			cpu = sched_getcpu();
			t = lclk_monotonic_ns();
			if (cpu < 0)	/* no CPU number: the kernel knows */
				return lclk_now_ioctl(c, out);
			if (sched_getcpu() != cpu)
				continue;	/* migrated: offset unknown */
			lclk_eval(&p->params, p, t, cpu, out);
		} else {
			/* the common case: no CPU number, no table */
			lclk_eval(&p->params, p, lclk_monotonic_ns(), -1,
				  out);
		}
		if (!lclk_read_retry(p, seq))
			return 0;
	}
}

/*
 * lclk_from_base() without the page: the model from GET_MODEL (and the
 * CPU's offset from GET_CPU_OFFSET), evaluated as from the page. A failed
 * ioctl leaves the reading UNSYNCED with an unknown bound.
 */
static inline void lclk_from_model(const struct lclk_clock *c, __s64 base_ns,
				   __s32 cpu, struct lclk_now *out)
{
	struct lclk_cpu_offset co;
	struct lclk_params m;

	memset(&m, 0, sizeof(m));
	if (ioctl(c->fd, LCLK_IOC_GET_MODEL, &m) < 0) {
		out->base_ns = base_ns;
		out->cpu = cpu;
		out->time_ns = base_ns;
		out->bound_ns = LCLK_BOUND_UNKNOWN;
		out->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	lclk_eval(&m, NULL, base_ns, cpu, out);
	memset(&co, 0, sizeof(co));
	co.cpu = (__u32)cpu;
	if (cpu >= 0 && ioctl(c->fd, LCLK_IOC_GET_CPU_OFFSET, &co) == 0)
		out->time_ns += co.offset_ns;
}

/*
 * Convert a CLOCK_MONOTONIC timestamp taken elsewhere (BPF, a kernel
 * timestamp) with the current model. cpu < 0: no per-CPU offset.
 */
static inline void lclk_from_base(const struct lclk_clock *c, __s64 base_ns,
				  __s32 cpu, struct lclk_now *out)
{
	__u32 seq;

	/* REFUSED never comes or goes on a page: no need of the seqcount */
	if (!c->page || (LCLK_LOAD(c->page->flags) & LCLK_PAGE_REFUSED)) {
		lclk_from_model(c, base_ns, cpu, out);
		return;
	}

	do {
		seq = lclk_read_begin(c->page);
		lclk_eval(&c->page->params, c->page, base_ns, cpu, out);
	} while (lclk_read_retry(c->page, seq));
}

/*
 * The model in the caller's CLOCK_MONOTONIC: a consistent copy off the
 * page, or LCLK_IOC_GET_MODEL where the page cannot be used (whose status
 * is the one as of now, the page's the stored one). Returns 0 or -errno;
 * a failed ioctl leaves *m zero: UNSYNCED.
 */
static inline int lclk_get_model(const struct lclk_clock *c,
				 struct lclk_params *m)
{
	const struct lclk_page *p = c->page;
	__u32 seq;

	if (!p || (LCLK_LOAD(p->flags) & LCLK_PAGE_REFUSED)) {
		memset(m, 0, sizeof(*m));
		return ioctl(c->fd, LCLK_IOC_GET_MODEL, m) < 0 ? -errno : 0;
	}
	/* a plain copy, as the kernel's reader makes: a torn one is retried */
	do {
		seq = lclk_read_begin(p);
		memcpy(m, (const void *)&p->params, sizeof(*m));
	} while (lclk_read_retry(p, seq));
	return 0;
}

/* Open and map an instance. Returns 0 or -errno. */
static inline int lclk_open(struct lclk_clock *c, const char *path)
{
	struct lclk_info info;
	void *map;
	int err;

	/* A failed open leaves c safe to lclk_close(). */
	c->page = NULL;
	c->size = 0;
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	if (ioctl(c->fd, LCLK_IOC_INFO, &info) < 0)
		goto fail;
	if (info.abi_version != LCLK_ABI_VERSION) {
		errno = EPROTO;
		goto fail;
	}
	map = mmap(NULL, info.mmap_size, PROT_READ, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED && errno == EOPNOTSUPP)
		return 0;	/* shifted time namespace: the ioctls only */
	if (map == MAP_FAILED)
		goto fail;
	c->page = map;
	c->size = info.mmap_size;
	return 0;
fail:
	err = -errno;
	close(c->fd);
	c->fd = -1;
	return err;
}

static inline void lclk_close(struct lclk_clock *c)
{
	if (c->page)
		munmap((void *)c->page, c->size);
	if (c->fd >= 0)
		close(c->fd);
	c->page = NULL;
	c->fd = -1;
}

#endif /* _LCLK_H */
