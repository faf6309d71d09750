// SPDX-License-Identifier: GPL-2.0
/* Reports of lclkctl trace's histograms. */
#include <stdio.h>

#include "lib/prom.h"
#include "trace_report.h"
#include "trace_sys.h"

static const char *const drop_names[TRACE_DROP_NR] = {
	[TRACE_DROP_EVENTS]	= "events",
	[TRACE_DROP_STARTS]	= "starts",
	[TRACE_DROP_HIST]	= "histogram",
	[TRACE_DROP_RECURSION]	= "recursion",
	[TRACE_DROP_MESSAGES]	= "messages",
	[TRACE_DROP_EXITS]	= "exits",
};

static const char *const drop_help[TRACE_DROP_NR] = {
	[TRACE_DROP_EVENTS]	= "outliers lost: ring buffer full",
	[TRACE_DROP_STARTS]	= "calls not timed: too many in flight, or the kernel's task storage busy",
	[TRACE_DROP_HIST]	= "calls not counted: histogram map full",
	[TRACE_DROP_RECURSION]	= "probe runs skipped: the CPU was already in a probe",
	[TRACE_DROP_MESSAGES]	= "message records lost: ring buffer full",
	[TRACE_DROP_EXITS]	= "calls not counted: the kernel's task storage busy at their exit",
};

void trace_report_warnings(FILE *f, const struct trace_snapshot *snap)
{
	int k;

	for (k = 0; k < TRACE_DROP_NR; k++)
		if (snap->drops[k])
			fprintf(f, "lclkctl trace: warning: %llu %s (see \"lost\" in the report)\n",
				(unsigned long long)snap->drops[k], drop_help[k]);
}

static void series_label(const struct trace_series *s, char *buf, size_t len)
{
	if (s->key.dev != TRACE_DEV_NONE)
		snprintf(buf, len, "%s(%s) %s", trace_sys_name(s->key.sys),
			 trace_dev_name(s->key.dev), trace_outcome_name(s->key.outcome));
	else
		snprintf(buf, len, "%s %s", trace_sys_name(s->key.sys),
			 trace_outcome_name(s->key.outcome));
}

void trace_report_text(FILE *f, const struct trace_snapshot *snap,
		       const struct trace_period *per)
{
	struct trace_proc_sum sum;
	size_t i;
	int k;

	fprintf(f, "\n%.3f s to %s %lld.%09lld: %llu outliers\n",
		per->length_ns / 1e9, per->clock,
		(long long)(per->end_ns / 1000000000),
		(long long)(per->end_ns % 1000000000),
		(unsigned long long)per->outliers);
	for (k = 0; k < TRACE_DROP_NR; k++)
		if (snap->drops[k])
			fprintf(f, "LOST: %llu %s\n",
				(unsigned long long)snap->drops[k], drop_help[k]);
	if (!snap->n) {
		fputs("no traced calls\n", f);
		return;
	}
	fprintf(f, "%-8s %-16s %10s %14s %7s %14s\n",
		"PID", "COMM", "CALLS", "BLOCKED_MS", "EAGAIN%", "BYTES");
	for (i = 0; i < snap->n;) {
		trace_proc_next(snap, &i, &sum);
		fprintf(f, "%-8u %-16s %10llu %14.3f %7.1f %14llu\n",
			sum.tgid, sum.comm, (unsigned long long)sum.calls,
			sum.blocked_ns / 1e6,
			sum.calls ? 100.0 * sum.eagain / sum.calls : 0.0,
			(unsigned long long)sum.bytes);
	}
	for (i = 0; i < snap->n; i++) {
		const struct trace_series *s = &snap->s[i];
		char label[64];

		series_label(s, label, sizeof(label));
		fprintf(f, "\npid %u (%s) %s: %llu calls, %.3f ms, %llu bytes\n",
			s->key.tgid, s->h.comm, label, (unsigned long long)s->calls,
			s->h.sum_ns / 1e6, (unsigned long long)s->h.bytes);
		trace_print_log2_hist(f, s->h.slots);
	}
}

static void json_series(struct json *j, const struct trace_series *s)
{
	unsigned int k;

	json_obj_begin(j, NULL);
	json_str(j, "syscall", trace_sys_name(s->key.sys));
	json_str(j, "outcome", trace_outcome_name(s->key.outcome));
	if (s->key.dev != TRACE_DEV_NONE)
		json_str(j, "device", trace_dev_name(s->key.dev));
	json_uint(j, "calls", s->calls);
	json_uint(j, "sum_ns", s->h.sum_ns);
	json_uint(j, "bytes", s->h.bytes);
	json_arr_begin(j, "buckets");
	for (k = 0; k < TRACE_SLOTS; k++) {
		if (!s->h.slots[k])
			continue;
		json_obj_begin(j, NULL);
		json_uint(j, "low_ns", trace_slot_low(k));
		if (k + 1 < TRACE_SLOTS)
			json_uint(j, "high_ns", trace_slot_high(k));
		else
			json_null(j, "high_ns");
		json_uint(j, "count", s->h.slots[k]);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void trace_report_json(struct json *j, const struct trace_snapshot *snap,
		       const struct trace_period *per)
{
	struct trace_proc_sum sum;
	size_t i, first;
	int k;

	json_obj_begin(j, NULL);
	json_str(j, "type", "interval");
	json_str(j, "clock", per->clock);
	json_int(j, "end_ns", per->end_ns);
	json_int(j, "length_ns", per->length_ns);
	json_uint(j, "outliers", per->outliers);
	json_obj_begin(j, "lost");
	for (k = 0; k < TRACE_DROP_NR; k++)
		json_uint(j, drop_names[k], snap->drops[k]);
	json_obj_end(j);
	json_arr_begin(j, "processes");
	for (i = 0; i < snap->n;) {
		first = i;
		trace_proc_next(snap, &i, &sum);
		json_obj_begin(j, NULL);
		json_uint(j, "pid", sum.tgid);
		json_str(j, "comm", sum.comm);
		json_uint(j, "calls", sum.calls);
		json_uint(j, "blocked_ns", sum.blocked_ns);
		json_uint(j, "eagain", sum.eagain);
		json_uint(j, "bytes", sum.bytes);
		json_arr_begin(j, "series");
		for (; first < i; first++)
			json_series(j, &snap->s[first]);
		json_arr_end(j);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
	json_end(j);
}

static int series_labels(const struct trace_series *s, char *buf, size_t len)
{
	char pid[16];
	int err;

	buf[0] = 0;
	snprintf(pid, sizeof(pid), "%u", s->key.tgid);
	err = prom_label(buf, len, "pid", pid);
	err = err ?: prom_label(buf, len, "comm", s->h.comm);
	err = err ?: prom_label(buf, len, "syscall", trace_sys_name(s->key.sys));
	err = err ?: prom_label(buf, len, "outcome", trace_outcome_name(s->key.outcome));
	if (!err && s->key.dev != TRACE_DEV_NONE)
		err = prom_label(buf, len, "device", trace_dev_name(s->key.dev));
	return err;
}

int trace_report_prom(const char *path, const struct trace_snapshot *total,
		      uint64_t outliers)
{
	static const char lat[] = "lclk_trace_syscall_duration_seconds";
	static const char bytes[] = "lclk_trace_syscall_bytes_total";
	uint64_t le_ns[TRACE_SLOTS], counts[TRACE_SLOTS];
	char labels[256];
	struct prom pr;
	size_t i;
	int err, k;

	err = prom_begin(&pr, path);
	if (err)
		return err;
	for (k = 0; k < TRACE_SLOTS; k++)
		le_ns[k] = trace_slot_high(k);
	prom_family(&pr, lat, "histogram",
		    "Time spent in traced system calls, by process, call and outcome.");
	for (i = 0; i < total->n; i++) {
		const struct trace_series *s = &total->s[i];

		if (series_labels(s, labels, sizeof(labels)))
			continue;
		for (k = 0; k < TRACE_SLOTS; k++)
			counts[k] = s->h.slots[k];
		prom_histogram(&pr, lat, labels, counts, le_ns, TRACE_SLOTS,
			       s->h.sum_ns);
	}
	prom_family(&pr, bytes, "counter",
		    "Bytes sent or received by traced system calls.");
	for (i = 0; i < total->n; i++) {
		const struct trace_series *s = &total->s[i];

		if (series_labels(s, labels, sizeof(labels)))
			continue;
		prom_sample(&pr, bytes, labels, s->h.bytes);
	}
	prom_family(&pr, "lclk_trace_outliers_total", "counter",
		    "Calls above the threshold streamed to userspace.");
	prom_sample(&pr, "lclk_trace_outliers_total", "", outliers);
	prom_family(&pr, "lclk_trace_lost_total", "counter",
		    "What the probes could not record, by kind.");
	for (k = 0; k < TRACE_DROP_NR; k++) {
		labels[0] = 0;
		prom_label(labels, sizeof(labels), "what", drop_names[k]);
		prom_sample(&pr, "lclk_trace_lost_total", labels, total->drops[k]);
	}
	return prom_commit(&pr);
}
