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

__s64 trace_clock_time(const struct trace_clock *tc, __s64 base_ns, int cpu, __s64 *bound)
{
	struct lclk_now n;

	if (!tc->logical) {
		if (bound)
			*bound = LCLK_BOUND_UNKNOWN;
		return base_ns;
	}
	lclk_from_base(tc->c, base_ns, cpu, &n);
	if (bound)
		*bound = n.bound_ns;
	return n.time_ns;
}

void trace_outlier_span(const struct trace_clock *tc, const struct trace_outlier *e,
			struct trace_span *s)
{
	s->start = trace_clock_time(tc, e->start_ns, e->cpu, &s->bound_start);
	s->end = trace_clock_time(tc, e->start_ns + e->latency_ns, e->end_cpu, &s->bound_end);
}

void trace_msg_span(const struct trace_clock *tc, const struct trace_msg *m,
		    struct trace_span *s)
{
	s->start = trace_clock_time(tc, m->begin_ns, m->cpu, &s->bound_start);
	s->end = trace_clock_time(tc, m->end_ns, m->end_cpu, &s->bound_end);
}
