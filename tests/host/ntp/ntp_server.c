// SPDX-License-Identifier: GPL-2.0
/* lclkctl serve's protocol logic: which requests are answered, the reply, rate limits. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lclk_model.h"
#include "ntp/ntp_server.h"
#include "ntp/siphash.h"

static void request(uint8_t buf[NTP_HEADER_LEN], int version, int mode, uint64_t xmt)
{
	struct ntp_packet p = { .version = version, .mode = mode, .poll = 6, .transmit_ts = xmt };

	ntp_encode(&p, buf);
}

TEST(answers_client_requests_only)
{
	uint8_t buf[NTP_HEADER_LEN + 20] = {};
	struct ntp_packet req;
	int mode, version;

	for (version = 0; version <= 7; version++) {
		for (mode = 0; mode <= 7; mode++) {
			request(buf, version, mode, 42);
			EXPECT_EQ(mode == 3 && version >= 1 && version <= 4,
				  ntp_server_request(buf, NTP_HEADER_LEN, &req))
				TH_LOG("version %d mode %d", version, mode);
		}
	}
	request(buf, 4, 3, 42);
	EXPECT_FALSE(ntp_server_request(buf, NTP_HEADER_LEN - 1, &req));
	EXPECT_FALSE(ntp_server_request(buf, NTP_HEADER_LEN + 2, &req));	/* not whole words */
	EXPECT_TRUE(ntp_server_request(buf, NTP_HEADER_LEN + 20, &req));	/* extension/MAC */
}

TEST(synced_reply_carries_the_bound)
{
	uint8_t buf[NTP_HEADER_LEN];
	struct ntp_packet req, rep;
	struct ntp_server_clock c = {
		.status = LCLK_STATUS_SYNCED, .bound_ns = 1500000, .stratum = 3, .precision = -20,
		.reference_ns = 1700000000000000000LL,
		.receive_ns = 1700000001000000000LL, .transmit_ns = 1700000001000050000LL,
	};

	request(buf, 4, 3, 0x1122334455667788ULL);
	ASSERT_TRUE(ntp_server_request(buf, sizeof(buf), &req));
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(0, rep.leap);
	EXPECT_EQ(4, rep.version);
	EXPECT_EQ(NTP_MODE_SERVER, rep.mode);
	EXPECT_EQ(3, rep.stratum);
	EXPECT_EQ(6, rep.poll);
	EXPECT_EQ(-20, rep.precision);
	EXPECT_EQ(0x1122334455667788ULL, rep.origin_ts);
	EXPECT_EQ(0, rep.root_delay);
	/* 1.5 ms in 16.16 rounded up: never below the bound. */
	EXPECT_GE(ntp_short_to_ns(rep.root_dispersion), 1500000);
	EXPECT_LT(ntp_short_to_ns(rep.root_dispersion), 1500000 + 16000);
	/* Marked as chronyd marks them: receive odd, transmit even. */
	EXPECT_EQ(ntp_unix_ns_to_ts(c.receive_ns) | 1, rep.receive_ts);
	EXPECT_EQ(ntp_unix_ns_to_ts(c.transmit_ns) & ~1ULL, rep.transmit_ts);
	EXPECT_EQ(ntp_unix_ns_to_ts(c.reference_ns), rep.reference_ts);
	/* Holdover still answers, with the grown bound. */
	c.status = LCLK_STATUS_HOLDOVER;
	c.bound_ns = 80000000000000LL;	/* beyond 16.16: saturates */
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(0, rep.leap);
	EXPECT_EQ(0xffffffffU, rep.root_dispersion);
}

/* The clock's pending leap is the reply's leap indicator; unsynced says 3. */
TEST(leap_indicator_is_the_pending_leap)
{
	uint8_t buf[NTP_HEADER_LEN];
	struct ntp_packet req, rep;
	struct ntp_server_clock c = {
		.status = LCLK_STATUS_SYNCED, .bound_ns = 1500000, .stratum = 3,
		.receive_ns = 1700000001000000000LL, .transmit_ns = 1700000001000050000LL,
		.leap = LCLK_LEAP_INSERT,
	};

	request(buf, 4, 3, 0x1122334455667788ULL);
	ASSERT_TRUE(ntp_server_request(buf, sizeof(buf), &req));
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(1, rep.leap);
	ntp_encode(&rep, buf);
	EXPECT_EQ(1, buf[0] >> 6);
	c.leap = LCLK_LEAP_DELETE;
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(2, rep.leap);
	c.leap = 3;		/* no such leap: none */
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(0, rep.leap);
	c.leap = LCLK_LEAP_INSERT;
	c.status = LCLK_STATUS_UNSYNCED;
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(3, rep.leap);
}

TEST(unsynced_reply_says_so)
{
	uint8_t buf[NTP_HEADER_LEN];
	struct ntp_packet req, rep;
	bool ilv;
	struct ntp_server_clock c = {
		.status = LCLK_STATUS_UNSYNCED, .bound_ns = LCLK_BOUND_UNKNOWN, .stratum = 2,
		.receive_ns = 1700000001000000000LL, .transmit_ns = 1700000001000050000LL,
	};

	request(buf, 3, 3, 7);
	ASSERT_TRUE(ntp_server_request(buf, sizeof(buf), &req));
	ntp_server_reply(&req, &c, &rep);
	EXPECT_EQ(NTP_LEAP_UNSYNC, rep.leap);
	EXPECT_EQ(16, rep.stratum);
	EXPECT_EQ(3, rep.version);
	EXPECT_EQ(0, rep.reference_ts);
	EXPECT_EQ(7, rep.origin_ts);
	/* A client validating it rejects it. */
	EXPECT_NE(NTP_OK, ntp_validate_reply(&rep, &(struct ntp_request){ .xmt = 7 }, &ilv));
}

/*
 * Following a stratum-15 source makes us stratum 16, which is NTP's
 * "unsynchronised": the reply must say so with leap 3 (the alarm), not
 * announce stratum 16 with leap 0.
 */
TEST(stratum_16_is_unsynced)
{
	uint8_t buf[NTP_HEADER_LEN];
	struct ntp_packet req, rep;
	bool ilv;
	int stratum;

	for (stratum = 15; stratum <= 17; stratum++) {
		struct ntp_server_clock c = {
			.status = LCLK_STATUS_SYNCED, .bound_ns = 1000, .stratum = stratum,
			.receive_ns = 1700000001000000000LL, .transmit_ns = 1700000001000050000LL,
		};

		request(buf, 4, 3, 7);
		ASSERT_TRUE(ntp_server_request(buf, sizeof(buf), &req));
		ntp_server_reply(&req, &c, &rep);
		if (stratum == 15) {
			EXPECT_EQ(0, rep.leap);
			EXPECT_EQ(15, rep.stratum);
			continue;
		}
		EXPECT_EQ(NTP_LEAP_UNSYNC, rep.leap) TH_LOG("stratum %d", stratum);
		EXPECT_EQ(16, rep.stratum);
		EXPECT_NE(NTP_OK, ntp_validate_reply(&rep, &(struct ntp_request){ .xmt = 7 }, &ilv));
	}
}

static const struct ntp_server_clock synced = {
	.status = LCLK_STATUS_SYNCED, .bound_ns = 1000, .stratum = 2, .precision = -24,
	.receive_ns = 1700000001000000000LL, .transmit_ns = 1700000001000020000LL,
};

/* A client request naming the exchange whose receive timestamp is org. */
static struct ntp_packet xleave_request(uint64_t org)
{
	struct ntp_packet p = { .version = 4, .mode = NTP_MODE_CLIENT, .origin_ts = org,
				.receive_ts = 0xaaaa5555aaaa5555ULL, .transmit_ts = 42 };

	return p;
}

TEST(interleaved_reply_carries_the_kernel_transmit_time)
{
	struct ntp_xleave *xl = calloc(1, sizeof(*xl));
	struct ntp_packet req = { .version = 4, .mode = NTP_MODE_CLIENT, .transmit_ts = 7 };
	struct ntp_packet first, rep, q;
	int64_t left = synced.receive_ns + 35000;

	ASSERT_NE(NULL, xl);
	ntp_server_reply(&req, &synced, &first);
	EXPECT_FALSE(ntp_xleave_reply(xl, &req, &first));	/* a basic request */
	ntp_xleave_stamped(xl, &first, left);

	q = xleave_request(first.receive_ts);
	ntp_server_reply(&q, &synced, &rep);
	ASSERT_TRUE(ntp_xleave_reply(xl, &q, &rep));
	EXPECT_EQ(q.receive_ts, rep.origin_ts);
	EXPECT_EQ(ntp_unix_ns_to_ts(left), rep.transmit_ts);
	/* Handed out once: a replayed request gets a basic reply. */
	ntp_server_reply(&q, &synced, &rep);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	EXPECT_EQ(42, rep.origin_ts);

	/* Requests chronyd would not answer interleaved either. */
	ntp_xleave_stamped(xl, &first, left);
	q.version = 3;
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	q = xleave_request(first.receive_ts & ~1ULL);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	q = xleave_request(first.receive_ts);
	q.receive_ts = q.transmit_ts;
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	q = xleave_request(first.receive_ts + 2);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	q = xleave_request(first.receive_ts);
	EXPECT_TRUE(ntp_xleave_reply(xl, &q, &rep));
	free(xl);
}

TEST(only_plausible_departures_are_kept)
{
	struct ntp_xleave *xl = calloc(1, sizeof(*xl));
	struct ntp_packet req = { .version = 4, .mode = NTP_MODE_CLIENT, .transmit_ts = 7 };
	struct ntp_server_clock c = synced;
	struct ntp_packet first, rep, q;

	ASSERT_NE(NULL, xl);
	ntp_server_reply(&req, &c, &first);
	q = xleave_request(first.receive_ts);
	/* Left before the request came: a bad conversion, not a time. */
	ntp_xleave_stamped(xl, &first, c.receive_ns - 1000);
	ntp_server_reply(&q, &c, &rep);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	/* An unsynchronised reply: nobody uses it, nothing to remember. */
	c.status = LCLK_STATUS_UNSYNCED;
	ntp_server_reply(&req, &c, &first);
	ntp_xleave_stamped(xl, &first, c.receive_ns + 1000);
	ntp_server_reply(&q, &c, &rep);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	/* Nor answers interleaved while unsynchronised. */
	c.status = LCLK_STATUS_SYNCED;
	ntp_server_reply(&req, &c, &first);
	ntp_xleave_stamped(xl, &first, c.receive_ns + 1000);
	c.status = LCLK_STATUS_UNSYNCED;
	ntp_server_reply(&q, &c, &rep);
	EXPECT_FALSE(ntp_xleave_reply(xl, &q, &rep));
	free(xl);
}

TEST(rate_limit_per_client)
{
	struct ratelimit *rl = malloc(sizeof(*rl));
	struct sockaddr_in a = { .sin_family = AF_INET }, b = a;
	int64_t t = 1000000000;
	int i, allowed = 0;

	ASSERT_NE(NULL, rl);
	inet_pton(AF_INET, "10.0.0.1", &a.sin_addr);
	inet_pton(AF_INET, "10.0.0.2", &b.sin_addr);
	ratelimit_init(rl, 2, 4);
	for (i = 0; i < 10; i++)
		allowed += ratelimit_allow(rl, (struct sockaddr *)&a, t);
	EXPECT_EQ(4, allowed);		/* the burst, then nothing */
	EXPECT_TRUE(ratelimit_allow(rl, (struct sockaddr *)&b, t));	/* others unaffected */
	EXPECT_FALSE(ratelimit_allow(rl, (struct sockaddr *)&a, t + 400000000));
	EXPECT_TRUE(ratelimit_allow(rl, (struct sockaddr *)&a, t + 600000000));	/* 2/s refill */
	/* Another port of the same host is the same client. */
	a.sin_port = htons(5000);
	EXPECT_FALSE(ratelimit_allow(rl, (struct sockaddr *)&a, t + 700000000));
	EXPECT_EQ(8, rl->dropped);
	free(rl);
}

/*
 * A spoofed victim alternated with many other addresses: whichever of them
 * share the victim's place in the table, none resets its bucket, so the
 * victim gets its burst and no more (all at one instant: no refill).
 */
TEST(rate_limit_collision_keeps_victim_limited)
{
	struct ratelimit *rl = malloc(sizeof(*rl));
	struct sockaddr_in v = { .sin_family = AF_INET }, o = v;
	int64_t t = 1000000000;
	int i, allowed = 0;

	ASSERT_NE(NULL, rl);
	inet_pton(AF_INET, "192.0.2.7", &v.sin_addr);
	ratelimit_init(rl, 1, 4);
	for (i = 0; i < 20000; i++) {
		o.sin_addr.s_addr = htonl(0x0a010000 + i);	/* 10.1.0.0 on */
		ratelimit_allow(rl, (struct sockaddr *)&o, t);
		allowed += ratelimit_allow(rl, (struct sockaddr *)&v, t);
	}
	EXPECT_EQ(4, allowed) TH_LOG("the victim got %d answers", allowed);
	free(rl);
}

/* The key makes the table: SipHash-2-4's vector from its paper, key 00..0f, 15 bytes 00..0e. */
TEST(siphash_reference_vector)
{
	uint64_t key[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	uint8_t m[15];
	int i;

	for (i = 0; i < 15; i++)
		m[i] = i;
	EXPECT_EQ(0xa129ca6149be45e5ULL, siphash24(key, m, sizeof(m)));
}

/* Two limiters (two starts of serve) key their hash differently. */
TEST(rate_limit_keyed_at_random)
{
	struct ratelimit *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ratelimit_init(a, 1, 4);
	ratelimit_init(b, 1, 4);
	EXPECT_TRUE(a->key[0] != b->key[0] || a->key[1] != b->key[1]);
	free(a);
	free(b);
}

static bool allowed(const struct ntp_allow *a, const char *ip)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, ip, &s4.sin_addr) == 1)
		return ntp_allow_match(a, (struct sockaddr *)&s4);
	inet_pton(AF_INET6, ip, &s6.sin6_addr);
	return ntp_allow_match(a, (struct sockaddr *)&s6);
}

TEST(allow_list)
{
	struct ntp_allow a = {};
	int i;

	EXPECT_FALSE(allowed(&a, "127.0.0.1"));		/* empty: nobody */
	EXPECT_EQ(0, ntp_allow_add(&a, "10.1.0.0/16"));
	EXPECT_EQ(0, ntp_allow_add(&a, "192.0.2.7"));
	EXPECT_EQ(0, ntp_allow_add(&a, "fd00:1::/32"));
	EXPECT_EQ(0, ntp_allow_add(&a, "10.2.3.128/25"));
	EXPECT_TRUE(allowed(&a, "10.1.200.3"));
	EXPECT_FALSE(allowed(&a, "10.2.0.1"));
	EXPECT_TRUE(allowed(&a, "10.2.3.200"));
	EXPECT_FALSE(allowed(&a, "10.2.3.127"));
	EXPECT_TRUE(allowed(&a, "192.0.2.7"));
	EXPECT_FALSE(allowed(&a, "192.0.2.8"));
	EXPECT_TRUE(allowed(&a, "::ffff:10.1.0.9"));	/* IPv4 over an IPv6 socket */
	EXPECT_TRUE(allowed(&a, "fd00:1:ffff::1"));
	EXPECT_FALSE(allowed(&a, "fd00:2::1"));
	EXPECT_FALSE(allowed(&a, "::1"));
	EXPECT_EQ(0, ntp_allow_add(&a, "all"));
	EXPECT_TRUE(allowed(&a, "::1"));
	EXPECT_TRUE(allowed(&a, "203.0.113.1"));

	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "10.0.0.0/33"));
	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "10.0.0.0/"));
	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "10.0.0.0/8x"));
	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "fd00::/129"));
	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "localhost"));
	EXPECT_EQ(-EINVAL, ntp_allow_add(&a, "/8"));
	for (i = a.n; i < NTP_ALLOW_MAX; i++)
		EXPECT_EQ(0, ntp_allow_add(&a, "10.0.0.1"));
	EXPECT_EQ(-ENOSPC, ntp_allow_add(&a, "10.0.0.1"));
}

TEST_HARNESS_MAIN
