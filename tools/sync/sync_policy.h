/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * The daemon's decisions, as pure functions so they are unit-tested: which
 * surviving source steers the clock, whether an offset is stepped or
 * slewed, and the error bound to publish.
 */
#ifndef LCLK_SYNC_POLICY_H
#define LCLK_SYNC_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/daemon_config.h"
#include "select.h"
#include "source.h"

/*
 * Among the survivors of select_combine(), the one to follow: best class
 * (c->class_rank), then "prefer", then the smallest bound aged to now_ns.
 * prev, the source selected at the last update (-1: none), stays selected
 * against a survivor of the same rank whose bound is smaller by at most
 * 100 us (chrony's reselectdist) or half its own, whichever is less.
 * Returns its index, or -1 if there is no survivor.
 */
int sync_pick(const struct daemon_config *c, const struct measurement *m,
	      const enum select_state *state, unsigned int n, uint32_t drift_ppb,
	      int64_t now_ns, int prev);

/* A reason, as long as the report keeps (source_report.error). */
#define SYNC_WHY_MAX	128

/*
 * A cycle's choice: the measurements m[i] with valid[i] are put on the
 * clock's timescale (clock_tai: its model has LCLK_MODEL_TAI) as sync puts
 * its own, by apply_timescale(). One that cannot be is not used this cycle: valid[i] is cleared and why[i] says
 * why; why[i] is "" for every other. The rest are selected and combined
 * (select_combine(), whose result goes to *err, the combination to
 * *combined: its leap and UTC offset) and one is picked (sync_pick()).
 * Returns its index, or -1.
 */
int sync_select(const struct daemon_config *c, bool clock_tai, struct measurement *m,
		bool *valid, char (*why)[SYNC_WHY_MAX], unsigned int n, uint32_t drift_ppb,
		int64_t now_ns, int prev, enum select_state *state, int *err,
		struct measurement *combined);

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
 * own bound, and what the time since then may have added beyond the drift
 * the kernel charges for it (charged_ppb, the new model's): the error grew
 * at up to growth_ppt (the oscillator's drift plus the rate the clock ran
 * at), which may exceed what the new model charges when the servo's
 * estimate has just fallen. Saturates at LCLK_MAX_BOUND_NS.
 */
int64_t sync_bound(int64_t residual_ns, int64_t meas_bound_ns, int64_t growth_ppt,
		   uint32_t charged_ppb, int64_t elapsed_ns);

#endif /* LCLK_SYNC_POLICY_H */
