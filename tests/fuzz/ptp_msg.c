// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the PTP message parser: any input either is
 * rejected with a reason or decodes into a message that re-encodes and
 * decodes to the same thing, also with an unknown TLV appended (IEEE 1588
 * receivers skip those), and whose timestamps convert to ns without
 * overflow (seconds within PTP_MAX_TS_SEC). A management message's data
 * also go through what ptp4l: sources read of them (pmc_data.h): every
 * dataset, and PORT_PROPERTIES_NP's interface name, which must come out
 * whole, NUL terminated and within the data, or be refused.
 */
#include <stdlib.h>
#include <string.h>

#include "ptp/pmc_data.h"
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

/* The datasets of a management message, as ptp4l_source.c reads them. */
static void datasets(const struct ptp_management *mg)
{
	union {
		struct pmc_port_ds port;
		struct pmc_time_status_np ts;
		struct pmc_current_ds cur;
		struct pmc_parent_ds parent;
		struct pmc_time_properties_ds tprop;
	} d;
	static const size_t sizes[] = {
		sizeof(d.port), sizeof(d.ts), sizeof(d.cur), sizeof(d.parent), sizeof(d.tprop),
	};
	struct pmc_port_properties_np pp;
	char name[64];
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (pmc_data(mg, &d, sizes[i]) != (mg->data_len >= sizes[i]) ||
		    (mg->data_len >= sizes[i] && memcmp(&d, mg->data, sizes[i])))
			abort();
	memset(name, 0x55, sizeof(name));
	if (pmc_port_properties(mg, &pp, name, sizeof(name)))
		return;
	if (sizeof(pp) + pp.interface_len > mg->data_len || strlen(name) > pp.interface_len ||
	    name[pp.interface_len] || memcmp(name, mg->data + sizeof(pp), pp.interface_len))
		abort();
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
	if (m.h.type == PTP_MANAGEMENT)
		datasets(&m.mgmt);
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
