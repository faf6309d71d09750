// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "ntp_policy.h"

bool ntp_private_address(const struct sockaddr_storage *ss)
{
	const struct in6_addr *a6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
	uint32_t a;

	if (ss->ss_family == AF_INET6) {
		if (IN6_IS_ADDR_LOOPBACK(a6) || IN6_IS_ADDR_LINKLOCAL(a6) ||
		    (a6->s6_addr[0] & 0xfe) == 0xfc)
			return true;
		if (!IN6_IS_ADDR_V4MAPPED(a6))
			return false;
		memcpy(&a, &a6->s6_addr[12], 4);
	} else {
		a = ((const struct sockaddr_in *)ss)->sin_addr.s_addr;
	}
	a = ntohl(a);
	return (a >> 24) == 10 || (a >> 24) == 127 || (a >> 20) == 0xac1 ||
	       (a >> 16) == 0xc0a8 || (a >> 16) == 0xa9fe;
}

int64_t ntp_burst_interval_ns(bool private)
{
	return private ? NTP_LAN_INTERVAL_NS : NTP_WAN_INTERVAL_NS;
}

int64_t ntp_min_poll_ns(bool private)
{
	return private ? 0 : NTP_WAN_MIN_POLL_NS;
}

int64_t ntp_rate_poll_ns(int64_t last_ns)
{
	if (last_ns < NTP_RATE_MIN_POLL_NS)
		return NTP_RATE_MIN_POLL_NS;
	return last_ns > NTP_RATE_MAX_POLL_NS / 2 ? NTP_RATE_MAX_POLL_NS : last_ns * 2;
}
