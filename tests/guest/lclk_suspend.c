// SPDX-License-Identifier: GPL-2.0
/*
 * Suspend and resume. CLOCK_MONOTONIC, the base clock, stands still while
 * the system sleeps; the kernel measures the sleep and adds it to
 * CLOCK_BOOTTIME and CLOCK_REALTIME only. After a resume the reference
 * must still lie within logical +- bound, logical time must have run
 * through the sleep at the model's rate, the resume must count as one
 * update and one step, and a clock that nobody disciplined through the
 * sleep must not claim to be SYNCED.
 *
 * The test bed cannot wake a sleeping guest (QEMU's RTC alarm does not end
 * s2idle there), so the sleep is the kernel's own suspend test: pm_test
 * "core" runs the whole suspend path of "mem" - processes frozen, devices
 * suspended, secondary CPUs off, timekeeping suspended - waits
 * pm_test_delay seconds with time stopped, and resumes. What it leaves out
 * is the firmware's sleep state; what lclk sees is the same: a resume
 * whose sleep the kernel injected into CLOCK_BOOTTIME.
 */
#include <linux/magic.h>
#include <sys/vfs.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

/*
 * CLOCK_BOOTTIME - CLOCK_MONOTONIC: the sleep so far, from the closest of
 * a few bracketing pairs of readings (the emulator may stop the vCPU
 * between two of them), to a microsecond.
 */
static __s64 slept_ns(void)
{
	__s64 err;

	return lclk_clock_gap(CLOCK_MONOTONIC, CLOCK_BOOTTIME, 20, &err);
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* The suspend test of "mem" with time stopped for delay_s; 0 or -errno. */
static int suspend_core_test(int delay_s)
{
	char delay[16];
	int err;

	snprintf(delay, sizeof(delay), "%d", delay_s);
	err = write_file("/sys/module/suspend/parameters/pm_test_delay", delay);
	if (!err)
		err = write_file("/sys/power/mem_sleep", "deep");
	if (!err)
		err = write_file("/sys/power/pm_test", "core");
	if (!err)
		err = write_file("/sys/power/state", "mem");
	write_file("/sys/power/pm_test", "none");
	return err;
}

struct mapped {
	struct lclk_now r;
	__s64 real_ns;
};

/* lclk_now() through the page, and CLOCK_REALTIME right after it. */
static int mapped_reading(struct mapped *m)
{
	struct lclk_clock c;
	int err = lclk_open(&c, LCLK_DEV0);

	if (err)
		return err;
	err = lclk_now(&c, &m->r);
	m->real_ns = lclk_clock_ns(CLOCK_REALTIME);
	lclk_close(&c);
	return err;
}

TEST(resume_keeps_the_reference_within_the_bound)
{
	struct lclk_stats stats_before, stats_after;
	struct lclk_time before, after;
	struct lclk_set_model rate;
	struct statfs root;
	struct mapped now;
	__s64 sleep, real, err_ns, span, want;
	int fd;

	/*
	 * The test bed's root file system is virtio-9p, whose driver has no
	 * PM callbacks, so the virtio device reset on resume leaves it
	 * without queues and the guest hangs on its next file access (seen
	 * with pm_test "core" on 5.10, 6.1 and 6.12). The suite runs this
	 * test from a root in memory instead (tests/vm/ram-root.sh).
	 */
	if (statfs("/", &root) || root.f_type != TMPFS_MAGIC)
		SKIP(return, "the root is not in memory (tests/vm/ram-root.sh runs this)");
	if (access("/sys/power/pm_test", W_OK))
		SKIP(return, "no /sys/power/pm_test (CONFIG_PM_DEBUG)");
	fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lclk_reset(fd));
	/* The fastest rate the instance takes: the sleep must run at it. */
	memset(&rate, 0, sizeof(rate));
	rate.modes = LCLK_SET_RATE;
	rate.rate_ppt = lclk_info_of(fd).max_rate_ppt;
	ASSERT_EQ(0, lclk_ioc(fd, LCLK_IOC_SET_MODEL, &rate));
	ASSERT_EQ(0, lclk_get_time(fd, &before));
	ASSERT_EQ(LCLK_STATUS_SYNCED, before.status);
	stats_before = lclk_stats_of(fd);

	sleep = slept_ns();
	ASSERT_EQ(0, suspend_core_test(3));
	sleep = slept_ns() - sleep;
	TH_LOG("the kernel measured a sleep of %lld ns", sleep);
	if (sleep < NSEC / 2)
		SKIP(goto out, "the kernel injected no sleep time");

	/* CLOCK_REALTIME, which lclk_reset() copied, has the sleep in it. */
	ASSERT_EQ(0, lclk_get_time(fd, &after));
	real = lclk_clock_ns(CLOCK_REALTIME);
	err_ns = real - after.logical_ns;
	TH_LOG("after resume: realtime - logical %lld ns, bound %lld ns, status %u",
	       err_ns, after.bound_ns, after.status);
	EXPECT_NE(LCLK_STATUS_SYNCED, after.status);
	EXPECT_LE(llabs(err_ns), after.bound_ns);
	/*
	 * Logical time went on through the sleep at the rate: by the base
	 * time between the readings and the sleep, times 1 + rate. What is
	 * left is the error of this test's own measure of the sleep.
	 */
	span = after.base_ns - before.base_ns + sleep;
	want = before.logical_ns + span +
	       (__s64)((__int128)span * rate.rate_ppt / 1000000000000LL);
	TH_LOG("logical time went on by %lld ns, want %lld ns (rate %lld ppt)",
	       after.logical_ns - before.logical_ns, want - before.logical_ns,
	       rate.rate_ppt);
	EXPECT_GE(100000, llabs(after.logical_ns - want));

	/* The resume is one update, a forward step, counted as such. */
	stats_after = lclk_stats_of(fd);
	EXPECT_EQ(stats_before.updates + 1, stats_after.updates);
	EXPECT_EQ(stats_before.steps + 1, stats_after.steps);
	EXPECT_EQ(stats_before.backward_steps, stats_after.backward_steps);
	EXPECT_EQ(stats_before.rejected, stats_after.rejected);

	/* The mmap reader sees the same, with no system call of its own. */
	ASSERT_EQ(0, mapped_reading(&now));
	EXPECT_EQ(after.status, now.r.status);
	EXPECT_LE(llabs(now.real_ns - now.r.time_ns), now.r.bound_ns);

	/* The next sync makes it SYNCED again. */
	ASSERT_EQ(0, lclk_reset(fd));
	ASSERT_EQ(0, lclk_get_time(fd, &after));
	EXPECT_EQ(LCLK_STATUS_SYNCED, after.status);
out:
	close(fd);
}

TEST_HARNESS_MAIN
