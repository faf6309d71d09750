// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lclk_model.h"
#include "ntp_server.h"
#include "siphash.h"

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
	/* Following a stratum-15 source we would be 16: NTP's "unsynchronised". */
	bool synced = c->status != LCLK_STATUS_UNSYNCED && c->bound_ns != LCLK_BOUND_UNKNOWN &&
		      c->stratum >= 1 && c->stratum <= NTP_MAX_STRATUM;

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
	rep->leap = c->leap == LCLK_LEAP_INSERT || c->leap == LCLK_LEAP_DELETE ? c->leap : 0;
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
	/*
	 * Without the kernel's randomness (never seen on Linux >= 3.17) the
	 * key is at least different on each start and host.
	 */
	if (getrandom(rl->key, sizeof(rl->key), 0) != sizeof(rl->key)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		rl->key[0] = (uint64_t)ts.tv_nsec << 32 ^ (uint64_t)ts.tv_sec;
		rl->key[1] = (uint64_t)getpid() << 32 ^ (uintptr_t)rl;
	}
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

static double refilled(const struct ratelimit *rl, double tokens, int64_t last_ns, int64_t now_ns)
{
	tokens += (now_ns - last_ns) * 1e-9 * rl->rate;
	return tokens > rl->burst ? rl->burst : tokens;
}

bool ratelimit_allow(struct ratelimit *rl, const struct sockaddr *addr, int64_t now_ns)
{
	uint8_t key[16];
	unsigned int set, w, use = 0;

	addr_key(addr, key);
	set = siphash24(rl->key, key, sizeof(key)) % RATELIMIT_SETS;
	now_ns = now_ns ? now_ns : 1;
	for (w = 0; w < RATELIMIT_WAYS; w++) {
		if (rl->set[set][w].last_ns && !memcmp(rl->set[set][w].addr, key, 16))
			break;
		/* Else a free record, or the least recently seen one. */
		if (rl->set[set][use].last_ns && rl->set[set][w].last_ns < rl->set[set][use].last_ns)
			use = w;
	}
	if (w < RATELIMIT_WAYS)
		use = w;
	if (!rl->set[set][use].last_ns)
		rl->set[set][use].tokens = rl->burst;
	else
		rl->set[set][use].tokens = refilled(rl, rl->set[set][use].tokens,
						    rl->set[set][use].last_ns, now_ns);
	memcpy(rl->set[set][use].addr, key, 16);
	rl->set[set][use].last_ns = now_ns;
	if (rl->set[set][use].tokens < 1) {
		rl->dropped++;
		return false;
	}
	rl->set[set][use].tokens -= 1;
	return true;
}

int ntp_allow_add(struct ntp_allow *a, const char *spec)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(spec, '/');
	size_t hlen = slash ? (size_t)(slash - spec) : strlen(spec);
	unsigned int max, prefix;
	struct in_addr v4;
	uint8_t *addr;
	char *end;

	if (a->n >= NTP_ALLOW_MAX)
		return -ENOSPC;
	addr = a->net[a->n].addr;
	memset(addr, 0, 16);
	if (!strcmp(spec, "all")) {
		a->net[a->n++].prefix = 0;
		return 0;
	}
	if (!hlen || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, spec, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, &v4) == 1) {
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &v4, 4);
		max = 32;
	} else if (inet_pton(AF_INET6, host, addr) == 1) {
		max = 128;
	} else {
		return -EINVAL;
	}
	prefix = max;
	if (slash) {
		unsigned long v;

		errno = 0;
		v = strtoul(slash + 1, &end, 10);
		if (errno || end == slash + 1 || *end || v > max)
			return -EINVAL;
		prefix = (unsigned int)v;
	}
	a->net[a->n++].prefix = prefix + (128 - max);
	return 0;
}

static bool prefix_match(const uint8_t *x, const uint8_t *y, unsigned int bits)
{
	unsigned int bytes = bits / 8, rest = bits % 8;

	if (memcmp(x, y, bytes))
		return false;
	return !rest || !((x[bytes] ^ y[bytes]) & (0xff << (8 - rest)));
}

bool ntp_allow_match(const struct ntp_allow *a, const struct sockaddr *addr)
{
	uint8_t key[16];
	unsigned int i;

	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return false;
	addr_key(addr, key);
	for (i = 0; i < a->n; i++)
		if (prefix_match(a->net[i].addr, key, a->net[i].prefix))
			return true;
	return false;
}
