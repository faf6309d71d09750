// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the PTP message parser: any input either is
 * rejected with a reason or decodes into a message that re-encodes and
 * decodes to the same thing, also with an unknown TLV appended (IEEE 1588
 * receivers skip those), and whose timestamps convert to ns without
 * overflow (seconds within PTP_MAX_TS_SEC).
 */
#include <stdlib.h>
#include <string.h>

#include "ptp/ptp_msg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The message's timestamp, if its type has one. */
static const struct ptp_timestamp *timestamp(const struct ptp_msg *m)
{
	switch (m->h.type) {
	case PTP_SYNC:
	case PTP_DELAY_REQ:
	case PTP_FOLLOW_UP:
		return &m->origin;
	case PTP_DELAY_RESP:
		return &m->delay_resp.receive;
	case PTP_ANNOUNCE:
		return &m->announce.origin;
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t unknown_tlv[] = { 0x7f, 0xf0, 0x00, 0x02, 0xaa, 0x55 };
	uint8_t buf[PTP_MAX_MSG_LEN + sizeof(unknown_tlv)];
	struct ptp_msg m, again;
	const char *reason = NULL;
	int len;

	if (ptp_msg_decode(data, size, &m, &reason)) {
		if (!reason)
			abort();
		return 0;
	}
	if (timestamp(&m) && timestamp(&m)->sec > PTP_MAX_TS_SEC)
		abort();
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
	if (timestamp(&m) && ptp_ts_ns(timestamp(&again)) != ptp_ts_ns(timestamp(&m)))
		abort();
	memcpy(buf + len, unknown_tlv, sizeof(unknown_tlv));
	len += sizeof(unknown_tlv);
	buf[2] = (uint8_t)(len >> 8);
	buf[3] = (uint8_t)len;
	if (ptp_msg_decode(buf, len, &again, &reason) || again.h.seq != m.h.seq ||
	    (timestamp(&m) && ptp_ts_ns(timestamp(&again)) != ptp_ts_ns(timestamp(&m))))
		abort();
	return 0;
}
