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
 * Map the page read-only, now and forever: no VM_WRITE, and no
 * VM_MAYWRITE so that mprotect() cannot add it later, whatever the mode
 * the file was opened with. The mapping holds a reference to the file and
 * the file one to the module, so the page outlives every mapping of it.
 */
static int lclk_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct lclk_dev *ld = lclk_from_file(file);

	if (vma->vm_pgoff)
		return -EINVAL;
	/*
	 * The page is anchored to the host's CLOCK_MONOTONIC, which a reader
	 * in a shifted time namespace cannot read: it would compute logical
	 * time off by the shift. It reads the ioctls instead.
	 */
	if (lclk_caller_mono_shift())
		return -EOPNOTSUPP;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	lclk_vma_clear_flags(vma, VM_MAYWRITE);
	/* Fails with -EINVAL if the mapping is larger than the page(s). */
	return remap_vmalloc_range(vma, ld->page, 0);
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
