/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/trace/: other subsystems include this header.
 *
 * Loading, attaching and reading bpf/trace.bpf.c for lclkctl trace.
 * Needs Linux 5.8+ with BTF (the ring buffer) and CAP_BPF + CAP_PERFMON or
 * CAP_SYS_ADMIN. Attaches with fentry/fexit to the traced syscalls where
 * that is safe (5.12+, x86_64), else with tp_btf to raw_syscalls.
 */
#ifndef LCLK_TRACE_PROBE_H
#define LCLK_TRACE_PROBE_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace_hist.h"

enum trace_attach {
	TRACE_ATTACH_AUTO,	/* fentry where it works, else tp_btf */
	TRACE_ATTACH_FENTRY,
	TRACE_ATTACH_TP_BTF,
};

struct trace_filter {
	pid_t pid;		/* 0: any */
	const char *comm;	/* NULL: any */
	const char *cgroup;	/* cgroup v2 directory, NULL: any */
	uint64_t threshold_ns;	/* outliers: calls at least this long */
	uint64_t spin_gap_ns;	/* a busy-polling run ends past this gap */
	enum trace_attach attach;
	bool messages;		/* TCP message records (fentry-capable kernels) */
};

struct trace_probe {
	struct trace_bpf *skel;
	struct ring_buffer *rb;
	int cgroup_fd;
	enum trace_attach mode;	/* FENTRY or TP_BTF, as attached */
	unsigned int nsyscalls;	/* fentry: the syscalls attached to */
	bool task_storage;	/* starts in task storage, else a hash */
	char why[192];		/* auto: why not fentry ("" if it is) */
	/* Series of exited processes, moved out of the kernel's map. */
	struct trace_snapshot retired;
};

/* "fentry" or "tp_btf" */
const char *trace_attach_name(enum trace_attach mode);

/*
 * Check the filter and the system, load and attach. Outliers go to fn(ctx)
 * when trace_probe_poll() runs. Returns EXIT_OK or, after a message on
 * stderr, EXIT_USAGE (unknown pid or cgroup, bad comm), EXIT_PERM (missing
 * capabilities) or EXIT_FAIL (no BTF, kernel too old, the mode asked for
 * unavailable, load failure: never a silent change of mode).
 */
int trace_probe_start(struct trace_probe *tp, const struct trace_filter *f,
		      ring_buffer_sample_fn fn, void *ctx, int verbose);

/* Wait up to timeout_ms for outliers and hand them over; 0 or -errno. */
int trace_probe_poll(struct trace_probe *tp, int timeout_ms);

/*
 * The histograms and drop counters since the start, sorted (exited
 * processes included). 0 or -errno.
 */
int trace_probe_read(struct trace_probe *tp, struct trace_snapshot *snap);

/*
 * Move the series of processes that have exited out of the kernel's map
 * (which holds TRACE_HIST_KEYS and costs per-CPU memory per key) into
 * tp->retired, and drop the starts of threads that have exited (hash
 * only: task storage goes with its task). Run it every second or so.
 * 0 or -errno.
 */
int trace_probe_reap(struct trace_probe *tp);

void trace_probe_stop(struct trace_probe *tp);

#endif /* LCLK_TRACE_PROBE_H */
