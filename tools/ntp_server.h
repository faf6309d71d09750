/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The server side of NTP (RFC 5905 mode 4) for "lclkctl serve", without
 * I/O: which requests deserve an answer, the answer itself, and a per-client
 * rate limit. The packet codec is ntp_packet.h's.
 */
#ifndef LCLK_NTP_SERVER_H
#define LCLK_NTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "ntp_packet.h"

/* What the clock says, for one reply; times are logical (Unix ns). */
struct ntp_server_clock {
	uint32_t status;	/* LCLK_STATUS_* */
	int64_t bound_ns;	/* LCLK_BOUND_UNKNOWN when unsynchronised */
	int64_t reference_ns;	/* logical time of the last update, 0 never */
	int64_t receive_ns;	/* when the request came */
	int64_t transmit_ns;	/* when the reply leaves */
	int stratum;		/* to announce while synchronised */
	int8_t precision;	/* log2 s of reading the clock */
};

/*
 * Whether buf is a request to answer: a whole NTP header, mode 3 (client),
 * version 1..4. Everything else (control and private modes, other modes,
 * junk) is dropped without an answer, so the server never amplifies.
 */
bool ntp_server_request(const uint8_t *buf, size_t len, struct ntp_packet *req);

/*
 * The reply to req. Unsynchronised: leap 3, stratum 16, no reference time,
 * so no client uses it. Otherwise root delay 0 and root dispersion = the
 * bound, so a client's root distance is never smaller than lclk's bound.
 */
void ntp_server_reply(const struct ntp_packet *req, const struct ntp_server_clock *c,
		      struct ntp_packet *rep);

#define RATELIMIT_SLOTS 1024

/* A token bucket per client address (a hashed table; a collision resets). */
struct ratelimit {
	double rate;		/* requests per second, on average */
	double burst;		/* bucket size */
	uint64_t dropped;
	struct {
		uint8_t addr[16];
		int64_t last_ns;
		double tokens;
	} slot[RATELIMIT_SLOTS];
};

void ratelimit_init(struct ratelimit *rl, double rate, double burst);
/* Whether a request from addr at now_ns is within its client's rate. */
bool ratelimit_allow(struct ratelimit *rl, const struct sockaddr *addr, int64_t now_ns);

#endif /* LCLK_NTP_SERVER_H */
