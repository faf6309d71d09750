// SPDX-License-Identifier: GPL-2.0
/*
 * The read-only page: its layout, agreement between the mmap reader
 * (include/lclk.h) and the ioctl, and every way of writing to it failing.
 */
#include <setjmp.h>
#include <signal.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

FIXTURE(map) {
	int fd;
	struct lclk_info info;
	struct lclk_clock c;
};

FIXTURE_SETUP(map)
{
	self->fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, self->fd);
	self->info = lclk_info_of(self->fd);
	ASSERT_EQ(0, lclk_reset(self->fd));
	ASSERT_EQ(0, lclk_open(&self->c, LCLK_DEV0));
}

FIXTURE_TEARDOWN(map)
{
	lclk_close(&self->c);
	lclk_reset(self->fd);
	close(self->fd);
}

TEST_F(map, layout)
{
	const struct lclk_page *p = self->c.page;
	struct lclk_params m = lclk_model_of(self->fd);
	unsigned int cpu;

	EXPECT_EQ(self->info.mmap_size, self->c.size);
	EXPECT_EQ(LCLK_PAGE_MAGIC, p->magic);
	EXPECT_EQ(LCLK_ABI_VERSION, p->abi_version);
	EXPECT_EQ(self->info.ncpus, p->ncpus);
	EXPECT_EQ(0, p->seq & 1);
	/* with a vmclock, REFUSED too: old readers ask the kernel */
	EXPECT_EQ(self->info.caps & LCLK_CAP_VMCLOCK ?
		  LCLK_PAGE_VMCLOCK | LCLK_PAGE_REFUSED : 0, p->flags);
	EXPECT_EQ(LCLK_STATUS_SYNCED, p->params.status);
	/*
	 * GET_MODEL and the page hold the same model, field for field, outside
	 * a time namespace and before the status turns HOLDOVER.
	 */
	EXPECT_EQ(0, memcmp(&m, &p->params, sizeof(m)));
	for (cpu = 0; cpu < p->ncpus; cpu++)
		EXPECT_EQ(0, p->cpu_offset_ns[cpu]);
}

/*
 * The two readers agree: at the base time the ioctl reports, the page
 * gives exactly the ioctl's logical time and bound; back to back, their
 * offsets from the base clock agree within 1 us once the rate's share of
 * the time between them is accounted for. Pinned, the readings interleave
 * in order.
 */
TEST_F(map, agrees_with_ioctl)
{
	struct lclk_set_model m;
	struct lclk_now a, b, at;
	struct lclk_time t;
	__s64 worst = 0, d;
	int i;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE | LCLK_SET_BOUND;
	m.rate_ppt = 123456789;		/* 123 ppm */
	m.bound_ns = 2500;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	ASSERT_EQ(0, lclk_pin(0));

	for (i = 0; i < 20000; i++) {
		lclk_now(&self->c, &a);
		ASSERT_EQ(0, lclk_get_time(self->fd, &t));
		lclk_now(&self->c, &b);

		lclk_from_base(&self->c, t.base_ns, -1, &at);
		ASSERT_EQ(at.time_ns, t.logical_ns);
		ASSERT_EQ(at.bound_ns, t.bound_ns);
		ASSERT_EQ(at.status, t.status);
		ASSERT_LE(a.base_ns, t.base_ns);
		ASSERT_LE(t.base_ns, b.base_ns);
		ASSERT_LE(a.time_ns, t.logical_ns);
		ASSERT_LE(t.logical_ns, b.time_ns);
		/* what the rate added between the two readings is no error */
		d = llabs((t.logical_ns - t.base_ns) - (a.time_ns - a.base_ns) -
			  lclk_scale(t.base_ns - a.base_ns,
				     lclk_ppt_to_mult(m.rate_ppt)));
		if (d > worst)
			worst = d;
	}
	EXPECT_GE(1000, worst);
	TH_LOG("largest offset difference %lld ns", (long long)worst);
}

/* The page follows changes made through another descriptor. */
TEST_F(map, follows_updates)
{
	struct lclk_step st;
	struct lclk_now a, b;

	lclk_now(&self->c, &a);
	memset(&st, 0, sizeof(st));
	st.delta_ns = 10 * NSEC;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	lclk_now(&self->c, &b);
	EXPECT_EQ(st.delta_ns, (b.time_ns - b.base_ns) - (a.time_ns - a.base_ns));
}

TEST_F(map, write_mappings_refused)
{
	size_t sz = self->info.mmap_size;
	void *p;
	int rw;

	/* Read-only fd: the VFS says EACCES for a shared writable map. */
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EACCES, errno);

	/* Read-write fd: the module refuses. */
	rw = open(LCLK_DEV0, O_RDWR);
	ASSERT_LE(0, rw);
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, sz, PROT_WRITE, MAP_SHARED, rw, 0);
	EXPECT_EQ(MAP_FAILED, p);
	/* Not even a private copy-on-write one. */
	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);

	/* A read-only map of a read-write fd cannot be made writable. */
	p = mmap(NULL, sz, PROT_READ, MAP_SHARED, rw, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, sz, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	munmap(p, sz);
	p = mmap(NULL, sz, PROT_READ, MAP_PRIVATE, rw, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, sz, PROT_READ | PROT_WRITE));
	munmap(p, sz);
	close(rw);

	/* And the fixture's mapping, from the reader in lclk.h. */
	EXPECT_EQ(-1, mprotect((void *)self->c.page, sz, PROT_WRITE));
}

/*
 * The hypervisor's vmclock page, mapped read-only at the offset INFO
 * gives where there is one; where there is none (the test bed's QEMU has
 * no vmclock device) INFO says nothing of it, the page's marker is zero,
 * and a mapping at the offset is refused with ENODEV.
 */
TEST_F(map, vmclock_page)
{
	long pg = sysconf(_SC_PAGESIZE);
	off_t off = (off_t)0x1000 * pg;	/* LCLK_VMCLOCK_PGOFF */
	void *p;
	int rw;

	if (!(self->info.caps & LCLK_CAP_VMCLOCK)) {
		EXPECT_EQ(0, self->info.vmclock_offset);
		EXPECT_EQ(0, self->info.vmclock_size);
		EXPECT_EQ(NULL, self->c.vmclock);
		EXPECT_EQ(0, self->c.page->vmclock_marker);
		p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, self->fd, off);
		EXPECT_EQ(MAP_FAILED, p);
		EXPECT_EQ(ENODEV, errno);
		return;
	}
	if (!self->info.vmclock_size)
		return;		/* present, not a whole page: the ioctls compare */
	EXPECT_EQ(off, (off_t)self->info.vmclock_offset);
	ASSERT_NE(NULL, self->c.vmclock);
	EXPECT_EQ(0x4b4c4356U, self->c.vmclock->magic);	/* "VCLK" */
	rw = open(LCLK_DEV0, O_RDWR);
	ASSERT_LE(0, rw);
	p = mmap(NULL, self->info.vmclock_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED, rw, off);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EPERM, errno);
	p = mmap(NULL, self->info.vmclock_size, PROT_READ, MAP_SHARED, rw, off);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, self->info.vmclock_size, PROT_WRITE));
	munmap(p, self->info.vmclock_size);
	close(rw);
}

/* Writing to the page faults; the page is unchanged. */
TEST_F(map, store_faults)
{
	__u32 magic = self->c.page->magic;
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		*(volatile __u32 *)&self->c.page->magic = 0;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGSEGV, WTERMSIG(status));
	EXPECT_EQ(magic, self->c.page->magic);
}

/* Not even through /proc/self/mem, which can write read-only private maps. */
TEST_F(map, proc_mem_write_fails)
{
	__u32 zero = 0, magic = self->c.page->magic;
	int fd = open("/proc/self/mem", O_RDWR);

	ASSERT_LE(0, fd);
	EXPECT_GT(0, pwrite(fd, &zero, sizeof(zero),
			    (off_t)(uintptr_t)&self->c.page->magic));
	close(fd);
	EXPECT_EQ(magic, self->c.page->magic);
}

TEST_F(map, bad_ranges)
{
	size_t sz = self->info.mmap_size;
	long pg = sysconf(_SC_PAGESIZE);
	void *p;

	p = mmap(NULL, sz + pg, PROT_READ, MAP_SHARED, self->fd, 0);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, self->fd, pg);
	EXPECT_EQ(MAP_FAILED, p);
	EXPECT_EQ(EINVAL, errno);
	/* A prefix is fine. */
	p = mmap(NULL, pg, PROT_READ, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(LCLK_PAGE_MAGIC, ((struct lclk_page *)p)->magic);
	/* It cannot grow. */
	EXPECT_EQ(MAP_FAILED, mremap(p, pg, sz + pg, MREMAP_MAYMOVE));
	munmap(p, pg);
}

/* The mapping outlives its descriptor and keeps following updates. */
TEST_F(map, outlives_fd)
{
	const struct lclk_page *p;
	struct lclk_step st;
	__s64 before;
	int fd = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, fd);
	p = mmap(NULL, self->info.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);
	before = p->params.offset_ns;
	memset(&st, 0, sizeof(st));
	st.delta_ns = 1000;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	EXPECT_EQ(before + 1000, p->params.offset_ns);
	munmap((void *)p, self->info.mmap_size);
}

/* The page's per-CPU flag tracks whether any offset is non-zero. */
TEST_F(map, cpu_offsets_flag)
{
	const struct lclk_page *p = self->c.page;
	unsigned int last = self->info.ncpus - 1;

	EXPECT_EQ(0, p->flags & LCLK_PAGE_CPU_OFFSETS);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 5, 0));
	EXPECT_EQ(LCLK_PAGE_CPU_OFFSETS, p->flags & LCLK_PAGE_CPU_OFFSETS);
	EXPECT_EQ(5, p->cpu_offset_ns[0]);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, -5, LCLK_ALLOW_BACKWARD));
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 0, LCLK_ALLOW_BACKWARD));
	EXPECT_EQ(LCLK_PAGE_CPU_OFFSETS, p->flags & LCLK_PAGE_CPU_OFFSETS);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, 0, 0));
	EXPECT_EQ(0, p->flags & LCLK_PAGE_CPU_OFFSETS);
	/* Setting zero where it is zero keeps the count right. */
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 0, 0));
	EXPECT_EQ(0, p->flags & LCLK_PAGE_CPU_OFFSETS);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 3, 0));
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 4, 0));
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 0, LCLK_ALLOW_BACKWARD));
	EXPECT_EQ(0, p->flags & LCLK_PAGE_CPU_OFFSETS);
}

TEST_HARNESS_MAIN
