// SPDX-License-Identifier: GPL-2.0
/* A ptp:// measurement from a burst of samples: median and bound. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ptp_burst.h"

struct candidate {
	int64_t offset;		/* reference - target at base */
	int64_t bound;		/* |true offset - offset| at base */
	int64_t base;
	const struct ptp_sample *smp;
};

static int cmp_s64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_candidate(const void *a, const void *b)
{
	return cmp_s64(&((const struct candidate *)a)->offset,
		       &((const struct candidate *)b)->offset);
}

/* What the target may drift from true time over dt, rounded up. */
static int64_t drift_ns(int64_t dt, uint32_t drift_ppb)
{
	return (int64_t)ceil((double)llabs(dt) * drift_ppb / 1e9);
}

/* A master - CLOCK_MONOTONIC offset at mono_ns as reference - target. */
static int64_t against_target(const struct target_clock *tc, int64_t mono_ns, int64_t offset)
{
	return mono_ns + offset - target_from_base(tc, mono_ns);
}

/*
 * The sample's offset against the target, and how far the true one may
 * lie from it: between the Sync's lower and the Delay_Req's upper limit,
 * each widened by its conversion error and the drift from its time to the
 * base. +1: the offset of an exchange is a halved sum, truncated.
 */
static bool candidate(struct candidate *c, const struct ptp_sample *smp,
		      const struct target_clock *tc, uint32_t drift_ppb)
{
	int64_t lo = against_target(tc, smp->lo_at, smp->lo_ns) - smp->lo_err -
		     drift_ns(smp->base_ns - smp->lo_at, drift_ppb);
	int64_t hi = against_target(tc, smp->hi_at, smp->hi_ns) + smp->hi_err +
		     drift_ns(smp->base_ns - smp->hi_at, drift_ppb);

	c->smp = smp;
	c->base = smp->base_ns;
	c->offset = against_target(tc, smp->base_ns, smp->offset_ns);
	c->bound = (c->offset - lo > hi - c->offset ? c->offset - lo : hi - c->offset) + 1;
	return true;
}

int ptp_burst_result(const struct ptp_sample *smp, int n, const struct target_clock *tc,
		     uint32_t drift_ppb, struct ptp_burst *out)
{
	struct candidate c[PTP_BURST_MAX];
	const struct candidate *med, *best;
	int64_t bound;
	int got = 0, i;

	for (i = 0; i < n && i < PTP_BURST_MAX; i++)
		if (candidate(&c[got], &smp[i], tc, drift_ppb))
			got++;
	if (!got)
		return -ERANGE;
	qsort(c, got, sizeof(c[0]), cmp_candidate);
	med = &c[got / 2];
	/*
	 * The median is a number every sample bounds: the true offset at a
	 * sample's base is within its bound of its offset, so within that
	 * plus their distance of the median. Report the median at the base
	 * of the sample that bounds it best.
	 */
	best = med;
	bound = med->bound;
	for (i = 0; i < got; i++) {
		int64_t b = llabs(c[i].offset - med->offset) + c[i].bound;

		if (b < bound) {
			best = &c[i];
			bound = b;
		}
	}
	out->offset_ns = med->offset;
	out->bound_ns = bound;
	out->base_ns = best->base;
	out->med = med->smp;
	out->used = got;
	return 0;
}
