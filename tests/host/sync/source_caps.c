// SPDX-License-Identifier: GPL-2.0
/*
 * What each source needs to open, which the daemon keeps after it gives up
 * root (lclkctl(8), PRIVILEGES): nothing for NTP; for ptp:// the ports or
 * the packet socket of its transport, and SIOCSHWTSTAMP and the PHC unless
 * ts=sw; a PHC's node for phc:; ptp4l's socket for ptp4l:.
 */
#include <linux/capability.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lib/priv.h"
#include "sync/source.h"

#define C(x)	PRIV_CAP(CAP_##x)

TEST(ntp_needs_nothing)
{
	EXPECT_EQ(0, source_caps("ntp://127.0.0.1:123"));
	EXPECT_EQ(0, source_caps("ntp://pool.ntp.org"));
}

TEST(ptp_by_transport_and_stamps)
{
	EXPECT_EQ(C(NET_BIND_SERVICE), source_caps("ptp://eth0?ts=sw"));
	EXPECT_EQ(C(NET_BIND_SERVICE) | C(NET_ADMIN) | C(DAC_READ_SEARCH),
		  source_caps("ptp://eth0"));
	EXPECT_EQ(C(NET_RAW), source_caps("ptp://eth0?transport=l2&ts=sw"));
	EXPECT_EQ(C(NET_RAW) | C(NET_ADMIN) | C(DAC_READ_SEARCH),
		  source_caps("ptp://eth0?transport=l2&ts=hw"));
	/* A spec that does not parse never opens: it needs nothing. */
	EXPECT_EQ(0, source_caps("ptp://eth0?ts=maybe"));
}

TEST(phc_and_ptp4l)
{
	EXPECT_EQ(C(DAC_READ_SEARCH), source_caps("phc:/dev/ptp0"));
	EXPECT_EQ(C(DAC_OVERRIDE), source_caps("ptp4l:/var/run/ptp4l"));
}

TEST(unknown_scheme)
{
	EXPECT_EQ(0, source_caps("http://h"));
}

TEST(names)
{
	char buf[128];

	EXPECT_STREQ("none", priv_names(0, buf, sizeof(buf)));
	EXPECT_STREQ("CAP_NET_BIND_SERVICE CAP_SYS_TIME",
		     priv_names(C(SYS_TIME) | C(NET_BIND_SERVICE), buf, sizeof(buf)));
}

TEST_HARNESS_MAIN
