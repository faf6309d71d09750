/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * When the daemon polls its sources: at the fast interval for the first
 * updates and again after any disturbance (a step, a large offset, a new
 * selected source, a return from holdover), then doubling up to the slow
 * interval while the clock stays quiet. Failed polls back off the same way,
 * so a dead server is not asked every second forever.
 */
#ifndef LCLK_POLL_SCHED_H
#define LCLK_POLL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

struct poll_sched {
	int64_t min_ns, max_ns;
	unsigned int fastpolls;
	int64_t disturbance_ns;
	int64_t interval_ns;	/* until the next poll */
	unsigned int fast_left;	/* polls still due at min_ns */
};

void poll_sched_init(struct poll_sched *ps, int64_t min_ns, int64_t max_ns,
		     unsigned int fastpolls, int64_t disturbance_ns);

/* After an update with offset_ns; disturbed: a step, source change, recovery. */
void poll_sched_update(struct poll_sched *ps, int64_t offset_ns, bool disturbed);

/* After a poll that gave no usable measurement. */
void poll_sched_failed(struct poll_sched *ps);

#endif /* LCLK_POLL_SCHED_H */
