/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/ntp/: other subsystems include this header.
 *
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
	int leap;		/* pending: LCLK_LEAP_* (NTP's 1 insert, 2 delete) */
	int8_t precision;	/* log2 s of reading the clock */
};

/*
 * Whether buf is a request to answer: a whole NTP header, mode 3 (client),
 * version 1..4. Everything else (control and private modes, other modes,
 * junk) is dropped without an answer, so the server never amplifies.
 */
bool ntp_server_request(const uint8_t *buf, size_t len, struct ntp_packet *req);

/*
 * The reply to req. Unsynchronised (the clock, or a stratum outside
 * 1..15): leap 3, stratum 16, no reference time, so no client uses it. Otherwise root delay 0 and root dispersion = the
 * bound, so a client's root distance is never smaller than lclk's bound,
 * and the leap indicator the clock's pending leap (which the module holds
 * only on the day it ends).
 * The receive timestamp has its lowest bit set and the transmit timestamp
 * cleared, as chronyd marks them: a client can tell a request naming one of
 * our receive timestamps (interleaved) from one that does not.
 */
void ntp_server_reply(const struct ntp_packet *req, const struct ntp_server_clock *c,
		      struct ntp_packet *rep);

/*
 * Interleaved mode, the server side of chrony's client/server extension
 * (see ntp_packet.h, struct ntp_request): the kernel's timestamp of when
 * each reply really left, kept by the receive timestamp the reply carried,
 * until the client's next request asks for it. A hashed table; a collision
 * or a full table only means a basic reply.
 */
#define NTP_XLEAVE_BITS		12
#define NTP_XLEAVE_SLOTS	(1 << NTP_XLEAVE_BITS)

struct ntp_xleave {
	struct {
		uint64_t rx;		/* receive timestamp of the reply */
		uint64_t tx;		/* when it left, NTP format; 0: taken */
	} slot[NTP_XLEAVE_SLOTS];
};

/*
 * The kernel says our reply (looped back from the error queue, decoded)
 * left at tx_ns (target time, Unix ns).
 */
void ntp_xleave_stamped(struct ntp_xleave *t, const struct ntp_packet *reply, int64_t tx_ns);

/*
 * When req names the receive timestamp of a reply whose transmit time is
 * known, turn rep (ntp_server_reply()'s) into an interleaved reply: origin
 * = req's receive cookie, transmit = that time, handed out once. Requests
 * qualify as chronyd's do: version 4, origin with the lowest bit set,
 * receive and transmit cookies different. Returns whether it did.
 */
bool ntp_xleave_reply(struct ntp_xleave *t, const struct ntp_packet *req, struct ntp_packet *rep);

/*
 * A token bucket per client address, as chrony's client log keeps one
 * record per address: a table of sets of a few records, the set chosen by
 * a hash keyed at random when the limiter starts, so no one can pick
 * addresses that share a set. A new address takes a free record of its
 * set, else the least recently seen one's, with the tokens that one had
 * (refilled to now): making room never gives anyone a fresh bucket, so
 * alternating a spoofed victim with other addresses gains nothing.
 */
#define RATELIMIT_SETS	1024
#define RATELIMIT_WAYS	4

struct ratelimit {
	double rate;		/* requests per second, on average */
	double burst;		/* bucket size */
	uint64_t dropped;
	uint64_t key[2];	/* of the hash */
	struct {
		uint8_t addr[16];
		int64_t last_ns;	/* 0: a free record */
		double tokens;
	} set[RATELIMIT_SETS][RATELIMIT_WAYS];
};

void ratelimit_init(struct ratelimit *rl, double rate, double burst);
/* Whether a request from addr at now_ns is within its client's rate. */
bool ratelimit_allow(struct ratelimit *rl, const struct sockaddr *addr, int64_t now_ns);

/*
 * Which client addresses are served, as chrony's "allow" directives:
 * networks given as "ADDR" or "ADDR/PREFIX" (IPv4 or IPv6) or "all".
 * IPv4 clients also match as IPv4-mapped IPv6 addresses.
 */
#define NTP_ALLOW_MAX	32

struct ntp_allow {
	unsigned int n;
	struct {
		uint8_t addr[16];	/* IPv6, or IPv4-mapped */
		unsigned int prefix;	/* leading bits that must match */
	} net[NTP_ALLOW_MAX];
};

/* Add a network; -EINVAL if spec is none, -ENOSPC if the list is full. */
int ntp_allow_add(struct ntp_allow *a, const char *spec);
bool ntp_allow_match(const struct ntp_allow *a, const struct sockaddr *addr);

#endif /* LCLK_NTP_SERVER_H */
