/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading, attaching and reading bpf/trace.bpf.c for lclkctl trace.
 * Needs Linux 5.8+ with BTF (the ring buffer since 5.8; tp_btf programs that
 * read the task through BTF since 5.11, raw_tp before) and CAP_BPF +
 * CAP_PERFMON or CAP_SYS_ADMIN.
 */
#ifndef LCLK_TRACE_PROBE_H
#define LCLK_TRACE_PROBE_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace_hist.h"

struct trace_filter {
	pid_t pid;		/* 0: any */
	const char *comm;	/* NULL: any */
	const char *cgroup;	/* cgroup v2 directory, NULL: any */
	uint64_t threshold_ns;	/* outliers: calls at least this long */
};

struct trace_probe {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	int cgroup_fd;
	bool raw_tp;		/* tp_btf was not available */
};

/*
 * Check the filter and the system, load and attach. Outliers go to fn(ctx)
 * when trace_probe_poll() runs. Returns EXIT_OK or, after a message on
 * stderr, EXIT_USAGE (unknown pid or cgroup, bad comm), EXIT_PERM (missing
 * capabilities) or EXIT_FAIL (no BTF, kernel too old, load failure).
 */
int trace_probe_start(struct trace_probe *tp, const struct trace_filter *f,
		      ring_buffer_sample_fn fn, void *ctx, int verbose);

/* Wait up to timeout_ms for outliers and hand them over; 0 or -errno. */
int trace_probe_poll(struct trace_probe *tp, int timeout_ms);

/* The histograms and drop counters as of now, sorted. 0 or -errno. */
int trace_probe_read(struct trace_probe *tp, struct trace_snapshot *snap);

void trace_probe_stop(struct trace_probe *tp);

#endif /* LCLK_TRACE_PROBE_H */
