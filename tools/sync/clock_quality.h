/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * What the error bound of a measurement must assume about the target clock.
 */
#ifndef LCLK_CLOCK_QUALITY_H
#define LCLK_CLOCK_QUALITY_H

#include <stdint.h>

#include "lib/clock.h"

/* RFC 5905 PHI, the frequency tolerance assumed for the system clock. */
#define CLOCK_QUALITY_SYSTEM_DRIFT_PPB	15000U

/*
 * Largest frequency error of the target against true time that bounds may
 * assume: what the module grows the instance's bound with (its max_drift,
 * widened by rates set through its PTP clock since the last sync), or PHI
 * for the system clock.
 */
uint32_t clock_quality_drift_ppb(const struct target_clock *tc);

/* Smallest step between two readings of the target clock, at least 1 ns. */
int64_t clock_quality_precision_ns(const struct target_clock *tc);

#endif /* LCLK_CLOCK_QUALITY_H */
