// SPDX-License-Identifier: GPL-2.0
/*
 * NTP packets: timestamp formats and era handling, request encoding, and a
 * table of malformed and hostile replies, each rejected for its reason.
 */
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ntp/ntp_packet.h"

#define XMT 0x0123456789abcdefULL
#define REC 0x1122334455667788ULL
#define NS 1000000000LL

static const struct ntp_request basic = { .xmt = XMT };

static enum ntp_verdict validate(const struct ntp_packet *p, const struct ntp_request *rq)
{
	bool interleaved;

	return ntp_validate_reply(p, rq, &interleaved);
}

TEST(fraction_round_trip)
{
	static const uint32_t ns[] = { 0, 1, 2, 499999999, 500000000, 999999999, 123456789 };
	unsigned int i;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		uint32_t back = ntp_frac_to_ns(ntp_ns_to_frac(ns[i]));

		EXPECT_LE(back > ns[i] ? back - ns[i] : ns[i] - back, 1);
	}
	EXPECT_EQ(ntp_frac_to_ns(0x80000000U), 500000000U);
	EXPECT_EQ(ntp_frac_to_ns(0xffffffffU), 1000000000U);
	EXPECT_EQ(ntp_ns_to_frac(500000000), 0x80000000U);
}

TEST(short_and_log2_formats)
{
	EXPECT_EQ(ntp_short_to_ns(0x00010000), NS);
	EXPECT_EQ(ntp_short_to_ns(0x00008000), NS / 2);
	EXPECT_EQ(ntp_short_to_ns(0), 0);
	EXPECT_EQ(ntp_log2_to_ns(0), NS);
	EXPECT_EQ(ntp_log2_to_ns(-20), 953);
	EXPECT_EQ(ntp_log2_to_ns(-128), 1);
	EXPECT_EQ(ntp_log2_to_ns(127), INT64_MAX);
}

TEST(unix_epoch_and_eras)
{
	/* 1970-01-01 is second 2208988800 of era 0. */
	EXPECT_EQ(ntp_unix_ns_to_ts(0), (uint64_t)NTP_UNIX_OFFSET << 32);
	EXPECT_EQ(ntp_ts_to_unix_ns((uint64_t)NTP_UNIX_OFFSET << 32, 0), 0);
	/* Era 1 starts 2036-02-07T06:28:16Z = Unix 2085978496. */
	EXPECT_EQ(ntp_unix_ns_to_ts(2085978496LL * NS), 0);
	EXPECT_EQ(ntp_ts_to_unix_ns(5ULL << 32, 2085978490LL * NS), 2085978501LL * NS);
	/* Seconds near the end of era 0, seen from just after the wrap. */
	EXPECT_EQ(ntp_ts_to_unix_ns(0xfffffffbULL << 32, 2085978500LL * NS),
		  2085978491LL * NS);
	/* Before 1970 (pivot in 1960). */
	EXPECT_EQ(ntp_ts_to_unix_ns(ntp_unix_ns_to_ts(-315619200LL * NS), -315619000LL * NS),
		  -315619200LL * NS);
}

TEST(round_trip_within_68_years_of_the_pivot)
{
	static const int64_t t[] = {
		0, 946684800LL * NS + 1, 1893456000LL * NS + 999999999LL,
		2085978495LL * NS, 2208988800LL * NS, 4102444800LL * NS + 5,
	};
	unsigned int i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int64_t pivots[] = { t[i], t[i] - 60LL * 365 * 86400 * NS, t[i] + 60LL * 365 * 86400 * NS };
		unsigned int k;

		for (k = 0; k < 3; k++) {
			int64_t back = ntp_ts_to_unix_ns(ntp_unix_ns_to_ts(t[i]), pivots[k]);

			EXPECT_LE(llabs(back - t[i]), 1);
		}
	}
}

TEST(request_carries_only_version_mode_and_transmit)
{
	uint8_t b[NTP_HEADER_LEN];
	struct ntp_packet p;
	int i;

	ntp_encode_request(&basic, b);
	EXPECT_EQ(b[0], 0x23);	/* LI 0, VN 4, mode 3 */
	for (i = 1; i < 40; i++)
		EXPECT_EQ(b[i], 0);
	ASSERT_EQ(ntp_decode(b, sizeof(b), &p), NTP_OK);
	EXPECT_EQ(p.transmit_ts, XMT);
	EXPECT_EQ(p.mode, NTP_MODE_CLIENT);
}

static struct ntp_packet good(void)
{
	struct ntp_packet p = {
		.leap = 0, .version = 4, .mode = NTP_MODE_SERVER, .stratum = 2,
		.poll = 6, .precision = -20, .root_delay = 0x100, .root_dispersion = 0x200,
		.refid = 0x0a000001, .reference_ts = 0xe0000000ULL << 32,
		.origin_ts = XMT, .receive_ts = 0xe0000001ULL << 32,
		.transmit_ts = (0xe0000001ULL << 32) + 1000,
	};

	return p;
}

static uint32_t code(const char *s)
{
	return (uint32_t)s[0] << 24 | (uint32_t)s[1] << 16 | (uint32_t)s[2] << 8 | (uint8_t)s[3];
}

/* One hostile or malformed variant of a good reply, and the verdict. */
struct variant {
	const char *name;
	void (*mutate)(struct ntp_packet *p);
	enum ntp_verdict verdict;
};

static void v_none(struct ntp_packet *p) { (void)p; }
static void v_v3(struct ntp_packet *p) { p->version = 3; }
static void v_leap1(struct ntp_packet *p) { p->leap = 1; }
static void v_mode3(struct ntp_packet *p) { p->mode = 3; }
static void v_mode5(struct ntp_packet *p) { p->mode = 5; }
static void v_v2(struct ntp_packet *p) { p->version = 2; }
static void v_v5(struct ntp_packet *p) { p->version = 5; }
static void v_origin(struct ntp_packet *p) { p->origin_ts ^= 1; }
static void v_origin0(struct ntp_packet *p) { p->origin_ts = 0; }
static void v_rate(struct ntp_packet *p) { p->stratum = 0; p->refid = code("RATE"); }
static void v_deny(struct ntp_packet *p) { p->stratum = 0; p->refid = code("DENY"); }
static void v_spoofed_kod(struct ntp_packet *p) { v_deny(p); p->origin_ts = 42; }
static void v_stratum0(struct ntp_packet *p) { p->stratum = 0; p->refid = 0x7f000001; }
static void v_stratum16(struct ntp_packet *p) { p->stratum = 16; }
static void v_stratum255(struct ntp_packet *p) { p->stratum = 255; }
static void v_leap3(struct ntp_packet *p) { p->leap = 3; }
static void v_rx0(struct ntp_packet *p) { p->receive_ts = 0; }
static void v_tx0(struct ntp_packet *p) { p->transmit_ts = 0; }
static void v_rootdelay(struct ntp_packet *p) { p->root_delay = 0xffffffff; }
static void v_rootdisp(struct ntp_packet *p) { p->root_dispersion = 16 << 16; }
static void v_order(struct ntp_packet *p) { p->transmit_ts = p->receive_ts - 1; }

static const struct variant variants[] = {
	{ "good", v_none, NTP_OK },
	{ "version 3", v_v3, NTP_OK },
	{ "leap second warning", v_leap1, NTP_OK },
	{ "client mode", v_mode3, NTP_BAD_MODE },
	{ "broadcast mode", v_mode5, NTP_BAD_MODE },
	{ "version 2", v_v2, NTP_BAD_VERSION },
	{ "version 5", v_v5, NTP_BAD_VERSION },
	{ "origin off by one bit", v_origin, NTP_BOGUS_ORIGIN },
	{ "zero origin", v_origin0, NTP_BOGUS_ORIGIN },
	{ "KoD RATE", v_rate, NTP_KISS_OF_DEATH },
	{ "KoD DENY", v_deny, NTP_KISS_OF_DEATH },
	{ "spoofed KoD", v_spoofed_kod, NTP_BOGUS_ORIGIN },
	{ "stratum 0, no kiss code", v_stratum0, NTP_BAD_STRATUM },
	{ "stratum 16", v_stratum16, NTP_BAD_STRATUM },
	{ "stratum 255", v_stratum255, NTP_BAD_STRATUM },
	{ "leap 3", v_leap3, NTP_UNSYNCHRONISED },
	{ "zero receive", v_rx0, NTP_ZERO_TIMESTAMP },
	{ "zero transmit", v_tx0, NTP_ZERO_TIMESTAMP },
	{ "huge root delay", v_rootdelay, NTP_BAD_ROOT },
	{ "16 s root dispersion", v_rootdisp, NTP_BAD_ROOT },
	{ "transmit before receive", v_order, NTP_BAD_TIME_ORDER },
};

TEST(hostile_replies_rejected_for_the_right_reason)
{
	unsigned int i;

	for (i = 0; i < sizeof(variants) / sizeof(variants[0]); i++) {
		struct ntp_packet p = good(), q;
		uint8_t b[NTP_HEADER_LEN];

		variants[i].mutate(&p);
		ntp_encode(&p, b);
		ASSERT_EQ(ntp_decode(b, sizeof(b), &q), NTP_OK);
		EXPECT_EQ(validate(&q, &basic), variants[i].verdict)
			TH_LOG("%s: got '%s'", variants[i].name,
			       ntp_verdict_str(validate(&q, &basic)));
	}
}

/*
 * A precision of 2^4 s is already RFC 5905's MAXDISP: no time at all. A
 * precision byte of 34 or more made ntp_log2_to_ns() saturate and the
 * error sum of a sample overflow into an offset of ~292 years.
 */
TEST(coarse_precision_rejected)
{
	static const struct { int8_t precision; bool ok; } cases[] = {
		{ -128, true }, { -20, true }, { 0, true }, { 3, true },
		{ 4, false }, { 33, false }, { 34, false }, { 40, false }, { 127, false },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ntp_packet p = good();
		enum ntp_verdict v;

		p.precision = cases[i].precision;
		v = validate(&p, &basic);
		if (cases[i].ok) {
			EXPECT_EQ(NTP_OK, v) TH_LOG("precision %d", cases[i].precision);
		} else {
			EXPECT_NE(NULL, strstr(ntp_verdict_str(v), "precision"))
				TH_LOG("precision %d: got '%s'", cases[i].precision,
				       ntp_verdict_str(v));
		}
	}
}

/*
 * chrony's test7: a server cannot have set its clock after it answered.
 * A zero reference (never set) says nothing; an interleaved reply is
 * checked against its receive time, the later of the two.
 */
TEST(reference_after_transmit_rejected)
{
	struct ntp_request rq = { .xmt = XMT, .org = (0xe0000001ULL << 32) | 1, .rec = REC };
	struct ntp_packet p = good();
	bool interleaved;

	p.reference_ts = p.transmit_ts;
	EXPECT_EQ(NTP_OK, validate(&p, &basic));
	p.reference_ts = 0;
	EXPECT_EQ(NTP_OK, validate(&p, &basic));
	p.reference_ts = p.transmit_ts + 1;
	EXPECT_NE(NULL, strstr(ntp_verdict_str(validate(&p, &basic)), "reference"));
	p.reference_ts = p.transmit_ts + (3600ULL << 32);
	EXPECT_NE(NULL, strstr(ntp_verdict_str(validate(&p, &basic)), "reference"));

	p.origin_ts = REC;
	p.transmit_ts = rq.org + 5000;
	p.receive_ts = rq.org + (1ULL << 32);
	p.reference_ts = p.receive_ts - 1;
	EXPECT_EQ(NTP_OK, ntp_validate_reply(&p, &rq, &interleaved));
	p.reference_ts = p.receive_ts + 1;
	EXPECT_NE(NULL, strstr(ntp_verdict_str(ntp_validate_reply(&p, &rq, &interleaved)),
			       "reference"));
}

TEST(interleaved_request_names_the_exchange_and_a_second_cookie)
{
	struct ntp_request rq = { .xmt = XMT, .org = (0xe0000001ULL << 32) | 1, .rec = REC };
	uint8_t b[NTP_HEADER_LEN];
	struct ntp_packet p;
	int i;

	ntp_encode_request(&rq, b);
	for (i = 1; i < 24; i++)
		EXPECT_EQ(b[i], 0);
	ASSERT_EQ(ntp_decode(b, sizeof(b), &p), NTP_OK);
	EXPECT_EQ(p.origin_ts, rq.org);
	EXPECT_EQ(p.receive_ts, REC);
	EXPECT_EQ(p.transmit_ts, XMT);
}

/*
 * An interleaved reply echoes rec and carries the transmit time of the
 * reply to the exchange org names: after org, before this receive.
 */
TEST(interleaved_replies)
{
	struct ntp_request rq = { .xmt = XMT, .org = (0xe0000001ULL << 32) | 1, .rec = REC };
	struct ntp_packet p = good();
	bool interleaved;

	p.origin_ts = REC;
	p.transmit_ts = rq.org + 5000;
	p.receive_ts = rq.org + (1ULL << 32);
	EXPECT_EQ(ntp_validate_reply(&p, &rq, &interleaved), NTP_OK);
	EXPECT_TRUE(interleaved);

	/* A server that does not interleave answers the basic way. */
	p = good();
	EXPECT_EQ(ntp_validate_reply(&p, &rq, &interleaved), NTP_OK);
	EXPECT_FALSE(interleaved);

	p.origin_ts = REC;
	p.transmit_ts = rq.org - 1;
	p.receive_ts = rq.org + (1ULL << 32);
	EXPECT_EQ(validate(&p, &rq), NTP_BAD_TIME_ORDER);
	p.transmit_ts = rq.org + 5000;
	p.receive_ts = p.transmit_ts - 1;
	EXPECT_EQ(validate(&p, &rq), NTP_BAD_TIME_ORDER);

	/* rec means nothing to a basic request, nor an origin naming it. */
	p.receive_ts = rq.org + (1ULL << 32);
	EXPECT_EQ(validate(&p, &basic), NTP_BOGUS_ORIGIN);
	p.origin_ts = 0;
	EXPECT_EQ(validate(&p, &basic), NTP_BOGUS_ORIGIN);
	rq.rec = 0;
	EXPECT_EQ(validate(&p, &rq), NTP_BOGUS_ORIGIN);
}

TEST(kiss_codes)
{
	struct ntp_packet p = good();
	char s[16];

	v_rate(&p);
	EXPECT_EQ(ntp_kiss(&p), NTP_KISS_RATE);
	ntp_refid_str(&p, s, sizeof(s));
	EXPECT_STREQ(s, "RATE");
	v_deny(&p);
	EXPECT_EQ(ntp_kiss(&p), NTP_KISS_DENY);
	p.refid = code("RSTR");
	EXPECT_EQ(ntp_kiss(&p), NTP_KISS_RSTR);
	p.refid = code("INIT");
	EXPECT_EQ(ntp_kiss(&p), NTP_KISS_OTHER);
	EXPECT_EQ(validate(&p, &basic), NTP_KISS_OF_DEATH);
	p.refid = 0x47505300;	/* "GPS" */
	EXPECT_EQ(validate(&p, &basic), NTP_KISS_OF_DEATH);
	p.stratum = 2;
	p.refid = 0xc0000201;
	ntp_refid_str(&p, s, sizeof(s));
	EXPECT_STREQ(s, "192.0.2.1");
	p.stratum = 1;
	p.refid = 0x47505300;
	ntp_refid_str(&p, s, sizeof(s));
	EXPECT_STREQ(s, "GPS");
	p.refid = 0x7f7f0101;	/* chronyd's "local stratum 1" */
	ntp_refid_str(&p, s, sizeof(s));
	EXPECT_STREQ(s, "7F7F0101");
}

TEST(lengths)
{
	uint8_t b[NTP_MAX_LEN + 8] = {};
	struct ntp_packet p = good(), q;

	ntp_encode(&p, b);
	EXPECT_EQ(ntp_decode(b, 0, &q), NTP_TRUNCATED);
	EXPECT_EQ(ntp_decode(b, 47, &q), NTP_TRUNCATED);
	EXPECT_EQ(ntp_decode(b, 49, &q), NTP_OVERSIZED);
	EXPECT_EQ(ntp_decode(b, 50, &q), NTP_OVERSIZED);
	EXPECT_EQ(ntp_decode(b, NTP_MAX_LEN + 4, &q), NTP_OVERSIZED);
	/* Header plus a MAC (key id and a 20-byte digest) is fine. */
	EXPECT_EQ(ntp_decode(b, 48 + 24, &q), NTP_OK);
	EXPECT_EQ(ntp_decode(b, NTP_MAX_LEN, &q), NTP_OK);
	EXPECT_EQ(q.leap, p.leap);
	EXPECT_EQ(q.version, p.version);
	EXPECT_EQ(q.mode, p.mode);
	EXPECT_EQ(q.stratum, p.stratum);
	EXPECT_EQ(q.poll, p.poll);
	EXPECT_EQ(q.precision, p.precision);
	EXPECT_EQ(q.root_delay, p.root_delay);
	EXPECT_EQ(q.root_dispersion, p.root_dispersion);
	EXPECT_EQ(q.refid, p.refid);
	EXPECT_EQ(q.reference_ts, p.reference_ts);
	EXPECT_EQ(q.origin_ts, p.origin_ts);
	EXPECT_EQ(q.receive_ts, p.receive_ts);
	EXPECT_EQ(q.transmit_ts, p.transmit_ts);
}

TEST(verdict_strings)
{
	int v;

	for (v = 0; v < NTP_VERDICTS; v++)
		EXPECT_NE(ntp_verdict_str(v), NULL);
	EXPECT_STREQ(ntp_verdict_str(NTP_VERDICTS), "unknown");
}

TEST_HARNESS_MAIN
