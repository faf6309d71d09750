// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU offsets apply exactly to readers pinned to that CPU, through
 * the mmap reader and through the ioctl, and to no other CPU.
 */
#include <stdbool.h>
#include <sys/syscall.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

static bool no_cpu_number;

/*
 * This binary's sched_getcpu(), which lclk.h's reader calls in place of
 * libc's: -1 while no_cpu_number is set, as where the CPU number cannot
 * be had (no rseq, no getcpu in the vDSO, a seccomp filter).
 */
int sched_getcpu(void)
{
	unsigned int cpu;

	if (no_cpu_number || syscall(SYS_getcpu, &cpu, NULL, NULL))
		return -1;
	return (int)cpu;
}

FIXTURE(cpus) {
	int fd;
	struct lclk_info info;
	struct lclk_clock c;
	int cpus[CPU_SETSIZE];
	int ncpus;
};

FIXTURE_SETUP(cpus)
{
	self->fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, self->fd);
	self->info = lclk_info_of(self->fd);
	ASSERT_EQ(0, lclk_reset(self->fd));
	ASSERT_EQ(0, lclk_open(&self->c, LCLK_DEV0));
	self->ncpus = lclk_cpus(self->cpus, CPU_SETSIZE);
	ASSERT_LT(0, self->ncpus);
}

FIXTURE_TEARDOWN(cpus)
{
	lclk_close(&self->c);
	lclk_reset(self->fd);
	close(self->fd);
}

static __s64 offset_for(int cpu)
{
	return (cpu + 1) * 1000 + 7 * (cpu & 1 ? -1 : 1);
}

/* On each CPU in turn, both readers apply that CPU's offset, exactly. */
TEST_F(cpus, applied_per_cpu)
{
	struct lclk_now now, plain;
	struct lclk_time t;
	int i, k, cpu;

	if (self->ncpus < 2)
		TH_LOG("only one CPU: offsets are still checked on it");
	for (i = 0; i < self->ncpus; i++)
		ASSERT_EQ(0, lclk_set_cpu(self->fd, self->cpus[i],
					  offset_for(self->cpus[i]), 0));
	EXPECT_NE(0, self->c.page->flags & LCLK_PAGE_CPU_OFFSETS);

	for (i = 0; i < self->ncpus; i++) {
		cpu = self->cpus[i];
		ASSERT_EQ(0, lclk_pin(cpu));
		for (k = 0; k < 1000; k++) {
			lclk_now(&self->c, &now);
			ASSERT_EQ(cpu, now.cpu);
			lclk_from_base(&self->c, now.base_ns, -1, &plain);
			ASSERT_EQ(offset_for(cpu), now.time_ns - plain.time_ns);

			ASSERT_EQ(0, lclk_get_time(self->fd, &t));
			ASSERT_EQ(cpu, t.cpu);
			lclk_from_base(&self->c, t.base_ns, -1, &plain);
			ASSERT_EQ(offset_for(cpu), t.logical_ns - plain.time_ns);
		}
	}
}

/* An offset on one CPU leaves every other CPU alone. */
TEST_F(cpus, only_that_cpu)
{
	struct lclk_now now, plain;
	struct lclk_time t;
	int i, j, cpu;

	for (i = 0; i < self->ncpus; i++) {
		ASSERT_EQ(0, lclk_set_cpu(self->fd, self->cpus[i], 900, 0));
		for (j = 0; j < self->ncpus; j++) {
			cpu = self->cpus[j];
			ASSERT_EQ(0, lclk_pin(cpu));
			lclk_now(&self->c, &now);
			lclk_from_base(&self->c, now.base_ns, -1, &plain);
			EXPECT_EQ(i == j ? 900 : 0, now.time_ns - plain.time_ns);
			ASSERT_EQ(0, lclk_get_time(self->fd, &t));
			lclk_from_base(&self->c, t.base_ns, -1, &plain);
			EXPECT_EQ(i == j ? 900 : 0, t.logical_ns - plain.time_ns);
		}
		ASSERT_EQ(0, lclk_set_cpu(self->fd, self->cpus[i], 0,
					  LCLK_ALLOW_BACKWARD));
	}
	/* All zero again: the reader skips the CPU number. */
	EXPECT_EQ(0, self->c.page->flags & LCLK_PAGE_CPU_OFFSETS);
	lclk_now(&self->c, &now);
	EXPECT_EQ(-1, now.cpu);
}

/*
 * Without a CPU number the reader cannot pick an offset from the table:
 * it asks the kernel, which applies the offset of the CPU it runs on, and
 * never drops the offset.
 */
TEST_F(cpus, no_cpu_number_asks_the_kernel)
{
	int cpu = self->cpus[self->ncpus - 1];
	struct lclk_now now, plain;

	ASSERT_EQ(0, lclk_set_cpu(self->fd, cpu, 900000, 0));
	ASSERT_EQ(0, lclk_pin(cpu));
	no_cpu_number = true;
	ASSERT_EQ(0, lclk_now(&self->c, &now));
	no_cpu_number = false;
	EXPECT_EQ(cpu, now.cpu);
	lclk_from_base(&self->c, now.base_ns, -1, &plain);
	EXPECT_EQ(900000, now.time_ns - plain.time_ns);
}

/* The text view lists the offsets too. */
TEST_F(cpus, listed_in_text)
{
	char buf[1 << 16], *line;
	int fd, i, seen = 0;
	unsigned int cpu;
	long long off;
	ssize_t n, len = 0;

	for (i = 0; i < self->ncpus; i++)
		ASSERT_EQ(0, lclk_set_cpu(self->fd, self->cpus[i],
					  offset_for(self->cpus[i]), 0));
	fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "cpu %u offset_ns %lld", &cpu, &off) != 2)
			continue;
		for (i = 0; i < self->ncpus; i++)
			if (self->cpus[i] == (int)cpu) {
				EXPECT_EQ(offset_for(cpu), off);
				seen++;
			}
	}
	EXPECT_EQ(self->ncpus, seen);
}

TEST_HARNESS_MAIN
