// SPDX-License-Identifier: GPL-2.0
/* PTP message decoding, validation and encoding. */
#include <errno.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/ptp_msg.h"

static const struct ptp_port_id master = {
	.clock_id = { 0x00, 0x11, 0x22, 0xff, 0xfe, 0x33, 0x44, 0x55 }, .port = 1,
};

static int encode(struct ptp_msg *m, uint8_t *buf)
{
	return ptp_msg_encode(m, buf, PTP_MAX_MSG_LEN);
}

static struct ptp_msg announce(void)
{
	struct ptp_msg m = { .h = { .type = PTP_ANNOUNCE, .source = master, .seq = 7,
				    .flags = PTP_FLAG_PTP_TIMESCALE | PTP_FLAG_UTC_VALID } };

	m.announce.utc_offset = 37;
	m.announce.priority1 = 128;
	m.announce.quality.clock_class = 6;
	m.announce.quality.accuracy = 0x21;
	m.announce.quality.variance = 0x4e5d;
	m.announce.priority2 = 128;
	memcpy(m.announce.gm_id, master.clock_id, 8);
	m.announce.steps_removed = 1;
	m.announce.time_source = 0x20;
	return m;
}

TEST(sync_round_trip)
{
	struct ptp_msg m = { .h = { .type = PTP_SYNC, .domain = 4, .source = master, .seq = 65535,
				    .flags = PTP_FLAG_TWO_STEP, .correction = -5 * 65536,
				    .log_interval = -3 } }, d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why = NULL;
	int len;

	m.origin.sec = PTP_MAX_TS_SEC;
	m.origin.nsec = 999999999;
	len = encode(&m, buf);
	ASSERT_EQ(44, len);
	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(PTP_SYNC, d.h.type);
	EXPECT_EQ(2, d.h.version);
	EXPECT_EQ(4, d.h.domain);
	EXPECT_EQ(65535, d.h.seq);
	EXPECT_EQ(PTP_FLAG_TWO_STEP, d.h.flags);
	EXPECT_EQ(-5, ptp_correction_ns(d.h.correction));
	EXPECT_EQ(-3, d.h.log_interval);
	EXPECT_EQ(PTP_MAX_TS_SEC, d.origin.sec);
	EXPECT_EQ(999999999u, d.origin.nsec);
	EXPECT_TRUE(ptp_port_id_eq(&master, &d.h.source));
	EXPECT_EQ((int64_t)PTP_MAX_TS_SEC * 1000000000 + 999999999, ptp_ts_ns(&d.origin));
}

/*
 * 48-bit seconds reach 2.8e14, but int64 ns only 9.2e9 s: a timestamp
 * beyond what two of them can be added in is rejected (ptp_ts_ns would
 * overflow, and the slave adds it to corrections and monotonic times).
 */
TEST(huge_seconds_rejected)
{
	struct ptp_msg m = { .h = { .type = PTP_FOLLOW_UP, .source = master } }, d;
	uint64_t secs[] = { PTP_MAX_TS_SEC + 1, 9223372037ULL, 0xffffffffffffULL };
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why = NULL;
	unsigned int i;
	int len;

	for (i = 0; i < sizeof(secs) / sizeof(secs[0]); i++) {
		m.origin.sec = secs[i];
		len = encode(&m, buf);
		EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
		EXPECT_NE(NULL, why);
		if (why)
			EXPECT_NE(NULL, strstr(why, "seconds"));
		why = NULL;
	}
	/* Delay_Resp and Announce carry timestamps too. */
	m.h.type = PTP_DELAY_RESP;
	m.delay_resp.receive.sec = 0xffffffffffffULL;
	len = encode(&m, buf);
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
	m = announce();
	m.announce.origin.sec = 0xffffffffffffULL;
	len = encode(&m, buf);
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
}

TEST(announce_round_trip)
{
	struct ptp_msg m = announce(), d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why;
	int len = encode(&m, buf);

	ASSERT_EQ(64, len);
	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(37, d.announce.utc_offset);
	EXPECT_EQ(6, d.announce.quality.clock_class);
	EXPECT_EQ(0x4e5d, d.announce.quality.variance);
	EXPECT_EQ(1, d.announce.steps_removed);
	EXPECT_EQ(0, memcmp(d.announce.gm_id, master.clock_id, 8));
}

TEST(announce_path_trace_and_unknown_tlv)
{
	struct ptp_msg m = announce(), d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why = NULL;
	int len = encode(&m, buf);

	/* PATH_TRACE with two entries is accepted. */
	memcpy(buf + len, "\x00\x08\x00\x10", 4);
	memset(buf + len + 4, 0xab, 16);
	buf[2] = 0;
	buf[3] = len + 20;
	ASSERT_EQ(0, ptp_msg_decode(buf, len + 20, &d, &why));
	EXPECT_EQ(2u, d.announce.path_len);
	/* A PATH_TRACE of 7 bytes is not. */
	memcpy(buf + len, "\x00\x08\x00\x07", 4);
	buf[3] = len + 11;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len + 11, &d, &why));
	/* A TLV type it does not know is skipped (IEEE 1588-2019 14.1.1). */
	memcpy(buf + len, "\x77\x77\x00\x02xx", 6);
	buf[3] = len + 6;
	ASSERT_EQ(0, ptp_msg_decode(buf, len + 6, &d, &why));
	EXPECT_EQ(0u, d.announce.path_len);
	EXPECT_EQ(37, d.announce.utc_offset);
	/* So is ALTERNATE_TIME_OFFSET_INDICATOR before a PATH_TRACE. */
	memcpy(buf + len, "\x00\x09\x00\x04" "abcd" "\x00\x08\x00\x08", 12);
	memset(buf + len + 12, 0xcd, 8);
	buf[3] = len + 20;
	ASSERT_EQ(0, ptp_msg_decode(buf, len + 20, &d, &why));
	EXPECT_EQ(1u, d.announce.path_len);
	/* Nor a TLV longer than the message. */
	memcpy(buf + len, "\x00\x08\x00\x40", 4);
	buf[3] = len + 12;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len + 12, &d, &why));
	/* Nor half a TLV header. */
	buf[3] = len + 2;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len + 2, &d, &why));
	EXPECT_NE(NULL, strstr(why, "truncated TLV"));
}

/*
 * 802.1AS (ptp4l's follow_up_info 1): every Follow_Up carries the
 * Follow_Up information TLV, an ORGANIZATION_EXTENSION of 28 octets.
 */
TEST(follow_up_organization_tlv)
{
	static const uint8_t fup_info[32] = {
		0x00, 0x03, 0x00, 0x1c, 0x00, 0x80, 0xc2, 0x00, 0x00, 0x01,
	};
	struct ptp_msg m = { .h = { .type = PTP_FOLLOW_UP, .source = master, .seq = 9 } }, d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why = NULL;
	int len;

	m.origin = ptp_ns_ts(1700000000123456789LL);
	len = encode(&m, buf);
	memcpy(buf + len, fup_info, sizeof(fup_info));
	buf[3] = len + sizeof(fup_info);
	ASSERT_EQ(0, ptp_msg_decode(buf, len + sizeof(fup_info), &d, &why));
	EXPECT_EQ(1700000000123456789LL, ptp_ts_ns(&d.origin));
	EXPECT_EQ(9, d.h.seq);
	/* A Sync and a Delay_Resp with a TLV are read the same way. */
	buf[0] = PTP_SYNC;
	EXPECT_EQ(0, ptp_msg_decode(buf, len + sizeof(fup_info), &d, &why));
	/* Still bounded: a TLV running past messageLength is malformed. */
	buf[len + 3] = 0x1d;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len + sizeof(fup_info), &d, &why));
}

TEST(rejections)
{
	struct ptp_msg m = { .h = { .type = PTP_FOLLOW_UP, .source = master } }, d;
	uint8_t buf[PTP_MAX_MSG_LEN + 8];
	const char *why;
	int len = encode(&m, buf);

	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, 20, &d, &why));
	EXPECT_NE(NULL, strstr(why, "shorter than a PTP header"));
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len - 1, &d, &why));
	EXPECT_NE(NULL, strstr(why, "beyond the data"));
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len + 1, &d, &why));
	EXPECT_NE(NULL, strstr(why, "oversized"));
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, PTP_MAX_MSG_LEN + 1, &d, &why));

	buf[1] = 1;			/* PTPv1 */
	EXPECT_EQ(-EPROTONOSUPPORT, ptp_msg_decode(buf, len, &d, &why));
	buf[1] = 0x12;			/* 2.1 is fine */
	EXPECT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(1, d.h.minor_version);

	buf[3] = 40;			/* messageLength too short for Follow_Up */
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, 40, &d, &why));
	buf[3] = len;

	buf[40] = 0x3c;			/* nanoseconds = 0x3c000000 > 10^9 */
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_NE(NULL, strstr(why, "nanoseconds"));
	buf[40] = 0;

	buf[8] = 0x7f;			/* correction of years */
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
	buf[8] = 0;

	buf[0] = PTP_PDELAY_REQ;	/* not for an E2E slave */
	EXPECT_EQ(-EOPNOTSUPP, ptp_msg_decode(buf, len, &d, &why));
	buf[0] = 0x5;			/* reserved type */
	EXPECT_EQ(-EOPNOTSUPP, ptp_msg_decode(buf, len, &d, &why));
}

TEST(delay_resp)
{
	struct ptp_msg m = { .h = { .type = PTP_DELAY_RESP, .source = master, .seq = 3 } }, d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why;
	int len;

	m.delay_resp.receive = ptp_ns_ts(1700000000123456789LL);
	m.delay_resp.requester.clock_id[7] = 9;
	m.delay_resp.requester.port = 2;
	len = encode(&m, buf);
	ASSERT_EQ(54, len);
	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(1700000000123456789LL, ptp_ts_ns(&d.delay_resp.receive));
	EXPECT_TRUE(ptp_port_id_eq(&m.delay_resp.requester, &d.delay_resp.requester));
}

TEST(management)
{
	struct ptp_msg m = { .h = { .type = PTP_MANAGEMENT, .source = master, .seq = 11 } }, d;
	uint8_t buf[PTP_MAX_MSG_LEN];
	const char *why;
	int len;

	memset(m.mgmt.target.clock_id, 0xff, 8);
	m.mgmt.target.port = 0xffff;
	m.mgmt.action = PTP_MGMT_RESPONSE;
	m.mgmt.tlv_type = PTP_TLV_MANAGEMENT;
	m.mgmt.id = PTP_MID_TIME_STATUS_NP;
	m.mgmt.data_len = 50;
	m.mgmt.data[49] = 0x5a;
	len = encode(&m, buf);
	ASSERT_EQ(48 + 4 + 2 + 50, len);
	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(PTP_MGMT_RESPONSE, d.mgmt.action);
	EXPECT_EQ(PTP_MID_TIME_STATUS_NP, d.mgmt.id);
	EXPECT_EQ(50, d.mgmt.data_len);
	EXPECT_EQ(0x5a, d.mgmt.data[49]);

	m.mgmt.tlv_type = PTP_TLV_MANAGEMENT_ERROR;
	m.mgmt.error = 2;
	len = encode(&m, buf);
	ASSERT_EQ(0, ptp_msg_decode(buf, len, &d, &why));
	EXPECT_EQ(2, d.mgmt.error);
	EXPECT_EQ(PTP_MID_TIME_STATUS_NP, d.mgmt.id);

	/* Another TLV besides the management TLV is skipped. */
	m.mgmt.tlv_type = PTP_TLV_MANAGEMENT;
	len = encode(&m, buf);
	memcpy(buf + len, "\x80\x00\x00\x02zz", 6);
	buf[2] = (len + 6) >> 8;
	buf[3] = (len + 6) & 0xff;
	ASSERT_EQ(0, ptp_msg_decode(buf, len + 6, &d, &why));
	EXPECT_EQ(PTP_MID_TIME_STATUS_NP, d.mgmt.id);
	EXPECT_EQ(50, d.mgmt.data_len);

	/* No TLV at all. */
	buf[3] = 48;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, 48, &d, &why));
	/* A reserved action. */
	len = encode(&m, buf);
	buf[46] = 7;
	EXPECT_EQ(-EBADMSG, ptp_msg_decode(buf, len, &d, &why));
}

TEST(encode_rejects)
{
	struct ptp_msg m = { .h = { .type = PTP_SIGNALING } };
	uint8_t buf[PTP_MAX_MSG_LEN];

	EXPECT_EQ(-EINVAL, ptp_msg_encode(&m, buf, sizeof(buf)));
	m.h.type = PTP_SYNC;
	EXPECT_EQ(-EINVAL, ptp_msg_encode(&m, buf, 43));
	m.h.type = PTP_MANAGEMENT;
	m.mgmt.tlv_type = 0x9;
	EXPECT_EQ(-EINVAL, ptp_msg_encode(&m, buf, sizeof(buf)));
}

TEST(identity_strings)
{
	char s[40];

	ptp_port_id_str(&master, s, sizeof(s));
	EXPECT_STREQ("001122.fffe.334455-1", s);
	EXPECT_STREQ("Follow_Up", ptp_msg_type_name(PTP_FOLLOW_UP));
	EXPECT_STREQ("reserved", ptp_msg_type_name(0xe));
}

TEST_HARNESS_MAIN
