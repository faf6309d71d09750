// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the ioctls of /dev/lclkN.
 *
 * Each command number encodes its structure's size, so a caller built
 * against another layout gets -ENOTTY rather than a misread structure;
 * SET_MODEL's, which grows, is read at the caller's size (uapi lclk.h).
 * Every input is checked: unknown bits in modes and flags, non-zero
 * reserved fields and out-of-range values give -EINVAL, so that new fields
 * can be given a meaning later without new numbers. Every output structure
 * is zeroed before it is filled, so no padding or stale kernel memory
 * reaches userspace. Reading needs no privilege; changing anything needs
 * CAP_SYS_TIME, checked at the time of the call, and every refused change
 * is counted in the stats.
 */
#include <linux/capability.h>
#include <linux/kernel.h>
#include <linux/cpumask.h>
#include <linux/nospec.h>
#include <linux/overflow.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "lclk_dev.h"

#define lclk_rsv_zero(rsv)	(!memchr_inv((rsv), 0, sizeof(rsv)))

static long lclk_ioc_info(struct lclk_dev *ld, struct lclk_info __user *u)
{
	struct lclk_info info;

	memset(&info, 0, sizeof(info));
	info.abi_version = LCLK_ABI_VERSION;
	info.caps = LCLK_CAP_MMAP | LCLK_CAP_CPU_OFFSET;
	if (ld->ptp)
		info.caps |= LCLK_CAP_PHC;
	info.index = ld->index;
	info.ncpus = nr_cpu_ids;
	info.phc_index = lclk_phc_index(ld);
	info.mmap_size = ld->page_size;
	info.max_rate_ppt = ld->max_rate_ppt;
	info.max_drift_ppb = ld->default_drift_ppb;
	if (lclk_vmclock.abi) {
		info.caps |= LCLK_CAP_VMCLOCK;
		if (lclk_vmclock.mappable) {
			info.vmclock_offset = LCLK_VMCLOCK_PGOFF << PAGE_SHIFT;
			info.vmclock_size = PAGE_SIZE;
		}
	}
	return copy_to_user(u, &info, sizeof(info)) ? -EFAULT : 0;
}

/*
 * The time on the calling CPU, with preemption off so that the CPU whose
 * offset is applied is the one the base clock was read on.
 *
 * GET_TIME is the one read path inside a shifted time namespace, so it
 * touches userspace with single loads and stores inside one user-access
 * section each way: a copy of the whole structure through a zeroed one on
 * the stack costs a string operation each way (and the stack's own zeroing
 * on kernels built with INIT_STACK_ALL_ZERO), more than the clock's
 * evaluation. It writes only the output fields. flags and rsv were read as
 * zero and are left as they are: nothing of the kernel's can be in them,
 * and a caller that changes them meanwhile gets its own bytes back.
 */
static long lclk_ioc_get_time(struct lclk_dev *ld, struct lclk_time __user *u)
{
	/* rsv[1..4] as two aligned 64-bit words: 6 accesses fewer a call */
	u64 __user *rsv_1to4 = (u64 __user *)&u->rsv[1];
	struct lclk_reading r;
	u64 rsv12, rsv34;
	u32 flags, rsv0;
	s64 shift;
	int cpu;

	BUILD_BUG_ON(ARRAY_SIZE(u->rsv) != 5 ||
		     offsetof(struct lclk_time, rsv[1]) % sizeof(u64) ||
		     offsetofend(struct lclk_time, rsv) != sizeof(*u));
	if (!user_read_access_begin(u, sizeof(*u)))
		return -EFAULT;
	unsafe_get_user(flags, &u->flags, efault_read);
	unsafe_get_user(rsv0, &u->rsv[0], efault_read);
	unsafe_get_user(rsv12, &rsv_1to4[0], efault_read);
	unsafe_get_user(rsv34, &rsv_1to4[1], efault_read);
	user_read_access_end();
	if (flags | rsv0 | rsv12 | rsv34)
		return -EINVAL;	/* flags or reserved fields set */

	preempt_disable();
	cpu = smp_processor_id();
	lclk_page_read(ld->page, cpu, NULL, &r);
	preempt_enable();
	shift = lclk_caller_mono_shift();

	/* the output fields: 4 + 3 * 8 + 4 bytes from cpu on, no padding */
	BUILD_BUG_ON(offsetof(struct lclk_time, rsv) -
		     offsetof(struct lclk_time, cpu) != 32);
	if (!user_write_access_begin(&u->cpu, 32))
		return -EFAULT;
	unsafe_put_user(cpu, &u->cpu, efault_write);
	unsafe_put_user(r.base_ns + shift, &u->base_ns, efault_write);
	unsafe_put_user(r.logical_ns, &u->logical_ns, efault_write);
	unsafe_put_user(r.bound_ns, &u->bound_ns, efault_write);
	unsafe_put_user(r.status, &u->status, efault_write);
	user_write_access_end();
	return 0;

efault_read:
	user_read_access_end();
	return -EFAULT;
efault_write:
	user_write_access_end();
	return -EFAULT;
}

/*
 * GET_MODEL's view of the model at base time now: in the caller's
 * CLOCK_MONOTONIC (shift), the status as of now.
 */
static void lclk_params_for_caller(const struct lclk_params *p, s64 now,
				   s64 shift, struct lclk_params *m)
{
	*m = *p;
	m->t0_ns += shift;
	/* logical = base + offset: the same line in the caller's time */
	m->offset_ns -= shift;
	if (m->last_update_ns)
		m->last_update_ns += shift;
	m->status = lclk_status(now, p->status, p->last_update_ns,
				p->holdover_ns);
	m->rsv = 0;	/* zeroed on output, whatever the page holds */
}

static long lclk_ioc_get_model(struct lclk_dev *ld, struct lclk_params __user *u)
{
	struct lclk_params p, m;
	bool disrupted;
	s64 now;

	lclk_snapshot(ld, &p, &now, &disrupted);
	lclk_params_for_caller(&p, now, lclk_caller_mono_shift(), &m);
	if (disrupted && m.status != LCLK_STATUS_UNSYNCED)
		m.status = LCLK_STATUS_DISRUPTED;
	return copy_to_user(u, &m, sizeof(m)) ? -EFAULT : 0;
}

/* Check a CPU number from userspace and clamp it against speculation. */
static int lclk_user_cpu(u32 cpu, unsigned int *out)
{
	if (cpu >= nr_cpu_ids)
		return -EINVAL;
	*out = array_index_nospec(cpu, nr_cpu_ids);
	return 0;
}

static long lclk_ioc_get_cpu_offset(struct lclk_dev *ld,
				    struct lclk_cpu_offset __user *u)
{
	struct lclk_cpu_offset co;
	unsigned int cpu;
	int err;

	if (copy_from_user(&co, u, sizeof(co)))
		return -EFAULT;
	if (co.flags || !lclk_rsv_zero(co.rsv))
		return -EINVAL;
	err = lclk_user_cpu(co.cpu, &cpu);
	if (err)
		return err;

	memset(&co, 0, sizeof(co));
	co.cpu = cpu;
	co.offset_ns = lclk_get_cpu_offset(ld, cpu);
	return copy_to_user(u, &co, sizeof(co)) ? -EFAULT : 0;
}

static long lclk_ioc_get_stats(struct lclk_dev *ld, struct lclk_stats __user *u)
{
	struct lclk_stats s;

	memset(&s, 0, sizeof(s));
	s.updates = atomic64_read(&ld->ctr.updates);
	s.steps = atomic64_read(&ld->ctr.steps);
	s.backward_steps = atomic64_read(&ld->ctr.backward_steps);
	s.rejected = atomic64_read(&ld->ctr.rejected);
	s.phc_adjustments = atomic64_read(&ld->ctr.phc_adjustments);
	return copy_to_user(u, &s, sizeof(s)) ? -EFAULT : 0;
}

static long lclk_ioc_get_disruption(struct lclk_disruption __user *u)
{
	struct lclk_disruption d;

	if (!lclk_vmclock.abi)
		return -EOPNOTSUPP;
	memset(&d, 0, sizeof(d));
	if (lclk_vmclock_marker(lclk_vmclock.abi, &d.marker))
		return -EAGAIN;
	return copy_to_user(u, &d, sizeof(d)) ? -EFAULT : 0;
}

/*
 * SET_MODEL's command at any size it takes (uapi lclk.h): from its first
 * version's up; what lies past the kernel's structure must be zero.
 */
static bool lclk_is_set_model(unsigned int cmd)
{
	return _IOC_TYPE(cmd) == LCLK_IOC_MAGIC &&
	       _IOC_NR(cmd) == _IOC_NR(LCLK_IOC_SET_MODEL) &&
	       _IOC_DIR(cmd) == _IOC_WRITE &&
	       _IOC_SIZE(cmd) >= LCLK_SET_MODEL_SIZE_VER0;
}

/*
 * file: the one a correction belongs to, and ends with (lclk_corr.c);
 * usize: the caller's size of the structure.
 */
static long lclk_ioc_set_model(struct lclk_dev *ld, struct file *file,
			       const struct lclk_set_model __user *u,
			       size_t usize)
{
	struct lclk_change c;
	struct lclk_set_model sm;
	s64 shift;
	int err;

	BUILD_BUG_ON(offsetof(struct lclk_set_model, vmclock_marker) !=
		     LCLK_SET_MODEL_SIZE_VER0);
	err = copy_struct_from_user(&sm, sizeof(sm), u, usize);
	if (err)
		return err;
	if (!sm.modes || (sm.modes & ~LCLK_SET_ALL_MODES) ||
	    !lclk_rsv_zero(sm.rsv))
		return -EINVAL;

	memset(&c, 0, sizeof(c));
	c.modes = sm.modes;
	c.flags = sm.flags;
	/* t0 and offset come in the caller's CLOCK_MONOTONIC */
	shift = lclk_caller_mono_shift();
	c.t0_ns = sm.t0_ns ? sm.t0_ns - shift : 0;
	c.offset_ns = sm.offset_ns;
	if ((sm.modes & LCLK_SET_OFFSET) &&
	    check_add_overflow(sm.offset_ns, shift, &c.offset_ns))
		return -EINVAL;
	c.rate_ppt = sm.rate_ppt;
	c.bound_ns = sm.bound_ns;
	c.holdover_ns = sm.holdover_ns;
	c.max_drift_ppb = sm.max_drift_ppb;
	c.model_flags = sm.model_flags;
	c.corr_ppt = sm.corr_ppt;
	c.corr_ns = sm.corr_ns;
	c.owner = file;
	c.leap = sm.leap;
	c.leap_ns = sm.leap_ns;
	c.tai_offset_s = sm.tai_offset_s;
	c.vmclock_marker = sm.vmclock_marker;
	return lclk_apply(ld, &c);
}

static long lclk_ioc_step(struct lclk_dev *ld, const struct lclk_step __user *u)
{
	struct lclk_change c;
	struct lclk_step st;

	if (copy_from_user(&st, u, sizeof(st)))
		return -EFAULT;
	if (!lclk_rsv_zero(st.rsv))
		return -EINVAL;

	memset(&c, 0, sizeof(c));
	c.modes = LCLK_CHANGE_STEP;
	c.flags = st.flags;
	c.step_ns = st.delta_ns;
	return lclk_apply(ld, &c);
}

static long lclk_ioc_set_cpu_offset(struct lclk_dev *ld,
				    const struct lclk_cpu_offset __user *u)
{
	struct lclk_cpu_offset co;
	unsigned int cpu;
	int err;

	if (copy_from_user(&co, u, sizeof(co)))
		return -EFAULT;
	if (!lclk_rsv_zero(co.rsv))
		return -EINVAL;
	err = lclk_user_cpu(co.cpu, &cpu);
	if (err)
		return err;
	return lclk_set_cpu_offset(ld, cpu, co.offset_ns, co.flags);
}

static long lclk_ioc_change(struct lclk_dev *ld, struct file *file,
			    unsigned int cmd, void __user *u)
{
	if (!capable(CAP_SYS_TIME))
		return -EPERM;

	if (lclk_is_set_model(cmd))
		return lclk_ioc_set_model(ld, file, u, _IOC_SIZE(cmd));
	switch (cmd) {
	case LCLK_IOC_STEP:
		return lclk_ioc_step(ld, u);
	case LCLK_IOC_SET_CPU_OFFSET:
		return lclk_ioc_set_cpu_offset(ld, u);
	}
	return -ENOTTY;
}

long lclk_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct lclk_dev *ld = lclk_from_file(file);
	void __user *u = (void __user *)arg;
	long err;

	switch (cmd) {
	case LCLK_IOC_INFO:
		return lclk_ioc_info(ld, u);
	case LCLK_IOC_GET_TIME:
		return lclk_ioc_get_time(ld, u);
	case LCLK_IOC_GET_MODEL:
		return lclk_ioc_get_model(ld, u);
	case LCLK_IOC_GET_CPU_OFFSET:
		return lclk_ioc_get_cpu_offset(ld, u);
	case LCLK_IOC_GET_STATS:
		return lclk_ioc_get_stats(ld, u);
	case LCLK_IOC_GET_DISRUPTION:
		return lclk_ioc_get_disruption(u);
	case LCLK_IOC_STEP:
	case LCLK_IOC_SET_CPU_OFFSET:
		break;
	default:
		if (!lclk_is_set_model(cmd))
			return -ENOTTY;
	}
	err = lclk_ioc_change(ld, file, cmd, u);
	if (err)
		atomic64_inc(&ld->ctr.rejected);
	return err;
}
