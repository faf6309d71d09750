/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * Software timestamps (SO_TIMESTAMPING) are CLOCK_REALTIME; lclk works on
 * CLOCK_MONOTONIC. REALTIME - MONOTONIC changes only when REALTIME is
 * stepped (clock_settime, ADJ_SETOFFSET, a leap second): frequency and slew
 * adjustments move both clocks alike. A message can wait in its socket for
 * tens of ms before it is read, and a stamp converted with the difference
 * of that later moment is off by any step in between.
 *
 * So the difference is measured each time the socket is looked at, a change
 * beyond the measurements' errors (from the last one, or from the narrowest
 * since the last step) is taken as a step that happened between the two
 * measurements, and a stamp is converted with the difference in
 * force when it was taken: the one of now or one before the last steps
 * (REALTIME_TRACK_STEPS of them are remembered), whichever puts it where it
 * can be (after the step that began it opened its window, before the next
 * one closed, and within the caller's bracket: not after it was read, not
 * before it was sent). A stamp that more than one puts there, or none, is
 * refused. So is one that may be older than the steps remembered, unless
 * the caller knows no lower limit (INT64_MIN), who then takes the
 * differences remembered as all there were.
 */
#ifndef LCLK_REALTIME_TRACK_H
#define LCLK_REALTIME_TRACK_H

#include <stdbool.h>
#include <stdint.h>

#define REALTIME_TRACK_STEPS	8

struct realtime_track {
	int64_t off, err;	/* REALTIME - MONOTONIC, last measured, +- err */
	int64_t at;		/* CLOCK_MONOTONIC of that measurement */
	/*
	 * The narrowest measurement since the last step: a step between it
	 * and a new one shows though a wide one in between agrees with both.
	 */
	int64_t best_off, best_err, best_at;
	unsigned int nsteps;	/* steps remembered, the newest first: */
	struct realtime_step {
		int64_t old_off, old_err; /* the difference before it */
		int64_t lo, hi;		/* between these CLOCK_MONOTONIC times */
	} steps[REALTIME_TRACK_STEPS];
	int64_t forgot_lo, forgot_hi;	/* the newest step forgotten (INT64_MIN: none) */
};

/* Start from a measurement (off +- err at monotonic now). */
void realtime_track_init(struct realtime_track *t, int64_t off, int64_t err, int64_t now);

/* Start from a measurement taken now. Returns 0 or -errno. */
int realtime_track_start(struct realtime_track *t);

/* A new measurement; returns true if it shows a step. */
bool realtime_track_update(struct realtime_track *t, int64_t off, int64_t err, int64_t now);

/* Measure the difference now and update. Returns 0 or -errno. */
int realtime_track_measure(struct realtime_track *t);

/*
 * CLOCK_MONOTONIC of the REALTIME stamp rt, known to lie in [lo, hi]
 * (monotonic; lo may be INT64_MIN), with its error. Returns 0, or -ERANGE
 * if no difference, or more than one, puts it there.
 */
int realtime_track_to_mono(const struct realtime_track *t, int64_t rt, int64_t lo,
			   int64_t hi, int64_t *mono, int64_t *err);

/*
 * CLOCK_REALTIME at the CLOCK_MONOTONIC instant mono (+- err), with its
 * error: with the difference in force then. Returns 0, or -ERANGE if a
 * step may lie between the instant and the difference's measurement.
 */
int realtime_track_to_rt(const struct realtime_track *t, int64_t mono, int64_t err,
			 int64_t *rt, int64_t *rt_err);

#endif /* LCLK_REALTIME_TRACK_H */
