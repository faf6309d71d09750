// SPDX-License-Identifier: GPL-2.0
/*
 * PHC read cost and quality: phc_read N times on DEV (/dev/ptpN or an
 * interface) and print "BENCH ptp.phc_window_ns_median W", "BENCH
 * ptp.phc_ns_per_read T" and the method that the driver supports.
 */
#include <stdio.h>
#include <stdlib.h>

#include "lib/clock_offset.h"
#include "ptp/phc.h"

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct phc_reading r;
	int64_t *w, t0;
	char err[256];
	struct phc p;
	int i, n;

	if (argc != 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: phc_read DEV COUNT\n");
		return 2;
	}
	if (phc_open(&p, argv[1], err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	w = calloc(n, sizeof(*w));
	if (!w || phc_read(&p, &r))	/* settles the method */
		return 1;
	t0 = monotonic_ns();
	for (i = 0; i < n; i++) {
		if (phc_read(&p, &r))
			return 1;
		w[i] = r.window_ns;
	}
	t0 = monotonic_ns() - t0;
	qsort(w, n, sizeof(*w), cmp);
	printf("# %s: %s, %d reads of %d samples each\n", p.path, phc_method_name(p.method), n,
	       p.method == PHC_PRECISE ? 1 : PHC_READS);
	printf("BENCH ptp.phc_window_ns_median %lld\n", (long long)w[n / 2]);
	printf("BENCH ptp.phc_ns_per_read %lld\n", (long long)(t0 / n));
	phc_close(&p);
	free(w);
	return 0;
}
