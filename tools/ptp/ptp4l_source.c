// SPDX-License-Identifier: GPL-2.0
/*
 * ptp4l:PATH - the time of a running ptp4l, read as Meta's fbclock does:
 * TIME_STATUS_NP gives the offset of ptp4l's clock from its master at the
 * last Sync (master_offset, ingress_time), the current and parent datasets
 * give the path delay and the grandmaster, and ptp4l's clock itself is read
 * here: the NIC's PHC with hardware timestamping, the system clock with
 * software timestamping. Then
 *
 *	reference(t) = clock(t) - master_offset
 *	bound        = meanPathDelay + (clock - ingress_time) * drift + read error
 *
 * meanPathDelay bounds the error of ptp4l's offset if the path delay is
 * steady (ptp4l filters it); drift is how fast ptp4l's clock may wander
 * from the master between Syncs, drift_ppb=N (1000 by default).
 *
 * As for ptp://, the bound is against true time: it adds the grandmaster's
 * clockAccuracy (the parent dataset's grandmasterClockQuality), and a
 * grandmaster that is not traceable (the time properties dataset's flags,
 * ptp_quality.h) is refused unless timescale=arb.
 *
 * Options: domain=N (ptp4l's domainNumber, 0), phc=/dev/ptpN (instead of
 * the interface's PHC), drift_ppb=N, utc_offset=S, timescale=utc|tai|arb.
 * Only single-port ptp4l (an ordinary clock) is read.
 */
#include <endian.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock_offset.h"
#include "lib/priv.h"
#include "sync/source.h"
#include "phc.h"
#include "pmc_client.h"
#include "pmc_data.h"
#include "ptp_opts.h"
#include "ptp_quality.h"

#define PMC_TIMEOUT_NS		1000000000LL

struct ptp4l_source {
	struct pmc_client pmc;
	struct ptp_opts opts;
	bool system_clock;	/* ptp4l stamps with CLOCK_REALTIME */
	struct phc phc;
	char iface[64];
};

/* GET id, its data as the struct out of size bytes (pmc_data.h). */
static int get(struct ptp4l_source *ps, uint16_t id, void *out, size_t size,
	       char *err, size_t errlen)
{
	struct ptp_management mg;
	int r = pmc_get(&ps->pmc, id, PMC_TIMEOUT_NS, &mg, err, errlen);

	if (!r && !pmc_data(&mg, out, size)) {
		snprintf(err, errlen, "%s: management id 0x%04x: %u bytes, expected %zu",
			 ps->opts.addr, id, mg.data_len, size);
		return -EBADMSG;
	}
	return r;
}

/* Which clock ptp4l stamps with: the system clock or its interface's PHC. */
static int find_clock(struct ptp4l_source *ps, char *err, size_t errlen)
{
	struct pmc_port_properties_np pp;
	struct ptp_management mg;
	int r;

	r = pmc_get(&ps->pmc, PTP_MID_PORT_PROPERTIES_NP, PMC_TIMEOUT_NS, &mg, err, errlen);
	if (!r && !pmc_data(&mg, &pp, sizeof(pp))) {
		snprintf(err, errlen, "%s: management id 0x%04x: %u bytes, expected %zu",
			 ps->opts.addr, PTP_MID_PORT_PROPERTIES_NP, mg.data_len, sizeof(pp));
		r = -EBADMSG;
	}
	if (r)
		return r;
	if (pmc_port_properties(&mg, &pp, ps->iface, sizeof(ps->iface))) {
		snprintf(err, errlen, "%s: bad PORT_PROPERTIES_NP interface name", ps->opts.addr);
		return -EBADMSG;
	}
	ps->system_clock = pp.timestamping == PMC_TS_SOFTWARE ||
			   pp.timestamping == PMC_TS_LEGACY_HW;
	if (ps->system_clock)
		return 0;
	return phc_open(&ps->phc, ps->opts.phc ? ps->opts.phc : ps->iface, err, errlen);
}

static int ptp4l_src_open(struct source *src, const char *spec, char *err, size_t errlen)
{
	struct ptp4l_source *ps = calloc(1, sizeof(*ps));
	int r;

	if (!ps)
		return -ENOMEM;
	ps->phc.fd = -1;
	r = ptp_opts_parse(&ps->opts, spec, "domain phc drift_ppb utc_offset timescale",
			   err, errlen);
	if (!r)
		r = pmc_open(&ps->pmc, ps->opts.addr, (uint8_t)ps->opts.domain, err, errlen);
	if (r) {
		free(ps);
		return r;
	}
	r = find_clock(ps, err, errlen);
	if (r) {
		pmc_close(&ps->pmc);
		free(ps);
		return r;
	}
	src->priv = ps;
	return 0;
}

/* ptp4l's clock - CLOCK_MONOTONIC, and the error of that reading. */
static int read_clock(struct ptp4l_source *ps, int64_t *off, int64_t *error,
		      char *err, size_t errlen)
{
	struct phc_reading r;
	int64_t width;
	int e;

	if (ps->system_clock) {
		e = clock_offset_from_mono(CLOCK_REALTIME, 3, off, &width);
		*error = (width + 1) / 2;
	} else {
		e = phc_read(&ps->phc, &r);
		*off = r.offset_ns;
		*error = r.error_ns;
	}
	if (e)
		snprintf(err, errlen, "%s: reading ptp4l's clock: %s", ps->opts.addr, strerror(-e));
	return e;
}

/*
 * The grandmaster's clockAccuracy in ns (0 with timescale=arb), from the
 * parent dataset's grandmasterClockQuality and the time properties' flags;
 * -EPROTO if it is not traceable.
 */
static int gm_accuracy_ns(const struct ptp4l_source *ps, const struct pmc_parent_ds *parent,
			  uint8_t flags, int64_t *accuracy, char *err, size_t errlen)
{
	struct ptp_announce gm = { .quality = {
		.clock_class = parent->gm_quality.clock_class,
		.accuracy = parent->gm_quality.clock_accuracy } };
	const char *why;
	char id[24];

	*accuracy = 0;
	if (ps->opts.arb)
		return 0;
	why = ptp_gm_untraceable(&gm, flags);
	if (why) {
		ptp_clock_id_str(parent->gm_identity.id, id, sizeof(id));
		snprintf(err, errlen,
			 "%s: grandmaster %s is not traceable: %s (timescale=arb takes its time as it is)",
			 ps->opts.addr, id, why);
		return -EPROTO;
	}
	*accuracy = ptp_clock_accuracy_ns(gm.quality.accuracy);
	return 0;
}

static int ptp4l_src_measure(struct source *src, const struct target_clock *tc,
			     struct measurement *m, char *err, size_t errlen)
{
	struct ptp4l_source *ps = src->priv;
	struct pmc_port_ds port;
	struct pmc_time_status_np ts;
	struct pmc_current_ds cur;
	struct pmc_parent_ds parent;
	struct pmc_time_properties_ds tprop;
	int64_t master_offset, ingress, mpd, clk_off, clk_err, age, base, accuracy;
	unsigned int rejected = ps->pmc.rejected;
	uint8_t flags;
	int r;

	if ((r = get(ps, PTP_MID_PORT_DATA_SET, &port, sizeof(port), err, errlen)) ||
	    (r = get(ps, PTP_MID_TIME_STATUS_NP, &ts, sizeof(ts), err, errlen)) ||
	    (r = get(ps, PTP_MID_CURRENT_DATA_SET, &cur, sizeof(cur), err, errlen)) ||
	    (r = get(ps, PTP_MID_PARENT_DATA_SET, &parent, sizeof(parent), err, errlen)) ||
	    (r = get(ps, PTP_MID_TIME_PROPERTIES_DATA_SET, &tprop, sizeof(tprop), err, errlen)))
		return r;
	if (port.port_state != PMC_PORT_SLAVE && port.port_state != PMC_PORT_UNCALIBRATED) {
		snprintf(err, errlen, "%s: ptp4l's port is in state %u, not SLAVE or UNCALIBRATED",
			 ps->opts.addr, port.port_state);
		return -ENOLINK;
	}
	if (!be32toh((uint32_t)ts.gm_present)) {
		snprintf(err, errlen, "%s: ptp4l has no grandmaster", ps->opts.addr);
		return -ENOLINK;
	}
	flags = tprop.flags;
	r = gm_accuracy_ns(ps, &parent, flags, &accuracy, err, errlen);
	if (r)
		return r;
	master_offset = (int64_t)be64toh(ts.master_offset);
	ingress = (int64_t)be64toh(ts.ingress_time);
	mpd = (int64_t)be64toh(cur.mean_path_delay) >> PMC_TIME_INTERVAL_SHIFT;
	r = read_clock(ps, &clk_off, &clk_err, err, errlen);
	if (r)
		return r;
	base = monotonic_ns();
	age = base + clk_off - ingress;
	if (age < 0)
		age = 0;

	memset(m, 0, sizeof(*m));
	m->base_ns = base;
	m->offset_ns = base + clk_off - master_offset - target_from_base(tc, base);
	m->bound_ns = (mpd > 0 ? mpd : 0) + age / 1000000000LL * ps->opts.max_drift_ppb +
		      age % 1000000000LL * ps->opts.max_drift_ppb / 1000000000LL + clk_err +
		      accuracy;
	m->delay_ns = 2 * mpd;
	m->stratum = be16toh(cur.steps_removed);	/* ptp4l counts its own hop */
	m->leap = flags & PTP_FLAG_LEAP61 ? 1 : flags & PTP_FLAG_LEAP59 ? 2 : 0;
	ptp_clock_id_str(parent.gm_identity.id, m->refid, sizeof(m->refid));
	m->samples = 1;
	m->rejected = ps->pmc.rejected - rejected;
	/*
	 * On the system clock ptp4l already moved master_offset to UTC;
	 * a PHC counts the master's timescale.
	 */
	ptp_opts_timescale(&ps->opts, m, !ps->system_clock && (flags & PTP_FLAG_PTP_TIMESCALE),
			   flags & PTP_FLAG_UTC_VALID ?
			   (int16_t)be16toh((uint16_t)tprop.current_utc_offset) : -1);
	if (src->opts.verbose >= 2)
		fprintf(stderr, "%s: master_offset %lld ns, ingress %lld ns ago, clock %s\n",
			src->url, (long long)master_offset, (long long)age,
			ps->system_clock ? "CLOCK_REALTIME" : ps->phc.path);
	return 0;
}

static void ptp4l_src_close(struct source *src)
{
	struct ptp4l_source *ps = src->priv;

	pmc_close(&ps->pmc);
	phc_close(&ps->phc);
	free(ps);
	src->priv = NULL;
}

/*
 * ptp4l's socket is root's, 0660, our own is bound in /var/run (pmc_open())
 * and the PHC is root's 0600: CAP_DAC_OVERRIDE for all three.
 */
static uint64_t ptp4l_src_caps(const char *spec)
{
	(void)spec;
	return PRIV_CAP(CAP_DAC_OVERRIDE);
}

const struct source_ops ptp4l_source_ops = {
	.scheme = "ptp4l",
	.sep = ":",
	.open = ptp4l_src_open,
	.measure = ptp4l_src_measure,
	.samples_before = true,
	.close = ptp4l_src_close,
	.caps = ptp4l_src_caps,
};
