// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ntp_filter.h"

#define NTP_FILTER_MAX 256

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* |dt| x ppb, rounded up so a bound never shrinks. */
static int64_t drift_ns(int64_t dt, uint64_t ppb)
{
	return (int64_t)ceil(fabs((double)dt) * (double)ppb / 1e9);
}

static unsigned int delay_tests(const struct ntp_sample *s, unsigned int n,
				const struct ntp_filter_opts *o, bool *keep,
				unsigned int *best)
{
	double mean = 0, var = 0, sd;
	int64_t delays[NTP_FILTER_MAX], median;
	unsigned int i, m = 0, kept = 0;

	for (i = 0; i < n; i++) {
		keep[i] = s[i].delay_ns >= 0 && s[i].delay_ns <= o->max_delay_ns;
		if (keep[i] && (!kept++ || s[i].delay_ns < s[*best].delay_ns))
			*best = i;
	}
	if (!kept)
		return 0;
	for (i = 0; i < n; i++) {
		if (keep[i] && o->max_delay_ratio > 0 &&
		    s[i].delay_ns > s[*best].delay_ns * o->max_delay_ratio) {
			keep[i] = false;
			kept--;
		}
	}
	if (o->max_delay_dev_ratio <= 0 || kept < 3)
		return kept;
	/*
	 * chrony's maxdelaydevratio: a delay increase over the minimum that
	 * is large against the spread of the offsets is queueing, not
	 * information. The spread is taken over the less delayed half, so
	 * the outliers under test do not inflate it, and never counts as less
	 * than the best sample's own timestamping error.
	 */
	for (i = 0; i < n; i++)
		if (keep[i])
			delays[m++] = s[i].delay_ns;
	qsort(delays, m, sizeof(*delays), cmp64);
	median = delays[(m - 1) / 2];
	for (i = 0, m = 0; i < n; i++) {
		if (keep[i] && s[i].delay_ns <= median) {
			mean += s[i].offset_ns;
			m++;
		}
	}
	mean /= m;
	for (i = 0; i < n; i++)
		if (keep[i] && s[i].delay_ns <= median)
			var += (s[i].offset_ns - mean) * (s[i].offset_ns - mean);
	sd = m > 1 ? sqrt(var / (m - 1)) : 0;
	if (sd < s[*best].err_ns + 1)
		sd = s[*best].err_ns + 1;
	for (i = 0; i < n; i++) {
		if (keep[i] && s[i].delay_ns - s[*best].delay_ns > o->max_delay_dev_ratio * sd) {
			keep[i] = false;
			kept--;
		}
	}
	return kept;
}

int ntp_filter(const struct ntp_sample *s, unsigned int n,
	       const struct ntp_filter_opts *o, struct ntp_filter_result *r,
	       bool *used)
{
	bool keep[NTP_FILTER_MAX];
	int64_t lo = INT64_MIN, hi = INT64_MAX, root = 0;
	unsigned int i, best = 0;

	if (n > NTP_FILTER_MAX)
		n = NTP_FILTER_MAX;
	memset(r, 0, sizeof(*r));
	r->used = delay_tests(s, n, o, keep, &best);
	if (used)
		memcpy(used, keep, n * sizeof(*used));
	if (!r->used)
		return -ENODATA;
	r->best = best;
	r->delay_ns = s[best].delay_ns;
	r->base_ns = s[best].base_ns;
	for (i = 0; i < n; i++) {
		int64_t half;

		if (!keep[i])
			continue;
		half = s[i].delay_ns / 2 + s[i].delay_ns % 2 + s[i].err_ns +
		       drift_ns(s[i].base_ns - r->base_ns,
				(uint64_t)o->drift_ppb + o->server_drift_ppb);
		if (s[i].offset_ns - half > lo)
			lo = s[i].offset_ns - half;
		if (s[i].offset_ns + half < hi)
			hi = s[i].offset_ns + half;
		if (s[i].root_ns > root)
			root = s[i].root_ns;
	}
	if (lo > hi) {
		/* A server step or a lie within the burst: trust the best alone. */
		int64_t half = s[best].delay_ns / 2 + s[best].delay_ns % 2 + s[best].err_ns;

		r->inconsistent = true;
		lo = s[best].offset_ns - half;
		hi = s[best].offset_ns + half;
		root = s[best].root_ns;
	}
	r->offset_ns = lo + (hi - lo) / 2 + s[best].shift_ns;
	if (r->offset_ns > hi)
		r->offset_ns = hi;
	if (r->offset_ns < lo)
		r->offset_ns = lo;
	r->bound_ns = (hi - r->offset_ns > r->offset_ns - lo ? hi - r->offset_ns :
		       r->offset_ns - lo) + root;
	return 0;
}
