/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTPv4 packets (RFC 5905): encoding a client request, decoding and
 * validating a server's reply, and the timestamp formats. Pure functions,
 * no I/O, so they are unit-tested and fuzzed on their own.
 */
#ifndef LCLK_NTP_PACKET_H
#define LCLK_NTP_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NTP_PORT		123
#define NTP_HEADER_LEN		48
/*
 * Longest reply accepted: header plus extension fields and a MAC (RFC 7822).
 * We send neither, so the rest is ignored; anything longer is junk.
 */
#define NTP_MAX_LEN		1024

#define NTP_MODE_CLIENT		3
#define NTP_MODE_SERVER		4
#define NTP_LEAP_UNSYNC		3
#define NTP_MAX_STRATUM		15
/* RFC 5905 MAXDISP: a root distance beyond this is no time at all. */
#define NTP_MAX_DISTANCE_NS	16000000000LL
/* Coarsest precision accepted, log2 s: 2^4 s would be MAXDISP already. */
#define NTP_MAX_PRECISION	3

/* Seconds from the NTP era 0 epoch (1900) to the Unix epoch (1970). */
#define NTP_UNIX_OFFSET		2208988800ULL

struct ntp_packet {
	uint8_t leap;		/* 0..3 */
	uint8_t version;	/* 1..7 */
	uint8_t mode;		/* 0..7 */
	uint8_t stratum;
	int8_t poll;		/* log2 s */
	int8_t precision;	/* log2 s */
	uint32_t root_delay;	/* NTP short format, 16.16 s */
	uint32_t root_dispersion;
	uint32_t refid;		/* as on the wire, big-endian bytes in order */
	uint64_t reference_ts;	/* NTP timestamp format, 32.32 s */
	uint64_t origin_ts;
	uint64_t receive_ts;
	uint64_t transmit_ts;
};

/* Why a reply is not used. NTP_OK is 0. */
enum ntp_verdict {
	NTP_OK = 0,
	NTP_TRUNCATED,		/* shorter than the 48-byte header */
	NTP_OVERSIZED,		/* longer than NTP_MAX_LEN or not whole words */
	NTP_BAD_MODE,		/* not mode 4 (server) */
	NTP_BAD_VERSION,	/* not version 3 or 4 */
	NTP_BOGUS_ORIGIN,	/* origin != our transmit: spoofed or stale */
	NTP_KISS_OF_DEATH,	/* stratum 0 with a kiss code: see ntp_kiss() */
	NTP_BAD_STRATUM,	/* stratum 0 (no kiss code) or above 15 */
	NTP_UNSYNCHRONISED,	/* leap indicator 3 */
	NTP_ZERO_TIMESTAMP,	/* receive or transmit timestamp zero */
	NTP_BAD_ROOT,		/* root delay/dispersion absurd */
	NTP_BAD_TIME_ORDER,	/* server transmitted before it received */
	NTP_BAD_SOURCE,		/* from another address or port */
	NTP_DUPLICATE,		/* second reply to one request */
	NTP_NEGATIVE_DELAY,	/* round trip shorter than the server's hold time */
	NTP_BAD_PRECISION,	/* precision coarser than NTP_MAX_PRECISION */
	NTP_BAD_REFERENCE,	/* clock set after the reply was sent */
	NTP_VERDICTS
};

/* Kiss codes acted upon (RFC 5905 7.4). */
enum ntp_kiss {
	NTP_KISS_OTHER,		/* unknown code: treated as unsynchronised */
	NTP_KISS_RATE,		/* slow down */
	NTP_KISS_DENY,		/* stop: access denied */
	NTP_KISS_RSTR,		/* stop: access restricted */
};

const char *ntp_verdict_str(enum ntp_verdict v);

/*
 * What a client request carries and its reply must echo. A basic request
 * has only xmt, random (see ntp_client.c). An interleaved request (chrony's
 * extension of RFC 5905 interleaved mode to client/server) also names the
 * server's receive timestamp of an earlier exchange in org and a second
 * random cookie in rec: a server that remembers that exchange answers with
 * origin = rec and, as transmit, the kernel timestamp of when its reply to
 * that exchange really left. Any other server answers in basic mode.
 */
struct ntp_request {
	uint64_t xmt;	/* random; echoed as origin by a basic reply */
	uint64_t org;	/* server receive timestamp asked about; 0: basic request */
	uint64_t rec;	/* random; echoed as origin by an interleaved reply */
};

void ntp_encode_request(const struct ntp_request *rq, uint8_t buf[NTP_HEADER_LEN]);

/* Serialise any packet (tests and test responders). */
void ntp_encode(const struct ntp_packet *p, uint8_t buf[NTP_HEADER_LEN]);

/* Parse buf; NTP_OK, NTP_TRUNCATED or NTP_OVERSIZED. */
enum ntp_verdict ntp_decode(const uint8_t *buf, size_t len, struct ntp_packet *p);

/*
 * Check a decoded reply to request rq, in the order that never trusts an
 * unauthenticated field: origin first, so a spoofed Kiss-o'-Death is
 * rejected as bogus rather than obeyed. *interleaved says which cookie the
 * origin matched: then the transmit timestamp belongs to the exchange rq->org
 * names and must not precede rq->org, nor follow this reply's receive.
 */
enum ntp_verdict ntp_validate_reply(const struct ntp_packet *p, const struct ntp_request *rq,
				    bool *interleaved);

/* The kiss code of a reply validated as NTP_KISS_OF_DEATH. */
enum ntp_kiss ntp_kiss(const struct ntp_packet *p);

/* refid as text: "RATE", "GPS", or dotted IPv4 for stratum >= 2. */
void ntp_refid_str(const struct ntp_packet *p, char *buf, size_t len);

/* 32.32 timestamp <-> Unix ns. Era chosen nearest to pivot_ns (RFC 5905 6). */
int64_t ntp_ts_to_unix_ns(uint64_t ts, int64_t pivot_ns);
uint64_t ntp_unix_ns_to_ts(int64_t ns);

/* 2^-32 s fraction <-> ns, rounded to nearest. */
uint32_t ntp_ns_to_frac(uint32_t ns);
uint32_t ntp_frac_to_ns(uint32_t frac);

/* 16.16 short format to ns. */
int64_t ntp_short_to_ns(uint32_t v);

/* A log2-seconds precision/poll value to ns (at least 1). */
int64_t ntp_log2_to_ns(int8_t l);

#endif /* LCLK_NTP_PACKET_H */
