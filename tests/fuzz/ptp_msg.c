// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the PTP message parser: any input either is
 * rejected with a reason or decodes into a message that re-encodes and
 * decodes to the same thing.
 */
#include <stdlib.h>
#include <string.h>

#include "ptp_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t buf[PTP_MAX_MSG_LEN];
	struct ptp_msg m, again;
	const char *reason = NULL;
	int len;

	if (ptp_msg_decode(data, size, &m, &reason)) {
		if (!reason)
			abort();
		return 0;
	}
	if (m.h.type == PTP_ANNOUNCE)
		m.announce.path_len = 0;	/* the encoder writes no path trace */
	len = ptp_msg_encode(&m, buf, sizeof(buf));
	if (len < 0)
		abort();
	if (ptp_msg_decode(buf, len, &again, &reason))
		abort();
	if (again.h.type != m.h.type || again.h.seq != m.h.seq ||
	    again.h.correction != m.h.correction ||
	    !ptp_port_id_eq(&again.h.source, &m.h.source))
		abort();
	if ((m.h.type == PTP_SYNC || m.h.type == PTP_FOLLOW_UP) &&
	    ptp_ts_ns(&again.origin) != ptp_ts_ns(&m.origin))
		abort();
	return 0;
}
