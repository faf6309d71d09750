// SPDX-License-Identifier: GPL-2.0
/*
 * ptp4l's management data read through pmc_data.h's structs: each field
 * ptp4l: sources use is the big-endian value at the byte offset of IEEE
 * 1588's tables and linuxptp's _NP layouts (the offsets the source read
 * before the structs), on data of random bytes; short data are refused.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/pmc_data.h"

static uint64_t be_at(const uint8_t *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < bytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void random_data(struct ptp_management *mg, unsigned int len)
{
	unsigned int i;

	memset(mg, 0, sizeof(*mg));
	for (i = 0; i < sizeof(mg->data); i++)
		mg->data[i] = (uint8_t)random();
	mg->data_len = len;
}

TEST(fields_at_the_standard_offsets)
{
	struct ptp_management mg;
	int round;

	srandom(1);
	for (round = 0; round < 1000; round++) {
		struct pmc_port_ds port;
		struct pmc_time_status_np ts;
		struct pmc_current_ds cur;
		struct pmc_parent_ds parent;
		struct pmc_time_properties_ds tprop;
		const uint8_t *d = mg.data;

		random_data(&mg, 64);
		ASSERT_TRUE(pmc_data(&mg, &port, sizeof(port)));
		EXPECT_EQ(d[10], port.port_state);
		ASSERT_TRUE(pmc_data(&mg, &ts, sizeof(ts)));
		EXPECT_EQ(be_at(d, 8), be64toh(ts.master_offset));
		EXPECT_EQ(be_at(d + 8, 8), be64toh(ts.ingress_time));
		EXPECT_EQ(be_at(d + 38, 4), be32toh(ts.gm_present));
		ASSERT_TRUE(pmc_data(&mg, &cur, sizeof(cur)));
		EXPECT_EQ(be_at(d, 2), be16toh(cur.steps_removed));
		EXPECT_EQ(be_at(d + 10, 8), be64toh(cur.mean_path_delay));
		ASSERT_TRUE(pmc_data(&mg, &parent, sizeof(parent)));
		EXPECT_EQ(d[19], parent.gm_quality.clock_class);
		EXPECT_EQ(d[20], parent.gm_quality.clock_accuracy);
		EXPECT_EQ(0, memcmp(d + 24, parent.gm_identity.id, 8));
		ASSERT_TRUE(pmc_data(&mg, &tprop, sizeof(tprop)));
		EXPECT_EQ(be_at(d, 2), be16toh(tprop.current_utc_offset));
		EXPECT_EQ(d[2], tprop.flags);
	}
}

TEST(short_data_refused)
{
	struct pmc_time_status_np ts, before;
	struct ptp_management mg;

	random_data(&mg, sizeof(ts) - 1);
	memset(&ts, 0xa5, sizeof(ts));
	before = ts;
	EXPECT_FALSE(pmc_data(&mg, &ts, sizeof(ts)));
	EXPECT_EQ(0, memcmp(&ts, &before, sizeof(ts)));
	mg.data_len = sizeof(ts);
	EXPECT_TRUE(pmc_data(&mg, &ts, sizeof(ts)));
}

TEST(port_properties_interface_name)
{
	struct pmc_port_properties_np pp;
	struct ptp_management mg;
	char name[8];

	random_data(&mg, 13 + 4);
	mg.data[11] = PMC_TS_SOFTWARE;
	mg.data[12] = 4;
	memcpy(mg.data + 13, "eth0", 4);
	ASSERT_EQ(0, pmc_port_properties(&mg, &pp, name, sizeof(name)));
	EXPECT_STREQ("eth0", name);
	EXPECT_EQ(PMC_TS_SOFTWARE, pp.timestamping);
	/* Longer than the data, than the buffer, or no room for the name at all. */
	mg.data_len = 13 + 3;
	EXPECT_EQ(-EBADMSG, pmc_port_properties(&mg, &pp, name, sizeof(name)));
	mg.data_len = 13 + 8;
	mg.data[12] = 8;
	EXPECT_EQ(-EBADMSG, pmc_port_properties(&mg, &pp, name, sizeof(name)));
	mg.data[12] = 7;
	EXPECT_EQ(0, pmc_port_properties(&mg, &pp, name, sizeof(name)));
	EXPECT_EQ(0, name[7]);
	mg.data_len = 12;
	EXPECT_EQ(-EBADMSG, pmc_port_properties(&mg, &pp, name, sizeof(name)));
}

TEST_HARNESS_MAIN
