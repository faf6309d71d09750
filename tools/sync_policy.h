/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The daemon's decisions, as pure functions so they are unit-tested: which
 * surviving source steers the clock, whether an offset is stepped or
 * slewed, and the error bound to publish.
 */
#ifndef LCLK_SYNC_POLICY_H
#define LCLK_SYNC_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon_config.h"
#include "select.h"
#include "source.h"

/*
 * Among the survivors of select_combine(), the one to follow: best class
 * (c->class_rank), then "prefer", then the smallest bound aged to now_ns.
 * Returns its index, or -1 if there is no survivor.
 */
int sync_pick(const struct daemon_config *c, const struct measurement *m,
	      const enum select_state *state, unsigned int n, uint32_t drift_ppb,
	      int64_t now_ns);

/*
 * Step or slew offset_ns? The first sync of an UNSYNCED clock always steps
 * (there is no time to keep monotonic with), in either direction. After
 * that only "makestep" steps, within its first `limit` updates, and a
 * backward step also needs "allowbackward yes".
 */
bool sync_should_step(const struct daemon_config *c, bool unsynced,
		      unsigned int updates, int64_t offset_ns);

/*
 * The bound at the measurement's base time after acting on it: what is left
 * of the offset (|offset| when slewing, 0 after a step), the measurement's
 * own bound, and what the correction still running since then may have
 * added (|correction_ppt| over elapsed_ns). Saturates at LCLK_MAX_BOUND_NS.
 */
int64_t sync_bound(int64_t residual_ns, int64_t meas_bound_ns,
		   int64_t correction_ppt, int64_t elapsed_ns);

#endif /* LCLK_SYNC_POLICY_H */
