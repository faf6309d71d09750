// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: module parameters, and creation and removal of the instances.
 *
 * Each instance is a character device /dev/lclkN (class "lclk") and a PTP
 * clock /dev/ptpM. Open files and mappings of /dev/lclkN pin the module
 * (the file operations' owner, and a mapping holds its file), so the exit
 * path never races with a user of an instance. Open /dev/ptpM files do not
 * pin it: the PTP core turns them into zombies on unregistration and never
 * calls into the instance again.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/pm.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <linux/time64.h>

#include "lclk_compat.h"
#include "lclk_dev.h"
#include "lclk_vmclock.h"

#define LCLK_MAX_INSTANCES	64

static unsigned int instances = 1;
module_param(instances, uint, 0444);
MODULE_PARM_DESC(instances, "Number of /dev/lclkN, 1 to "
		 __stringify(LCLK_MAX_INSTANCES) " (default 1)");

static unsigned int max_rate_ppb = 500000;
module_param(max_rate_ppb, uint, 0444);
MODULE_PARM_DESC(max_rate_ppb,
		 "Limit on |rate| in ppb, at most 1000000 (default 500000 = 500 ppm)");

/*
 * 50 ppm is what ClockBound recommends for chrony's maxclockerror: a
 * conservative limit on how fast an undisciplined oscillator wanders.
 */
static unsigned int max_drift_ppb = 50000;
module_param(max_drift_ppb, uint, 0444);
MODULE_PARM_DESC(max_drift_ppb,
		 "Default growth of the error bound in ppb, at most 1000000 (default 50000 = 50 ppm)");

static unsigned int holdover_s = 60;
module_param(holdover_s, uint, 0444);
MODULE_PARM_DESC(holdover_s,
		 "Default seconds after the last update at which SYNCED turns HOLDOVER (default 60)");

static struct class *lclk_class;
static dev_t lclk_devt;
static struct lclk_dev *lclk_devs[LCLK_MAX_INSTANCES];
static unsigned int lclk_ndevs;

/*
 * Anyone may read the clock; changing it takes CAP_SYS_TIME, checked per
 * ioctl, so the node can be world-readable without a udev rule.
 */
static char *lclk_devnode(LCLK_DEVNODE_DEVICE *dev, umode_t *mode)
{
	if (mode)
		*mode = 0644;
	return NULL;
}

/*
 * Every device of the class is resumed after timekeeping and before user
 * space is thawed: the moment to fold the sleep into the model.
 */
static int lclk_pm_resume(struct device *dev)
{
	lclk_resume(container_of(dev, struct lclk_dev, dev));
	return 0;
}

static LCLK_DEFINE_SIMPLE_DEV_PM_OPS(lclk_pm_ops, NULL, lclk_pm_resume);

static int lclk_check_params(void)
{
	if (instances < 1 || instances > LCLK_MAX_INSTANCES) {
		pr_err("instances=%u is not in 1..%d\n", instances,
		       LCLK_MAX_INSTANCES);
		return -EINVAL;
	}
	if ((s64)max_rate_ppb * 1000 > LCLK_MAX_RATE_PPT) {
		pr_err("max_rate_ppb=%u is above %lld\n", max_rate_ppb,
		       LCLK_MAX_RATE_PPT / 1000);
		return -EINVAL;
	}
	if (max_drift_ppb > LCLK_MAX_DRIFT_PPB) {
		pr_err("max_drift_ppb=%u is above %u\n", max_drift_ppb,
		       LCLK_MAX_DRIFT_PPB);
		return -EINVAL;
	}
	return 0;
}

/* The last reference is gone: no file or mapping of the instance is left. */
static void lclk_release(struct device *dev)
{
	struct lclk_dev *ld = container_of(dev, struct lclk_dev, dev);

	lclk_clock_free(ld);
	kfree(ld);
}

static int lclk_create(unsigned int index)
{
	struct lclk_dev *ld;
	int err;

	ld = kzalloc(sizeof(*ld), GFP_KERNEL);
	if (!ld)
		return -ENOMEM;
	ld->index = index;
	ld->max_rate_ppt = (s64)max_rate_ppb * 1000;
	ld->default_drift_ppb = max_drift_ppb;
	err = lclk_clock_init(ld, max_drift_ppb,
			      (s64)holdover_s * NSEC_PER_SEC);
	if (!err) {
		err = lclk_slew_start(ld);
		if (err)
			lclk_clock_free(ld);
	}
	if (err) {
		kfree(ld);
		return err;
	}

	/* From here on the device's release frees the instance. */
	device_initialize(&ld->dev);
	ld->dev.class = lclk_class;
	ld->dev.devt = MKDEV(MAJOR(lclk_devt), index);
	ld->dev.release = lclk_release;
	cdev_init(&ld->cdev, &lclk_fops);
	ld->cdev.owner = THIS_MODULE;
	err = dev_set_name(&ld->dev, "lclk%u", index);
	if (!err)
		err = cdev_device_add(&ld->cdev, &ld->dev);
	if (err) {
		lclk_slew_stop(ld);
		put_device(&ld->dev);
		return err;
	}

	/* The character device works without it; a failure only warns. */
	lclk_ptp_register(ld);
	lclk_devs[index] = ld;
	return 0;
}

static void lclk_destroy(struct lclk_dev *ld)
{
	lclk_slew_stop(ld);
	lclk_ptp_unregister(ld);
	cdev_device_del(&ld->cdev, &ld->dev);
	put_device(&ld->dev);
}

static void lclk_destroy_all(void)
{
	while (lclk_ndevs)
		lclk_destroy(lclk_devs[--lclk_ndevs]);
}

static int __init lclk_init(void)
{
	int err;

	err = lclk_check_params();
	if (err)
		return err;
	/* Before the first instance, whose page says whether there is one. */
	lclk_vmclock_init();

	err = alloc_chrdev_region(&lclk_devt, 0, instances, "lclk");
	if (err) {
		lclk_vmclock_fini();
		return err;
	}

	lclk_class = lclk_class_create("lclk");
	if (IS_ERR(lclk_class)) {
		err = PTR_ERR(lclk_class);
		goto free_region;
	}
	lclk_class->devnode = lclk_devnode;
	lclk_class->pm = lclk_pm_sleep_ptr(&lclk_pm_ops);

	/*
	 * Once /dev/lclk0 exists it may be open or mapped, and init must not
	 * fail: a failed init frees the module under its open files, which
	 * pin nothing then. So a later instance that cannot be created leaves
	 * the module with the ones before it, loudly.
	 */
	for (lclk_ndevs = 0; lclk_ndevs < instances; lclk_ndevs++) {
		err = lclk_create(lclk_ndevs);
		if (err && lclk_ndevs)
			pr_err("instance %u failed (%d): %u of %u instances\n",
			       lclk_ndevs, err, lclk_ndevs, instances);
		if (err)
			break;
	}
	if (lclk_ndevs)
		return 0;

	class_destroy(lclk_class);
free_region:
	unregister_chrdev_region(lclk_devt, instances);
	lclk_vmclock_fini();
	return err;
}

static void __exit lclk_exit(void)
{
	lclk_destroy_all();
	class_destroy(lclk_class);
	unregister_chrdev_region(lclk_devt, instances);
	lclk_vmclock_fini();
}

module_init(lclk_init);
module_exit(lclk_exit);

MODULE_DESCRIPTION("Logical clock with an error bound: /dev/lclkN, read-only mmap page, PTP clock");
MODULE_AUTHOR("lclk project");
MODULE_LICENSE("GPL");
