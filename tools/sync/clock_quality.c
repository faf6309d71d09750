// SPDX-License-Identifier: GPL-2.0
#include "clock_quality.h"

/*
 * The growth the module gives its own bound, drift_mult (2^-40 ns per ns),
 * in ppb rounded up: max_drift, or more after a rate set through the PTP
 * clock (kmod/lclk_state.h, lclk_widen_rate()).
 */
uint32_t clock_quality_drift_ppb(const struct target_clock *tc)
{
	struct lclk_params m;
	__u64 ppb;

	if (!tc->logical)
		return CLOCK_QUALITY_SYSTEM_DRIFT_PPB;
	if (lclk_get_model(&tc->lc, &m))
		return UINT32_MAX;	/* not known: the most it can say */
	if (m.drift_mult <= 0)
		return 0;
	ppb = ((unsigned __int128)m.drift_mult * 1000000000u + (1ULL << LCLK_RATE_SHIFT) - 1) >>
	      LCLK_RATE_SHIFT;
	return ppb > UINT32_MAX ? UINT32_MAX : (uint32_t)ppb;
}

/* As chrony measures it: the least non-zero difference of close reads. */
int64_t clock_quality_precision_ns(const struct target_clock *tc)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 100; i++) {
		struct lclk_now a, b;

		target_now(tc, &a);
		do
			target_now(tc, &b);
		while (b.time_ns == a.time_ns);
		if (b.time_ns - a.time_ns < best)
			best = b.time_ns - a.time_ns;
	}
	return best > 0 ? best : 1;
}
