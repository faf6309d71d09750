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
 * The sample's offset against the system clock. Its REALTIME - MONOTONIC
 * difference is the one of the sample's own instants, which their stamps
 * tell (lo_rt, hi_rt), not one measured now: a step of REALTIME since
 * would go into the offset whole, far beyond a bound of microseconds (make
 * check saw -2 to -9 ms against bounds of 10-500 us, after this build
 * machine's VM had been paused). The offset is the one at the
 * Sync's receipt, where the difference is that of its stamp: lo_rt -
 * lo_at, to lo_err (the stamp's own conversion) and lo_rt_err. A sample
 * whose two instants disagree on it beyond their errors spans a step of the
 * system clock, and bounds none of its readings: it is left out (so is
 * one whose REALTIME is not known).
 */
static bool candidate_system(struct candidate *c, const struct ptp_sample *smp,
			     uint32_t drift_ppb)
{
	int64_t d_lo = smp->lo_rt - smp->lo_at, d_hi = smp->hi_rt - smp->hi_at;
	int64_t e_lo = smp->lo_err + smp->lo_rt_err, e_hi = smp->hi_err + smp->hi_rt_err;
	int64_t lo, hi;

	if (smp->lo_rt_err < 0 || smp->hi_rt_err < 0 || llabs(d_lo - d_hi) > e_lo + e_hi)
		return false;
	/* t1 - t2 in the system clock's own readings: no path is negative. */
	lo = smp->lo_ns - d_lo - smp->lo_rt_err;
	/* The Delay_Req's limit, carried to the Sync's receipt. */
	hi = smp->hi_ns + smp->hi_err + drift_ns(smp->lo_at - smp->hi_at, drift_ppb) - d_lo + e_lo;
	c->smp = smp;
	c->base = smp->lo_at;
	c->offset = smp->offset_ns - d_lo;
	c->bound = (c->offset - lo > hi - c->offset ? c->offset - lo : hi - c->offset) + 1;
	return true;
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
	int64_t lo, hi;

	if (!tc->logical)
		return candidate_system(c, smp, drift_ppb);
	lo = against_target(tc, smp->lo_at, smp->lo_ns) - smp->lo_err -
	     drift_ns(smp->base_ns - smp->lo_at, drift_ppb);
	hi = against_target(tc, smp->hi_at, smp->hi_ns) + smp->hi_err +
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
