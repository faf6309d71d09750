/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
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
	/* the hypervisor's vmclock page (LCLK_CAP_VMCLOCK), NULL if none */
	const struct lclk_vmclock_head *vmclock;
	size_t vmclock_size;
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

/*
 * The head of the hypervisor's vmclock page (linux/vmclock-abi.h, Linux
 * 6.13+; little-endian), as much of it as a reader of lclk's page needs:
 * its disruption_marker changes when a snapshot is restored or the VM
 * migrates, and a reading of the page that claims a bound claims none
 * once it is not the page's vmclock_marker (LCLK_PAGE_VMCLOCK).
 */
struct lclk_vmclock_head {
	__u32 magic;
	__u32 size;
	__u16 version;
	__u8 counter_id;
	__u8 time_type;
	__u32 seq_count;	/* odd while the hypervisor writes */
	__u64 disruption_marker;
};

/*
 * How long a reader waits for the hypervisor to finish writing its page
 * (seq_count odd) before it gives up: pauses of the CPU, a few ms. A
 * hypervisor writes the page in microseconds; one that stalls mid-write
 * must not hang every reader of the clock.
 */
#define LCLK_VMCLOCK_SPINS	(1U << 16)

/*
 * The vmclock's disruption marker now, read under its seq_count. Returns
 * 0, or -EBUSY if seq_count stayed odd (or kept changing) for
 * LCLK_VMCLOCK_SPINS tries: no marker, no proof that there was no
 * disruption.
 */
static inline int lclk_vmclock_marker(const struct lclk_vmclock_head *v,
				      __u64 *marker)
{
	unsigned int spins;
	__u32 seq;

	for (spins = 0; spins < LCLK_VMCLOCK_SPINS; spins++) {
		seq = __atomic_load_n(&v->seq_count, __ATOMIC_ACQUIRE);
		if (seq & 1) {
			lclk_cpu_relax();
			continue;
		}
		*marker = LCLK_LOAD(v->disruption_marker);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (LCLK_LOAD(v->seq_count) == seq)
			return 0;
	}
	return -EBUSY;
}

/*
 * A reading that claims a bound (SYNCED, HOLDOVER) from a page whose
 * last sync saw marker: DISRUPTED, the bound unknown, unless the
 * vmclock's marker is still that one.
 */
static inline void lclk_vmclock_compare(const struct lclk_vmclock_head *v,
					__u64 marker, struct lclk_now *out)
{
	__u64 now;

	if (lclk_vmclock_marker(v, &now) || now != marker) {
		out->status = LCLK_STATUS_DISRUPTED;
		out->bound_ns = LCLK_BOUND_UNKNOWN;
	}
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

/*
 * A reading of the page on a VM with a vmclock (LCLK_PAGE_VMCLOCK): if
 * it claims a bound and the hypervisor has disrupted the clocks since the
 * last sync (the marker the sync saw, read with the model, is not the
 * vmclock's now), it is DISRUPTED with no bound. Without the vmclock page
 * mapped (an lclk_clock opened before the flag was set: never, as the
 * flag is set at load; or the page could not be mapped), the kernel
 * compares: the ioctl.
 */
static inline int lclk_vmclock_check(const struct lclk_clock *c,
				     __u64 marker, struct lclk_now *out)
{
	if (out->status != LCLK_STATUS_SYNCED &&
	    out->status != LCLK_STATUS_HOLDOVER)
		return 0;
	if (!c->vmclock)
		return lclk_now_ioctl(c, out);
	lclk_vmclock_compare(c->vmclock, marker, out);
	return 0;
}

/*
 * The page says to ask the kernel: LCLK_PAGE_REFUSED, unless it comes with
 * LCLK_PAGE_VMCLOCK and this reader has the vmclock page to compare the
 * disruption marker itself. (The module sets both on a VM with a vmclock
 * so that a reader built before it, which compares nothing, asks the
 * kernel instead of reading a bound that a restore has voided.)
 */
static inline int lclk_page_refused(const struct lclk_clock *c, __u32 flags)
{
	return (flags & LCLK_PAGE_REFUSED) &&
	       !((flags & LCLK_PAGE_VMCLOCK) && c->vmclock);
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

		/*
		 * One test of the flags for the rare cases, no cost to the
		 * common one: a VM with a vmclock is among them, as its page
		 * says REFUSED beside VMCLOCK (for readers built before it).
		 */
		if (__builtin_expect(flags & (LCLK_PAGE_CPU_OFFSETS |
					      LCLK_PAGE_REFUSED), 0)) {
			__s32 cpu = -1;
			__s64 t;
			__u64 marker;

			if (lclk_page_refused(c, flags))	/* never changes */
				return lclk_now_ioctl(c, out);
			if (flags & LCLK_PAGE_CPU_OFFSETS) {
				cpu = sched_getcpu();
				t = lclk_monotonic_ns();
				if (cpu < 0)	/* no CPU number: the kernel knows */
					return lclk_now_ioctl(c, out);
				if (sched_getcpu() != cpu)
					continue;	/* migrated: offset unknown */
			} else {
				t = lclk_monotonic_ns();
			}
			lclk_eval(&p->params, p, t, cpu, out);
			marker = LCLK_LOAD(p->vmclock_marker);
			if (lclk_read_retry(p, seq))
				continue;
			/* a VM with a vmclock: one more test, after the clock reading */
			if (flags & LCLK_PAGE_VMCLOCK)
				return lclk_vmclock_check(c, marker, out);
			return 0;
		}
		/* the common case: no CPU number, no table, no vmclock */
		lclk_eval(&p->params, p, lclk_monotonic_ns(), -1, out);
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
	if (m.status == LCLK_STATUS_DISRUPTED)	/* GET_MODEL's "as of now" */
		out->bound_ns = LCLK_BOUND_UNKNOWN;
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
	__u32 seq, flags;
	__u64 marker;

	/* REFUSED never comes or goes on a page: no need of the seqcount */
	if (!c->page || lclk_page_refused(c, LCLK_LOAD(c->page->flags))) {
		lclk_from_model(c, base_ns, cpu, out);
		return;
	}

	do {
		seq = lclk_read_begin(c->page);
		lclk_eval(&c->page->params, c->page, base_ns, cpu, out);
		flags = LCLK_LOAD(c->page->flags);
		marker = LCLK_LOAD(c->page->vmclock_marker);
	} while (lclk_read_retry(c->page, seq));
	/* a disruption since the sync: none of its bounds holds now */
	if ((flags & LCLK_PAGE_VMCLOCK) &&
	    (out->status == LCLK_STATUS_SYNCED ||
	     out->status == LCLK_STATUS_HOLDOVER)) {
		if (!c->vmclock)
			lclk_from_model(c, base_ns, cpu, out);
		else
			lclk_vmclock_compare(c->vmclock, marker, out);
	}
}

/*
 * The model in the caller's CLOCK_MONOTONIC: a consistent copy off the
 * page, or LCLK_IOC_GET_MODEL where the page cannot be used or on a VM
 * with a vmclock (both say LCLK_PAGE_REFUSED), whose status is the one
 * as of now, DISRUPTED included (the page's is the stored one). Returns
 * 0 or -errno;
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
	c->vmclock = NULL;
	c->vmclock_size = 0;
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
	/* an old module says nothing of it: its rsv fields are zero */
	if ((info.caps & LCLK_CAP_VMCLOCK) && info.vmclock_size) {
		map = mmap(NULL, info.vmclock_size, PROT_READ, MAP_SHARED,
			   c->fd, (off_t)info.vmclock_offset);
		if (map != MAP_FAILED) {	/* else: the ioctls compare */
			c->vmclock = map;
			c->vmclock_size = info.vmclock_size;
		}
	}
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
	if (c->vmclock)
		munmap((void *)c->vmclock, c->vmclock_size);
	if (c->fd >= 0)
		close(c->fd);
	c->vmclock = NULL;
	c->page = NULL;
	c->fd = -1;
}

/*
 * The vmclock's disruption marker now, for a setter to read before it
 * measures and to set with (LCLK_SET_VMCLOCK, uapi lclk.h). Returns 0,
 * -EOPNOTSUPP where there is no vmclock (or a module that predates it),
 * -EAGAIN while the hypervisor keeps its page mid-write.
 */
static inline int lclk_disruption_marker(const struct lclk_clock *c,
					 __u64 *marker)
{
	struct lclk_disruption d;

	if (c->vmclock)
		return lclk_vmclock_marker(c->vmclock, marker) ? -EAGAIN : 0;
	if (ioctl(c->fd, LCLK_IOC_GET_DISRUPTION, &d) < 0)
		return errno == ENOTTY ? -EOPNOTSUPP : -errno;
	*marker = d.marker;
	return 0;
}

#endif /* _LCLK_H */
