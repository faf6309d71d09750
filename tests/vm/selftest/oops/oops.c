// SPDX-License-Identifier: GPL-2.0
/* A module whose init oopses: the test bed must fail the run on it. */
#include <linux/init.h>
#include <linux/module.h>

static int __init oops_init(void)
{
	*(volatile int *)NULL = 1;
	return 0;
}
module_init(oops_init);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("lclk test bed self-test: oops at init");
