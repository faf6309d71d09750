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
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <linux/time64.h>

#include "lclk_dev.h"

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
static struct lclk_dev *lclk_devs;
static unsigned int lclk_ndevs;

/*
 * Anyone may read the clock; changing it takes CAP_SYS_TIME, checked per
 * ioctl, so the node can be world-readable without a udev rule.
 */
static char *lclk_devnode(struct device *dev, umode_t *mode)
{
	if (mode)
		*mode = 0644;
	return NULL;
}

static int lclk_check_params(void)
{
	if (instances < 1 || instances > LCLK_MAX_INSTANCES) {
		pr_err("lclk: instances=%u is not in 1..%d\n", instances,
		       LCLK_MAX_INSTANCES);
		return -EINVAL;
	}
	if ((s64)max_rate_ppb * 1000 > LCLK_MAX_RATE_PPT) {
		pr_err("lclk: max_rate_ppb=%u is above %lld\n", max_rate_ppb,
		       LCLK_MAX_RATE_PPT / 1000);
		return -EINVAL;
	}
	if (max_drift_ppb > LCLK_MAX_DRIFT_PPB) {
		pr_err("lclk: max_drift_ppb=%u is above %u\n", max_drift_ppb,
		       LCLK_MAX_DRIFT_PPB);
		return -EINVAL;
	}
	return 0;
}

static int lclk_create(struct lclk_dev *ld, unsigned int index)
{
	dev_t devt = MKDEV(MAJOR(lclk_devt), index);
	int err;

	ld->index = index;
	ld->max_rate_ppt = (s64)max_rate_ppb * 1000;
	ld->default_drift_ppb = max_drift_ppb;
	err = lclk_clock_init(ld, max_drift_ppb,
			      (s64)holdover_s * NSEC_PER_SEC);
	if (err)
		return err;

	cdev_init(&ld->cdev, &lclk_fops);
	ld->cdev.owner = THIS_MODULE;
	err = cdev_add(&ld->cdev, devt, 1);
	if (err)
		goto free_clock;

	ld->dev = device_create(lclk_class, NULL, devt, ld, "lclk%u", index);
	if (IS_ERR(ld->dev)) {
		err = PTR_ERR(ld->dev);
		goto del_cdev;
	}

	/* The character device works without it; a failure only warns. */
	lclk_ptp_register(ld);
	return 0;

del_cdev:
	cdev_del(&ld->cdev);
free_clock:
	lclk_clock_free(ld);
	return err;
}

static void lclk_destroy(struct lclk_dev *ld)
{
	lclk_ptp_unregister(ld);
	device_destroy(lclk_class, ld->cdev.dev);
	cdev_del(&ld->cdev);
	lclk_clock_free(ld);
}

static void lclk_destroy_all(void)
{
	while (lclk_ndevs)
		lclk_destroy(&lclk_devs[--lclk_ndevs]);
}

static int __init lclk_init(void)
{
	int err;

	err = lclk_check_params();
	if (err)
		return err;

	lclk_devs = kcalloc(instances, sizeof(*lclk_devs), GFP_KERNEL);
	if (!lclk_devs)
		return -ENOMEM;

	err = alloc_chrdev_region(&lclk_devt, 0, instances, "lclk");
	if (err)
		goto free_devs;

	lclk_class = class_create(THIS_MODULE, "lclk");
	if (IS_ERR(lclk_class)) {
		err = PTR_ERR(lclk_class);
		goto free_region;
	}
	lclk_class->devnode = lclk_devnode;

	for (lclk_ndevs = 0; lclk_ndevs < instances; lclk_ndevs++) {
		err = lclk_create(&lclk_devs[lclk_ndevs], lclk_ndevs);
		if (err)
			goto destroy;
	}
	return 0;

destroy:
	lclk_destroy_all();
	class_destroy(lclk_class);
free_region:
	unregister_chrdev_region(lclk_devt, instances);
free_devs:
	kfree(lclk_devs);
	lclk_devs = NULL;
	return err;
}

static void __exit lclk_exit(void)
{
	lclk_destroy_all();
	class_destroy(lclk_class);
	unregister_chrdev_region(lclk_devt, instances);
	kfree(lclk_devs);
}

module_init(lclk_init);
module_exit(lclk_exit);

MODULE_DESCRIPTION("Logical clock with an error bound: /dev/lclkN, read-only mmap page, PTP clock");
MODULE_AUTHOR("lclk project");
MODULE_LICENSE("GPL");
