// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: finding the hypervisor's vmclock page (lclk_vmclock.h says why).
 *
 * On every kernel of the matrix, not only those with ptp_vmclock (6.13+):
 * lclk looks up the ACPI device itself, by the ids ptp_vmclock matches
 * (HID "AMZNC10C", CID "VMCLOCK"), walks its _CRS for the one memory
 * resource as ptp_vmclock does, and maps it read-only, write-back and
 * decrypted, as ptp_vmclock does. It does not bind the device or request the region:
 * ptp_vmclock may bind it too, and both only read the page. The page is
 * checked as ptp_vmclock checks it: magic, a size that holds the
 * structure, version 1.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/acpi.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "lclk_compat.h"
#include "lclk_vmclock.h"

#if LCLK_HAVE_VMCLOCK_ABI
#include <linux/vmclock-abi.h>

/* The copy in lclk_vmclock.h is the kernel's layout, where it has one. */
static_assert(offsetof(struct lclk_vmclock_abi, seq_count) ==
	      offsetof(struct vmclock_abi, seq_count));
static_assert(offsetof(struct lclk_vmclock_abi, disruption_marker) ==
	      offsetof(struct vmclock_abi, disruption_marker));
static_assert(LCLK_VMCLOCK_MAGIC == VMCLOCK_MAGIC);
#endif

struct lclk_vmclock lclk_vmclock;

#ifdef CONFIG_ACPI
static acpi_status lclk_vmclock_resource(struct acpi_resource *ares,
					 void *data)
{
	struct resource *found = data;
	struct resource_win win;
	struct resource *res = &win.res;

	if (ares->type == ACPI_RESOURCE_TYPE_END_TAG)
		return AE_OK;
	memset(&win, 0, sizeof(win));
	/*
	 * Not an address: an interrupt (a vmclock that notifies its
	 * changes), which is ptp_vmclock's to take, not a reason to find no
	 * vmclock at all.
	 */
	if (!acpi_dev_resource_memory(ares, res) &&
	    !acpi_dev_resource_address_space(ares, &win))
		return AE_OK;
	/* There can be only one, as ptp_vmclock says. */
	if (resource_type(found) == IORESOURCE_MEM ||
	    resource_type(res) != IORESOURCE_MEM ||
	    resource_size(res) < sizeof(struct lclk_vmclock_abi))
		return AE_ERROR;
	*found = *res;
	return AE_OK;
}

static int lclk_vmclock_find(struct resource *res)
{
	static const char *const ids[] = { "AMZNC10C", "VMCLOCK" };
	struct acpi_device *adev = NULL;
	acpi_status status;
	unsigned int i;

	if (acpi_disabled)
		return -ENODEV;
	for (i = 0; i < ARRAY_SIZE(ids) && !adev; i++)
		adev = acpi_dev_get_first_match_dev(ids[i], NULL, -1);
	if (!adev)
		return -ENODEV;
	memset(res, 0, sizeof(*res));
	status = acpi_walk_resources(adev->handle, METHOD_NAME__CRS,
				     lclk_vmclock_resource, res);
	acpi_dev_put(adev);
	if (ACPI_FAILURE(status) || resource_type(res) != IORESOURCE_MEM)
		return -ENODEV;
	return 0;
}
#else
static int lclk_vmclock_find(struct resource *res)
{
	return -ENODEV;
}
#endif

void lclk_vmclock_init(void)
{
	const struct lclk_vmclock_abi *abi;
	struct resource res;
	u64 marker;

	if (lclk_vmclock_find(&res))
		return;	/* no vmclock: lclkctl status says "vmclock: none" */
	/*
	 * Decrypted, as ptp_vmclock maps it: in a confidential guest (SEV,
	 * TDX) the hypervisor writes the page in the clear, and an encrypted
	 * mapping reads garbage (no vmclock found), while userspace's
	 * io_remap_pfn_range() mapping of it is decrypted.
	 */
	abi = memremap(res.start, resource_size(&res),
		       MEMREMAP_WB | MEMREMAP_DEC);
	if (!abi) {
		pr_warn("vmclock at %pR: cannot map it\n", &res);
		return;
	}
	if (le32_to_cpu(abi->magic) != LCLK_VMCLOCK_MAGIC ||
	    le32_to_cpu(abi->size) > resource_size(&res) ||
	    le32_to_cpu(abi->size) < sizeof(*abi) ||
	    le16_to_cpu(abi->version) != 1) {
		pr_warn("vmclock at %pR: not a version 1 vmclock page\n", &res);
		memunmap((void *)abi);
		return;
	}
	lclk_vmclock.phys = res.start;
	lclk_vmclock.size = resource_size(&res);
	lclk_vmclock.mappable = PAGE_ALIGNED(res.start) &&
				resource_size(&res) == PAGE_SIZE;
	lclk_vmclock.abi = abi;
	if (lclk_vmclock_marker(abi, &marker))
		pr_info("vmclock at %pR, being written\n", &res);
	else
		pr_info("vmclock at %pR, disruption marker %llu\n", &res,
			marker);
}

void lclk_vmclock_fini(void)
{
	if (lclk_vmclock.abi)
		memunmap((void *)lclk_vmclock.abi);
	lclk_vmclock.abi = NULL;
}
