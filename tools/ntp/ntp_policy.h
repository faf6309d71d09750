/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/ntp/: other subsystems include this header.
 *
 * How hard an NTP server is asked, chrony's defaults (documented in
 * lclkctl(8)): a server on a private network is ours to ask as fast as
 * syncing needs; a public one gets a burst's requests 2 s apart (ntpd's
 * "discard minimum") and a burst at most every 64 s (chrony's minpoll 6),
 * whatever the daemon's poll. A Kiss-o'-Death RATE stops the burst and
 * lengthens the time between bursts.
 */
#ifndef LCLK_NTP_POLICY_H
#define LCLK_NTP_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define NTP_LAN_INTERVAL_NS	100000000LL
#define NTP_WAN_INTERVAL_NS	2000000000LL
#define NTP_WAN_MIN_POLL_NS	64000000000LL
/* After RATE: 64 s, doubling up to 2^17 s (chrony's largest poll). */
#define NTP_RATE_MIN_POLL_NS	64000000000LL
#define NTP_RATE_MAX_POLL_NS	(131072 * 1000000000LL)

/* Loopback, RFC 1918, link-local, unique local (and those in IPv6 form). */
bool ntp_private_address(const struct sockaddr_storage *ss);

/* Default spacing of a burst's requests. */
int64_t ntp_burst_interval_ns(bool private);

/* Least time from one burst's start to the next's. */
int64_t ntp_min_poll_ns(bool private);

/* Time between bursts after one more RATE, from the last (0: none yet). */
int64_t ntp_rate_poll_ns(int64_t last_ns);

#endif /* LCLK_NTP_POLICY_H */
