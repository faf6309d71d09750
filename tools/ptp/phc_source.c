// SPDX-License-Identifier: GPL-2.0
/*
 * phc:/dev/ptpN or phc:IFACE - a PTP hardware clock as the reference.
 * Options: clock=tai|utc (what the PHC counts, tai by default, as when
 * ptp4l disciplines it), utc_offset=S, timescale=utc|tai (see ptp_opts.h).
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/priv.h"
#include "sync/source.h"
#include "phc.h"
#include "ptp_opts.h"

struct phc_source {
	struct phc phc;
	struct ptp_opts opts;
};

static int phc_src_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	struct phc_source *ps = calloc(1, sizeof(*ps));
	int r;

	if (!ps)
		return -ENOMEM;
	r = ptp_opts_parse(&ps->opts, spec, "clock utc_offset timescale", err, errlen);
	if (!r)
		r = phc_open(&ps->phc, ps->opts.addr, err, errlen);
	if (r) {
		free(ps);
		return r;
	}
	src->priv = ps;
	return 0;
}

/* The reading with the narrowest error of a burst. */
static int phc_src_measure(struct source *src, const struct target_clock *tc,
			   struct measurement *m, char *err, size_t errlen)
{
	struct phc_source *ps = src->priv;
	unsigned int i, n = src->opts.samples ? src->opts.samples : 1;
	struct phc_reading best = { .error_ns = INT64_MAX }, r;
	int e;

	for (i = 0; i < n; i++) {
		e = phc_read(&ps->phc, &r);
		if (e) {
			snprintf(err, errlen, "%s: %s: %s", ps->phc.path,
				 phc_method_name(ps->phc.method), strerror(-e));
			return e;
		}
		if (r.error_ns < best.error_ns)
			best = r;
	}
	memset(m, 0, sizeof(*m));
	m->base_ns = best.base_ns;
	m->offset_ns = best.base_ns + best.offset_ns - target_from_base(tc, best.base_ns);
	m->bound_ns = best.error_ns;
	m->delay_ns = best.window_ns;
	m->stratum = 1;
	m->samples = n;
	snprintf(m->refid, sizeof(m->refid), "PHC%d", ps->phc.index);
	ptp_opts_timescale(&ps->opts, m, !ps->opts.ref_utc, -1);
	if (src->opts.verbose >= 2)
		fprintf(stderr, "%s: %s, window %lld ns\n", src->url,
			phc_method_name(ps->phc.method), (long long)best.window_ns);
	return 0;
}

static void phc_src_close(struct source *src)
{
	struct phc_source *ps = src->priv;

	phc_close(&ps->phc);
	free(ps);
	src->priv = NULL;
}

/* /dev/ptpN is root's, 0600: read-only opens need CAP_DAC_READ_SEARCH. */
static uint64_t phc_src_caps(const char *spec)
{
	(void)spec;
	return PRIV_CAP(CAP_DAC_READ_SEARCH);
}

const struct source_ops phc_source_ops = {
	.scheme = "phc",
	.sep = ":",
	.open = phc_src_open,
	.measure = phc_src_measure,
	.close = phc_src_close,
	.caps = phc_src_caps,
};
