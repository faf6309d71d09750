// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of reading the logical clock, side by side with what it is built
 * on, in one run on one pinned CPU:
 *
 *   lclk_now() through the mmap page   vs  clock_gettime(CLOCK_MONOTONIC)
 *   LCLK_IOC_GET_TIME ioctl            vs  getppid()
 *
 * The four are measured in interleaved rounds so that frequency changes
 * and noisy neighbours hit them alike; each figure is the best round.
 * Rounds are short (about 1 ms) and many: on a shared host a round as
 * long as a scheduler slice is rarely one the emulator ran through, and
 * the best of 31 rounds of 10 ms moved GET_TIME's ratio by 0.1 from one
 * run to the next under load.
 * Prints ns per call, then the ratios (goals: <= 1.3, <= 2 and <= 1.35):
 *
 *   BENCH read.mmap_vs_vdso <ratio>
 *   BENCH read.ioctl_vs_getppid <ratio>
 *   BENCH read.get_time_vs_floor <ratio>
 *
 * the last being GET_TIME over an ioctl of the device that the module
 * refuses at once: what the module itself adds to the kernel's ioctl path.
 * For context, read.ioctl_floor_vs_getppid. Under QEMU's -icount (shift 0)
 * the clock counts instructions, so "ns" are instructions (tests/bench/read.sh).
 *
 * Usage: read_bench [/dev/lclkN]   (LCLK_BENCH_ROUNDS, default 301)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lclk.h"

enum { MMAP, VDSO, IOCTL, GETPPID, FLOOR, MMAP_CPU, NFIG };

static const char * const names[NFIG] = {
	"lclk_now (mmap)", "clock_gettime (vDSO)", "ioctl GET_TIME",
	"getppid", "ioctl, unknown command", "lclk_now, per-CPU offsets",
};

static volatile __s64 sink;

static __s64 now_ns(void)
{
	return lclk_monotonic_ns();
}

/*
 * One loop per method, each in its own function, so that every method is
 * compiled the way a caller with one call site gets it (lclk_now() inlined,
 * as clock_gettime() is called) and no method pays for another's layout.
 */
static __attribute__((noinline)) __s64 loop_mmap(const struct lclk_clock *c,
						 long n)
{
	struct lclk_now out;
	__s64 acc = 0;
	long i;

	for (i = 0; i < n; i++) {
		lclk_now(c, &out);
		acc += out.time_ns + out.bound_ns + out.status;
	}
	return acc;
}

static __attribute__((noinline)) __s64 loop_vdso(long n)
{
	__s64 acc = 0;
	long i;

	for (i = 0; i < n; i++)
		acc += lclk_monotonic_ns();
	return acc;
}

static __attribute__((noinline)) __s64 loop_ioctl(const struct lclk_clock *c,
						  long n)
{
	struct lclk_time t;
	__s64 acc = 0;
	long i;

	for (i = 0; i < n; i++) {
		memset(&t, 0, sizeof(t));
		if (ioctl(c->fd, LCLK_IOC_GET_TIME, &t))
			abort();
		acc += t.logical_ns;
	}
	return acc;
}

/*
 * The floor under any ioctl of the device: an unknown command, refused by
 * the module's handler at once. Whatever GET_TIME costs beyond this is the
 * module's; the rest is the kernel's ioctl path.
 */
static __attribute__((noinline)) __s64 loop_floor(const struct lclk_clock *c,
						  long n)
{
	__s64 acc = 0;
	long i;

	for (i = 0; i < n; i++)
		acc += ioctl(c->fd, _IO(LCLK_IOC_MAGIC, 0), NULL);
	return acc;
}

static __attribute__((noinline)) __s64 loop_getppid(long n)
{
	__s64 acc = 0;
	long i;

	for (i = 0; i < n; i++)
		acc += getppid();
	return acc;
}

/* ns per call of one method over n calls. */
static double run(int what, const struct lclk_clock *c, long n)
{
	__s64 start = now_ns();

	switch (what) {
	case MMAP:
	case MMAP_CPU:
		sink = loop_mmap(c, n);
		break;
	case VDSO:
		sink = loop_vdso(n);
		break;
	case IOCTL:
		sink = loop_ioctl(c, n);
		break;
	case GETPPID:
		sink = loop_getppid(n);
		break;
	case FLOOR:
		sink = loop_floor(c, n);
		break;
	}
	return (double)(now_ns() - start) / n;
}

/* A realistic model: synced, a rate, so every term is computed. */
static void set_model(int fd, int cpu, __s64 cpu_offset)
{
	struct lclk_set_model m;
	struct lclk_cpu_offset co;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE | LCLK_SET_BOUND;
	m.rate_ppt = 12345678;
	m.bound_ns = 1000;
	if (ioctl(fd, LCLK_IOC_SET_MODEL, &m))
		perror("# set-model (results are for the current model)");
	memset(&co, 0, sizeof(co));
	co.cpu = cpu;
	co.offset_ns = cpu_offset;
	co.flags = LCLK_ALLOW_BACKWARD;
	if (ioctl(fd, LCLK_IOC_SET_CPU_OFFSET, &co))
		perror("# set-cpu-offset");
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/lclk0";
	const char *r = getenv("LCLK_BENCH_ROUNDS");
	int rounds = r && atoi(r) > 0 ? atoi(r) : 301;
	double best[NFIG], ns;
	struct lclk_clock c;
	cpu_set_t set;
	int i, k, cpu;

	if (lclk_open(&c, dev)) {
		perror(dev);
		return 1;
	}
	/* One CPU for all of it; the first we may run on. */
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	for (cpu = 0; !CPU_ISSET(cpu, &set); cpu++)
		;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("# sched_setaffinity");

	for (k = 0; k < NFIG; k++)
		best[k] = 1e30;
	set_model(c.fd, cpu, 0);
	for (k = 0; k < NFIG; k++)	/* warm up */
		if (k != MMAP_CPU)
			run(k, &c, 10000);
	for (i = 0; i < rounds; i++) {
		for (k = 0; k < NFIG; k++) {
			if (k == MMAP_CPU)
				continue;
			ns = run(k, &c, k == IOCTL || k == GETPPID ||
				    k == FLOOR ? 1000 : 10000);
			if (ns < best[k])
				best[k] = ns;
		}
	}
	/* With a per-CPU offset, the reader also reads the CPU number. */
	set_model(c.fd, cpu, 1);
	for (i = 0; i < rounds; i++) {
		ns = run(MMAP_CPU, &c, 10000);
		if (ns < best[MMAP_CPU])
			best[MMAP_CPU] = ns;
	}
	set_model(c.fd, cpu, 0);

	printf("# read_bench: %s, CPU %d, best of %d rounds\n", dev, cpu,
	       rounds);
	for (k = 0; k < NFIG; k++)
		printf("# %-28s %8.1f ns/call\n", names[k], best[k]);
	printf("BENCH read.mmap_ns %.1f\n", best[MMAP]);
	printf("BENCH read.vdso_ns %.1f\n", best[VDSO]);
	printf("BENCH read.ioctl_ns %.1f\n", best[IOCTL]);
	printf("BENCH read.getppid_ns %.1f\n", best[GETPPID]);
	printf("BENCH read.ioctl_floor_ns %.1f\n", best[FLOOR]);
	printf("BENCH read.mmap_cpu_offsets_ns %.1f\n", best[MMAP_CPU]);
	printf("BENCH read.mmap_vs_vdso %.2f\n", best[MMAP] / best[VDSO]);
	printf("BENCH read.ioctl_vs_getppid %.2f\n",
	       best[IOCTL] / best[GETPPID]);
	printf("BENCH read.get_time_vs_floor %.2f\n",
	       best[IOCTL] / best[FLOOR]);
	printf("BENCH read.ioctl_floor_vs_getppid %.2f\n",
	       best[FLOOR] / best[GETPPID]);
	lclk_close(&c);
	return 0;
}
