/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclk: the kernel interfaces that changed between the kernels lclk is
 * built and tested on (tests/vm/kernels: 5.10 to 6.12), each behind one
 * helper chosen by LINUX_VERSION_CODE, so that no other file of the module
 * needs an #if. A helper is named after what it does, not after the
 * kernel that changed it; the comment says which kernel did.
 */
#ifndef _LCLK_COMPAT_H
#define _LCLK_COMPAT_H

#include <linux/device.h>
#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/version.h>

/* 6.3 made vma->vm_flags read-only behind vm_flags_clear() and friends. */
static inline void lclk_vma_clear_flags(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 6.4 dropped class_create()'s owner: a class no longer pins a module. */
static inline struct class *lclk_class_create(const char *name)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/*
 * 6.2 made the device passed to a class's devnode() const; the callback
 * is declared with LCLK_DEVNODE_DEVICE so that it matches either.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define LCLK_DEVNODE_DEVICE const struct device
#else
#define LCLK_DEVNODE_DEVICE struct device
#endif

/* 6.13 added hrtimer_setup(), which sets the callback with the rest. */
static inline void lclk_hrtimer_setup(struct hrtimer *t,
				      enum hrtimer_restart (*fn)(struct hrtimer *),
				      clockid_t clock, enum hrtimer_mode mode)
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

#endif /* _LCLK_COMPAT_H */
