/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Clock filter for one burst from one server: chrony-style delay tests
 * drop samples delayed by queueing, the minimum-delay sample anchors the
 * result, and the intersection of the survivors' error intervals narrows
 * it.
 *
 * Each sample says the server's clock minus ours lies in
 *   [offset - delay/2 - err, offset + delay/2 + err]
 * (the request and the reply each took a non-negative time), which is
 * true whatever the asymmetry of the path. Moved to the time of the
 * minimum-delay sample (widened by how far the two clocks can drift apart
 * in the time between them: the target's drift plus the server's), all
 * intervals contain the true offset, so their intersection does too. The
 * server's part is 500 ppm, the fastest the kernel slews a clock for ntpd
 * (adjtimex's MAXFREQ, adjtime()): a server slewing out an offset moves
 * its clock that fast without its root dispersion saying so. Its
 * midpoint is the estimate: with a one-way jitter it takes the least
 * delayed request and the least delayed reply even from different samples.
 *
 * Servers (chronyd, ntpd) write their transmit timestamp before their send
 * path, while our kernel stamps the request after ours: the reply's leg
 * looks longer than the request's by the server's send path. The estimate
 * is moved by the best sample's shift_ns (half our own send path, the
 * best guess of half the server's) within the intersection; the bound is
 * still taken from the intersection, so it holds either way.
 */
#ifndef LCLK_NTP_FILTER_H
#define LCLK_NTP_FILTER_H

#include <stdbool.h>
#include <stdint.h>

struct ntp_sample {
	int64_t offset_ns;	/* server - target */
	int64_t delay_ns;	/* round trip minus the server's hold time */
	int64_t err_ns;		/* precisions, timestamp conversion, drift x delay */
	int64_t root_ns;	/* server's root delay / 2 + root dispersion */
	int64_t base_ns;	/* CLOCK_MONOTONIC the sample is for */
	int64_t shift_ns;	/* estimate correction, see below */
};

struct ntp_filter_opts {
	int64_t max_delay_ns;		/* chrony maxdelay: absolute limit */
	double max_delay_ratio;		/* chrony maxdelayratio, 0: off */
	double max_delay_dev_ratio;	/* chrony maxdelaydevratio, 0: off */
	uint32_t drift_ppb;		/* max frequency error of the target */
	uint32_t server_drift_ppb;	/* ... and of the server's clock */
};

#define NTP_SERVER_DRIFT_PPB	500000

/* chrony's defaults: maxdelay 3 s, maxdelaydevratio 10. */
#define NTP_FILTER_DEFAULTS { .max_delay_ns = 3000000000LL, \
			      .max_delay_ratio = 0, .max_delay_dev_ratio = 10, \
			      .server_drift_ppb = NTP_SERVER_DRIFT_PPB }

struct ntp_filter_result {
	int64_t offset_ns;
	int64_t bound_ns;	/* root distance: interval half width + root */
	int64_t delay_ns;	/* of the minimum-delay sample */
	int64_t base_ns;	/* of the minimum-delay sample */
	unsigned int best;	/* index of the minimum-delay sample */
	unsigned int used;	/* samples that passed the delay tests */
	bool inconsistent;	/* intervals did not intersect: best sample alone */
};

/*
 * Filter n samples; used[i] (may be NULL) tells which passed. Returns 0,
 * or -ENODATA when none passed.
 */
int ntp_filter(const struct ntp_sample *s, unsigned int n,
	       const struct ntp_filter_opts *o, struct ntp_filter_result *r,
	       bool *used);

#endif /* LCLK_NTP_FILTER_H */
