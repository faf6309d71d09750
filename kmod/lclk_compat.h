/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the kernel interfaces that changed between the kernels lclk is
 * built for (5.10 to 6.12 in the test bed, and the distributions' kernels
 * that backport newer interfaces into older versions), each behind one
 * helper, so that no other file of the module needs an #if. A helper is
 * named after what it does, not after the kernel that changed it; the
 * comment says which mainline kernel did.
 *
 * Each helper is chosen by what the kernel built against has, as tested by
 * compiling (lclk_conftest.sh, run by Kbuild: LCLK_HAVE_* in the generated
 * lclk_conftest.h), not by its version: RHEL 9.4's 5.14 has the 6.4
 * class_create(). Only where a feature was not tested (LCLK_CONFTEST=0, or
 * the tests could not compile at all) does LINUX_VERSION_CODE decide.
 */
#ifndef _LCLK_COMPAT_H
#define _LCLK_COMPAT_H

#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/kconfig.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pm.h>
#include <linux/version.h>

#ifdef LCLK_CONFTEST
#include "lclk_conftest.h"
#endif

/* The fallbacks: the mainline kernel that brought each feature. */
#ifndef LCLK_HAVE_VM_FLAGS_SET
#define LCLK_HAVE_VM_FLAGS_SET (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0))
#endif
#ifndef LCLK_HAVE_CLASS_CREATE_ONE_ARG
#define LCLK_HAVE_CLASS_CREATE_ONE_ARG (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0))
#endif
#ifndef LCLK_HAVE_CONST_DEVNODE
#define LCLK_HAVE_CONST_DEVNODE (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0))
#endif
#ifndef LCLK_HAVE_HRTIMER_SETUP
#define LCLK_HAVE_HRTIMER_SETUP (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0))
#endif
#ifndef LCLK_HAVE_PM_SLEEP_PTR
#define LCLK_HAVE_PM_SLEEP_PTR (LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0))
#endif
#ifndef LCLK_HAVE_VMCLOCK_ABI
#define LCLK_HAVE_VMCLOCK_ABI (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0))
#endif
#ifndef LCLK_HAVE_DEFINE_SIMPLE_DEV_PM_OPS
#define LCLK_HAVE_DEFINE_SIMPLE_DEV_PM_OPS (LINUX_VERSION_CODE >= KERNEL_VERSION(5, 17, 0))
#endif

/* 6.3 made vma->vm_flags read-only behind vm_flags_clear() and friends. */
static inline void lclk_vma_set_flags(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#if LCLK_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void lclk_vma_clear_flags(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if LCLK_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 6.4 dropped class_create()'s owner: a class no longer pins a module. */
static inline struct class *lclk_class_create(const char *name)
{
#if LCLK_HAVE_CLASS_CREATE_ONE_ARG
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/*
 * 6.2 made the device passed to a class's devnode() const; the callback
 * is declared with LCLK_DEVNODE_DEVICE so that it matches either.
 */
#if LCLK_HAVE_CONST_DEVNODE
#define LCLK_DEVNODE_DEVICE const struct device
#else
#define LCLK_DEVNODE_DEVICE struct device
#endif

/* 6.13 added hrtimer_setup(), which sets the callback with the rest. */
static inline void lclk_hrtimer_setup(struct hrtimer *t,
				      enum hrtimer_restart (*fn)(struct hrtimer *),
				      clockid_t clock, enum hrtimer_mode mode)
{
#if LCLK_HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/*
 * 5.17's pm_sleep_ptr(): the pointer, or NULL without CONFIG_PM_SLEEP,
 * compiled either way, so that the callbacks it names need neither an
 * #ifdef nor __maybe_unused.
 */
#if LCLK_HAVE_PM_SLEEP_PTR
#define lclk_pm_sleep_ptr(ptr) pm_sleep_ptr(ptr)
#else
#define lclk_pm_sleep_ptr(ptr) (IS_ENABLED(CONFIG_PM_SLEEP) ? (ptr) : NULL)
#endif

/*
 * 5.17's DEFINE_SIMPLE_DEV_PM_OPS(): the system sleep callbacks of a
 * dev_pm_ops, through pm_sleep_ptr(); before it, the same by hand.
 */
#if LCLK_HAVE_DEFINE_SIMPLE_DEV_PM_OPS
#define LCLK_DEFINE_SIMPLE_DEV_PM_OPS(name, suspend_fn, resume_fn) \
	DEFINE_SIMPLE_DEV_PM_OPS(name, suspend_fn, resume_fn)
#else
#define LCLK_DEFINE_SIMPLE_DEV_PM_OPS(name, suspend_fn, resume_fn) \
	const struct dev_pm_ops name = {			   \
		.suspend = lclk_pm_sleep_ptr(suspend_fn),	   \
		.resume = lclk_pm_sleep_ptr(resume_fn),		   \
		.freeze = lclk_pm_sleep_ptr(suspend_fn),	   \
		.thaw = lclk_pm_sleep_ptr(resume_fn),		   \
		.poweroff = lclk_pm_sleep_ptr(suspend_fn),	   \
		.restore = lclk_pm_sleep_ptr(resume_fn),	   \
	}
#endif

#endif /* _LCLK_COMPAT_H */
