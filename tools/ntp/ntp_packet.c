// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "ntp_packet.h"

#define NS_PER_S 1000000000ULL

static const char *const verdicts[NTP_VERDICTS] = {
	[NTP_OK]		= "ok",
	[NTP_TRUNCATED]		= "truncated packet",
	[NTP_OVERSIZED]		= "oversized packet",
	[NTP_BAD_MODE]		= "not a server reply (mode is not 4)",
	[NTP_BAD_VERSION]	= "unsupported NTP version (not 3 or 4)",
	[NTP_BOGUS_ORIGIN]	= "origin timestamp does not match our request (spoofed or stale)",
	[NTP_KISS_OF_DEATH]	= "Kiss-o'-Death",
	[NTP_BAD_STRATUM]	= "stratum not in 1..15 (server unsynchronised)",
	[NTP_UNSYNCHRONISED]	= "leap indicator 3 (server unsynchronised)",
	[NTP_ZERO_TIMESTAMP]	= "zero receive or transmit timestamp",
	[NTP_BAD_ROOT]		= "root delay or dispersion out of range",
	[NTP_BAD_TIME_ORDER]	= "server transmit time before its receive time",
	[NTP_BAD_SOURCE]	= "reply from an address or port we did not query",
	[NTP_DUPLICATE]		= "duplicate reply",
	[NTP_NEGATIVE_DELAY]	= "negative round-trip delay",
	[NTP_BAD_PRECISION]	= "precision out of range (coarser than 8 s)",
	[NTP_BAD_REFERENCE]	= "reference time after transmit time",
};

const char *ntp_verdict_str(enum ntp_verdict v)
{
	return (unsigned int)v < NTP_VERDICTS ? verdicts[v] : "unknown";
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = v >> 24;
	b[1] = v >> 16;
	b[2] = v >> 8;
	b[3] = v;
}

static void put64(uint8_t *b, uint64_t v)
{
	put32(b, v >> 32);
	put32(b + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static uint64_t get64(const uint8_t *b)
{
	return (uint64_t)get32(b) << 32 | get32(b + 4);
}

void ntp_encode(const struct ntp_packet *p, uint8_t buf[NTP_HEADER_LEN])
{
	buf[0] = (p->leap & 3) << 6 | (p->version & 7) << 3 | (p->mode & 7);
	buf[1] = p->stratum;
	buf[2] = (uint8_t)p->poll;
	buf[3] = (uint8_t)p->precision;
	put32(buf + 4, p->root_delay);
	put32(buf + 8, p->root_dispersion);
	put32(buf + 12, p->refid);
	put64(buf + 16, p->reference_ts);
	put64(buf + 24, p->origin_ts);
	put64(buf + 32, p->receive_ts);
	put64(buf + 40, p->transmit_ts);
}

/*
 * Only version, mode and cookies: a client has no business telling the
 * server (or an eavesdropper) what its clock reads, the way chrony sends
 * requests. org is the server's own timestamp, nothing of ours.
 */
void ntp_encode_request(const struct ntp_request *rq, uint8_t buf[NTP_HEADER_LEN])
{
	struct ntp_packet p = {
		.version = 4,
		.mode = NTP_MODE_CLIENT,
		.origin_ts = rq->org,
		.receive_ts = rq->org ? rq->rec : 0,
		.transmit_ts = rq->xmt,
	};

	ntp_encode(&p, buf);
}

enum ntp_verdict ntp_decode(const uint8_t *buf, size_t len, struct ntp_packet *p)
{
	if (len < NTP_HEADER_LEN)
		return NTP_TRUNCATED;
	if (len > NTP_MAX_LEN || len % 4)
		return NTP_OVERSIZED;
	p->leap = buf[0] >> 6;
	p->version = (buf[0] >> 3) & 7;
	p->mode = buf[0] & 7;
	p->stratum = buf[1];
	p->poll = (int8_t)buf[2];
	p->precision = (int8_t)buf[3];
	p->root_delay = get32(buf + 4);
	p->root_dispersion = get32(buf + 8);
	p->refid = get32(buf + 12);
	p->reference_ts = get64(buf + 16);
	p->origin_ts = get64(buf + 24);
	p->receive_ts = get64(buf + 32);
	p->transmit_ts = get64(buf + 40);
	return NTP_OK;
}

/* Four ASCII letters or digits, NUL-padded: RFC 5905's kiss codes. */
static bool kiss_code(uint32_t refid)
{
	int i, len = 0;

	for (i = 0; i < 4; i++) {
		unsigned char c = refid >> (24 - 8 * i);

		if (!c)
			break;
		if (!isupper(c) && !isdigit(c))
			return false;
		len++;
	}
	for (; i < 4; i++)
		if ((refid >> (24 - 8 * i)) & 0xff)
			return false;
	return len > 0;
}

enum ntp_verdict ntp_validate_reply(const struct ntp_packet *p, const struct ntp_request *rq,
				    bool *interleaved)
{
	*interleaved = false;
	if (p->mode != NTP_MODE_SERVER)
		return NTP_BAD_MODE;
	if (p->version != 3 && p->version != 4)
		return NTP_BAD_VERSION;
	if (rq->org && rq->rec && p->origin_ts == rq->rec)
		*interleaved = true;
	else if (p->origin_ts != rq->xmt)
		return NTP_BOGUS_ORIGIN;
	if (p->stratum == 0)
		return kiss_code(p->refid) ? NTP_KISS_OF_DEATH : NTP_BAD_STRATUM;
	if (p->stratum > NTP_MAX_STRATUM)
		return NTP_BAD_STRATUM;
	if (p->leap == NTP_LEAP_UNSYNC)
		return NTP_UNSYNCHRONISED;
	if (!p->receive_ts || !p->transmit_ts)
		return NTP_ZERO_TIMESTAMP;
	if (ntp_short_to_ns(p->root_delay) / 2 + ntp_short_to_ns(p->root_dispersion) >=
	    NTP_MAX_DISTANCE_NS)
		return NTP_BAD_ROOT;
	/* Its error is added to the sample's: a coarser one would overflow it. */
	if (p->precision > NTP_MAX_PRECISION)
		return NTP_BAD_PRECISION;
	/* Timestamps of one era: a wrap between them would be 136 years. */
	if (*interleaved) {
		if ((int64_t)(p->transmit_ts - rq->org) < 0 ||
		    (int64_t)(p->receive_ts - p->transmit_ts) < 0)
			return NTP_BAD_TIME_ORDER;
	} else if ((int64_t)(p->transmit_ts - p->receive_ts) < 0) {
		return NTP_BAD_TIME_ORDER;
	}
	/*
	 * chrony's test7: the clock was set before the reply was made (an
	 * interleaved reply's transmit is an earlier one's: its receive is
	 * the later). Zero: never set, nothing to check.
	 */
	if (p->reference_ts &&
	    (int64_t)((*interleaved ? p->receive_ts : p->transmit_ts) - p->reference_ts) < 0)
		return NTP_BAD_REFERENCE;
	return NTP_OK;
}

enum ntp_kiss ntp_kiss(const struct ntp_packet *p)
{
	switch (p->refid) {
	case 0x52415445:	/* "RATE" */
		return NTP_KISS_RATE;
	case 0x44454e59:	/* "DENY" */
		return NTP_KISS_DENY;
	case 0x52535452:	/* "RSTR" */
		return NTP_KISS_RSTR;
	}
	return NTP_KISS_OTHER;
}

void ntp_refid_str(const struct ntp_packet *p, char *buf, size_t len)
{
	uint32_t r = p->refid;
	char text[5];
	int i;

	if (p->stratum >= 2) {
		snprintf(buf, len, "%u.%u.%u.%u", r >> 24, (r >> 16) & 0xff,
			 (r >> 8) & 0xff, r & 0xff);
		return;
	}
	/*
	 * Stratum 0 and 1 carry ASCII, NUL-padded; anything else (chronyd's
	 * "local" reference sends 127.127.1.1) is shown in hex, as chronyc does.
	 */
	for (i = 0; i < 4; i++) {
		unsigned char c = r >> (24 - 8 * i);

		if (!c)
			break;
		if (!isprint(c) || isspace(c)) {
			snprintf(buf, len, "%08X", r);
			return;
		}
		text[i] = (char)c;
	}
	text[i] = 0;
	snprintf(buf, len, "%s", text);
}

uint32_t ntp_ns_to_frac(uint32_t ns)
{
	return (uint32_t)((((uint64_t)ns << 32) + NS_PER_S / 2) / NS_PER_S);
}

uint32_t ntp_frac_to_ns(uint32_t frac)
{
	/* The last quarter ns of a second rounds to 10^9: callers add it, never store it. */
	return (uint32_t)(((uint64_t)frac * NS_PER_S + (1ULL << 31)) >> 32);
}

/*
 * The 32-bit seconds wrap every 136 years (era 1 starts in 2036): take the
 * era that puts the time within 68 years of the pivot, our own clock.
 */
int64_t ntp_ts_to_unix_ns(uint64_t ts, int64_t pivot_ns)
{
	int64_t pivot_s = pivot_ns / (int64_t)NS_PER_S - (pivot_ns % (int64_t)NS_PER_S < 0);
	uint32_t pivot_ntp = (uint32_t)((uint64_t)pivot_s + NTP_UNIX_OFFSET);
	int32_t diff = (int32_t)((uint32_t)(ts >> 32) - pivot_ntp);

	return (pivot_s + diff) * (int64_t)NS_PER_S + ntp_frac_to_ns((uint32_t)ts);
}

uint64_t ntp_unix_ns_to_ts(int64_t ns)
{
	int64_t s = ns / (int64_t)NS_PER_S, rem = ns % (int64_t)NS_PER_S;

	if (rem < 0) {
		s--;
		rem += NS_PER_S;
	}
	return (uint64_t)(uint32_t)(s + NTP_UNIX_OFFSET) << 32 | ntp_ns_to_frac((uint32_t)rem);
}

int64_t ntp_short_to_ns(uint32_t v)
{
	return (int64_t)(((uint64_t)v * NS_PER_S + (1U << 15)) >> 16);
}

int64_t ntp_log2_to_ns(int8_t l)
{
	double ns = ldexp(1e9, l);

	if (ns < 1)
		return 1;
	return ns > 9e18 ? INT64_MAX : (int64_t)ns;
}
