// SPDX-License-Identifier: GPL-2.0
/*
 * ptp://IFACE - lclkctl as a slave-only PTP ordinary clock on IFACE.
 * Options: domain=N (0), transport=udp4|l2 (udp4), ts=auto|sw|hw (auto),
 * wait=DURATION for a qualified master (10s), utc_offset=S,
 * timescale=utc|tai|arb (see ptp_opts.h), allow=ID[,ID...]: only Announces
 * from these masters' clock identities (ptp_bmca_allow()).
 *
 * A measurement is a burst: the samples of the Syncs from one master
 * (ptp_slave.h), as many as --samples (8) asks for but only those received
 * within PTP_BURST_SPAN_NS of the first, so that a burst from a master
 * with the default profile's 1 s Sync interval takes 4 Syncs, and a
 * one-shot query against it about 6 to 8 s: 2 to 4 s for the two
 * Announces (2 s apart) that qualify the master, up to 1 s for its next
 * Sync, then 3 s. Its result is the median of their offsets.
 *
 * A Sync followed by its own Delay_Req has that exchange's own mean path
 * delay: a delay filtered over many exchanges, as ptp4l keeps, makes the
 * offset t2 - t1 - delay, so that the whole jitter of the Sync's path goes
 * into it, where the exchange's own round trip leaves only the difference
 * of the two directions' jitter, halved. The median then drops the
 * exchanges where one direction was delayed much more than the other; the
 * minimum-delay exchange, chrony's choice against queueing, does worse on
 * a software timestamped link, whose delays come from the hosts and not
 * from queues. When the master allows fewer Delay_Reqs than Syncs, the
 * Syncs between them take the filtered delay, as in ptp4l.
 *
 * The result's bound holds whatever the asymmetry: each sample's offset
 * lies between what its Sync and its Delay_Req allow, as no path takes
 * negative time, widened by the drift the target may have since each
 * (a Sync without a Delay_Req of its own uses the last one's).
 * The result's base is that of the sample that bounds the median best,
 * and its bound that sample's, plus the distance between the two offsets,
 * plus the grandmaster's clockAccuracy: unless timescale=arb, the
 * grandmaster must be traceable (ptp_quality.h), or the measurement fails.
 * Against the system clock each sample is taken with the REALTIME of its
 * own stamps, and one that spans a step of REALTIME is left out
 * (ptp_burst.c).
 *
 * Between measurements the daemon keeps the port running (idle): it
 * follows its master's Announces and Syncs but sends no Delay_Req.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock_offset.h"
#include "lib/priv.h"
#include "sync/clock_quality.h"
#include "sync/source.h"
#include "ptp_burst.h"
#include "ptp_opts.h"
#include "ptp_quality.h"
#include "ptp_slave.h"

#define PTP_DEFAULT_SAMPLES	8
#define PTP_BURST_SPAN_NS	3000000000LL

/* The options ptp:// takes. */
#define PTP_SRC_KEYS	"domain transport ts wait utc_offset timescale allow"

struct ptp_source {
	struct ptp_slave slave;
	struct ptp_opts opts;
	unsigned int rejected_reported;	/* slave.rejected, as of the last measurement */
};

static int ptp_src_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	struct ptp_source *ps = calloc(1, sizeof(*ps));
	enum ptp_net_transport t;
	unsigned int i;
	int r;

	if (!ps)
		return -ENOMEM;
	r = ptp_opts_parse(&ps->opts, spec,
			   PTP_SRC_KEYS, err, errlen);
	if (r)
		goto fail;
	t = strcmp(ps->opts.transport, "l2") ? PTP_NET_UDP4 : PTP_NET_L2;
	r = ptp_slave_open(&ps->slave, ps->opts.addr, t, ps->opts.ts,
			   (uint8_t)ps->opts.domain, err, errlen);
	if (r)
		goto fail;
	for (i = 0; i < ps->opts.nallow; i++)
		ptp_bmca_allow(&ps->slave.bmca, ps->opts.allow[i]);
	ps->slave.verbose = src->opts.verbose;
	ps->slave.name = src->url;
	src->priv = ps;
	return 0;
fail:
	free(ps);
	return r;
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

/*
 * Collect up to n samples from one master, of Syncs received during this
 * call and within PTP_BURST_SPAN_NS of the first (half a Sync interval
 * early, for their jitter); returns how many, or -errno.
 */
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
		if (smp[got].lo_at < start)
			continue;	/* a Sync from before this measurement */
		if (got && smp[got].master_gen != smp[0].master_gen) {
			smp[0] = smp[got];	/* the master changed: start over */
			got = 0;
		}
		got++;
		if (smp[got - 1].lo_at - smp[0].lo_at + ptp_slave_sync_interval(s) / 2 >=
		    PTP_BURST_SPAN_NS)
			break;
	}
	return (int)got;
}

static int ptp_src_measure(struct source *src, const struct target_clock *tc,
			   struct measurement *m, char *err, size_t errlen)
{
	struct ptp_source *ps = src->priv;
	struct ptp_slave *s = &ps->slave;
	unsigned int n = src->opts.samples ? src->opts.samples : PTP_DEFAULT_SAMPLES;
	struct ptp_sample smp[PTP_BURST_MAX];
	const struct ptp_foreign *fm = &s->master;
	struct ptp_burst res;
	int got;

	if (n > PTP_BURST_MAX)
		n = PTP_BURST_MAX;
	got = collect(ps, src, smp, n, err, errlen);
	if (got < 0)
		return got;
	if (ptp_burst_result(smp, got, tc, clock_quality_drift_ppb(tc), &res)) {
		snprintf(err, errlen, "none of %d samples bounds the %s (REALTIME stepped)",
			 got, target_name(tc));
		return -ERANGE;
	}

	if (!ps->opts.arb) {
		const char *why = ptp_gm_untraceable(&fm->ann, fm->flags);
		char id[24];

		if (why) {
			ptp_clock_id_str(fm->ann.gm_id, id, sizeof(id));
			snprintf(err, errlen,
				 "grandmaster %s is not traceable: %s (timescale=arb takes its time as it is)",
				 id, why);
			return -EPROTO;
		}
		res.bound_ns += ptp_clock_accuracy_ns(fm->ann.quality.accuracy);
	}

	memset(m, 0, sizeof(*m));
	m->offset_ns = res.offset_ns;
	m->bound_ns = res.bound_ns;
	m->base_ns = res.base_ns;
	m->delay_ns = 2 * res.med->delay_ns;
	m->stratum = fm->ann.steps_removed + 1;
	m->leap = fm->flags & PTP_FLAG_LEAP61 ? 1 : fm->flags & PTP_FLAG_LEAP59 ? 2 : 0;
	ptp_clock_id_str(fm->ann.gm_id, m->refid, sizeof(m->refid));
	m->samples = res.used;
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

/*
 * UDP binds the event and general ports, 319 and 320; layer 2 is a packet
 * socket; hardware stamps (ts=hw, or auto where the NIC has them) set
 * SIOCSHWTSTAMP and read the NIC's PHC, root's 0600. A spec that does not
 * parse needs nothing: it never opens.
 */
static uint64_t ptp_src_caps(const char *spec)
{
	struct ptp_opts o;
	char err[128];
	uint64_t caps;

	if (ptp_opts_parse(&o, spec, PTP_SRC_KEYS,
			   err, sizeof(err)))
		return 0;
	caps = strcmp(o.transport, "l2") ? PRIV_CAP(CAP_NET_BIND_SERVICE) : PRIV_CAP(CAP_NET_RAW);
	if (strcmp(o.ts, "sw"))
		caps |= PRIV_CAP(CAP_NET_ADMIN) | PRIV_CAP(CAP_DAC_READ_SEARCH);
	return caps;
}

const struct source_ops ptp_source_ops = {
	.scheme = "ptp",
	.sep = "://",
	.open = ptp_src_open,
	.measure = ptp_src_measure,
	.idle = ptp_src_idle,
	.samples_before = true,
	.close = ptp_src_close,
	.caps = ptp_src_caps,
};
