/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * The kernel's timestamp a received message carries (SO_TIMESTAMPING), or
 * one read from the error queue: NTP client and server, PTP sockets.
 */
#ifndef LCLK_NET_TSTAMP_H
#define LCLK_NET_TSTAMP_H

#include <stdint.h>
#include <sys/socket.h>

/* Which of struct scm_timestamping's ts[]: the software or raw hardware stamp. */
#define NET_TSTAMP_SOFTWARE	0
#define NET_TSTAMP_HARDWARE	2

/* ts[which] of msg's SCM_TIMESTAMPING control message in ns, 0 if it has none. */
int64_t net_tstamp(struct msghdr *msg, unsigned int which);

#endif /* LCLK_NET_TSTAMP_H */
