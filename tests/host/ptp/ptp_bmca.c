// SPDX-License-Identifier: GPL-2.0
/* Foreign-master qualification, expiry and dataset comparison. */
#include <string.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "ptp/ptp_bmca.h"

#define S 1000000000LL
static const uint8_t own[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };

static struct ptp_msg ann(uint8_t id, uint16_t seq, uint8_t prio1)
{
	struct ptp_msg m = { .h = { .type = PTP_ANNOUNCE, .seq = seq, .log_interval = 0 } };

	m.h.source.clock_id[0] = id;
	m.h.source.port = 1;
	memcpy(m.announce.gm_id, m.h.source.clock_id, 8);
	m.announce.priority1 = prio1;
	m.announce.priority2 = 128;
	m.announce.quality.clock_class = 248;
	return m;
}

/* Record an announce that must be accepted. */
#define feed(b, msg, t) do {							\
	struct ptp_msg m_ = (msg);						\
	const char *why_ = "";							\
	ASSERT_EQ(0, ptp_bmca_announce(b, &m_, t, &why_)) TH_LOG("%s", why_);	\
} while (0)

TEST(qualification_needs_two_announces_in_window)
{
	struct ptp_bmca b;

	ptp_bmca_init(&b, own);
	feed(&b, ann(0xa, 1, 128), 0);
	EXPECT_EQ(NULL, ptp_bmca_best(&b, 0));
	feed(&b, ann(0xa, 2, 128), 1 * S);
	ASSERT_NE(NULL, ptp_bmca_best(&b, 1 * S));
	/* Two announces 5 intervals apart do not qualify (window 4). */
	ptp_bmca_init(&b, own);
	feed(&b, ann(0xa, 1, 128), 0);
	feed(&b, ann(0xa, 2, 128), 2 * S);
	EXPECT_NE(NULL, ptp_bmca_best(&b, 2 * S));
	EXPECT_EQ(NULL, ptp_bmca_best(&b, 4 * S + 1));	/* also expired */
}

TEST(better_priority_wins_and_failover)
{
	struct ptp_bmca b;
	const struct ptp_foreign *f;
	int64_t t;

	ptp_bmca_init(&b, own);
	for (t = 0; t < 3; t++) {
		feed(&b, ann(0xb, t + 1, 200), t * S);
		feed(&b, ann(0xa, t + 1, 100), t * S);
	}
	f = ptp_bmca_best(&b, 2 * S);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0xa, f->sender.clock_id[0]);
	/* 0xa goes silent; after 3 intervals 0xb takes over. */
	for (t = 3; t < 7; t++)
		feed(&b, ann(0xb, t + 1, 200), t * S);
	f = ptp_bmca_best(&b, 6 * S);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0xb, f->sender.clock_id[0]);
	EXPECT_EQ(1u, b.n);
}

TEST(rejects)
{
	struct ptp_bmca b;
	struct ptp_msg m;
	const char *why;

	ptp_bmca_init(&b, own);
	m = ann(1, 1, 0);
	memcpy(m.h.source.clock_id, own, 8);
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 0, &why));
	m = ann(2, 1, 0);
	m.announce.steps_removed = 255;
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 0, &why));
	feed(&b, ann(3, 10, 128), 0);
	m = ann(3, 10, 128);
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 1, &why));	/* repeated seq */
	m = ann(3, 9, 128);
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 1, &why));	/* older seq */
	feed(&b, ann(3, 11, 128), 2);
	/* Sequence ids wrap. */
	feed(&b, ann(4, 65535, 128), 0);
	feed(&b, ann(4, 0, 128), 1);
}

/*
 * Eight identities announcing worse than the real master must not keep it
 * out: the table makes room by dropping the worst record.
 */
TEST(fakes_do_not_fill_the_table)
{
	const struct ptp_foreign *f = NULL;
	struct ptp_bmca b;
	const char *why;
	struct ptp_msg m;
	int64_t t;
	int i;

	ptp_bmca_init(&b, own);
	for (t = 0; t < 4; t++) {
		for (i = 0; i < PTP_MAX_FOREIGN; i++) {
			m = ann(0x40 + i, t + 1, 250);
			ptp_bmca_announce(&b, &m, t * S, &why);
		}
		m = ann(0xa, t + 1, 100);
		ptp_bmca_announce(&b, &m, t * S, &why);
		f = ptp_bmca_best(&b, t * S);
	}
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0xa, f->sender.clock_id[0]);
	EXPECT_EQ(PTP_MAX_FOREIGN, b.n);
	/* A newcomer worse than all of them still finds no room. */
	m = ann(0x50, 1, 255);
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 4 * S, &why));
	EXPECT_NE(NULL, strstr(why, "too many"));
}

/* With an allow list (acceptable master table), only those are considered. */
TEST(allow_list)
{
	static const uint8_t listed[8] = { 0xa };
	struct ptp_bmca b;
	const char *why;
	struct ptp_msg m;

	ptp_bmca_init(&b, own);
	ASSERT_EQ(0, ptp_bmca_allow(&b, listed));
	m = ann(0xb, 1, 0);
	EXPECT_NE(0, ptp_bmca_announce(&b, &m, 0, &why));
	EXPECT_NE(NULL, strstr(why, "allow"));
	EXPECT_EQ(0u, b.n);
	feed(&b, ann(0xa, 1, 128), 0);
	feed(&b, ann(0xa, 2, 128), 1 * S);
	ASSERT_NE(NULL, ptp_bmca_best(&b, 1 * S));
	EXPECT_EQ(0xa, ptp_bmca_best(&b, 1 * S)->sender.clock_id[0]);
}

TEST(dataset_order)
{
	struct ptp_foreign a = { 0 }, c = { 0 };

	a.ann = ann(0xa, 1, 128).announce;
	c.ann = ann(0xc, 1, 128).announce;
	a.sender.clock_id[0] = 0xa;
	c.sender.clock_id[0] = 0xc;
	EXPECT_LT(ptp_dataset_cmp(&a, &c), 0);		/* identity tie-break */
	c.ann.quality.clock_class = 6;
	EXPECT_GT(ptp_dataset_cmp(&a, &c), 0);		/* class beats identity */
	a.ann.priority1 = 127;
	EXPECT_LT(ptp_dataset_cmp(&a, &c), 0);		/* priority1 beats class */
	/* Same grandmaster: fewer steps, then the sender identity. */
	c.ann = a.ann;
	c.ann.steps_removed = 1;
	EXPECT_LT(ptp_dataset_cmp(&a, &c), 0);
	c.ann.steps_removed = 0;
	EXPECT_LT(ptp_dataset_cmp(&a, &c), 0);
	EXPECT_EQ(0, ptp_dataset_cmp(&a, &a));
}

TEST(interval_clamp)
{
	EXPECT_EQ(S, ptp_announce_interval_ns(0));
	EXPECT_EQ(S / 4, ptp_announce_interval_ns(-2));
	EXPECT_EQ(64 * S, ptp_announce_interval_ns(100));
	EXPECT_EQ(S >> 7, ptp_announce_interval_ns(-128));
}

TEST_HARNESS_MAIN
