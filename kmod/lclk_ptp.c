// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: each instance as a PTP hardware clock, so that linuxptp (phc_ctl,
 * phc2sys) and chrony's PHC refclock can read and steer the logical clock
 * as they would a NIC's clock.
 *
 * The PTP clock is the instance's logical clock without per-CPU offsets: a
 * device clock whose reading must not depend on the CPU that happens to
 * run the caller. settime and adjtime may step backwards (the PTP API has
 * no way to ask first); such steps are counted like any other.
 *
 * A change through the PTP clock steers the same clock as the lclk
 * ioctls, so it takes the same privilege, CAP_SYS_TIME, on top of the PTP
 * core's check that /dev/ptpN is open for writing: a device node handed to
 * a group or into a container must not steer the clock. A step says
 * nothing about how right the new time is, so it widens the bound by its
 * size: the reference that was within the bound before the step is
 * within bound + |step| after it. A new rate (phc_ctl freq, phc2sys) says
 * as little: the bound grows by the change of rate until the next sync
 * (lclk_widen_rate()).
 */
#include <linux/capability.h>
#include <linux/math64.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/time64.h>

#include "lclk_dev.h"

static struct lclk_dev *lclk_of(struct ptp_clock_info *info)
{
	return container_of(info, struct lclk_dev, ptp_info);
}

static int lclk_ptp_change(struct lclk_dev *ld, struct lclk_change *c)
{
	int err;

	/* The PTP core calls in the context of the caller's system call. */
	if (!capable(CAP_SYS_TIME)) {
		atomic64_inc(&ld->ctr.rejected);
		return -EPERM;
	}
	c->flags = LCLK_ALLOW_BACKWARD;
	err = lclk_apply(ld, c);
	if (err)
		atomic64_inc(&ld->ctr.rejected);
	else
		atomic64_inc(&ld->ctr.phc_adjustments);
	return err;
}

static int lclk_ptp_gettimex64(struct ptp_clock_info *info,
			       struct timespec64 *ts,
			       struct ptp_system_timestamp *sts)
{
	struct lclk_reading r;

	lclk_page_read(lclk_of(info)->page, -1, sts, &r);
	*ts = ns_to_timespec64(r.logical_ns);
	return 0;
}

static int lclk_ptp_settime64(struct ptp_clock_info *info,
			      const struct timespec64 *ts)
{
	struct lclk_change c;

	lclk_phc_settime(timespec64_to_ns(ts), &c);
	return lclk_ptp_change(lclk_of(info), &c);
}

static int lclk_ptp_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct lclk_change c;

	lclk_phc_adjtime(delta, &c);
	return lclk_ptp_change(lclk_of(info), &c);
}

/* The rate, clamped to the instance's limit: lclk_phc_adjfine(). */
static int lclk_ptp_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct lclk_dev *ld = lclk_of(info);
	struct lclk_change c;

	lclk_phc_adjfine(scaled_ppm, ld->max_rate_ppt, &c);
	return lclk_ptp_change(ld, &c);
}

/* No pins, alarms or PPS; the core calls this for PTP_ENABLE_PPS anyway. */
static int lclk_ptp_enable(struct ptp_clock_info *info,
			   struct ptp_clock_request *rq, int on)
{
	return -EOPNOTSUPP;
}

void lclk_ptp_register(struct lclk_dev *ld)
{
	struct ptp_clock_info *info = &ld->ptp_info;
	struct ptp_clock *ptp;

	info->owner = THIS_MODULE;
	snprintf(info->name, sizeof(info->name), "lclk%u", ld->index);
	info->max_adj = div_s64(ld->max_rate_ppt, 1000);
	info->gettimex64 = lclk_ptp_gettimex64;
	info->settime64 = lclk_ptp_settime64;
	info->adjtime = lclk_ptp_adjtime;
	info->adjfine = lclk_ptp_adjfine;
	info->enable = lclk_ptp_enable;

	ptp = ptp_clock_register(info, &ld->dev);
	if (IS_ERR_OR_NULL(ptp)) {
		dev_notice(&ld->dev, "no PTP clock (%d), /dev/lclk%u only\n",
			   PTR_ERR_OR_ZERO(ptp), ld->index);
		return;
	}
	ld->ptp = ptp;
}

void lclk_ptp_unregister(struct lclk_dev *ld)
{
	if (ld->ptp)
		ptp_clock_unregister(ld->ptp);
	ld->ptp = NULL;
}

int lclk_phc_index(struct lclk_dev *ld)
{
	return ld->ptp ? ptp_clock_index(ld->ptp) : -1;
}
