/* SPDX-License-Identifier: GPL-2.0 */
/*
 * IEEE 1588-2019 (PTPv2.1) messages: decoding with validation, and
 * encoding. Pure functions on byte buffers, no I/O, so the fuzzer and the
 * unit tests exercise exactly what the slave and the management client run.
 *
 * ptp_msg_decode() accepts a message only if every field it relies on is
 * well formed: header length and version, a body long enough for the
 * message type, nanoseconds below 10^9, seconds within PTP_MAX_TS_SEC, TLVs
 * that lie inside the message, and those of them it reads (PATH_TRACE,
 * management) well formed; other TLVs are skipped. Anything else is
 * rejected with a reason string. What needs context (domain, sequence ids,
 * the selected master, follow-up pairing) is checked by the caller.
 */
#ifndef LCLK_PTP_MSG_H
#define LCLK_PTP_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PTP_VERSION_MAJOR	2
#define PTP_HEADER_LEN		34
/* Largest message accepted: an Ethernet payload. */
#define PTP_MAX_MSG_LEN		1500

enum ptp_msg_type {
	PTP_SYNC		= 0x0,
	PTP_DELAY_REQ		= 0x1,
	PTP_PDELAY_REQ		= 0x2,
	PTP_PDELAY_RESP		= 0x3,
	PTP_FOLLOW_UP		= 0x8,
	PTP_DELAY_RESP		= 0x9,
	PTP_PDELAY_RESP_FUP	= 0xa,
	PTP_ANNOUNCE		= 0xb,
	PTP_SIGNALING		= 0xc,
	PTP_MANAGEMENT		= 0xd,
};

/* flagField, as a 16-bit big-endian word (octet 0 is the high byte). */
#define PTP_FLAG_TWO_STEP	(1U << 9)
#define PTP_FLAG_UNICAST	(1U << 10)
#define PTP_FLAG_LEAP61		(1U << 0)
#define PTP_FLAG_LEAP59		(1U << 1)
#define PTP_FLAG_UTC_VALID	(1U << 2)
#define PTP_FLAG_PTP_TIMESCALE	(1U << 3)
#define PTP_FLAG_TIME_TRACEABLE	(1U << 4)
#define PTP_FLAG_FREQ_TRACEABLE	(1U << 5)

/* TLV types this implementation reads; it skips the others. */
#define PTP_TLV_MANAGEMENT		0x0001
#define PTP_TLV_MANAGEMENT_ERROR	0x0002
#define PTP_TLV_PATH_TRACE		0x0008

/* Management actions and the managementIds used here. */
enum ptp_mgmt_action {
	PTP_MGMT_GET		= 0,
	PTP_MGMT_SET		= 1,
	PTP_MGMT_RESPONSE	= 2,
	PTP_MGMT_COMMAND	= 3,
	PTP_MGMT_ACKNOWLEDGE	= 4,
};
#define PTP_MID_CURRENT_DATA_SET	0x2001
#define PTP_MID_PARENT_DATA_SET		0x2002
#define PTP_MID_TIME_PROPERTIES_DATA_SET 0x2003
#define PTP_MID_PORT_DATA_SET		0x2004
/* linuxptp's implementation-specific ids. */
#define PTP_MID_TIME_STATUS_NP		0xc000
#define PTP_MID_PORT_PROPERTIES_NP	0xc004

#define PTP_CLOCK_ID_LEN	8
/* Announce path trace entries kept; longer traces are still validated. */
#define PTP_MAX_PATH_TRACE	8
/* Management TLV payload kept (the largest we read is far smaller). */
#define PTP_MAX_MGMT_DATA	256

struct ptp_port_id {
	uint8_t clock_id[PTP_CLOCK_ID_LEN];
	uint16_t port;
};

/*
 * Largest seconds a decoded timestamp may have (year 2116): its ns, and
 * the sum or difference of two such values or of one and a monotonic time,
 * stay within int64. The 48 bits on the wire reach 2.8e14 s.
 */
#define PTP_MAX_TS_SEC		4611686017ULL

struct ptp_timestamp {
	uint64_t sec;		/* 48 bits on the wire, <= PTP_MAX_TS_SEC decoded */
	uint32_t nsec;		/* < 10^9 */
};

struct ptp_clock_quality {
	uint8_t clock_class;
	uint8_t accuracy;
	uint16_t variance;	/* offsetScaledLogVariance */
};

struct ptp_header {
	uint8_t type;		/* enum ptp_msg_type */
	uint16_t sdo_id;	/* majorSdoId << 8 | minorSdoId; 0: default profiles */
	uint8_t version;	/* versionPTP */
	uint8_t minor_version;	/* minorVersionPTP */
	uint16_t length;	/* messageLength */
	uint8_t domain;
	uint16_t flags;
	int64_t correction;	/* scaled ns: ns * 2^16 */
	struct ptp_port_id source;
	uint16_t seq;
	uint8_t control;
	int8_t log_interval;
};

struct ptp_announce {
	struct ptp_timestamp origin;
	int16_t utc_offset;	/* currentUtcOffset */
	uint8_t priority1;
	struct ptp_clock_quality quality;
	uint8_t priority2;
	uint8_t gm_id[PTP_CLOCK_ID_LEN];
	uint16_t steps_removed;
	uint8_t time_source;
	unsigned int path_len;	/* path trace entries present */
};

struct ptp_management {
	struct ptp_port_id target;
	uint8_t starting_hops;
	uint8_t hops;
	uint8_t action;		/* enum ptp_mgmt_action */
	uint16_t tlv_type;	/* PTP_TLV_MANAGEMENT or ..._ERROR */
	uint16_t id;		/* managementId */
	uint16_t error;		/* with PTP_TLV_MANAGEMENT_ERROR */
	uint16_t data_len;
	uint8_t data[PTP_MAX_MGMT_DATA];
};

struct ptp_msg {
	struct ptp_header h;
	union {
		/* Sync, Delay_Req, Follow_Up: origin or preciseOrigin. */
		struct ptp_timestamp origin;
		struct {
			struct ptp_timestamp receive;
			struct ptp_port_id requester;
		} delay_resp;
		struct ptp_announce announce;
		struct ptp_management mgmt;
	};
};

/*
 * Decode and validate one message of len bytes. Returns 0, or -EBADMSG
 * (malformed), -EPROTONOSUPPORT (version) or -EOPNOTSUPP (a message type
 * not handled) with *reason set to a static string.
 */
int ptp_msg_decode(const void *buf, size_t len, struct ptp_msg *m,
		   const char **reason);

/*
 * Encode m into buf (at least PTP_MAX_MSG_LEN bytes for safety; the exact
 * need is the returned length). m->h.length is ignored and computed.
 * Returns the length, or -EINVAL for a message this encoder does not write
 * or a field out of range.
 */
int ptp_msg_encode(const struct ptp_msg *m, void *buf, size_t size);

/* Nanoseconds since the epoch of a PTP timestamp, sec <= PTP_MAX_TS_SEC. */
int64_t ptp_ts_ns(const struct ptp_timestamp *ts);
struct ptp_timestamp ptp_ns_ts(int64_t ns);

/* correctionField to ns, rounded toward minus infinity. */
static inline int64_t ptp_correction_ns(int64_t scaled)
{
	return scaled >> 16;
}

bool ptp_port_id_eq(const struct ptp_port_id *a, const struct ptp_port_id *b);
int ptp_port_id_cmp(const struct ptp_port_id *a, const struct ptp_port_id *b);
/* "aabbcc.fffe.ddeeff-1" as ptp4l prints it; buf >= 32 bytes. */
void ptp_port_id_str(const struct ptp_port_id *id, char *buf, size_t size);
void ptp_clock_id_str(const uint8_t *id, char *buf, size_t size);

const char *ptp_msg_type_name(unsigned int type);

#endif /* LCLK_PTP_MSG_H */
