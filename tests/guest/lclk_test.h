/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the guest tests of the lclk module. They run in the VM
 * as root, from the repository root, with the module loaded by
 * tests/guest/run.sh (LCLK_MODULE, LCLK_MODULE_ARGS).
 */
#ifndef LCLK_TEST_H
#define LCLK_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lclk.h"

/*
 * The harness's EXPECT_EQ(1, x) compares an int constant with the __u32
 * fields of the ABI; with -Wextra that is a sign-compare warning on every
 * line. The values compared here are all small and non-negative.
 */
#pragma GCC diagnostic ignored "-Wsign-compare"

#define LCLK_DEV0	"/dev/lclk0"
#define LCLK_DEV1	"/dev/lclk1"
#define NSEC		1000000000LL

/* ioctl() returning 0 or -errno, so that tests can compare errnos. */
static inline int lclk_ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static inline struct lclk_stats lclk_stats_of(int fd)
{
	struct lclk_stats s;

	memset(&s, 0, sizeof(s));
	if (ioctl(fd, LCLK_IOC_GET_STATS, &s) < 0)
		abort();
	return s;
}

static inline struct lclk_params lclk_model_of(int fd)
{
	struct lclk_params m;

	memset(&m, 0, sizeof(m));
	if (ioctl(fd, LCLK_IOC_GET_MODEL, &m) < 0)
		abort();
	return m;
}

static inline struct lclk_info lclk_info_of(int fd)
{
	struct lclk_info i;

	memset(&i, 0, sizeof(i));
	if (ioctl(fd, LCLK_IOC_INFO, &i) < 0)
		abort();
	return i;
}

static inline int lclk_get_time(int fd, struct lclk_time *t)
{
	memset(t, 0, sizeof(*t));
	return lclk_ioc(fd, LCLK_IOC_GET_TIME, t);
}

static inline int lclk_set_cpu(int fd, unsigned int cpu, __s64 off, __u32 fl)
{
	struct lclk_cpu_offset co;

	memset(&co, 0, sizeof(co));
	co.cpu = cpu;
	co.offset_ns = off;
	co.flags = fl;
	return lclk_ioc(fd, LCLK_IOC_SET_CPU_OFFSET, &co);
}

/*
 * A known state, whatever earlier tests left: synced now with a 1 us
 * bound, no rate, no per-CPU offsets, UTC, an hour of holdover, the
 * default drift. The offset keeps logical time near CLOCK_REALTIME.
 */
static inline int lclk_reset(int fd)
{
	struct lclk_set_model m;
	struct timespec rt;
	unsigned int cpu;
	int err;

	clock_gettime(CLOCK_REALTIME, &rt);
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND |
		  LCLK_SET_HOLDOVER | LCLK_SET_MAX_DRIFT | LCLK_SET_FLAGS;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.offset_ns = (rt.tv_sec * NSEC + rt.tv_nsec) - lclk_monotonic_ns();
	m.bound_ns = 1000;
	m.holdover_ns = 3600 * NSEC;
	m.max_drift_ppb = 50000;
	err = lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m);
	if (err)
		return err;
	for (cpu = 0; cpu < lclk_info_of(fd).ncpus; cpu++) {
		err = lclk_set_cpu(fd, cpu, 0, LCLK_ALLOW_BACKWARD);
		if (err)
			return err;
	}
	return 0;
}

static inline int lclk_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* The CPUs this process may run on, in order; returns how many. */
static inline int lclk_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* Drop CAP_SYS_TIME from every set but the bounding set: no root helps. */
static inline int lclk_drop_sys_time(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int w = CAP_SYS_TIME / 32;
	__u32 bit = 1U << (CAP_SYS_TIME % 32);

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	data[w].effective &= ~bit;
	data[w].permitted &= ~bit;
	data[w].inheritable &= ~bit;
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

/* /dev/ptpN of an instance, from sysfs; returns N or -1. */
static inline int lclk_phc_of(int index)
{
	char path[64];
	int fd = -1, n = -1;

	snprintf(path, sizeof(path), "/dev/lclk%d", index);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = lclk_info_of(fd).phc_index;
	close(fd);
	return n;
}

static inline __s64 lclk_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__s64)ts.tv_sec * NSEC + ts.tv_nsec;
}

/*
 * Clock b minus clock a, from the tightest of n brackets a, b, a (the
 * emulator may stop the vCPU between two readings): the middle of the
 * bracket, and in *err half its width plus one, which the difference is
 * within.
 */
static inline __s64 lclk_clock_gap(clockid_t a, clockid_t b, int n,
				   __s64 *err)
{
	__s64 best = 0, width = INT64_MAX;
	int i;

	for (i = 0; i < n; i++) {
		__s64 a0 = lclk_clock_ns(a);
		__s64 v = lclk_clock_ns(b);
		__s64 a1 = lclk_clock_ns(a);

		if (a1 - a0 < width) {
			width = a1 - a0;
			best = v - a0 - width / 2;
		}
	}
	*err = width / 2 + 1;
	return best;
}

#define LCLK_FD_TO_CLOCKID(fd)	((~(clockid_t)(fd) << 3) | 3)

#endif /* LCLK_TEST_H */
