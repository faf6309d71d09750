/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the hypervisor's vmclock page (lclk_vmclock.c), where there is one.
 *
 * A VM restored from a snapshot or migrated to another host finds its
 * clocks moved by however long it was away, and a bound measured before
 * that says nothing of the time after it. The vmclock device (QEMU's
 * -device vmclock, AWS's; Linux 6.13's ptp_vmclock drives it) is a page
 * that the hypervisor changes at such a moment: its disruption_marker
 * takes a new value. lclk remembers the marker as of each sync, on the
 * page (lclk_page.vmclock_marker), and every reader that finds it
 * changed reports LCLK_STATUS_DISRUPTED with no bound until the next sync.
 *
 * The layout is the vmclock ABI's (include/uapi/linux/vmclock-abi.h of
 * 6.13+), the part of it lclk reads, copied so that the module builds on
 * the kernels before 6.13 too: a guest's kernel may be older than its
 * hypervisor. Where the kernel has the header, lclk_vmclock.c checks the
 * copy against it (LCLK_HAVE_VMCLOCK_ABI, lclk_conftest.sh).
 */
#ifndef _LCLK_VMCLOCK_H
#define _LCLK_VMCLOCK_H

#include <linux/types.h>

#define LCLK_VMCLOCK_MAGIC	0x4b4c4356	/* "VCLK" */

struct lclk_vmclock_abi {
	__le32 magic;
	__le32 size;
	__le16 version;
	__u8 counter_id;
	__u8 time_type;
	__le32 seq_count;		/* odd while the hypervisor writes */
	__le64 disruption_marker;
};

/*
 * The vmclock page as lclk found it at load: NULL abi if none. Set once by
 * lclk_vmclock_init() before any instance exists, read-only afterwards.
 */
struct lclk_vmclock {
	const struct lclk_vmclock_abi *abi;	/* memremap()ed, read-only */
	phys_addr_t phys;			/* page-aligned, or mmap is refused */
	size_t size;				/* of the region */
	bool mappable;				/* one whole page: userspace may map it */
};

extern struct lclk_vmclock lclk_vmclock;

/*
 * The page offset (mmap()'s, in pages) of the vmclock page in a mapping of
 * /dev/lclkN: past any instance's own page (at most 8 pages of 4 KiB for
 * 8192 CPUs' offsets). lclk_info.vmclock_offset advertises it in bytes.
 */
#define LCLK_VMCLOCK_PGOFF	0x1000UL

void lclk_vmclock_init(void);
void lclk_vmclock_fini(void);

/*
 * How long a reader waits for the hypervisor to finish writing its page
 * (seq_count odd): pauses of the CPU, a few ms. The readers run with
 * preemption off and a sync with interrupts off: a hypervisor that stalls
 * mid-write must not hang them.
 */
#define LCLK_VMCLOCK_SPINS	65536U

/*
 * The disruption marker now, read under the page's seq_count as
 * ptp_vmclock reads it. 0, or -EBUSY when seq_count stayed odd (or kept
 * changing) for LCLK_VMCLOCK_SPINS tries: then there is no marker, and
 * no proof that the clocks were not disrupted. Only where
 * lclk_vmclock.abi is set.
 */
static inline int lclk_vmclock_marker(const struct lclk_vmclock_abi *abi,
				      u64 *marker)
{
	unsigned int spins;
	u32 seq;

	for (spins = 0; spins < LCLK_VMCLOCK_SPINS; spins++) {
		seq = le32_to_cpu(READ_ONCE(abi->seq_count));
		if (seq & 1) {
			cpu_relax();
			continue;
		}
		virt_rmb();	/* seq_count before the marker */
		*marker = le64_to_cpu(READ_ONCE(abi->disruption_marker));
		virt_rmb();	/* the marker before seq_count again */
		if (le32_to_cpu(READ_ONCE(abi->seq_count)) == seq)
			return 0;
	}
	return -EBUSY;
}

#endif /* _LCLK_VMCLOCK_H */
