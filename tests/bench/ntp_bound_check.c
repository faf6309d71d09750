// SPDX-License-Identifier: GPL-2.0
/*
 * Ground truth for tests whose reference serves this machine's own
 * CLOCK_REALTIME: reads the logical clock N times between two
 * CLOCK_REALTIME reads and counts the readings whose bound does not cover
 * the system clock, i.e. logical - bound > rt_after or logical + bound <
 * rt_before. With -r, another logical clock (the one a PHC source reads)
 * is the reference instead, read the same way.
 *
 *   ntp_bound_check [-d /dev/lclkN] [-r /dev/lclkM] [-n READS] [-i INTERVAL_US]
 *
 * Prints "reads N violations N median_err_ns X max_err_ns X bound_ns X
 * p99_err_ns X" (err = |logical - reference|, middle of the window) and
 * exits 1 on any violation, 2 if the clock is not synchronised.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lclk.h"

/* The reference now: ref's logical time, or CLOCK_REALTIME without one. */
static int64_t ref_ns(struct lclk_clock *ref)
{
	struct lclk_now now;
	struct timespec ts;

	if (ref->fd >= 0) {
		lclk_now(ref, &now);
		return now.time_ns;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/lclk0", *ref_dev = NULL;
	long n = 5000, interval_us = 200, i, bad = 0;
	struct lclk_clock c = { .fd = -1 }, ref = { .fd = -1 };
	int64_t *err, maxerr = 0, maxbound = 0;
	int opt;

	while ((opt = getopt(argc, argv, "d:r:n:i:")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'r':
			ref_dev = optarg;
			break;
		case 'n':
			n = atol(optarg);
			break;
		case 'i':
			interval_us = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d DEV] [-r REF_DEV] [-n READS] [-i INTERVAL_US]\n",
				argv[0]);
			return 2;
		}
	}
	if (n < 1 || lclk_open(&c, dev)) {
		perror(dev);
		return 2;
	}
	if (ref_dev && lclk_open(&ref, ref_dev)) {
		perror(ref_dev);
		return 2;
	}
	err = calloc(n, sizeof(*err));
	if (!err)
		return 2;
	for (i = 0; i < n; i++) {
		struct lclk_now now;
		int64_t before, after;

		/*
		 * The first reads after a sleep are slow (cold caches; under
		 * TCG a window of ~4 us instead of ~1 us), and slow mostly
		 * after the reference is sampled: the middle of the window
		 * then falls early and the error reads high by up to half
		 * of it. Warm both up first, so the window brackets only the
		 * reads.
		 */
		ref_ns(&ref);
		lclk_now(&c, &now);
		before = ref_ns(&ref);

		lclk_now(&c, &now);
		after = ref_ns(&ref);
		if (now.status == LCLK_STATUS_UNSYNCED) {
			fprintf(stderr, "clock is not synchronised\n");
			return 2;
		}
		if (now.time_ns - now.bound_ns > after || now.time_ns + now.bound_ns < before) {
			if (bad++ < 5)
				fprintf(stderr, "violation: logical - reference %lld, bound %lld\n",
					(long long)(now.time_ns - (before + after) / 2),
					(long long)now.bound_ns);
		}
		err[i] = llabs(now.time_ns - before / 2 - after / 2);
		if (err[i] > maxerr)
			maxerr = err[i];
		if (now.bound_ns > maxbound)
			maxbound = now.bound_ns;
		if (interval_us)
			usleep(interval_us);
	}
	qsort(err, n, sizeof(*err), cmp64);
	printf("reads %ld violations %ld median_err_ns %lld max_err_ns %lld bound_ns %lld p99_err_ns %lld\n",
	       n, bad, (long long)err[n / 2], (long long)maxerr, (long long)maxbound,
	       (long long)err[n * 99 / 100]);
	lclk_close(&c);
	if (ref_dev)
		lclk_close(&ref);
	return bad ? 1 : 0;
}
