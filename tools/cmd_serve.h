/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclkctl serve's event loop, for its command (cmd_serve.c) and the unit
 * tests that drive it on a socket and a clock of their own.
 */
#ifndef LCLK_CMD_SERVE_H
#define LCLK_CMD_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"
#include "lib/realtime_track.h"
#include "lib/timeout.h"
#include "ntp/ntp_server.h"

/* How often the daemon is asked which stratum to announce. */
#define STRATUM_REFRESH_NS	10000000000LL

struct serve_opts {
	const char *addr, *port, *user;
	double rate, burst;
	int stratum;		/* fixed by --stratum; 0: the daemon's */
	struct ntp_allow allow;	/* clients served */
	int64_t stratum_refresh_ns; /* 0: STRATUM_REFRESH_NS */
};

/*
 * Answer the NTP requests coming on fd (a bound UDP socket) from tc until
 * *stop is set (checked each time the loop wakes; NULL: never) or an error.
 * Returns EXIT_FAIL on an error, EXIT_OK when stopped.
 */
int serve_loop(int fd, const struct target_clock *tc, const struct serve_opts *o,
	       int verbose, const volatile int *stop);

/*
 * The kernel says our reply, looped back from the error queue as frame
 * (the NTP header its last bytes), left at CLOCK_REALTIME rt: keep its
 * departure in xl, as target time, for an interleaved reply. t is the
 * REALTIME - MONOTONIC difference serve tracks, now the CLOCK_MONOTONIC
 * the error queue was read at.
 */
void serve_tx_stamp(struct ntp_xleave *xl, const struct target_clock *tc,
		    const struct realtime_track *t, const uint8_t *frame, size_t len,
		    int64_t rt, int64_t now);

#endif /* LCLK_CMD_SERVE_H */
