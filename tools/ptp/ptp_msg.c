// SPDX-License-Identifier: GPL-2.0
/* IEEE 1588-2019 message decoding, validation and encoding. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ptp_msg.h"

#define NS_PER_SEC		1000000000LL
/* A correction beyond a second is no transparent clock's residence time. */
#define PTP_MAX_CORRECTION	((int64_t)NS_PER_SEC << 16)

#define SYNC_LEN		44	/* header + originTimestamp */
#define DELAY_RESP_LEN		54	/* + requestingPortIdentity */
#define ANNOUNCE_LEN		64
#define MGMT_LEN		48	/* header + target, hops, action */
#define TLV_HDR_LEN		4

/* Big-endian field access on a bounded buffer. */
static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static int get_ts(const uint8_t *p, struct ptp_timestamp *ts, const char **reason)
{
	ts->sec = (uint64_t)get16(p) << 32 | get32(p + 2);
	ts->nsec = get32(p + 6);
	if (ts->sec > PTP_MAX_TS_SEC) {
		*reason = "timestamp seconds beyond the year 2116";
		return -EBADMSG;
	}
	if (ts->nsec >= NS_PER_SEC) {
		*reason = "timestamp nanoseconds >= 10^9";
		return -EBADMSG;
	}
	return 0;
}

static void put_ts(uint8_t *p, const struct ptp_timestamp *ts)
{
	put16(p, ts->sec >> 32);
	put32(p + 2, ts->sec);
	put32(p + 6, ts->nsec);
}

static void get_port_id(const uint8_t *p, struct ptp_port_id *id)
{
	memcpy(id->clock_id, p, PTP_CLOCK_ID_LEN);
	id->port = get16(p + PTP_CLOCK_ID_LEN);
}

static void put_port_id(uint8_t *p, const struct ptp_port_id *id)
{
	memcpy(p, id->clock_id, PTP_CLOCK_ID_LEN);
	put16(p + PTP_CLOCK_ID_LEN, id->port);
}

/* Fixed part of each message type this code handles; 0: not handled. */
static size_t body_len(unsigned int type)
{
	switch (type) {
	case PTP_SYNC:
	case PTP_DELAY_REQ:
	case PTP_FOLLOW_UP:
		return SYNC_LEN;
	case PTP_DELAY_RESP:
		return DELAY_RESP_LEN;
	case PTP_ANNOUNCE:
		return ANNOUNCE_LEN;
	case PTP_MANAGEMENT:
		return MGMT_LEN;
	}
	return 0;
}

static int decode_header(const uint8_t *p, size_t len, struct ptp_header *h,
			 const char **reason)
{
	if (len < PTP_HEADER_LEN) {
		*reason = "truncated: shorter than a PTP header";
		return -EBADMSG;
	}
	if (len > PTP_MAX_MSG_LEN) {
		*reason = "oversized: longer than an Ethernet payload";
		return -EBADMSG;
	}
	h->type = p[0] & 0x0f;
	h->sdo_id = (uint16_t)((p[0] >> 4) << 8 | p[5]);
	h->version = p[1] & 0x0f;
	h->minor_version = p[1] >> 4;
	h->length = get16(p + 2);
	h->domain = p[4];
	h->flags = get16(p + 6);
	h->correction = (int64_t)get64(p + 8);
	get_port_id(p + 20, &h->source);
	h->seq = get16(p + 30);
	h->control = p[32];
	h->log_interval = (int8_t)p[33];

	if (h->version != PTP_VERSION_MAJOR) {
		*reason = "wrong versionPTP (not 2)";
		return -EPROTONOSUPPORT;
	}
	if (h->length > len) {
		*reason = "truncated: messageLength beyond the data received";
		return -EBADMSG;
	}
	if (h->length < len) {
		*reason = "oversized: data beyond messageLength";
		return -EBADMSG;
	}
	if (!body_len(h->type)) {
		*reason = "message type not handled by an E2E slave";
		return -EOPNOTSUPP;
	}
	if (h->length < body_len(h->type)) {
		*reason = "truncated: messageLength too short for the message type";
		return -EBADMSG;
	}
	if (h->correction >= PTP_MAX_CORRECTION || h->correction <= -PTP_MAX_CORRECTION) {
		*reason = "correctionField beyond one second";
		return -EBADMSG;
	}
	return 0;
}

static int decode_path_trace(size_t vlen, struct ptp_announce *a,
			     const char **reason)
{
	if (vlen % PTP_CLOCK_ID_LEN) {
		*reason = "PATH_TRACE TLV length not a multiple of 8";
		return -EBADMSG;
	}
	a->path_len += vlen / PTP_CLOCK_ID_LEN;
	return 0;
}

static int decode_mgmt_tlv(uint16_t type, const uint8_t *v, size_t vlen,
			   struct ptp_management *mg, const char **reason)
{
	if (mg->tlv_type) {
		*reason = "more than one management TLV";
		return -EBADMSG;
	}
	mg->tlv_type = type;
	if (type == PTP_TLV_MANAGEMENT) {
		if (vlen < 2 || vlen - 2 > PTP_MAX_MGMT_DATA) {
			*reason = "management TLV length out of range";
			return -EBADMSG;
		}
		mg->id = get16(v);
		mg->data_len = vlen - 2;
		memcpy(mg->data, v + 2, mg->data_len);
		return 0;
	}
	/* MANAGEMENT_ERROR_STATUS: errorId, managementId, reserved[4], text. */
	if (vlen < 8) {
		*reason = "management error TLV too short";
		return -EBADMSG;
	}
	mg->error = get16(v);
	mg->id = get16(v + 2);
	return 0;
}

/*
 * TLVs after the fixed body. Each must lie inside the message; those a
 * message type uses here are validated, any other is skipped, as IEEE
 * 1588-2019 14.1.1 asks of a receiver that does not know or need it
 * (802.1AS Follow_Up information, ALTERNATE_TIME_OFFSET_INDICATOR, ...).
 */
static int decode_tlvs(const uint8_t *p, size_t off, size_t end, struct ptp_msg *m,
		       const char **reason)
{
	while (off < end) {
		uint16_t type, tlen;
		int err = 0;

		if (end - off < TLV_HDR_LEN) {
			*reason = "truncated TLV header";
			return -EBADMSG;
		}
		type = get16(p + off);
		tlen = get16(p + off + 2);
		off += TLV_HDR_LEN;
		if (tlen > end - off) {
			*reason = "TLV length beyond messageLength";
			return -EBADMSG;
		}
		if (m->h.type == PTP_ANNOUNCE && type == PTP_TLV_PATH_TRACE)
			err = decode_path_trace(tlen, &m->announce, reason);
		else if (m->h.type == PTP_MANAGEMENT &&
			 (type == PTP_TLV_MANAGEMENT || type == PTP_TLV_MANAGEMENT_ERROR))
			err = decode_mgmt_tlv(type, p + off, tlen, &m->mgmt, reason);
		if (err)
			return err;
		off += tlen;
	}
	if (m->h.type == PTP_MANAGEMENT && !m->mgmt.tlv_type) {
		*reason = "management message without a management TLV";
		return -EBADMSG;
	}
	return 0;
}

static int decode_announce(const uint8_t *p, struct ptp_announce *a, const char **reason)
{
	int err = get_ts(p + 34, &a->origin, reason);

	if (err)
		return err;
	a->utc_offset = (int16_t)get16(p + 44);
	a->priority1 = p[47];
	a->quality.clock_class = p[48];
	a->quality.accuracy = p[49];
	a->quality.variance = get16(p + 50);
	a->priority2 = p[52];
	memcpy(a->gm_id, p + 53, PTP_CLOCK_ID_LEN);
	a->steps_removed = get16(p + 61);
	a->time_source = p[63];
	a->path_len = 0;
	return 0;
}

static int decode_management(const uint8_t *p, struct ptp_management *mg,
			     const char **reason)
{
	get_port_id(p + 34, &mg->target);
	mg->starting_hops = p[44];
	mg->hops = p[45];
	mg->action = p[46] & 0x0f;
	mg->tlv_type = 0;
	mg->id = 0;
	mg->error = 0;
	mg->data_len = 0;
	if (mg->action > PTP_MGMT_ACKNOWLEDGE) {
		*reason = "reserved management action";
		return -EBADMSG;
	}
	return 0;
}

int ptp_msg_decode(const void *buf, size_t len, struct ptp_msg *m,
		   const char **reason)
{
	const uint8_t *p = buf;
	int err;

	memset(m, 0, sizeof(*m));
	err = decode_header(p, len, &m->h, reason);
	if (err)
		return err;
	switch (m->h.type) {
	case PTP_SYNC:
	case PTP_DELAY_REQ:
	case PTP_FOLLOW_UP:
		err = get_ts(p + 34, &m->origin, reason);
		break;
	case PTP_DELAY_RESP:
		err = get_ts(p + 34, &m->delay_resp.receive, reason);
		get_port_id(p + 44, &m->delay_resp.requester);
		break;
	case PTP_ANNOUNCE:
		err = decode_announce(p, &m->announce, reason);
		break;
	case PTP_MANAGEMENT:
		err = decode_management(p, &m->mgmt, reason);
		break;
	}
	if (err)
		return err;
	return decode_tlvs(p, body_len(m->h.type), m->h.length, m, reason);
}

static void encode_header(const struct ptp_header *h, size_t len, uint8_t *p)
{
	p[0] = (uint8_t)((h->sdo_id >> 8) << 4 | (h->type & 0x0f));
	p[1] = (uint8_t)(h->minor_version << 4 | PTP_VERSION_MAJOR);
	put16(p + 2, len);
	p[4] = h->domain;
	p[5] = h->sdo_id & 0xff;
	put16(p + 6, h->flags);
	put64(p + 8, (uint64_t)h->correction);
	memset(p + 16, 0, 4);
	put_port_id(p + 20, &h->source);
	put16(p + 30, h->seq);
	p[32] = h->control;
	p[33] = (uint8_t)h->log_interval;
}

static size_t encode_announce(const struct ptp_announce *a, uint8_t *p)
{
	put_ts(p + 34, &a->origin);
	put16(p + 44, (uint16_t)a->utc_offset);
	p[46] = 0;
	p[47] = a->priority1;
	p[48] = a->quality.clock_class;
	p[49] = a->quality.accuracy;
	put16(p + 50, a->quality.variance);
	p[52] = a->priority2;
	memcpy(p + 53, a->gm_id, PTP_CLOCK_ID_LEN);
	put16(p + 61, a->steps_removed);
	p[63] = a->time_source;
	return ANNOUNCE_LEN;
}

static size_t encode_management(const struct ptp_management *mg, uint8_t *p)
{
	size_t vlen;

	put_port_id(p + 34, &mg->target);
	p[44] = mg->starting_hops;
	p[45] = mg->hops;
	p[46] = mg->action & 0x0f;
	p[47] = 0;
	put16(p + 48, mg->tlv_type);
	if (mg->tlv_type == PTP_TLV_MANAGEMENT) {
		vlen = 2 + mg->data_len;
		put16(p + 52, mg->id);
		memcpy(p + 54, mg->data, mg->data_len);
	} else {
		vlen = 8;
		put16(p + 52, mg->error);
		put16(p + 54, mg->id);
		memset(p + 56, 0, 4);
	}
	put16(p + 50, vlen);
	return MGMT_LEN + TLV_HDR_LEN + vlen;
}

int ptp_msg_encode(const struct ptp_msg *m, void *buf, size_t size)
{
	uint8_t *p = buf;
	size_t len = body_len(m->h.type);

	if (!len || size < len)
		return -EINVAL;
	if (m->h.type == PTP_ANNOUNCE && m->announce.path_len)
		return -EINVAL;
	if (m->h.type == PTP_MANAGEMENT &&
	    ((m->mgmt.tlv_type != PTP_TLV_MANAGEMENT &&
	      m->mgmt.tlv_type != PTP_TLV_MANAGEMENT_ERROR) ||
	     m->mgmt.data_len > PTP_MAX_MGMT_DATA ||
	     size < MGMT_LEN + TLV_HDR_LEN + 8 + (size_t)m->mgmt.data_len))
		return -EINVAL;
	switch (m->h.type) {
	case PTP_SYNC:
	case PTP_DELAY_REQ:
	case PTP_FOLLOW_UP:
		put_ts(p + 34, &m->origin);
		break;
	case PTP_DELAY_RESP:
		put_ts(p + 34, &m->delay_resp.receive);
		put_port_id(p + 44, &m->delay_resp.requester);
		break;
	case PTP_ANNOUNCE:
		len = encode_announce(&m->announce, p);
		break;
	case PTP_MANAGEMENT:
		len = encode_management(&m->mgmt, p);
		break;
	}
	encode_header(&m->h, len, p);
	return (int)len;
}

int64_t ptp_ts_ns(const struct ptp_timestamp *ts)
{
	return (int64_t)ts->sec * NS_PER_SEC + ts->nsec;
}

struct ptp_timestamp ptp_ns_ts(int64_t ns)
{
	struct ptp_timestamp ts = {
		.sec = (uint64_t)(ns / NS_PER_SEC),
		.nsec = (uint32_t)(ns % NS_PER_SEC),
	};

	return ts;
}

bool ptp_port_id_eq(const struct ptp_port_id *a, const struct ptp_port_id *b)
{
	return !ptp_port_id_cmp(a, b);
}

int ptp_port_id_cmp(const struct ptp_port_id *a, const struct ptp_port_id *b)
{
	int c = memcmp(a->clock_id, b->clock_id, PTP_CLOCK_ID_LEN);

	if (c)
		return c;
	return (int)a->port - (int)b->port;
}

void ptp_clock_id_str(const uint8_t *id, char *buf, size_t size)
{
	snprintf(buf, size, "%02x%02x%02x.%02x%02x.%02x%02x%02x",
		 id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7]);
}

void ptp_port_id_str(const struct ptp_port_id *id, char *buf, size_t size)
{
	char cid[24];

	ptp_clock_id_str(id->clock_id, cid, sizeof(cid));
	snprintf(buf, size, "%s-%u", cid, id->port);
}

const char *ptp_msg_type_name(unsigned int type)
{
	static const char *const names[16] = {
		[PTP_SYNC] = "Sync", [PTP_DELAY_REQ] = "Delay_Req",
		[PTP_PDELAY_REQ] = "Pdelay_Req", [PTP_PDELAY_RESP] = "Pdelay_Resp",
		[PTP_FOLLOW_UP] = "Follow_Up", [PTP_DELAY_RESP] = "Delay_Resp",
		[PTP_PDELAY_RESP_FUP] = "Pdelay_Resp_Follow_Up",
		[PTP_ANNOUNCE] = "Announce", [PTP_SIGNALING] = "Signaling",
		[PTP_MANAGEMENT] = "Management",
	};

	return type < 16 && names[type] ? names[type] : "reserved";
}
