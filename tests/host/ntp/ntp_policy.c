// SPDX-License-Identifier: GPL-2.0
/* How hard an NTP server is asked: private vs public, KoD RATE. */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <arpa/inet.h>
#include <string.h>

#include "kselftest_harness.h"
#include "ntp/ntp_policy.h"

#define S 1000000000LL

static bool private(const char *addr)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(addr, ':')) {
		ss.ss_family = AF_INET6;
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	} else {
		ss.ss_family = AF_INET;
		inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr);
	}
	return ntp_private_address(&ss);
}

TEST(private_and_public_addresses)
{
	EXPECT_TRUE(private("10.1.2.3"));
	EXPECT_TRUE(private("172.16.0.1"));
	EXPECT_TRUE(private("172.31.255.255"));
	EXPECT_TRUE(private("192.168.1.1"));
	EXPECT_TRUE(private("169.254.0.1"));
	EXPECT_TRUE(private("127.0.0.1"));
	EXPECT_TRUE(private("::1"));
	EXPECT_TRUE(private("fe80::1"));
	EXPECT_TRUE(private("fd00::1"));
	EXPECT_TRUE(private("::ffff:10.0.0.1"));
	EXPECT_FALSE(private("172.32.0.1"));
	EXPECT_FALSE(private("192.0.2.1"));
	EXPECT_FALSE(private("8.8.8.8"));
	EXPECT_FALSE(private("2001:db8::1"));
	EXPECT_FALSE(private("::ffff:192.0.2.1"));
}

/* chrony's defaults for a public server: 2 s spacing, 64 s between bursts. */
TEST(public_servers_are_spared)
{
	EXPECT_EQ(2 * S, ntp_burst_interval_ns(false));
	EXPECT_EQ(64 * S, ntp_min_poll_ns(false));
	EXPECT_EQ(S / 10, ntp_burst_interval_ns(true));
	EXPECT_EQ(0, ntp_min_poll_ns(true));
}

/* RATE: 64 s, doubling, capped; never overflowing however many come. */
TEST(rate_backoff_doubles_to_a_cap)
{
	int64_t p = 0;
	int i;

	p = ntp_rate_poll_ns(p);
	EXPECT_EQ(64 * S, p);
	p = ntp_rate_poll_ns(p);
	EXPECT_EQ(128 * S, p);
	for (i = 0; i < 1000; i++) {
		int64_t next = ntp_rate_poll_ns(p);

		ASSERT_GE(next, p);
		p = next;
	}
	EXPECT_EQ(131072 * S, p);
}

TEST_HARNESS_MAIN
