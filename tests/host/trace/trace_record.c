// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer's records: told apart by their header's type, refused
 * when short or of an unknown type; and their ends in logical time, each
 * with the offset of the CPU it was read on.
 */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "trace/trace_record.h"

static struct trace_outlier outlier(void)
{
	struct trace_outlier e;

	memset(&e, 0x5a, sizeof(e));
	e.hdr.type = TRACE_REC_OUTLIER;
	e.hdr.size = sizeof(e);
	return e;
}

static struct trace_msg msg(void)
{
	struct trace_msg m;

	memset(&m, 0x5a, sizeof(m));
	m.hdr.type = TRACE_REC_MSG;
	m.hdr.size = sizeof(m);
	return m;
}

TEST(each_type_decoded_as_itself)
{
	struct trace_outlier e = outlier();
	struct trace_msg m = msg();
	union trace_record rec;

	ASSERT_EQ(TRACE_REC_OUTLIER, trace_record_decode(&e, sizeof(e), &rec));
	EXPECT_EQ(0, memcmp(&rec.outlier, &e, offsetof(struct trace_outlier, comm)));
	EXPECT_EQ(0, rec.outlier.comm[TRACE_COMM_LEN - 1]);
	ASSERT_EQ(TRACE_REC_MSG, trace_record_decode(&m, sizeof(m), &rec));
	EXPECT_EQ(0, memcmp(&rec.msg, &m, offsetof(struct trace_msg, comm)));
	EXPECT_EQ(0, rec.msg.comm[TRACE_COMM_LEN - 1]);
}

/* The old decoder took any record of the outlier's size as one. */
TEST(a_message_the_size_of_an_outlier_is_still_a_message)
{
	char buf[sizeof(struct trace_outlier) > sizeof(struct trace_msg) ?
		 sizeof(struct trace_outlier) : sizeof(struct trace_msg)] = { 0 };
	struct trace_msg m = msg();
	union trace_record rec;

	memcpy(buf, &m, sizeof(m));
	EXPECT_EQ(TRACE_REC_MSG, trace_record_decode(buf, sizeof(buf), &rec));
}

TEST(unknown_types_refused)
{
	struct trace_outlier e = outlier();
	union trace_record rec;
	__u32 t;

	for (t = 0; t < 300; t++) {
		if (t == TRACE_REC_OUTLIER || t == TRACE_REC_MSG)
			continue;
		e.hdr.type = t;
		EXPECT_EQ(-EINVAL, trace_record_decode(&e, sizeof(e), &rec));
	}
	e.hdr.type = 0xffffffff;
	EXPECT_EQ(-EINVAL, trace_record_decode(&e, sizeof(e), &rec));
}

TEST(short_records_refused)
{
	struct trace_outlier e = outlier();
	struct trace_msg m = msg();
	union trace_record rec;
	size_t n;

	EXPECT_EQ(-EINVAL, trace_record_decode(NULL, 0, &rec));
	for (n = 0; n < sizeof(e); n++)
		EXPECT_EQ(-EINVAL, trace_record_decode(&e, n, &rec));
	for (n = 0; n < sizeof(m); n++)
		EXPECT_EQ(-EINVAL, trace_record_decode(&m, n, &rec));
	/* A header that says the record is shorter than its type's struct, or longer than it is. */
	e.hdr.size = sizeof(e) - 1;
	EXPECT_EQ(-EINVAL, trace_record_decode(&e, sizeof(e), &rec));
	e.hdr.size = sizeof(e) + 8;
	EXPECT_EQ(-EINVAL, trace_record_decode(&e, sizeof(e), &rec));
}

/* A newer probe's longer record: its known part. */
TEST(longer_records_taken)
{
	char buf[sizeof(struct trace_outlier) + 16];
	struct trace_outlier e = outlier();
	union trace_record rec;

	e.hdr.size = sizeof(buf);
	memset(buf, 0x11, sizeof(buf));
	memcpy(buf, &e, sizeof(e));
	EXPECT_EQ(TRACE_REC_OUTLIER, trace_record_decode(buf, sizeof(buf), &rec));
	EXPECT_EQ(e.start_ns, rec.outlier.start_ns);
}

/* A device page with 4 CPUs whose offsets are 0, +1 ms, -1 ms, +7 ns. */
static struct lclk_page *page_with_offsets(void)
{
	size_t size = sizeof(struct lclk_page) + 4 * sizeof(__s64);
	struct lclk_page *p = calloc(1, size);

	if (!p)
		abort();
	p->magic = LCLK_PAGE_MAGIC;
	p->ncpus = 4;
	p->flags = LCLK_PAGE_CPU_OFFSETS;
	p->params.status = LCLK_STATUS_SYNCED;
	p->params.t0_ns = 0;
	p->params.offset_ns = 5000000000LL;	/* logical = monotonic + 5 s */
	p->params.rate_mult = lclk_ppt_to_mult(0);
	p->params.bound0_ns = 10;
	p->params.holdover_ns = 1000000000000LL;
	p->cpu_offset_ns[1] = 1000000;
	p->cpu_offset_ns[2] = -1000000;
	p->cpu_offset_ns[3] = 7;
	return p;
}

TEST(outlier_ends_use_their_own_cpus_offsets)
{
	struct lclk_page *p = page_with_offsets();
	struct lclk_clock c = { .fd = -1, .page = p,
				.size = sizeof(*p) + 4 * sizeof(__s64) };
	struct trace_clock tc = { .c = &c, .logical = true };
	struct trace_outlier e = outlier();
	struct trace_span s;

	e.start_ns = 1000000000;
	e.latency_ns = 2000000;
	e.cpu = 1;
	e.end_cpu = 2;
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(5000000000LL + 1000000000 + 1000000, s.start);
	EXPECT_EQ(5000000000LL + 1002000000 - 1000000, s.end);
	/* Not monotonic here, and that is the truth: the CPUs disagree by 2 ms. */
	EXPECT_EQ(0, s.end - s.start);
	e.end_cpu = 3;
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(5000000000LL + 1002000000 + 7, s.end);
	free(p);
}

TEST(message_ends_use_their_own_cpus_offsets)
{
	struct lclk_page *p = page_with_offsets();
	struct lclk_clock c = { .fd = -1, .page = p,
				.size = sizeof(*p) + 4 * sizeof(__s64) };
	struct trace_clock tc = { .c = &c, .logical = true };
	struct trace_msg m = msg();
	struct trace_span s;

	m.begin_ns = 1000000000;
	m.end_ns = 1000500000;
	m.cpu = 2;
	m.end_cpu = 1;
	trace_msg_span(&tc, &m, &s);
	EXPECT_EQ(5000000000LL + 1000000000 - 1000000, s.start);
	EXPECT_EQ(5000000000LL + 1000500000 + 1000000, s.end);
	free(p);
}

TEST(monotonic_without_a_device)
{
	struct trace_clock tc = { .c = NULL, .logical = false };
	struct trace_outlier e = outlier();
	struct trace_span s;

	e.start_ns = 100;
	e.latency_ns = 50;
	e.cpu = 1;
	e.end_cpu = 2;
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(100, s.start);
	EXPECT_EQ(150, s.end);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_end);
}

TEST_HARNESS_MAIN
