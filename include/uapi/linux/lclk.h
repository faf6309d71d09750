/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * lclk: a logical clock device.
 *
 * The logical clock of an instance is
 *
 *   logical(t, cpu) = t + offset + (t - t0) * rate + cpu_offset[cpu]
 *
 * where t is CLOCK_MONOTONIC in nanoseconds (ktime_get_ns() in the kernel,
 * bpf_ktime_get_ns() in BPF, clock_gettime(CLOCK_MONOTONIC) in userspace),
 * so a timestamp taken by any of the three converts to logical time. The
 * logical timescale is UTC unless the agent that steers the clock says
 * otherwise (see LCLK_MODEL_TAI).
 *
 * The error bound is
 *
 *   bound(t) = bound0 + |t - last_update| * max_drift
 *
 * rounded up (include/lclk_model.h says how), where the page's max_drift
 * (drift_mult) includes what the module widened it by since the last sync
 * for changes nobody measured: rates set through the PTP clock, slews of
 * CLOCK_MONOTONIC by adjtimex (lclk(4)),
 * and the reference time lies within [logical - bound, logical + bound] for
 * as long as the reference that was measured is honest.
 *
 * Every structure carries reserved fields that must be zero on input and are
 * zero on output (GET_TIME, which checks them, leaves them as they were),
 * so the ABI can grow without new ioctl numbers.
 * All times are signed 64-bit nanoseconds; all rates are parts per trillion.
 */
#ifndef _UAPI_LINUX_LCLK_H
#define _UAPI_LINUX_LCLK_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define LCLK_ABI_VERSION	2	/* 2: the page's model is a struct lclk_params */

/* Sync status, as stored in the model and as seen by readers. */
#define LCLK_STATUS_UNSYNCED	0	/* never synchronised */
#define LCLK_STATUS_SYNCED	1	/* last update is younger than holdover */
#define LCLK_STATUS_HOLDOVER	2	/* last update is older than holdover */
/*
 * The hypervisor said that the VM's clocks were disrupted since the last
 * update (its vmclock page's disruption_marker changed: a snapshot was
 * restored, the VM migrated): the bound is unknown, as UNSYNCED's, until
 * the next sync (LCLK_SET_BOUND). Never stored: readers compute it from
 * the page (lclk_page.vmclock_marker, LCLK_PAGE_VMCLOCK). Only where
 * there is a vmclock device (LCLK_CAP_VMCLOCK); lclk(4) says what cannot
 * be seen without one.
 */
#define LCLK_STATUS_DISRUPTED	3

/*
 * Fixed-point rate: rate_mult = rate_ppt * 2^LCLK_RATE_SHIFT / 10^12, so
 * (t - t0) * rate_mult >> LCLK_RATE_SHIFT is the rate correction in ns.
 * 2^-40 is 0.9 ppt: finer than the 1 ppt the ABI accepts.
 */
#define LCLK_RATE_SHIFT		40

/* Hard limits, whatever the module parameters say. */
#define LCLK_MAX_RATE_PPT	1000000000LL	/* 1000 ppm */
#define LCLK_MAX_OFFSET_NS	(1LL << 62)	/* |offset| */
#define LCLK_MAX_BOUND_NS	(1LL << 52)	/* ~52 days */
#define LCLK_MAX_CPU_OFFSET_NS	1000000LL	/* |cpu_offset| <= 1 ms */
#define LCLK_MAX_DRIFT_PPB	1000000U	/* 1000 ppm */
#define LCLK_MAX_CORR_NS	(1LL << 52)	/* a correction's length */

/* struct lclk_info.caps */
#define LCLK_CAP_MMAP		(1U << 0)	/* read-only mmap page */
#define LCLK_CAP_PHC		(1U << 1)	/* registered as a PTP clock */
#define LCLK_CAP_CPU_OFFSET	(1U << 2)	/* per-CPU offsets */
#define LCLK_CAP_VMCLOCK	(1U << 3)	/* the hypervisor's vmclock page */

struct lclk_info {
	__u32 abi_version;	/* LCLK_ABI_VERSION */
	__u32 caps;		/* LCLK_CAP_* */
	__u32 index;		/* N of /dev/lclkN */
	__u32 ncpus;		/* entries in the per-CPU offset table */
	__s32 phc_index;	/* N of /dev/ptpN, -1 if none */
	__u32 mmap_size;	/* bytes to map at offset 0 */
	__s64 max_rate_ppt;	/* |rate| limit of this instance */
	__u32 max_drift_ppb;	/* default bound growth */
	/*
	 * With LCLK_CAP_VMCLOCK and a non-zero vmclock_size: the
	 * hypervisor's vmclock page (linux/vmclock-abi.h), read-only, is
	 * mmap()ed at offset vmclock_offset, vmclock_size bytes; readers of
	 * the page compare its disruption_marker with lclk_page's
	 * vmclock_marker. Zero where there is none (or it is not a whole
	 * page): a reader of the page then uses the ioctls while
	 * LCLK_PAGE_VMCLOCK is set.
	 */
	__u32 vmclock_offset;
	__u32 vmclock_size;
	__u32 rsv[7];
};

/* struct lclk_params.model_flags */
#define LCLK_MODEL_TAI		(1U << 0)	/* logical timescale is TAI */

/*
 * The model, the one list of its fields: the page publishes it and the
 * module keeps its own copy, both in the host's CLOCK_MONOTONIC with the
 * stored status; LCLK_IOC_GET_MODEL returns it in the caller's
 * CLOCK_MONOTONIC (which a time namespace may shift), the status as of now.
 */
struct lclk_params {
	__s64 t0_ns;		/* base time the offset is anchored at */
	__s64 offset_ns;	/* logical - base at t0 */
	__s64 rate_ppt;		/* logical runs faster by rate_ppt / 1e12 */
	__s64 rate_mult;	/* rate_ppt in 2^-LCLK_RATE_SHIFT ns per ns */
	__s64 bound0_ns;	/* error bound at last_update */
	__s64 last_update_ns;	/* base time of the last sync, 0 if never */
	__s64 holdover_ns;	/* SYNCED turns HOLDOVER this long after it */
	__s64 drift_mult;	/* max_drift in 2^-LCLK_RATE_SHIFT ns per ns */
	__u32 max_drift_ppb;	/* bound growth rate */
	__u32 status;		/* stored: UNSYNCED, SYNCED or HOLDOVER */
	__u32 model_flags;	/* LCLK_MODEL_* */
	__s16 tai_offset_s;	/* TAI - UTC in s, 0 if unknown */
	__u8 leap;		/* LCLK_LEAP_*: a leap second pending */
	__u8 rsv;
};

/* struct lclk_set_model.modes: which fields to take. */
#define LCLK_SET_OFFSET		(1U << 0)	/* offset_ns at t0_ns */
#define LCLK_SET_RATE		(1U << 1)	/* rate_ppt */
#define LCLK_SET_BOUND		(1U << 2)	/* a sync: bound0, last_update = now */
#define LCLK_SET_HOLDOVER	(1U << 3)	/* holdover_ns */
#define LCLK_SET_MAX_DRIFT	(1U << 4)	/* max_drift_ppb */
#define LCLK_SET_FLAGS		(1U << 5)	/* model_flags */
#define LCLK_SET_UNSYNC		(1U << 6)	/* back to UNSYNCED */
#define LCLK_SET_CORRECTION	(1U << 7)	/* corr_ppt for corr_ns; with SET_RATE */
#define LCLK_SET_LEAP		(1U << 8)	/* leap, leap_ns, tai_offset_s */
#define LCLK_SET_VMCLOCK	(1U << 9)	/* only if vmclock_marker is current */
#define LCLK_SET_ALL_MODES	0x3ffU

/* struct lclk_params.leap, lclk_set_model.leap: as NTP's leap indicator */
#define LCLK_LEAP_NONE		0	/* none pending; cancels one */
#define LCLK_LEAP_INSERT	1	/* the day's last minute has 61 s */
#define LCLK_LEAP_DELETE	2	/* ... 59 s */
#define LCLK_MAX_TAI_OFFSET_S	10000	/* |TAI - UTC| the ABI takes */

/* flags of set-model, step and cpu-offset: */
#define LCLK_ALLOW_BACKWARD	(1U << 0)	/* logical time may step back */
#define LCLK_ALL_FLAGS		0x1U

/*
 * Replace parts of the model atomically. The kernel re-anchors the model at
 * the current base time; unless LCLK_ALLOW_BACKWARD is given, a change that
 * would make logical time at that instant smaller than before fails with
 * ERANGE. A forward step is counted as a step, a backward one as both.
 * t0_ns == 0 means "now". Rate changes alone never step time.
 *
 * A correction (LCLK_SET_CORRECTION, which needs LCLK_SET_RATE) is a rate
 * with an end that the kernel enforces, as adjtime()'s remaining offset:
 * the clock runs at rate_ppt + corr_ppt for corr_ns of base time, then at
 * rate_ppt (the free-running rate) again, whether or not its setter is
 * still there to say so. It also ends as soon as the file it was set
 * through is released (its setter died, or closed it), and when any later
 * LCLK_SET_RATE without a correction (or the PTP clock's adjfine) sets the
 * rate. While it runs, the bound grows by |corr_ppt| on top of max_drift,
 * and at its end the growth falls back and bound0 keeps what it has grown
 * by: the bound never relies on the setter's plan or on the end coming
 * on time. GET_MODEL's rate_ppt is the rate of the moment, correction
 * included.
 *
 * A leap second (LCLK_SET_LEAP) is stepped as the kernel steps
 * CLOCK_REALTIME: an insertion steps logical time back 1 s when it
 * reaches leap_ns (the next UTC midnight), a deletion forward 1 s at
 * leap_ns (23:59:59). The kernel makes the step on time whether or not
 * its setter is still there, counts it as a (backward) step, and adds
 * 1 s to the bound from 1 s before leap_ns until the step is made, which
 * covers a step made late. tai_offset_s (TAI - UTC, 0 if unknown) goes
 * up by one at an insertion, down at a deletion. Refused (EINVAL) on a
 * TAI clock (LCLK_MODEL_TAI), for a leap_ns not after logical time now
 * or more than a day (86401 s) ahead of it (a leap is set on the day it
 * ends, as NTP's leap indicator), or for a leap_ns with LCLK_LEAP_NONE,
 * which cancels a pending leap. Once logical time has reached a leap's
 * instant, the step is the kernel's: a change of the leap is EBUSY.
 *
 * With a vmclock (LCLK_CAP_VMCLOCK), LCLK_SET_BOUND fails with EAGAIN
 * while the hypervisor's page cannot be read (its seq_count odd for
 * milliseconds): a bound whose disruption marker is not known could not
 * be withdrawn by a disruption. Readers then report DISRUPTED.
 *
 * A sync measures first and sets after: a snapshot restored or a migration
 * in between would make a bound measured before it look current. So a
 * setter on a VM with a vmclock reads the disruption marker
 * (LCLK_IOC_GET_DISRUPTION) before it takes its first sample, and sets with
 * LCLK_SET_VMCLOCK and that marker: the change is made only if the marker
 * is still that one, or refused whole with ESTALE (measure again).
 * LCLK_SET_VMCLOCK without a vmclock is EOPNOTSUPP; any other change
 * without LCLK_SET_VMCLOCK is made under the marker of its ioctl.
 *
 * The structure grows at its end: the kernel takes any size from
 * LCLK_SET_MODEL_SIZE_VER0 (before vmclock_marker) up, as clone3() does,
 * reading fields a caller's size lacks as zero, and refusing a caller's
 * fields it does not know unless they are zero (E2BIG). A size outside
 * that range is ENOTTY.
 * lclk(4) says what a leap does to a timestamp taken before it.
 */
struct lclk_set_model {
	__u32 modes;		/* LCLK_SET_* */
	__u32 flags;		/* LCLK_ALLOW_BACKWARD */
	__s64 t0_ns;		/* with LCLK_SET_OFFSET; 0 = now */
	__s64 offset_ns;	/* with LCLK_SET_OFFSET */
	__s64 rate_ppt;		/* with LCLK_SET_RATE */
	__s64 bound_ns;		/* with LCLK_SET_BOUND: bound at t0_ns */
	__s64 holdover_ns;	/* with LCLK_SET_HOLDOVER */
	__u32 max_drift_ppb;	/* with LCLK_SET_MAX_DRIFT */
	__u32 model_flags;	/* with LCLK_SET_FLAGS: LCLK_MODEL_* */
	__s64 corr_ppt;		/* with LCLK_SET_CORRECTION: != 0, on top of rate_ppt */
	__s64 corr_ns;		/* with LCLK_SET_CORRECTION: 1 .. LCLK_MAX_CORR_NS */
	__s64 leap_ns;		/* with LCLK_SET_LEAP: logical time of the step */
	__u32 leap;		/* with LCLK_SET_LEAP: LCLK_LEAP_* */
	__s32 tai_offset_s;	/* with LCLK_SET_LEAP: TAI - UTC, 0 = unknown */
	/* with LCLK_SET_VMCLOCK: the disruption marker when measuring began */
	__u64 vmclock_marker;
	__u64 rsv[3];
};

#define LCLK_SET_MODEL_SIZE_VER0	88	/* up to tai_offset_s */

/* Add delta_ns to the offset; delta_ns < 0 needs LCLK_ALLOW_BACKWARD. */
struct lclk_step {
	__s64 delta_ns;
	__u32 flags;		/* LCLK_ALLOW_BACKWARD */
	__u32 rsv[5];
};

/* Logical time computed in the kernel, on the CPU that ran the ioctl. */
struct lclk_time {
	__u32 flags;		/* in: must be zero */
	__u32 cpu;		/* out: CPU the time was read on */
	__s64 base_ns;		/* out: CLOCK_MONOTONIC the time is for */
	__s64 logical_ns;	/* out: logical(base_ns, cpu) */
	__s64 bound_ns;		/* out: bound(base_ns) */
	__u32 status;		/* out: LCLK_STATUS_* */
	__u32 rsv[5];
};

/* Per-CPU offset; lowering one needs LCLK_ALLOW_BACKWARD. */
struct lclk_cpu_offset {
	__u32 cpu;		/* in */
	__u32 flags;		/* in: LCLK_ALLOW_BACKWARD on set, 0 on get */
	__s64 offset_ns;	/* in on set, out on get */
	__u32 rsv[4];
};

/*
 * The hypervisor's vmclock disruption marker now (LCLK_CAP_VMCLOCK; else
 * EOPNOTSUPP), read under its seq_count; EAGAIN while the hypervisor
 * keeps the page mid-write. A setter's LCLK_SET_VMCLOCK gives it back.
 */
struct lclk_disruption {
	__u64 marker;		/* out */
	__u64 rsv[3];		/* out: zero */
};

struct lclk_stats {
	__u64 updates;		/* successful model or cpu-offset changes */
	__u64 steps;		/* updates that stepped logical time */
	__u64 backward_steps;	/* ... of them backwards */
	__u64 rejected;		/* change requests refused (any errno) */
	__u64 phc_adjustments;	/* changes made through the PTP clock */
	__u64 rsv[3];
};

#define LCLK_IOC_MAGIC		0xEC

#define LCLK_IOC_INFO		_IOR(LCLK_IOC_MAGIC, 0x01, struct lclk_info)
#define LCLK_IOC_GET_TIME	_IOWR(LCLK_IOC_MAGIC, 0x02, struct lclk_time)
#define LCLK_IOC_GET_MODEL	_IOR(LCLK_IOC_MAGIC, 0x03, struct lclk_params)
#define LCLK_IOC_SET_MODEL	_IOW(LCLK_IOC_MAGIC, 0x04, struct lclk_set_model)
#define LCLK_IOC_STEP		_IOW(LCLK_IOC_MAGIC, 0x05, struct lclk_step)
#define LCLK_IOC_GET_CPU_OFFSET	_IOWR(LCLK_IOC_MAGIC, 0x06, struct lclk_cpu_offset)
#define LCLK_IOC_SET_CPU_OFFSET	_IOW(LCLK_IOC_MAGIC, 0x07, struct lclk_cpu_offset)
#define LCLK_IOC_GET_STATS	_IOR(LCLK_IOC_MAGIC, 0x08, struct lclk_stats)
#define LCLK_IOC_GET_DISRUPTION	_IOR(LCLK_IOC_MAGIC, 0x09, struct lclk_disruption)

/*
 * The read-only mapping at offset 0 (lclk_info.mmap_size bytes, whole
 * pages). A writer makes seq odd, changes the fields, then makes it even;
 * a reader retries while seq is odd or changed (as the vDSO data page).
 *
 * The page is in the host's CLOCK_MONOTONIC, so a process whose
 * CLOCK_MONOTONIC a time namespace shifts cannot map it (EOPNOTSUPP). One
 * that inherited a mapping into such a namespace (mapped, unshare(), fork)
 * finds in its place a page that says LCLK_PAGE_REFUSED, with no model
 * (status UNSYNCED, no bound, seq 0 forever): it reads the ioctls instead.
 */
#define LCLK_PAGE_MAGIC		0x6c636c6bU	/* "lclk" */

/* struct lclk_page.flags */
#define LCLK_PAGE_CPU_OFFSETS	(1U << 0)	/* some cpu_offset_ns is non-zero */
#define LCLK_PAGE_REFUSED	(1U << 1)	/* not this process's: use the ioctls */
/*
 * There is a vmclock: a reading of the page whose status is SYNCED or
 * HOLDOVER is DISRUPTED, with the bound unknown, if the vmclock page's
 * disruption_marker (read under its seq_count) is not vmclock_marker,
 * its value as of the last sync. A reader that cannot read the vmclock
 * page (lclk_info.vmclock_size 0) uses the ioctls, which compare.
 * Always set with LCLK_PAGE_REFUSED, so that a reader that does not know
 * this flag (built before it) uses the ioctls too: REFUSED with VMCLOCK
 * means "read the page only if you compare the vmclock's marker".
 */
#define LCLK_PAGE_VMCLOCK	(1U << 2)

struct lclk_page {
	__u32 seq;
	__u32 magic;		/* LCLK_PAGE_MAGIC */
	__u32 abi_version;	/* LCLK_ABI_VERSION */
	__u32 ncpus;		/* entries in cpu_offset_ns[] */
	__u32 flags;		/* LCLK_PAGE_* */
	__u32 rsv0;
	struct lclk_params params;
	__u64 vmclock_marker;	/* with LCLK_PAGE_VMCLOCK: as of the last sync */
	__u64 rsv[5];
	__s64 cpu_offset_ns[];	/* indexed by CPU number */
};

#endif /* _UAPI_LINUX_LCLK_H */
