/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/trace/: other subsystems include this header.
 *
 * lclkctl trace's reports of histogram snapshots: terminal, JSON, Prometheus.
 */
#ifndef LCLK_TRACE_REPORT_H
#define LCLK_TRACE_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "lib/json.h"
#include "trace_hist.h"

struct trace_period {
	int64_t end_ns;		/* trace clock at the end of the period */
	int64_t length_ns;
	const char *clock;	/* "logical" or "monotonic" */
	uint64_t outliers;	/* streamed in the period */
};

/* Per-process summary, then each series' histogram. */
void trace_report_text(FILE *f, const struct trace_snapshot *snap,
		       const struct trace_period *per);

/* A warning line for each counter of losses that is not 0. */
void trace_report_warnings(FILE *f, const struct trace_snapshot *snap);

/* One JSON document for the period. */
void trace_report_json(struct json *j, const struct trace_snapshot *snap,
		       const struct trace_period *per);

/*
 * The cumulative counts since tracing started, as node_exporter textfile
 * metrics at path (replaced atomically). 0 or -errno.
 */
int trace_report_prom(const char *path, const struct trace_snapshot *total,
		      uint64_t outliers);

#endif /* LCLK_TRACE_REPORT_H */
