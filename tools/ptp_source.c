// SPDX-License-Identifier: GPL-2.0
/*
 * ptp://IFACE - lclkctl as a slave-only PTP ordinary clock on IFACE.
 * Options: domain=N (0), transport=udp4|l2 (udp4), ts=auto|sw|hw (auto),
 * wait=DURATION for a qualified master (10s), utc_offset=S,
 * timescale=utc|tai (see ptp_opts.h).
 *
 * A measurement is a burst of Sync + Delay_Req exchanges with the best
 * master, and its result the exchange with the median offset. Each
 * exchange's offset uses its own mean path delay: a delay filtered over
 * many exchanges, as ptp4l keeps, makes every offset t2 - t1 - delay, so
 * that the whole jitter of the Sync's path goes into it, where the
 * exchange's own round trip leaves only the difference of the two
 * directions' jitter, halved. The median then drops the exchanges where
 * one direction was delayed much more than the other; the minimum-delay
 * exchange, chrony's choice against queueing, does worse on a software
 * timestamped link, whose delays come from the hosts and not from queues.
 * The result's bound is that exchange's own: it holds whatever the
 * asymmetry, as each direction took a non-negative time, widened by the
 * drift the target may have between its Sync and its Delay_Req.
 *
 * Between measurements the daemon keeps the port running (idle): it
 * follows its master's Announces and Syncs but sends no Delay_Req.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_offset.h"
#include "clock_quality.h"
#include "ptp_opts.h"
#include "ptp_slave.h"
#include "source.h"

#define PTP_DEFAULT_SAMPLES	8
#define PTP_MAX_SAMPLES		64

struct ptp_source {
	struct ptp_slave slave;
	struct ptp_opts opts;
	unsigned int rejected_reported;	/* slave.rejected, as of the last measurement */
};

static int ptp_src_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	struct ptp_source *ps = calloc(1, sizeof(*ps));
	enum ptp_net_transport t;
	int r;

	if (!ps)
		return -ENOMEM;
	r = ptp_opts_parse(&ps->opts, spec, "domain transport ts wait utc_offset timescale",
			   err, errlen);
	if (r)
		goto fail;
	t = strcmp(ps->opts.transport, "l2") ? PTP_NET_UDP4 : PTP_NET_L2;
	r = ptp_slave_open(&ps->slave, ps->opts.addr, t, ps->opts.ts,
			   (uint8_t)ps->opts.domain, err, errlen);
	if (r)
		goto fail;
	ps->slave.verbose = src->opts.verbose;
	ps->slave.name = src->url;
	src->priv = ps;
	return 0;
fail:
	free(ps);
	return r;
}

static int cmp_s64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

struct candidate {
	int64_t offset;		/* reference - target at base */
	int64_t bound;
	const struct ptp_sample *smp;
};

static int cmp_candidate(const void *a, const void *b)
{
	return cmp_s64(&((const struct candidate *)a)->offset,
		       &((const struct candidate *)b)->offset);
}

static void no_sample(const struct ptp_source *ps, int r, char *err, size_t errlen)
{
	const struct ptp_slave *s = &ps->slave;
	char id[40];

	if (r != -ETIMEDOUT) {
		snprintf(err, errlen, "%s: %s", ps->opts.addr, strerror(-r));
	} else if (!s->have_master) {
		snprintf(err, errlen, "no PTP master on %s (domain %d, %s)%s",
			 ps->opts.addr, ps->opts.domain, ps->opts.transport,
			 s->rejected ? "; messages were rejected (-v says why)" : "");
	} else {
		ptp_port_id_str(&s->master.sender, id, sizeof(id));
		snprintf(err, errlen, "no complete Sync/Delay_Req exchange with master %s", id);
	}
}

/* Collect up to n samples from one master; returns how many, or -errno. */
static int collect(struct ptp_source *ps, const struct source *src,
		   struct ptp_sample *smp, unsigned int n, char *err, size_t errlen)
{
	struct ptp_slave *s = &ps->slave;
	int64_t start = monotonic_ns();
	unsigned int got = 0;

	while (got < n) {
		int64_t wait = 3 * ptp_slave_sync_interval(s), deadline;
		int r;

		if (wait < src->opts.timeout_ns)
			wait = src->opts.timeout_ns;
		deadline = monotonic_ns() + wait;
		/* Until a master qualifies, allow the announce qualification. */
		if (!s->have_master && deadline < start + ps->opts.wait_ns)
			deadline = start + ps->opts.wait_ns;
		r = ptp_slave_run(s, deadline, &smp[got]);
		if (r) {
			if (got && r == -ETIMEDOUT)
				break;
			no_sample(ps, r, err, errlen);
			return r;
		}
		if (got && smp[got].master_gen != smp[0].master_gen) {
			smp[0] = smp[got];	/* the master changed: start over */
			got = 0;
		}
		got++;
	}
	return (int)got;
}

static int ptp_src_measure(struct source *src, const struct target_clock *tc,
			   struct measurement *m, char *err, size_t errlen)
{
	struct ptp_source *ps = src->priv;
	struct ptp_slave *s = &ps->slave;
	unsigned int n = src->opts.samples ? src->opts.samples : PTP_DEFAULT_SAMPLES;
	struct ptp_sample smp[PTP_MAX_SAMPLES];
	struct candidate c[PTP_MAX_SAMPLES];
	const struct ptp_foreign *fm = &s->master;
	uint32_t drift_ppb = clock_quality_drift_ppb(tc);
	int got, i, k;

	if (n > PTP_MAX_SAMPLES)
		n = PTP_MAX_SAMPLES;
	got = collect(ps, src, smp, n, err, errlen);
	if (got < 0)
		return got;
	for (i = 0; i < got; i++) {
		int64_t drift = (int64_t)ceil((double)smp[i].span_ns / 2 * drift_ppb / 1e9);

		c[i].smp = &smp[i];
		c[i].offset = smp[i].base_ns + smp[i].offset_ns -
			      target_from_base(tc, smp[i].base_ns);
		/* +1: offset and delay are halved sums, truncated. */
		c[i].bound = smp[i].delay_ns + smp[i].ts_err_ns + drift + 1;
	}
	qsort(c, got, sizeof(c[0]), cmp_candidate);
	k = got / 2;

	memset(m, 0, sizeof(*m));
	m->offset_ns = c[k].offset;
	m->bound_ns = c[k].bound;
	m->base_ns = c[k].smp->base_ns;
	m->delay_ns = 2 * c[k].smp->delay_ns;
	m->stratum = fm->ann.steps_removed + 1;
	m->leap = fm->flags & PTP_FLAG_LEAP61 ? 1 : fm->flags & PTP_FLAG_LEAP59 ? 2 : 0;
	ptp_clock_id_str(fm->ann.gm_id, m->refid, sizeof(m->refid));
	m->samples = got;
	/* With those rejected while idle since the last measurement. */
	m->rejected = s->rejected - ps->rejected_reported;
	ps->rejected_reported = s->rejected;
	ptp_opts_timescale(&ps->opts, m, fm->flags & PTP_FLAG_PTP_TIMESCALE,
			   fm->flags & PTP_FLAG_UTC_VALID ? fm->ann.utc_offset : -1);
	return 0;
}

static int ptp_src_idle(struct source *src, int64_t deadline_ns)
{
	struct ptp_source *ps = src->priv;
	int r = ptp_slave_idle(&ps->slave, deadline_ns);

	return r == -ETIMEDOUT ? 0 : r;
}

static void ptp_src_close(struct source *src)
{
	struct ptp_source *ps = src->priv;

	ptp_slave_close(&ps->slave);
	free(ps);
	src->priv = NULL;
}

const struct source_ops ptp_source_ops = {
	.scheme = "ptp",
	.sep = "://",
	.open = ptp_src_open,
	.measure = ptp_src_measure,
	.idle = ptp_src_idle,
	.close = ptp_src_close,
};
