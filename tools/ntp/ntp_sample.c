// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "ntp_sample.h"

void ntp_exchange_compute(struct ntp_exchange *x, uint64_t rx)
{
	x->t2 = ntp_ts_to_unix_ns(rx, x->ours.t1);
	x->t3 = ntp_ts_to_unix_ns(x->reply.transmit_ts, x->ours.t1);
	x->offset_ns = ((x->t2 - x->ours.t1) + (x->t3 - x->ours.t4)) / 2;
	x->delay_ns = (x->ours.t4 - x->ours.t1) - (x->t3 - x->t2);
	if (x->delay_ns < 0)
		x->verdict = NTP_NEGATIVE_DELAY;
}

void ntp_exchange_sample(const struct ntp_exchange *x, int64_t precision_ns,
			 uint32_t drift_ppb, struct ntp_sample *s)
{
	s->offset_ns = x->offset_ns;
	s->delay_ns = x->delay_ns;
	/* +1: the offset is a halved sum, truncated. */
	s->err_ns = x->ours.err_ns + precision_ns + ntp_log2_to_ns(x->reply.precision) +
		    (int64_t)ceil((double)(x->ours.t4 - x->ours.t1) * drift_ppb / 1e9) + 1;
	s->root_ns = ntp_short_to_ns(x->reply.root_delay) / 2 +
		     ntp_short_to_ns(x->reply.root_dispersion);
	s->base_ns = x->ours.base1 + (x->ours.base4 - x->ours.base1) / 2;
	/* An interleaved t3 is the kernel's: no send path to make up for. */
	s->shift_ns = x->interleaved ? 0 : x->send_path_ns / 2;
}
