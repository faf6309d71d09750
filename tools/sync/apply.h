/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Turning a measurement into a change of the model (sync and the daemon).
 *
 * A measurement says reference - logical = offset +- bound at base time tb.
 * Far off (|offset| > the step threshold) the clock is stepped: one
 * SET_MODEL puts logical(tb) + offset at tb with the bound measured there.
 * Otherwise it is slewed: a correction (LCLK_SET_CORRECTION) on top of
 * the rate, within the module's limit, for as long as working off the
 * offset takes; lclkctl then restores the rate and applies the remainder
 * (at most what its timer was late or early) as a forward step of a few
 * ns, so the end is exact.
 *
 * The module's bound holds at every instant: during a slew it is
 * |offset| + bound, and the module grows it by the correction's rate on
 * top of max drift. The module also ends the correction by itself, at its
 * planned end or when the process's file is released, so a killed lclkctl
 * leaves no slew behind. Each change is one ioctl, so nothing is ever
 * half-applied.
 */
#ifndef LCLK_APPLY_H
#define LCLK_APPLY_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "uapi/linux/lclk.h"
#include "source.h"

#define APPLY_DEFAULT_STEP_THRESHOLD_NS	1000000LL	/* 1 ms */
/* Shortest slew: long enough for the end-of-slew margin to matter little. */
#define APPLY_MIN_SLEW_NS		10000000LL	/* 10 ms */

struct apply_opts {
	int64_t step_threshold_ns;	/* step when |offset| is larger */
	bool allow_backward;		/* a negative step is allowed */
};

enum apply_action {
	APPLY_STEP,
	APPLY_SLEW,
};

struct apply_plan {
	enum apply_action action;
	struct measurement m;		/* what is applied */
	struct lclk_params before;	/* the model the plan starts from */
	struct lclk_set_model start;	/* the one change (step) or the first (slew) */
	int64_t slew_ppt;		/* rate added during the slew */
	int64_t slew_ns;		/* planned duration */
};

/*
 * Put m on the clock's timescale (clock_tai: its model has LCLK_MODEL_TAI),
 * for sync and the daemon alike. A measurement against the other one is
 * moved by the UTC offset its source knows (m->utc_offset_valid), as
 * linuxptp moves PTP time to UTC by a valid currentUtcOffset. Without one
 * it is refused, -EINVAL with the reason in err: as it is, it would be
 * off by TAI - UTC (37 s since 2017) under a bound of microseconds, and a
 * guessed offset (ptp4l's built-in 37) goes wrong at the next leap second.
 */
int apply_timescale(struct measurement *m, bool clock_tai, char *err, size_t errlen);

/*
 * Make set conditional on the vmclock's marker as mark read it, where the
 * clock has a vmclock: the module refuses it (ESTALE) after a restore or
 * a migration since (LCLK_SET_VMCLOCK).
 */
void apply_mark(struct lclk_set_model *set, const struct vmclock_mark *mark);

/* strerror(-err), which for ESTALE says what it means to a setter. */
const char *apply_strerror(int err);

/*
 * Plan the correction for m on a clock whose model is before, on an
 * instance with info's rate limit. Returns 0, or with a reason in err:
 * -ERANGE (a backward step without allow_backward), -EINVAL (on another
 * timescale with no UTC offset to convert it, apply_timescale(); bound out
 * of range), -EDOM (no rate headroom to slew), -EAGAIN (a vmclock whose
 * marker was not read before m: m->vmclock). p->m is m on the clock's
 * timescale.
 */
int apply_plan(const struct measurement *m, const struct lclk_params *before,
	       const struct lclk_info *info, const struct apply_opts *o,
	       struct apply_plan *p, char *err, size_t errlen);

/*
 * The change that ends a slew at base time t_end, given the model the
 * start request produced (read back). *left: planned minus slewed logical
 * time at t_end. When it is >= 0 the end steps forward onto the plan;
 * otherwise (the slew went too far: ended late for a positive offset,
 * early for a negative one) the overshoot stays and goes into the bound.
 */
void apply_slew_end(const struct apply_plan *p, const struct lclk_params *slewing,
		    int64_t t_end, struct lclk_set_model *end, int64_t *left);

/*
 * Carry the plan out on the open device: the step, or the whole slew
 * (waiting for it; SIGINT/SIGTERM end it early, cleanly). Returns 0 or
 * -errno of the failed ioctl, with the reason in err. *residual_ns: logical
 * minus planned logical time afterwards, as far as the model says.
 */
int apply_execute(int fd, const struct apply_plan *p, int64_t *residual_ns,
		  char *err, size_t errlen);

#endif /* LCLK_APPLY_H */
