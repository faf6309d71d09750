/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a grandmaster's Announce says of its time against the timescale it
 * serves: whether it is traceable at all, and how far off it may be.
 *
 * A ptp:// measurement is of the grandmaster's time; the bound it reports
 * is against true time (UTC or TAI), as an NTP server's root distance is
 * part of an NTP bound. So by default a grandmaster must announce
 *   - the PTP timescale (an ARB one has an epoch of its own choosing),
 *   - clockClass 6 (synchronised to a primary reference time source) or 7
 *     (holding over within its specification) (IEEE 1588-2019 7.6.2.5):
 *     248, linuxptp's default, is a clock following nothing, 255 a
 *     slave-only clock, 52, 58, 187 and 193 clocks holding over beyond
 *     their specification,
 *   - timeTraceable, and
 *   - a clockAccuracy (Table 5) other than unknown (0xFE) or beyond 10 s,
 *     whose value is added to the bound.
 * Any other grandmaster is refused with the reason. timescale=arb takes
 * the grandmaster's own time, whatever it is, as the reference (ptp4l on
 * a system clock, a cluster that needs only to agree with itself): then
 * none of this applies.
 */
#ifndef LCLK_PTP_QUALITY_H
#define LCLK_PTP_QUALITY_H

#include <stdint.h>

#include "ptp_msg.h"

/* clockAccuracy in ns, rounded up; -1 if unknown, beyond 10 s or reserved. */
int64_t ptp_clock_accuracy_ns(uint8_t accuracy);

/*
 * NULL if the grandmaster of this Announce (with its header flags) is
 * traceable as above, else why not (a static string).
 */
const char *ptp_gm_untraceable(const struct ptp_announce *a, uint16_t flags);

#endif /* LCLK_PTP_QUALITY_H */
