// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the file operations of /dev/lclkN: open, the read-only mapping of
 * the clock page, and read() of the text view through seq_file.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/vmalloc.h>

#include "lclk_compat.h"
#include "lclk_dev.h"
#include "lclk_vmclock.h"

struct lclk_dev *lclk_from_file(struct file *file)
{
	return container_of(file_inode(file)->i_cdev, struct lclk_dev, cdev);
}

/*
 * The text is generated once per read from offset 0 (seq_file keeps it for
 * the reads that follow), so one cat sees one consistent snapshot.
 */
static int lclk_open(struct inode *inode, struct file *file)
{
	struct lclk_dev *ld = container_of(inode->i_cdev, struct lclk_dev,
					   cdev);

	return single_open(file, lclk_text_show, ld);
}

/*
 * The page is in the host's CLOCK_MONOTONIC, and a reader adds its own
 * vDSO's CLOCK_MONOTONIC to it, so the page is right for a process whose
 * time namespace does not shift that clock, and wrong by the shift for
 * one whose does. mmap() refuses the latter, but a mapping is inherited:
 * map, unshare(CLONE_NEWTIME), fork, and the child is in the shifted
 * namespace with the parent's mapping. So the page is not mapped at
 * mmap() but at the first access, by the process that makes it: the
 * mapping is neither VM_PFNMAP nor VM_MIXEDMAP and has no anon_vma, so
 * fork() does not copy its page table entries (vma_needs_copy(), or
 * copy_page_range() before 5.19) and each child faults on its own. As
 * with the vDSO's data page, the namespace is that of the task that
 * faults: all tasks of an mm are in one time namespace, since
 * copy_process() refuses CLONE_VM into another and setns() a task with
 * threads.
 *
 * setns() into a shifted namespace by a process that already mapped the
 * page is not seen: the kernel zaps the vDSO's data page then, not ours
 * (lclk(4) says to open the clock again).
 */
static vm_fault_t lclk_fault(struct vm_fault *vmf)
{
	struct lclk_dev *ld = lclk_from_file(vmf->vma->vm_file);
	struct lclk_page *p = ld->page;
	struct page *page;

	/*
	 * Access through another process (ptrace, /proc/PID/mem): its
	 * namespace is not the mapping's owner's, and whatever it mapped
	 * the owner would read.
	 */
	if (vmf->vma->vm_mm != current->mm)
		return VM_FAULT_SIGBUS;
	if (vmf->pgoff >= ld->page_size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	if (lclk_caller_mono_shift())
		p = ld->refused;
	page = vmalloc_to_page((void *)p + (vmf->pgoff << PAGE_SHIFT));
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct lclk_vm_ops = {
	.fault = lclk_fault,
};

/*
 * The hypervisor's vmclock page (lclk_vmclock.h), where there is one of a
 * whole page: read-only as the clock's page, mapped as ptp_vmclock maps it
 * (a PFN mapping; its contents are the hypervisor's, in no clock of any
 * namespace, so every process may map it and a child inherits it).
 */
static int lclk_mmap_vmclock(struct vm_area_struct *vma)
{
	if (!lclk_vmclock.abi || !lclk_vmclock.mappable)
		return -ENODEV;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma->vm_end - vma->vm_start != PAGE_SIZE)
		return -EINVAL;
	lclk_vma_clear_flags(vma, VM_MAYWRITE);
	lclk_vma_set_flags(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return io_remap_pfn_range(vma, vma->vm_start,
				  PHYS_PFN(lclk_vmclock.phys), PAGE_SIZE,
				  vma->vm_page_prot);
}

/*
 * Map the page read-only, now and forever: no VM_WRITE, and no
 * VM_MAYWRITE so that mprotect() cannot add it later, whatever the mode
 * the file was opened with. The mapping holds a reference to the file and
 * the file one to the module, so the page outlives every mapping of it.
 */
static int lclk_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lclk_dev *ld = lclk_from_file(file);

	if (vma->vm_pgoff == LCLK_VMCLOCK_PGOFF)
		return lclk_mmap_vmclock(vma);
	if (vma->vm_pgoff)
		return -EINVAL;
	/* A reader that cannot use the page reads the ioctls instead. */
	if (lclk_caller_mono_shift())
		return -EOPNOTSUPP;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	if (vma_pages(vma) > ld->page_size >> PAGE_SHIFT)
		return -EINVAL;
	lclk_vma_clear_flags(vma, VM_MAYWRITE);
	/* As remap_vmalloc_range() did: no growing by mremap(), no core dump. */
	lclk_vma_set_flags(vma, VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &lclk_vm_ops;
	return 0;
}

/* A correction set through this file ends with it (lclk_corr.c). */
static int lclk_file_release(struct inode *inode, struct file *file)
{
	lclk_corr_release(lclk_from_file(file), file);
	return single_release(inode, file);
}

const struct file_operations lclk_fops = {
	.owner		= THIS_MODULE,
	.open		= lclk_open,
	.release	= lclk_file_release,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.mmap		= lclk_mmap,
	.unlocked_ioctl	= lclk_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};
