// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl serve's request handling on arbitrary datagrams: whatever comes
 * in, either no answer or a well-formed mode-4 reply that echoes the
 * request's transmit timestamp and never claims sync for an unsynced clock.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lclk_model.h"
#include "ntp_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ntp_server_clock c = {
		.receive_ns = 1700000000000000000LL, .transmit_ns = 1700000000000001000LL,
		.stratum = 2, .precision = -20,
	};
	struct ntp_packet req, rep, back;
	uint8_t out[NTP_HEADER_LEN];

	if (!ntp_server_request(data, size, &req))
		return 0;
	/* The first byte past the header, if any, picks the clock's state. */
	c.status = size > NTP_HEADER_LEN ? data[NTP_HEADER_LEN] % 3 : LCLK_STATUS_UNSYNCED;
	c.bound_ns = c.status == LCLK_STATUS_UNSYNCED ? LCLK_BOUND_UNKNOWN :
		     (int64_t)(size * 1000003);
	ntp_server_reply(&req, &c, &rep);
	ntp_encode(&rep, out);
	if (ntp_decode(out, sizeof(out), &back) != NTP_OK || back.mode != NTP_MODE_SERVER ||
	    back.version != req.version || back.origin_ts != req.transmit_ts)
		abort();
	if (c.status == LCLK_STATUS_UNSYNCED && (back.leap != NTP_LEAP_UNSYNC || back.stratum != 16))
		abort();
	if (c.status != LCLK_STATUS_UNSYNCED && (back.leap == NTP_LEAP_UNSYNC ||
						 ntp_short_to_ns(back.root_dispersion) < c.bound_ns))
		abort();
	return 0;
}
