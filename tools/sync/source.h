/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Time sources behind one interface, chosen by URL scheme:
 *   ntp://HOST[:PORT]      NTP server (ntp/ntp_source.c)
 *   ptp://IFACE            IEEE 1588 slave-only ordinary clock (ptp/ptp_source.c)
 *   phc:/dev/ptpN|IFACE    PTP hardware clock (ptp/phc_source.c)
 *   ptp4l:PATH             a running ptp4l's management socket (ptp/ptp4l_source.c)
 *   vmclock:[PATH]         the hypervisor's vmclock page, /dev/vmclock0 by default
 *                          (vmclock/vmclock_source.c)
 * Every backend measures the reference against the target clock and
 * reports an offset with an error bound; query, sync and the daemon work on
 * measurements and never know which protocol produced them.
 */
#ifndef LCLK_SOURCE_H
#define LCLK_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"

struct measurement {
	int64_t offset_ns;	/* reference - target, at base_ns */
	int64_t delay_ns;	/* round-trip delay (PTP: 2 x mean path delay) */
	int64_t bound_ns;	/* |true offset - offset_ns| <= bound_ns at base_ns */
	int64_t base_ns;	/* CLOCK_MONOTONIC the measurement is for */
	int stratum;		/* reference's stratum (PTP: steps removed + 1) */
	int leap;		/* leap indicator, 0..2 */
	bool tai;		/* offset_ns is against TAI, not UTC */
	/*
	 * TAI - UTC in seconds, when the source knows it (a PTP grandmaster's
	 * currentUtcOffset with currentUtcOffsetValid, or utc_offset=): what
	 * moves offset_ns to the other timescale (apply_timescale()).
	 */
	bool utc_offset_valid;
	int utc_offset;
	/* as the first sample was taken: the sync is set under it */
	struct vmclock_mark vmclock;
	char refid[32];		/* reference id or clock identity, printable */
	unsigned int samples;	/* replies used */
	unsigned int rejected;	/* replies rejected, each reported */
};

struct source_opts {
	unsigned int samples;	/* per measurement (burst length) */
	unsigned int first_samples; /* NTP: the first measurement's, if more (iburst) */
	int64_t interval_ns;	/* between samples of a burst */
	int64_t timeout_ns;	/* per sample */
	int verbose;
};

struct source;

struct source_ops {
	const char *scheme;	/* "ntp", "ptp", "phc", "ptp4l", "vmclock" */
	const char *sep;	/* what follows the scheme: "://" or ":" */
	/* spec is the URL after scheme and separator. */
	int (*open)(struct source *src, const char *spec, char *err, size_t errlen);
	/*
	 * One measurement (a burst, filtered). Returns 0, or -errno with a
	 * reason in err; rejected replies are counted and explained on stderr
	 * at verbosity >= 1 but never used. -EAGAIN means only "not due": the
	 * source sent nothing, holding its polls back (a KoD RATE back-off, a
	 * public server's spacing), which is no failure of the source.
	 */
	int (*measure)(struct source *src, const struct target_clock *tc,
		       struct measurement *m, char *err, size_t errlen);
	/*
	 * Optional, for a source with a protocol state of its own (a PTP
	 * port): keep it running between measurements until the monotonic
	 * deadline_ns. Returns 0, or -errno when it cannot.
	 */
	int (*idle)(struct source *src, int64_t deadline_ns);
	/*
	 * Optional: CLOCK_MONOTONIC before which measure would only return
	 * -EAGAIN (0: any time), so that a poll is scheduled when the
	 * source will take it, not counted against it before.
	 */
	int64_t (*next_due)(const struct source *src);
	void (*close)(struct source *src);
	/*
	 * Optional: the capabilities (a mask of 1ULL << CAP_*) that opening
	 * spec needs beyond an unprivileged user's; none if absent. The
	 * daemon keeps them after it drops root, to reopen at a reload.
	 */
	uint64_t (*caps)(const char *spec);
	/*
	 * Its measure may use samples taken before the call (by its idle
	 * op, by another daemon): the runner marks them as of the end of
	 * the source's previous measurement, not of the call (vmclock).
	 */
	bool samples_before;
};

struct source {
	const struct source_ops *ops;
	const char *url;	/* as given */
	struct source_opts opts;
	void *priv;		/* the backend's state */
};

/* Parse url, pick the backend and open it. Returns 0 or -errno (err says). */
int source_open(struct source *src, const char *url,
		const struct source_opts *opts, char *err, size_t errlen);
void source_close(struct source *src);
/* What opening url needs (source_ops.caps); 0 for an unknown scheme. */
uint64_t source_caps(const char *url);

#endif /* LCLK_SOURCE_H */
