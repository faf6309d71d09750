// SPDX-License-Identifier: GPL-2.0
/*
 * Test helper for lclk's init error path (tests/guest/lclk_init_unwind.sh):
 * make instance "minor" of the next lclk load fail, deterministically and
 * with no hook in lclk itself. Debian's kernels have no fault injection.
 *
 * The next dynamic char major is the highest free one, so the major lclk
 * will get is the one this module gets and gives back at once. A device
 * with that major and the given minor then owns /sys/dev/char/MAJ:MIN, and
 * device_add() of lclk's instance with the same dev_t fails with -EEXIST.
 */
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/module.h>

#include "lclk_compat.h"

static unsigned int minor = 1;
module_param(minor, uint, 0444);
MODULE_PARM_DESC(minor, "Minor of the lclk instance to make fail (default 1)");

static struct class *clash_class;
static struct device *clash_dev;

static int __init clash_init(void)
{
	dev_t devt;
	int err;

	err = alloc_chrdev_region(&devt, 0, 1, "lclk_clash");
	if (err)
		return err;
	unregister_chrdev_region(devt, 1);

	clash_class = lclk_class_create("lclk_clash");
	if (IS_ERR(clash_class))
		return PTR_ERR(clash_class);
	clash_dev = device_create(clash_class, NULL, MKDEV(MAJOR(devt), minor),
				  NULL, "lclk_clash%u", minor);
	if (IS_ERR(clash_dev)) {
		class_destroy(clash_class);
		return PTR_ERR(clash_dev);
	}
	pr_info("lclk_clash: holding %u:%u\n", MAJOR(devt), minor);
	return 0;
}

static void __exit clash_exit(void)
{
	device_destroy(clash_class, clash_dev->devt);
	class_destroy(clash_class);
}

module_init(clash_init);
module_exit(clash_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lclk test helper: take the dev_t of a future lclk instance");
