/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/trace/: other subsystems include this header.
 *
 * The records bpf/trace.bpf.c streams through its ring buffer, decoded by
 * their type (struct trace_rec_hdr), and their ends in the trace's clock.
 */
#ifndef LCLK_TRACE_RECORD_H
#define LCLK_TRACE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "bpf/trace.h"
#include "lclk.h"

union trace_record {
	struct trace_rec_hdr hdr;
	struct trace_outlier outlier;
	struct trace_msg msg;
};

/*
 * Copy the record of size bytes at data into *rec, its names
 * NUL-terminated. Returns its type (TRACE_REC_OUTLIER, TRACE_REC_MSG), or
 * -EINVAL for a record shorter than its header, of an unknown type, or
 * shorter (by its size or by its header's) than its type's struct. A
 * record longer than its struct (a newer probe) is taken: its known part.
 */
int trace_record_decode(const void *data, size_t size, union trace_record *rec);

/*
 * The trace clock: CLOCK_MONOTONIC through the model of lclk device c
 * (logical), or plain CLOCK_MONOTONIC.
 */
struct trace_clock {
	const struct lclk_clock *c;
	bool logical;
};

/* A slice in the trace clock: its ends, and the bound at each. */
struct trace_span {
	__s64 start, end;
	__s64 bound_start, bound_end;
};

/*
 * The trace clock at CLOCK_MONOTONIC base_ns read on cpu (< 0: unknown),
 * that CPU's offset applied; the bound then in *bound when not NULL
 * (LCLK_BOUND_UNKNOWN without a device).
 */
__s64 trace_clock_time(const struct trace_clock *tc, __s64 base_ns, int cpu, __s64 *bound);

/*
 * The ends of an outlier and of a message record: each end with the
 * offset of the CPU it was read on (the start's at entry, the end's at
 * exit).
 */
void trace_outlier_span(const struct trace_clock *tc, const struct trace_outlier *e,
			struct trace_span *s);
void trace_msg_span(const struct trace_clock *tc, const struct trace_msg *m,
		    struct trace_span *s);

#endif /* LCLK_TRACE_RECORD_H */
