/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Source selection and combination over measurements of any protocol
 * (query, sync and the daemon share it).
 *
 * Every measurement is an interval [offset - bound, offset + bound] that
 * contains the true offset if its source is honest. Moved to one base time
 * (widened by the drift over the age of each), the intersection step of
 * RFC 5905 (Marzullo's algorithm) finds the fewest falsetickers f < n/2
 * for which some points are covered by at least n - f intervals; sources
 * whose intervals miss the smallest interval [lo, hi] holding those points
 * are falsetickers. The survivors' offsets are combined with weights
 * 1/bound^2 and the result is kept inside [lo, hi].
 *
 * A liar whose interval overlaps all the honest ones can make [lo, hi]
 * too narrow without being caught, so the bound is not taken from it but
 * from the same construction for the most liars a majority can outvote,
 * (n - 1) / 2: the distance from the result to the far end of that wider
 * interval. It holds as long as fewer than half of the sources lie.
 */
#ifndef LCLK_SELECT_H
#define LCLK_SELECT_H

#include <stdbool.h>

#include "source.h"

/* The verdict on one input. */
enum select_state {
	SELECT_UNUSED,		/* no measurement (valid[i] false) */
	SELECT_SURVIVOR,
	SELECT_FALSETICKER,
};

/*
 * Select and combine the n measurements m[i] with valid[i]. All must be on
 * one timescale (m->tai equal); the result has the UTC offset the survivors
 * know, if they agree on it. drift_ppb: how fast an interval widens
 * with age; at_base_ns: CLOCK_MONOTONIC the result is for.
 * Returns 0, -ENODATA (no valid input), -EDOM (no majority agrees) or
 * -EINVAL (mixed timescales). state[i] is set for every input.
 */
int select_combine(const struct measurement *m, const bool *valid, unsigned int n,
		   uint32_t drift_ppb, int64_t at_base_ns,
		   enum select_state *state, struct measurement *out);

/* The bound of m aged to base time t at drift_ppb, rounded up. */
int64_t select_aged_bound(const struct measurement *m, uint32_t drift_ppb, int64_t t);

#endif /* LCLK_SELECT_H */
