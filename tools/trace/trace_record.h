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
 * (logical), or plain CLOCK_MONOTONIC. One per trace, for its whole run
 * (trace_clock_init()): it keeps what it has seen of the vmclock.
 *
 * The probes stamp in CLOCK_MONOTONIC and the stamps are converted when
 * the ring buffer is drained, with the model of that moment. On a VM with
 * a vmclock, a snapshot restore or a migration moves CLOCK_MONOTONIC
 * against true time (by seconds) and changes the vmclock's disruption
 * marker; once the agent has resynced, the model is good for the stamps
 * taken after it, and a stamp taken before it (a call blocked across the
 * restore, a record drained late) would be converted seconds off with a
 * bound of microseconds. So the clock reads the marker after each
 * conversion, and notes when it first sees a new one: every stamp before
 * that instant, disrupted_before_ns, has its bound unknown and status
 * DISRUPTED, whatever the model says (it cannot be told from a stamp
 * taken before the disruption). Some stamps taken after the disruption,
 * before the tracer saw it, lose their bound too: the price of knowing
 * the disruption's instant only by when it was seen.
 */
struct trace_clock {
	const struct lclk_clock *c;
	bool logical;
	bool vmclock;		/* the clock has one: its marker is read */
	bool marker_known;	/* marker holds a value read */
	__u64 marker;		/* the vmclock's disruption marker, as last read */
	__s64 disrupted_before_ns;	/* stamps before it: no bound; 0 none */
};

/*
 * Set up *tc for device c (logical), or for CLOCK_MONOTONIC. Where c has
 * no vmclock (-EOPNOTSUPP) the clock never reads one. Call it before the
 * probes start: a stamp taken before it could be from before a
 * disruption it does not know of.
 */
void trace_clock_init(struct trace_clock *tc, const struct lclk_clock *c, bool logical);

/* A slice in the trace clock: its ends, the bound and status at each. */
struct trace_span {
	__s64 start, end;
	__s64 bound_start, bound_end;
	__u32 status_start, status_end;	/* LCLK_STATUS_*; UNSYNCED without a device */
};

/*
 * The trace clock at CLOCK_MONOTONIC base_ns read on cpu (< 0: unknown),
 * that CPU's offset applied; the bound then in *bound when not NULL
 * (LCLK_BOUND_UNKNOWN without a device, or for a stamp from before a
 * disruption).
 */
__s64 trace_clock_time(struct trace_clock *tc, __s64 base_ns, int cpu, __s64 *bound);

/*
 * The ends of an outlier and of a message record: each end with the
 * offset of the CPU it was read on (the start's at entry, the end's at
 * exit).
 */
void trace_outlier_span(struct trace_clock *tc, const struct trace_outlier *e,
			struct trace_span *s);
void trace_msg_span(struct trace_clock *tc, const struct trace_msg *m,
		    struct trace_span *s);

#endif /* LCLK_TRACE_RECORD_H */
