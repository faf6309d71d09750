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
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "trace/trace_record.h"
#include "vm_pages.h"

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
	struct trace_clock tc;
	struct trace_outlier e = outlier();
	struct trace_span s;

	e.start_ns = 1000000000;
	e.latency_ns = 2000000;
	e.cpu = 1;
	e.end_cpu = 2;
	trace_clock_init(&tc, &c, true);
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
	struct trace_clock tc;
	struct trace_msg m = msg();
	struct trace_span s;

	m.begin_ns = 1000000000;
	m.end_ns = 1000500000;
	m.cpu = 2;
	m.end_cpu = 1;
	trace_clock_init(&tc, &c, true);
	trace_msg_span(&tc, &m, &s);
	EXPECT_EQ(5000000000LL + 1000000000 - 1000000, s.start);
	EXPECT_EQ(5000000000LL + 1000500000 + 1000000, s.end);
	free(p);
}

TEST(monotonic_without_a_device)
{
	struct trace_clock tc;
	struct trace_outlier e = outlier();
	struct trace_span s;

	e.start_ns = 100;
	e.latency_ns = 50;
	e.cpu = 1;
	e.end_cpu = 2;
	trace_clock_init(&tc, NULL, false);
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(100, s.start);
	EXPECT_EQ(150, s.end);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_end);
}

/*
 * A VM with a vmclock (the page says VMCLOCK beside REFUSED, the
 * hypervisor's page mapped), synced under marker 7: logical time is
 * CLOCK_MONOTONIC + 5 s, within 1 us.
 */
struct vm {
	struct lclk_page *p;
	struct lclk_vmclock_head *v;
	struct lclk_clock c;
};

static void vm_new(struct vm *vm)
{
	size_t size;

	vm->p = test_page_new(1, &size);
	vm->v = test_vmclock_new(7);
	vm->p->flags = TEST_PAGE_VMCLOCK_FLAGS;
	test_page_sync(vm->p, 5000000000LL, 1000, 7);
	vm->c = (struct lclk_clock){ .fd = -1, .page = vm->p, .size = size,
				     .vmclock = vm->v, .vmclock_size = 4096 };
}

static void vm_free(struct vm *vm)
{
	free(vm->v);
	free(vm->p);
}

/* An outlier that began at start_ns and ends now, both ends on CPU 0. */
static struct trace_outlier outlier_since(__s64 start_ns)
{
	struct trace_outlier e = outlier();

	e.start_ns = start_ns;
	e.latency_ns = lclk_monotonic_ns() - start_ns;
	e.cpu = 0;
	e.end_cpu = 0;
	return e;
}

/*
 * A syscall blocked across a snapshot restore, its record drained once
 * the daemon had resynced: the restore moved CLOCK_MONOTONIC against true
 * time by 3 s (the new sync's offset is 8 s, not 5 s), so the stamp taken
 * before it, converted with the new model, is 3 s off. It must not claim
 * the new sync's bound of microseconds; a stamp taken after the tracer
 * saw the new marker keeps it.
 */
TEST(a_stamp_from_before_a_disruption_claims_no_bound_after_the_resync)
{
	struct vm vm;
	struct trace_clock tc;
	struct trace_outlier e;
	struct trace_msg m = msg();
	struct trace_span s;
	__s64 bound, t;

	vm_new(&vm);
	trace_clock_init(&tc, &vm.c, true);
	e = outlier_since(lclk_monotonic_ns());
	trace_outlier_span(&tc, &e, &s);
	ASSERT_NE(LCLK_BOUND_UNKNOWN, s.bound_start);
	ASSERT_GT(100000, s.bound_start);	/* 1 us + 50 ppm of a moment */
	ASSERT_EQ(LCLK_STATUS_SYNCED, s.status_start);

	test_vmclock_disrupt(vm.v, 8);		/* the restore */
	test_page_sync(vm.p, 8000000000LL, 1000, 8);	/* the resync under 8 */
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(e.start_ns + 8000000000LL, s.start);	/* 3 s off... */
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);	/* ...and says so */
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_end);
	EXPECT_EQ(LCLK_STATUS_DISRUPTED, s.status_start);
	EXPECT_EQ(LCLK_STATUS_DISRUPTED, s.status_end);
	m.begin_ns = e.start_ns;
	m.end_ns = e.start_ns + e.latency_ns;
	m.cpu = m.end_cpu = 0;
	trace_msg_span(&tc, &m, &s);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_end);
	trace_clock_time(&tc, e.start_ns, 0, &bound);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, bound);

	/* a stamp taken after the tracer saw the new marker */
	e = outlier_since(lclk_monotonic_ns());
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(e.start_ns + 8000000000LL, s.start);
	EXPECT_GT(100000, s.bound_start);
	EXPECT_GT(100000, s.bound_end);
	EXPECT_EQ(LCLK_STATUS_SYNCED, s.status_start);
	EXPECT_EQ(LCLK_STATUS_SYNCED, s.status_end);
	t = trace_clock_time(&tc, e.start_ns, 0, &bound);
	EXPECT_EQ(e.start_ns + 8000000000LL, t);
	EXPECT_GT(100000, bound);
	vm_free(&vm);
}

/*
 * A stamp taken after the restore but converted before the tracer read
 * the new marker cannot be told from one taken before it: no bound
 * either. The marker read, converted again, it is still one of them.
 */
TEST(a_stamp_before_the_new_marker_was_seen_claims_no_bound)
{
	struct vm vm;
	struct trace_clock tc;
	struct trace_outlier e;
	struct trace_span s;

	vm_new(&vm);
	trace_clock_init(&tc, &vm.c, true);
	test_vmclock_disrupt(vm.v, 8);
	test_page_sync(vm.p, 8000000000LL, 1000, 8);
	e = outlier_since(lclk_monotonic_ns());
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);
	EXPECT_EQ(LCLK_STATUS_DISRUPTED, s.status_start);
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);
	vm_free(&vm);
}

/*
 * A marker that cannot be read (the hypervisor's page stuck mid-write) is
 * no proof that nothing happened: the stamps before it lose their bound.
 * Read again and unchanged, the stamps after keep theirs.
 */
TEST(an_unreadable_marker_is_a_disruption_for_the_stamps_before_it)
{
	struct vm vm;
	struct trace_clock tc;
	struct trace_outlier e;
	struct trace_span s;

	vm_new(&vm);
	trace_clock_init(&tc, &vm.c, true);
	e = outlier_since(lclk_monotonic_ns());
	vm.v->seq_count |= 1;
	alarm(20);	/* a reader that spins forever fails the test */
	trace_outlier_span(&tc, &e, &s);
	alarm(0);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);
	vm.v->seq_count++;
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, s.bound_start);
	e = outlier_since(lclk_monotonic_ns());
	trace_outlier_span(&tc, &e, &s);
	EXPECT_GT(100000, s.bound_start);
	EXPECT_EQ(LCLK_STATUS_SYNCED, s.status_start);
	vm_free(&vm);
}

/*
 * Without a vmclock nothing in the guest sees a restore, and nothing
 * changes: a stamp taken before a sync, converted after it, keeps the
 * bound the model gives it. Nothing is read per record: the device
 * (/dev/null here, whose ioctls are ENOTTY: -EOPNOTSUPP, no vmclock)
 * is asked once, at the start; closed after it, a question per record
 * would fail, and a failure would cost the bound.
 */
TEST(without_a_vmclock_a_stamp_keeps_its_bound)
{
	size_t size;
	struct lclk_page *p = test_page_new(1, &size);
	struct lclk_clock c = { .fd = open("/dev/null", O_RDONLY), .page = p, .size = size };
	struct trace_clock tc;
	struct trace_outlier e;
	struct trace_span s;

	ASSERT_LE(0, c.fd);
	test_page_sync(p, 5000000000LL, 1000, 0);
	trace_clock_init(&tc, &c, true);
	close(c.fd);
	c.fd = -1;
	e = outlier_since(lclk_monotonic_ns());
	test_page_sync(p, 8000000000LL, 1000, 0);
	trace_outlier_span(&tc, &e, &s);
	EXPECT_EQ(e.start_ns + 8000000000LL, s.start);
	EXPECT_GT(100000, s.bound_start);
	EXPECT_GT(100000, s.bound_end);
	EXPECT_EQ(LCLK_STATUS_SYNCED, s.status_start);
	free(p);
}

TEST_HARNESS_MAIN
