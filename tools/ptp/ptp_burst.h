/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A ptp:// measurement from a burst of samples (ptp_slave.h): the median
 * of their offsets against the target clock, and a bound that every sample
 * vouches for (ptp_source.c says how).
 */
#ifndef LCLK_PTP_BURST_H
#define LCLK_PTP_BURST_H

#include <stdint.h>

#include "lib/clock.h"
#include "ptp_slave.h"

#define PTP_BURST_MAX	64	/* samples in a burst, at most */

struct ptp_burst {
	int64_t offset_ns;	/* reference - target at base_ns */
	int64_t bound_ns;	/* without the grandmaster's accuracy */
	int64_t base_ns;
	const struct ptp_sample *med;	/* the median's sample */
	int used;		/* samples that bound the target's offset */
};

/*
 * The burst's n (<= PTP_BURST_MAX) samples against tc, the target drifting
 * up to drift_ppb. Returns 0, or -ERANGE if no sample bounds the target's
 * offset.
 */
int ptp_burst_result(const struct ptp_sample *smp, int n, const struct target_clock *tc,
		     uint32_t drift_ppb, struct ptp_burst *out);

#endif /* LCLK_PTP_BURST_H */
