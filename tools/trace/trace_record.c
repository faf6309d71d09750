// SPDX-License-Identifier: GPL-2.0
/*
 * Ring-buffer records of bpf/trace.bpf.c: told apart by their header's
 * type, checked against their size, and converted to the trace's clock.
 */
#include <errno.h>
#include <string.h>

#include "trace_record.h"

static size_t struct_size(__u32 type)
{
	switch (type) {
	case TRACE_REC_OUTLIER:
		return sizeof(struct trace_outlier);
	case TRACE_REC_MSG:
		return sizeof(struct trace_msg);
	}
	return 0;
}

int trace_record_decode(const void *data, size_t size, union trace_record *rec)
{
	struct trace_rec_hdr hdr;
	size_t want;

	if (!data || size < sizeof(hdr))
		return -EINVAL;
	memcpy(&hdr, data, sizeof(hdr));
	want = struct_size(hdr.type);
	if (!want || size < want || hdr.size < want || hdr.size > size)
		return -EINVAL;
	memset(rec, 0, sizeof(*rec));
	memcpy(rec, data, want);
	if (hdr.type == TRACE_REC_OUTLIER)
		rec->outlier.comm[TRACE_COMM_LEN - 1] = 0;
	else
		rec->msg.comm[TRACE_COMM_LEN - 1] = 0;
	return hdr.type;
}

void trace_clock_init(struct trace_clock *tc, const struct lclk_clock *c, bool logical)
{
	int err;

	memset(tc, 0, sizeof(*tc));
	tc->c = c;
	tc->logical = logical;
	if (!logical)
		return;
	err = lclk_disruption_marker(c, &tc->marker);
	/*
	 * Decided once: a clock without a vmclock (or a module before it)
	 * never has one, and nothing is read per record. Any other failure
	 * (the hypervisor's page mid-write) leaves the marker unknown: the
	 * first one read counts as a change.
	 */
	tc->vmclock = err != -EOPNOTSUPP;
	tc->marker_known = !err;
}

/*
 * Read the vmclock's marker: a new one (or none readable) since the last
 * look, and no stamp taken before now keeps its bound. Called after the
 * conversions it judges, never before: a model read before the marker is
 * one the marker covers. Had the model been set after a disruption
 * (the resync), the marker read after it is the new one, and the stamps
 * converted with it lose their bound. Read first, the marker could be
 * the old one and the model, read a moment later, the resync's.
 *
 * Once per record, on every path. With the vmclock page mapped it is a
 * few loads. Without it (the page cannot be mapped: the ioctl fallback,
 * where lclk_from_base already makes GET_MODEL and GET_CPU_OFFSET for
 * each end, 2 to 4 ioctls a record) it is one more ioctl, LCLK_IOC_
 * GET_DISRUPTION. Once per ring-buffer drain would be cheaper but not
 * sound: a drain takes whatever the probes add while it runs, for as long
 * as they keep up with it, and a restore and a resync (a PTP source can
 * resync in milliseconds) inside one drain would go unseen by a check at
 * its start, the records after the resync converted with its bound.
 */
static void trace_clock_check(struct trace_clock *tc)
{
	__u64 marker = 0;	/* read only when err is 0; gcc cannot tell */
	int err;

	if (!tc->vmclock)
		return;
	err = lclk_disruption_marker(tc->c, &marker);
	if (__builtin_expect(!err && tc->marker_known && marker == tc->marker, 1))
		return;
	/* read after the marker: every stamp before it may be from before */
	tc->disrupted_before_ns = lclk_monotonic_ns();
	if (!err) {
		tc->marker = marker;
		tc->marker_known = true;
	}
}

/* The trace clock at base_ns, before the vmclock's check. */
static void trace_clock_convert(const struct trace_clock *tc, __s64 base_ns, int cpu,
				struct lclk_now *n)
{
	if (!tc->logical) {
		n->time_ns = base_ns;
		n->bound_ns = LCLK_BOUND_UNKNOWN;
		n->base_ns = base_ns;
		n->status = LCLK_STATUS_UNSYNCED;
		n->cpu = cpu;
		return;
	}
	lclk_from_base(tc->c, base_ns, cpu, n);
}

/* A stamp from before the latest disruption seen: no bound. */
static void trace_clock_judge(const struct trace_clock *tc, __s64 base_ns, struct lclk_now *n)
{
	if (base_ns >= tc->disrupted_before_ns)
		return;
	n->bound_ns = LCLK_BOUND_UNKNOWN;
	if (n->status != LCLK_STATUS_UNSYNCED)
		n->status = LCLK_STATUS_DISRUPTED;
}

__s64 trace_clock_time(struct trace_clock *tc, __s64 base_ns, int cpu, __s64 *bound)
{
	struct lclk_now n;

	trace_clock_convert(tc, base_ns, cpu, &n);
	trace_clock_check(tc);
	trace_clock_judge(tc, base_ns, &n);
	if (bound)
		*bound = n.bound_ns;
	return n.time_ns;
}

/* The ends of a record, converted first, then judged by one check. */
static void trace_clock_span(struct trace_clock *tc, __s64 start_ns, int start_cpu,
			     __s64 end_ns, int end_cpu, struct trace_span *s)
{
	struct lclk_now a, b;

	trace_clock_convert(tc, start_ns, start_cpu, &a);
	trace_clock_convert(tc, end_ns, end_cpu, &b);
	trace_clock_check(tc);
	trace_clock_judge(tc, start_ns, &a);
	trace_clock_judge(tc, end_ns, &b);
	s->start = a.time_ns;
	s->end = b.time_ns;
	s->bound_start = a.bound_ns;
	s->bound_end = b.bound_ns;
	s->status_start = a.status;
	s->status_end = b.status;
}

void trace_outlier_span(struct trace_clock *tc, const struct trace_outlier *e,
			struct trace_span *s)
{
	trace_clock_span(tc, e->start_ns, e->cpu, e->start_ns + e->latency_ns, e->end_cpu, s);
}

void trace_msg_span(struct trace_clock *tc, const struct trace_msg *m,
		    struct trace_span *s)
{
	trace_clock_span(tc, m->begin_ns, m->cpu, m->end_ns, m->end_cpu, s);
}
