// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl serve's request handling on arbitrary datagrams: whatever comes
 * in, either no answer or a well-formed mode-4 reply that echoes the
 * request's transmit timestamp and never claims sync for an unsynced clock;
 * or, when the request names an earlier reply (the interleaved table lives
 * across inputs), one that echoes its receive cookie and hands out a
 * departure no earlier than the exchange it names.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lclk_model.h"
#include "ntp/ntp_server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ntp_server_clock c = {
		.receive_ns = 1700000000000000000LL, .transmit_ns = 1700000000000001000LL,
		.stratum = 2, .precision = -20,
	};
	static struct ntp_xleave xl;
	struct ntp_packet req, rep, back;
	uint8_t out[NTP_HEADER_LEN];
	bool interleaved;

	if (!ntp_server_request(data, size, &req))
		return 0;
	/* The first byte past the header, if any, picks the clock's state. */
	c.status = size > NTP_HEADER_LEN ? data[NTP_HEADER_LEN] % 3 : LCLK_STATUS_UNSYNCED;
	c.bound_ns = c.status == LCLK_STATUS_UNSYNCED ? LCLK_BOUND_UNKNOWN :
		     (int64_t)(size * 1000003);
	ntp_server_reply(&req, &c, &rep);
	interleaved = ntp_xleave_reply(&xl, &req, &rep);
	ntp_encode(&rep, out);
	if (ntp_decode(out, sizeof(out), &back) != NTP_OK || back.mode != NTP_MODE_SERVER ||
	    back.version != req.version)
		abort();
	if (interleaved ? req.version != 4 || !(req.origin_ts & 1) ||
			  back.origin_ts != req.receive_ts || back.origin_ts == req.transmit_ts ||
			  (int64_t)(back.transmit_ts - req.origin_ts) < 0 :
			  back.origin_ts != req.transmit_ts)
		abort();
	/* The kernel stamps the reply on its way out, a little later. */
	ntp_xleave_stamped(&xl, &back, c.transmit_ns + (int64_t)size * 7);
	if (c.status == LCLK_STATUS_UNSYNCED && (back.leap != NTP_LEAP_UNSYNC || back.stratum != 16))
		abort();
	if (c.status != LCLK_STATUS_UNSYNCED && (back.leap == NTP_LEAP_UNSYNC ||
						 ntp_short_to_ns(back.root_dispersion) < c.bound_ns))
		abort();
	return 0;
}
