// SPDX-License-Identifier: GPL-2.0
/*
 * Watch a logical clock from every CPU while something steers it: one
 * reader thread pinned to each CPU reads CLOCK_REALTIME, the logical clock
 * and CLOCK_REALTIME again, and counts readings that go backwards (on that
 * CPU) or whose bound does not cover the system clock (logical - bound >
 * rt_after or logical + bound < rt_before: the ground truth when the
 * sources serve this machine's CLOCK_REALTIME). Runs until SIGTERM/SIGINT.
 *
 *   clock_watch [-d /dev/lclkN] [-i INTERVAL_US]
 *
 * Prints "reads N backward N bound_violations N max_abs_err_ns N
 * max_bound_ns N max_err_over_bound X" and exits 1 on any violation; the
 * first violation is described on stderr, at the CLOCK_MONOTONIC second the
 * daemon's log uses. X is the largest error a reading's CLOCK_REALTIME
 * window allows (|err| less half the window) over its bound: below 1 on
 * every reading exactly when there is no violation.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lclk.h"

struct violation {
	int64_t base_ns;	/* CLOCK_MONOTONIC of the reading, 0: none */
	int64_t err_ns;		/* logical - middle of the CLOCK_REALTIME window */
	int64_t window_ns;
	int64_t bound_ns;
};

struct reader {
	pthread_t thread;
	int cpu;
	unsigned long long reads, backward, violations;
	int64_t max_abs_err, max_bound;
	double max_err_over_bound;
	struct violation first;
};

static struct lclk_clock clk;
static volatile sig_atomic_t stop;
static long interval_us = 200;

static int64_t rt_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *read_loop(void *arg)
{
	struct reader *r = arg;
	int64_t prev = INT64_MIN;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(r->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!stop) {
		struct lclk_now now;
		int64_t before = rt_ns(), after, err;

		lclk_now(&clk, &now);
		after = rt_ns();
		r->reads++;
		if (now.time_ns < prev)
			r->backward++;
		prev = now.time_ns;
		if (now.status != LCLK_STATUS_UNSYNCED) {
			err = now.time_ns - (before + (after - before) / 2);
			if (llabs(err) > r->max_abs_err)
				r->max_abs_err = llabs(err);
			if (now.bound_ns > r->max_bound)
				r->max_bound = now.bound_ns;
			if (now.bound_ns > 0) {
				double least = llabs(err) - (after - before) / 2;

				if (least / now.bound_ns > r->max_err_over_bound)
					r->max_err_over_bound = least / now.bound_ns;
			}
			if (now.time_ns - now.bound_ns > after || now.time_ns + now.bound_ns < before) {
				if (!r->violations++)
					r->first = (struct violation){ .base_ns = now.base_ns,
						.err_ns = err, .window_ns = after - before,
						.bound_ns = now.bound_ns };
			}
		}
		if (interval_us)
			usleep(interval_us);
	}
	return NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/lclk0";
	struct reader *r, total = {};
	int opt, i, ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	while ((opt = getopt(argc, argv, "d:i:")) != -1) {
		if (opt == 'd') {
			dev = optarg;
		} else if (opt == 'i') {
			interval_us = atol(optarg);
		} else {
			fprintf(stderr, "usage: clock_watch [-d /dev/lclkN] [-i INTERVAL_US]\n");
			return 2;
		}
	}
	if (lclk_open(&clk, dev)) {
		perror(dev);
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	r = calloc(ncpu, sizeof(*r));
	for (i = 0; i < ncpu; i++) {
		r[i].cpu = i;
		pthread_create(&r[i].thread, NULL, read_loop, &r[i]);
	}
	for (i = 0; i < ncpu; i++) {
		pthread_join(r[i].thread, NULL);
		total.reads += r[i].reads;
		total.backward += r[i].backward;
		total.violations += r[i].violations;
		if (r[i].max_abs_err > total.max_abs_err)
			total.max_abs_err = r[i].max_abs_err;
		if (r[i].max_bound > total.max_bound)
			total.max_bound = r[i].max_bound;
		if (r[i].max_err_over_bound > total.max_err_over_bound)
			total.max_err_over_bound = r[i].max_err_over_bound;
		if (r[i].first.base_ns &&
		    (!total.first.base_ns || r[i].first.base_ns < total.first.base_ns))
			total.first = r[i].first;
	}
	if (total.first.base_ns)
		fprintf(stderr, "first violation at [%.3f]: logical - realtime %lld ns (window %lld ns), bound %lld ns\n",
			total.first.base_ns / 1e9, (long long)total.first.err_ns,
			(long long)total.first.window_ns, (long long)total.first.bound_ns);
	printf("reads %llu backward %llu bound_violations %llu max_abs_err_ns %lld max_bound_ns %lld max_err_over_bound %.3f\n",
	       total.reads, total.backward, total.violations, (long long)total.max_abs_err,
	       (long long)total.max_bound, total.max_err_over_bound);
	free(r);
	return total.backward || total.violations;
}
