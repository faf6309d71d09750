/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: what the pieces of the module share.
 *
 * One struct lclk_dev per /dev/lclkN, freed with its struct device: an
 * open file holds the device through the cdev (cdev_device_add()), so the
 * instance and its page outlive their removal until the last close. The writer's copy of the model
 * (struct lclk_state) and the read-only page that userspace maps are both
 * changed only under lclk_dev.lock, a raw spinlock taken with interrupts
 * off: readers of the page spin while its sequence count is odd, so a
 * writer must never be preempted or interrupted half way. Readers, in the
 * kernel too, read the page under its sequence count and never take the
 * lock.
 */
#ifndef _LCLK_DEV_H
#define _LCLK_DEV_H

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/notifier.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/spinlock.h>
#include <linux/time_namespace.h>
#include <linux/types.h>

#include "lclk_model.h"
#include "lclk_page.h"
#include "lclk_state.h"

struct lclk_dev {
	unsigned int index;
	struct cdev cdev;
	struct device dev;

	raw_spinlock_t lock;		/* serialises writers */
	struct lclk_state state;	/* under lock */
	unsigned int nonzero_cpu_offsets; /* under lock */

	struct lclk_page *page;		/* vmalloc_user(), mapped read-only */
	struct lclk_page *refused;	/* mapped instead where page is wrong */
	size_t page_size;		/* of each */

	s64 max_rate_ppt;		/* limit on |rate| for this instance */
	u32 default_drift_ppb;		/* module parameter at load */

	/* lclk_slew.c: the system clock's slew, as the timekeeper last said */
	struct notifier_block slew_nb;
	struct irq_work slew_work;	/* a widening the notifier deferred */
	u32 slew_mono_mult, slew_raw_mult;	/* the notifier's own */
	s64 slew;			/* lclk_change.slew; READ_ONCE() */

	struct ptp_clock_info ptp_info;
	struct ptp_clock *ptp;		/* NULL if registration failed */

	struct lclk_counters ctr;

	struct hrtimer corr_timer;	/* ends a correction: lclk_corr.c */
	/* lclk_leap.c: a leap second's widening and step */
	struct hrtimer leap_near_timer;
	struct hrtimer leap_due_timer;
};

/*
 * The caller's CLOCK_MONOTONIC minus the host's: non-zero in a time
 * namespace with a monotonic offset. The page and the model are in the
 * host's CLOCK_MONOTONIC; every base time an ioctl or read() takes or
 * gives is in the caller's, so it is translated by this much.
 */
static inline s64 lclk_caller_mono_shift(void)
{
#ifdef CONFIG_TIME_NS
	/*
	 * The offset timens_add_monotonic() adds, read as it reads it, in
	 * plain arithmetic: this is on GET_TIME's path. No overflow check is
	 * needed, as timespec64_to_ns() would make: the kernel takes an
	 * offset only normalised, with tv_sec >= -KTIME_SEC_MAX, and only if
	 * the namespace's CLOCK_MONOTONIC (>= 0) plus the offset stays within
	 * KTIME_SEC_MAX / 2 (proc_timens_set_offset()), so the offset is
	 * within +-KTIME_MAX in ns.
	 */
	const struct timespec64 *off =
		&current->nsproxy->time_ns->offsets.monotonic;

	return off->tv_sec * NSEC_PER_SEC + off->tv_nsec;
#else
	return 0;
#endif
}

/* lclk_clock.c: the model and the writer of its page */
int lclk_clock_init(struct lclk_dev *ld, u32 drift_ppb, s64 holdover_ns);
void lclk_clock_free(struct lclk_dev *ld);
int lclk_apply(struct lclk_dev *ld, const struct lclk_change *c);
int lclk_set_cpu_offset(struct lclk_dev *ld, unsigned int cpu, s64 offset_ns,
			u32 flags);
s64 lclk_get_cpu_offset(struct lclk_dev *ld, unsigned int cpu);
void lclk_snapshot(struct lclk_dev *ld, struct lclk_params *m, s64 *now,
		   bool *disrupted);
void lclk_resume(struct lclk_dev *ld);
int lclk_widen_for_slew(struct lclk_dev *ld, s64 slew, bool from_timekeeper);

/* lclk_slew.c */
int lclk_slew_start(struct lclk_dev *ld);
void lclk_slew_stop(struct lclk_dev *ld);

/* lclk_corr.c: the end of a correction */
void lclk_corr_init(struct lclk_dev *ld);
void lclk_corr_fini(struct lclk_dev *ld);
void lclk_corr_arm(struct lclk_dev *ld, s64 old_end_ns);
void lclk_corr_release(struct lclk_dev *ld, struct file *file);

/* lclk_leap.c: a leap second, stepped on time */
void lclk_leap_init(struct lclk_dev *ld);
void lclk_leap_fini(struct lclk_dev *ld);
void lclk_leap_arm(struct lclk_dev *ld);

/* lclk_fops.c */
extern const struct file_operations lclk_fops;
struct lclk_dev *lclk_from_file(struct file *file);

/* lclk_ioctl.c */
long lclk_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* lclk_text.c */
int lclk_text_show(struct seq_file *m, void *unused);

/* lclk_ptp.c */
void lclk_ptp_register(struct lclk_dev *ld);
void lclk_ptp_unregister(struct lclk_dev *ld);
int lclk_phc_index(struct lclk_dev *ld);

#endif /* _LCLK_DEV_H */
