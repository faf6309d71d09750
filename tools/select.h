/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source selection and combination over measurements of any protocol
 * (query, sync and the daemon share it).
 *
 * Every measurement is an interval [offset - bound, offset + bound] that
 * contains the true offset if its source is honest. Moved to one base time
 * (widened by the drift over the age of each), the intersection step of
 * RFC 5905 (Marzullo's algorithm) finds, for the fewest falsetickers f <
 * n/2 that makes it possible, the smallest interval [lo, hi] holding every
 * point covered by at least n - f intervals: the true offset is in it as
 * long as at most f sources lie. Sources whose intervals miss it are
 * falsetickers. The survivors' offsets are combined with weights 1/bound^2
 * and the result is kept inside [lo, hi]; its bound is the distance to the
 * far end of [lo, hi], so it is as trustworthy as the intersection.
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
 * one timescale (m->tai equal). drift_ppb: how fast an interval widens
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
