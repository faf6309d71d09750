/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * poll()'s int millisecond timeout from a nanosecond wait.
 */
#ifndef LCLK_TIMEOUT_H
#define LCLK_TIMEOUT_H

#include <stdint.h>

/*
 * ns rounded up to whole ms, so a deadline is never woken for early; 0
 * for a wait that is over. Capped at INT_MAX ms (24.8 days): a longer
 * wait comes back then, and a caller looping to its deadline waits again;
 * the int cast used to wrap negative there, and poll() waits forever on
 * a negative timeout.
 */
int timeout_ms(int64_t ns);

#endif /* LCLK_TIMEOUT_H */
