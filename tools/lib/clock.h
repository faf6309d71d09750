/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * The clock lclkctl measures and steers: the logical clock of an lclk
 * instance when the module is loaded, otherwise (for measuring only) the
 * system clock, CLOCK_REALTIME, so "lclkctl query" is a skew report on any
 * host.
 */
#ifndef LCLK_CLOCK_H
#define LCLK_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "lclk.h"
#include "realtime_track.h"

struct target_clock {
	struct lclk_clock lc;
	bool logical;		/* false: CLOCK_REALTIME stands in */
	const char *path;
};

/*
 * Open the instance at path. With need_device false a missing device
 * falls back to CLOCK_REALTIME; any other error is returned (-errno).
 */
int target_open(struct target_clock *tc, const char *path, bool need_device);
void target_close(struct target_clock *tc);

/* Target time now, with the CLOCK_MONOTONIC it belongs to. */
void target_now(const struct target_clock *tc, struct lclk_now *out);

/* Target time at a CLOCK_MONOTONIC timestamp taken earlier. */
int64_t target_from_base(const struct target_clock *tc, int64_t base_ns);

/*
 * Target time (*time) of a kernel CLOCK_REALTIME timestamp rt
 * (SO_TIMESTAMPING) taken within the CLOCK_MONOTONIC bracket [lo, hi],
 * converted with the REALTIME - MONOTONIC difference in force when it was
 * taken, which t tracks across steps (realtime_track.h), not the one of
 * now: a step in between would be in the result whole. The CLOCK_MONOTONIC
 * it corresponds to goes to *base, the conversion's error to *err. On the
 * system clock the stamp is its time (error 0; *base, if the track cannot
 * place it, with the difference of now). Returns 0, or -ERANGE if the
 * track cannot tell which side of a step the stamp is on.
 */
int target_from_realtime(const struct target_clock *tc, const struct realtime_track *t,
			 int64_t rt, int64_t lo, int64_t hi, int64_t *time, int64_t *base,
			 int64_t *err);

/*
 * On a VM with a vmclock (lclk(4)), the hypervisor's disruption marker as
 * a measurement began: a sync made from it is set only under it
 * (LCLK_SET_VMCLOCK), so that a snapshot restore or a migration since
 * refuses it. Zeroed: no vmclock, nothing to check.
 */
struct vmclock_mark {
	bool vmclock;		/* the clock's VM has one: the marker matters */
	bool known;		/* marker was read (else: not to be set) */
	uint64_t marker;
};

/* The mark now: before a measurement's first sample. */
void target_mark(const struct target_clock *tc, struct vmclock_mark *mark);

/* Name for messages: the device path, or "system clock". */
const char *target_name(const struct target_clock *tc);

#endif /* LCLK_CLOCK_H */
