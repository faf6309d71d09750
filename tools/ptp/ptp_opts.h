/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the PTP backends (phc:, ptp://, ptp4l:) share: options after the
 * address, "ADDRESS?key=value&key", and the timescale rule.
 *
 * Timescale. PTP counts TAI (a grandmaster announcing ptpTimescale), and
 * so does a PHC that ptp4l disciplines; the logical clock counts UTC unless
 * its model says LCLK_MODEL_TAI. A backend reports offsets against UTC:
 * it subtracts TAI - UTC taken, in this order, from
 *   1. the grandmaster's Announce (currentUtcOffset, when
 *      currentUtcOffsetValid is set) - ptp:// and ptp4l:,
 *   2. the utc_offset=SECONDS option,
 * and when neither exists it leaves the offset against TAI and sets
 * measurement.tai, so whoever applies it knows. timescale=tai asks for
 * offsets against TAI (measurement.tai set, no conversion), for a logical
 * clock run on TAI. phc: takes clock=utc for a PHC that counts UTC (an
 * lclk instance's own PHC does, unless its model is TAI). The offset found
 * is kept in measurement.utc_offset, on either timescale, and sync and the
 * daemon convert with it to the clock's (apply_timescale()); a measurement
 * on the other timescale without one is refused.
 *
 * timescale=arb takes the reference's time as it is, whatever it counts:
 * no conversion, measurement.tai clear, no UTC offset. ptp:// refuses a grandmaster that
 * is not traceable to UTC or TAI (an ARB timescale, clockClass 248, ...;
 * ptp_quality.h) unless given timescale=arb; ptp4l: takes a master without
 * ptpTimescale (ptp4l on the system clock) as it is.
 */
#ifndef LCLK_PTP_OPTS_H
#define LCLK_PTP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sync/source.h"
#include "ptp_bmca.h"

#define PTP_OPTS_MAX_ADDR	256

struct ptp_opts {
	char addr[PTP_OPTS_MAX_ADDR];	/* before '?' */
	bool want_tai;			/* timescale=tai: offsets against TAI */
	bool arb;			/* timescale=arb: the reference as it is */
	bool ref_utc;			/* clock=utc: the PHC counts UTC (phc:) */
	bool have_utc_offset;		/* utc_offset= given */
	int utc_offset;			/* TAI - UTC, seconds */
	int domain;			/* domain=N, 0..255 (ptp://, ptp4l:) */
	const char *transport;		/* transport=udp4|l2 (ptp://) */
	const char *ts;			/* ts=auto|sw|hw (ptp://) */
	int64_t wait_ns;		/* wait=DURATION for a master (ptp://) */
	int64_t max_drift_ppb;		/* drift_ppb=N (ptp4l:) */
	const char *phc;		/* phc=/dev/ptpN (ptp4l:) */
	/* allow=ID[,ID...]: the only masters' clock identities (ptp://) */
	uint8_t allow[PTP_MAX_ALLOW][PTP_CLOCK_ID_LEN];
	unsigned int nallow;
	char buf[PTP_OPTS_MAX_ADDR];	/* holds the option strings */
};

/*
 * Parse spec. allowed is a space-separated list of the keys this backend
 * takes; any other key is an error. Returns 0 or -EINVAL with err set.
 */
int ptp_opts_parse(struct ptp_opts *o, const char *spec, const char *allowed,
		   char *err, size_t errlen);

/*
 * Apply the timescale rule to m, whose offset is against a reference that
 * counts TAI (ref_tai) or not. announced >= 0 is a valid currentUtcOffset
 * from the grandmaster, < 0 none.
 */
void ptp_opts_timescale(const struct ptp_opts *o, struct measurement *m,
			bool ref_tai, int announced);

#endif /* LCLK_PTP_OPTS_H */
