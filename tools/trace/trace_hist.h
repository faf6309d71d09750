/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lclkctl trace's view of the probe's histograms: one series per (process,
 * syscall, outcome, ioctl device), summed over CPUs, sorted by key.
 */
#ifndef LCLK_TRACE_HIST_H
#define LCLK_TRACE_HIST_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/trace.h"

struct trace_series {
	struct trace_key key;
	struct trace_hist h;
	uint64_t calls;		/* sum of h.slots */
};

struct trace_snapshot {
	struct trace_series *s;
	size_t n, cap;
	uint64_t drops[TRACE_DROP_NR];
};

/* Inclusive edges of a slot, in ns (see TRACE_SLOTS). */
uint64_t trace_slot_low(unsigned int slot);
uint64_t trace_slot_high(unsigned int slot);
/* The slot a latency goes to, as the probe computes it. */
unsigned int trace_slot_of(uint64_t ns);

/* Append a series (summed over CPUs); returns -ENOMEM or 0. */
int trace_snapshot_append(struct trace_snapshot *snap,
			  const struct trace_key *key,
			  const struct trace_hist *h);
/*
 * Sort by key, so that output is in a stable order, and fold the series of
 * equal keys into one (a process's series taken out of the kernel's map,
 * and what a process that got its pid since counted).
 */
void trace_snapshot_sort(struct trace_snapshot *snap);
void trace_snapshot_free(struct trace_snapshot *snap);

/*
 * out = cur - prev, series by series (prev may lack some: new processes);
 * series with no calls in between are left out. Returns -ENOMEM or 0.
 */
int trace_snapshot_delta(const struct trace_snapshot *cur,
			 const struct trace_snapshot *prev,
			 struct trace_snapshot *out);

/* A process's total over its series. */
struct trace_proc_sum {
	uint32_t tgid;
	const char *comm;
	uint64_t calls, eagain, blocked_ns, bytes;
};

/*
 * Fold the series of the process starting at index *i into sum and advance
 * *i past them (series are sorted by tgid first).
 */
void trace_proc_next(const struct trace_snapshot *snap, size_t *i,
		     struct trace_proc_sum *sum);

/* A log2 histogram the way libbpf-tools print them, non-empty rows only. */
void trace_print_log2_hist(FILE *f, const __u64 slots[TRACE_SLOTS]);

#endif /* LCLK_TRACE_HIST_H */
