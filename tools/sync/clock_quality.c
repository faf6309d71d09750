// SPDX-License-Identifier: GPL-2.0
#include "clock_quality.h"

uint32_t clock_quality_drift_ppb(const struct target_clock *tc)
{
	if (!tc->logical)
		return CLOCK_QUALITY_SYSTEM_DRIFT_PPB;
	return __atomic_load_n(&tc->lc.page->params.max_drift_ppb, __ATOMIC_RELAXED);
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
