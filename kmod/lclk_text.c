// SPDX-License-Identifier: GPL-2.0
/*
 * lclk: the text that read() of /dev/lclkN returns, for people and for
 * scripts. One "key: value" pair per line, values in plain decimal (times
 * in ns, rates in ppt or ppb as the key says), then one "cpu N offset_ns X"
 * line per possible CPU. New keys may be added; parsers should skip keys
 * they do not know. Everything but the statistics and the per-CPU offsets
 * comes from one snapshot of the model and one base-clock reading.
 */
#include <linux/cpumask.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/time.h>

#include "lclk_dev.h"

static const char *lclk_status_name(u32 status)
{
	switch (status) {
	case LCLK_STATUS_SYNCED:
		return "synced";
	case LCLK_STATUS_HOLDOVER:
		return "holdover";
	case LCLK_STATUS_DISRUPTED:
		return "disrupted";
	}
	return "unsynced";
}

/* The logical time as a calendar date, for the people reading it. */
static void lclk_show_date(struct seq_file *m, s64 ns, bool tai)
{
	s64 secs = div_s64(ns, NSEC_PER_SEC);
	s64 rem = ns - secs * NSEC_PER_SEC;
	struct tm tm;

	if (rem < 0) {		/* round towards minus infinity */
		secs--;
		rem += NSEC_PER_SEC;
	}
	time64_to_tm(secs, 0, &tm);
	seq_printf(m, "time: %04ld-%02d-%02dT%02d:%02d:%02d.%09lld %s\n",
		   tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
		   tm.tm_min, tm.tm_sec, rem, tai ? "TAI" : "UTC");
}

int lclk_text_show(struct seq_file *m, void *unused)
{
	struct lclk_dev *ld = m->private;
	struct lclk_reading r;
	struct lclk_params st;
	s64 now, since, shift;
	unsigned int cpu;
	bool disrupted;
	u64 marker;

	lclk_snapshot(ld, &st, &now, &disrupted);
	lclk_eval(&st, now, &r);
	if (disrupted && r.status != LCLK_STATUS_UNSYNCED) {
		r.status = LCLK_STATUS_DISRUPTED;
		r.bound_ns = LCLK_BOUND_UNKNOWN;
	}
	since = st.last_update_ns ? now - st.last_update_ns : -1LL;

	/* Base times in the reader's CLOCK_MONOTONIC (time namespaces). */
	shift = lclk_caller_mono_shift();
	now += shift;
	st.t0_ns += shift;
	st.offset_ns -= shift;
	if (st.last_update_ns)
		st.last_update_ns += shift;

	seq_printf(m, "device: lclk%u\n", ld->index);
	seq_printf(m, "abi_version: %d\n", LCLK_ABI_VERSION);
	seq_printf(m, "status: %s\n", lclk_status_name(r.status));
	lclk_show_date(m, r.logical_ns, st.model_flags & LCLK_MODEL_TAI);
	seq_printf(m, "logical_ns: %lld\n", r.logical_ns);
	seq_printf(m, "base_ns: %lld\n", now);
	seq_printf(m, "bound_ns: %lld\n", r.bound_ns);
	seq_printf(m, "offset_ns: %lld\n", st.offset_ns);
	seq_printf(m, "t0_ns: %lld\n", st.t0_ns);
	seq_printf(m, "rate_ppt: %lld\n", st.rate_ppt);
	seq_printf(m, "bound0_ns: %lld\n", st.bound0_ns);
	seq_printf(m, "max_drift_ppb: %u\n", st.max_drift_ppb);
	seq_printf(m, "last_update_ns: %lld\n", st.last_update_ns);
	seq_printf(m, "since_update_ns: %lld\n", since);
	seq_printf(m, "holdover_ns: %lld\n", st.holdover_ns);
	seq_printf(m, "timescale: %s\n",
		   st.model_flags & LCLK_MODEL_TAI ? "tai" : "utc");
	seq_printf(m, "leap: %s\n", st.leap == LCLK_LEAP_INSERT ? "insert" :
		   st.leap == LCLK_LEAP_DELETE ? "delete" : "none");
	seq_printf(m, "tai_offset_s: %d\n", st.tai_offset_s);
	seq_printf(m, "max_rate_ppt: %lld\n", ld->max_rate_ppt);
	seq_printf(m, "phc_index: %d\n", lclk_phc_index(ld));
	/* the marker now (if it can be read), and as of the last sync */
	if (!lclk_vmclock.abi)
		seq_puts(m, "vmclock: none\n");
	else if (lclk_vmclock_marker(lclk_vmclock.abi, &marker))
		seq_printf(m, "vmclock: %pa marker busy synced_marker %llu\n",
			   &lclk_vmclock.phys,
			   READ_ONCE(ld->page->vmclock_marker));
	else
		seq_printf(m, "vmclock: %pa marker %llu synced_marker %llu\n",
			   &lclk_vmclock.phys, marker,
			   READ_ONCE(ld->page->vmclock_marker));
	seq_printf(m, "updates: %lld\n", atomic64_read(&ld->ctr.updates));
	seq_printf(m, "steps: %lld\n", atomic64_read(&ld->ctr.steps));
	seq_printf(m, "backward_steps: %lld\n",
		   atomic64_read(&ld->ctr.backward_steps));
	seq_printf(m, "rejected: %lld\n", atomic64_read(&ld->ctr.rejected));
	seq_printf(m, "phc_adjustments: %lld\n",
		   atomic64_read(&ld->ctr.phc_adjustments));
	seq_printf(m, "ncpus: %u\n", nr_cpu_ids);
	for_each_possible_cpu(cpu)
		seq_printf(m, "cpu %u offset_ns %lld\n", cpu,
			   lclk_get_cpu_offset(ld, cpu));
	return 0;
}
