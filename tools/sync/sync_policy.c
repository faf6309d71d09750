// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "uapi/linux/lclk.h"
#include "apply.h"
#include "sync_policy.h"

/* Lower is better: class first, then "prefer". */
static int rank(const struct daemon_config *c, unsigned int i)
{
	const struct config_source *s = &c->sources[i];

	return c->class_rank[s->class] * 2 + (s->prefer ? 0 : 1);
}

/* chrony's reselectdist: what a challenger must beat the selected source by. */
#define SYNC_RESELECT_NS	100000

int sync_pick(const struct daemon_config *c, const struct measurement *m,
	      const enum select_state *state, unsigned int n, uint32_t drift_ppb,
	      int64_t now_ns, int prev)
{
	int best = -1, best_rank = 0;
	int64_t best_bound = 0, kept, margin;
	unsigned int i;

	for (i = 0; i < n && i < c->nsources; i++) {
		int64_t b;
		int r;

		if (state[i] != SELECT_SURVIVOR)
			continue;
		r = rank(c, i);
		b = select_aged_bound(&m[i], drift_ppb, now_ns);
		if (best < 0 || r < best_rank || (r == best_rank && b < best_bound)) {
			best = i;
			best_rank = r;
			best_bound = b;
		}
	}
	if (best < 0 || prev < 0 || prev == best || (unsigned int)prev >= n ||
	    (unsigned int)prev >= c->nsources || state[prev] != SELECT_SURVIVOR ||
	    rank(c, prev) != best_rank)
		return best;
	/*
	 * Among equals the selected source stays unless the other is better
	 * by chrony's reselectdist, or by half its bound when that is less
	 * (PTP bounds are far below 100 us): each switch resets the servo.
	 */
	kept = select_aged_bound(&m[prev], drift_ppb, now_ns);
	margin = kept / 2 < SYNC_RESELECT_NS ? kept / 2 : SYNC_RESELECT_NS;
	return kept - best_bound <= margin ? prev : best;
}

int sync_select(const struct daemon_config *c, bool clock_tai, struct measurement *m,
		bool *valid, char (*why)[SYNC_WHY_MAX], unsigned int n, uint32_t drift_ppb,
		int64_t now_ns, int prev, enum select_state *state, int *err,
		struct measurement *combined)
{
	unsigned int i;

	/*
	 * Per source, before selection: one source on the wrong timescale
	 * must not take the others down with it (select_combine() refuses a
	 * mixed set), nor, alone, steer the clock by TAI - UTC.
	 */
	for (i = 0; i < n; i++) {
		why[i][0] = '\0';
		if (valid[i] && apply_timescale(&m[i], clock_tai, why[i], SYNC_WHY_MAX))
			valid[i] = false;
	}
	*err = select_combine(m, valid, n, drift_ppb, now_ns, state, combined);
	return *err ? -1 : sync_pick(c, m, state, n, drift_ppb, now_ns, prev);
}

bool sync_should_step(const struct daemon_config *c, bool unsynced,
		      unsigned int updates, int64_t offset_ns)
{
	if (unsynced)
		return true;
	if (c->makestep_limit >= 0 && updates >= (unsigned int)c->makestep_limit)
		return false;
	if (llabs(offset_ns) <= c->makestep_ns)
		return false;
	return offset_ns > 0 || c->allow_backward;
}

int64_t sync_bound(int64_t residual_ns, int64_t meas_bound_ns, int64_t growth_ppt,
		   uint32_t charged_ppb, int64_t elapsed_ns)
{
	__int128 b = (__int128)llabs(residual_ns) + meas_bound_ns;
	int64_t excess_ppt = growth_ppt - (int64_t)charged_ppb * 1000;

	if (elapsed_ns > 0 && excess_ppt > 0)
		/* Round up: the bound must never be optimistic. */
		b += ((__int128)excess_ppt * elapsed_ns + 999999999999LL) / 1000000000000LL;
	return b > LCLK_MAX_BOUND_NS ? LCLK_MAX_BOUND_NS : (int64_t)b;
}
