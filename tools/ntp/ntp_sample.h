/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The arithmetic of one NTP exchange: its offset and delay from the four
 * timestamps, and the filter sample with its error. No I/O, so the path
 * from a reply's bytes to a sample is unit-tested and fuzzed whole.
 */
#ifndef LCLK_NTP_SAMPLE_H
#define LCLK_NTP_SAMPLE_H

#include <stdint.h>

#include "ntp_client.h"
#include "ntp_filter.h"

/*
 * Offset and delay of x from x->ours (t1, t4), rx (the server's raw
 * receive timestamp) and the reply's transmit timestamp; a negative delay
 * makes x->verdict NTP_NEGATIVE_DELAY.
 */
void ntp_exchange_compute(struct ntp_exchange *x, uint64_t rx);

/*
 * A usable exchange as a filter sample. precision_ns is ours; drift_ppb
 * the target's largest frequency error, over the round trip.
 */
void ntp_exchange_sample(const struct ntp_exchange *x, int64_t precision_ns,
			 uint32_t drift_ppb, struct ntp_sample *s);

#endif /* LCLK_NTP_SAMPLE_H */
