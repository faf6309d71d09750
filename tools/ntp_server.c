// SPDX-License-Identifier: GPL-2.0
#include <netinet/in.h>
#include <string.h>

#include "lclk_model.h"
#include "ntp_server.h"

/* Our reference id: "LCLK", the logical clock, whatever it follows. */
#define LCLK_REFID	0x4c434c4bU
#define NTP_STRATUM_UNSYNC	16

bool ntp_server_request(const uint8_t *buf, size_t len, struct ntp_packet *req)
{
	if (ntp_decode(buf, len, req) != NTP_OK)
		return false;
	return req->mode == NTP_MODE_CLIENT && req->version >= 1 && req->version <= 4;
}

/* ns to NTP short format (16.16 s), rounded up and saturated. */
static uint32_t ns_to_short(int64_t ns)
{
	__int128 v;

	if (ns <= 0)
		return 0;
	v = ((__int128)ns << 16) + 999999999;
	v /= 1000000000;
	return v > 0xffffffff ? 0xffffffff : (uint32_t)v;
}

void ntp_server_reply(const struct ntp_packet *req, const struct ntp_server_clock *c,
		      struct ntp_packet *rep)
{
	bool synced = c->status != LCLK_STATUS_UNSYNCED && c->bound_ns != LCLK_BOUND_UNKNOWN;

	memset(rep, 0, sizeof(*rep));
	rep->version = req->version;
	rep->mode = NTP_MODE_SERVER;
	rep->poll = req->poll;
	rep->precision = c->precision;
	rep->refid = LCLK_REFID;
	rep->origin_ts = req->transmit_ts;
	rep->receive_ts = ntp_unix_ns_to_ts(c->receive_ns) | 1;
	rep->transmit_ts = ntp_unix_ns_to_ts(c->transmit_ns) & ~1ULL;
	if (!synced) {
		rep->leap = NTP_LEAP_UNSYNC;
		rep->stratum = NTP_STRATUM_UNSYNC;
		rep->root_dispersion = 0xffffffff;
		return;
	}
	rep->leap = 0;
	rep->stratum = c->stratum;
	rep->root_delay = 0;
	rep->root_dispersion = ns_to_short(c->bound_ns);
	rep->reference_ts = c->reference_ns ? ntp_unix_ns_to_ts(c->reference_ns) : 0;
}

static unsigned int xleave_slot(uint64_t rx)
{
	/* Fibonacci hashing: the low bits of rx are the fuzz of the clock. */
	return (unsigned int)((rx * 0x9e3779b97f4a7c15ULL) >> (64 - NTP_XLEAVE_BITS));
}

void ntp_xleave_stamped(struct ntp_xleave *t, const struct ntp_packet *reply, int64_t tx_ns)
{
	uint64_t tx = ntp_unix_ns_to_ts(tx_ns);
	unsigned int i = xleave_slot(reply->receive_ts);

	/* Only our synchronised replies, and only a time after the request came. */
	if (reply->mode != NTP_MODE_SERVER || reply->leap == NTP_LEAP_UNSYNC ||
	    !(reply->receive_ts & 1) || !tx || (int64_t)(tx - reply->receive_ts) < 0)
		return;
	t->slot[i].rx = reply->receive_ts;
	t->slot[i].tx = tx;
}

bool ntp_xleave_reply(struct ntp_xleave *t, const struct ntp_packet *req, struct ntp_packet *rep)
{
	unsigned int i = xleave_slot(req->origin_ts);

	if (req->version != 4 || !(req->origin_ts & 1) || !req->receive_ts ||
	    req->receive_ts == req->transmit_ts || rep->leap == NTP_LEAP_UNSYNC ||
	    t->slot[i].rx != req->origin_ts || !t->slot[i].tx)
		return false;
	rep->origin_ts = req->receive_ts;
	rep->transmit_ts = t->slot[i].tx;
	t->slot[i].tx = 0;
	return true;
}

void ratelimit_init(struct ratelimit *rl, double rate, double burst)
{
	memset(rl, 0, sizeof(*rl));
	rl->rate = rate;
	rl->burst = burst;
}

/* The address bytes of IPv4 (as v4-mapped) or IPv6; the port is not the client. */
static void addr_key(const struct sockaddr *sa, uint8_t key[16])
{
	memset(key, 0, 16);
	if (sa->sa_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

bool ratelimit_allow(struct ratelimit *rl, const struct sockaddr *addr, int64_t now_ns)
{
	uint32_t h = 2166136261U;	/* FNV-1a */
	uint8_t key[16];
	int i;

	addr_key(addr, key);
	for (i = 0; i < 16; i++)
		h = (h ^ key[i]) * 16777619U;
	i = h % RATELIMIT_SLOTS;
	if (memcmp(rl->slot[i].addr, key, 16) || !rl->slot[i].last_ns) {
		memcpy(rl->slot[i].addr, key, 16);
		rl->slot[i].tokens = rl->burst;
	} else {
		rl->slot[i].tokens += (now_ns - rl->slot[i].last_ns) * 1e-9 * rl->rate;
		if (rl->slot[i].tokens > rl->burst)
			rl->slot[i].tokens = rl->burst;
	}
	rl->slot[i].last_ns = now_ns ? now_ns : 1;
	if (rl->slot[i].tokens < 1) {
		rl->dropped++;
		return false;
	}
	rl->slot[i].tokens -= 1;
	return true;
}
