// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl status: everything the module knows about an instance. The report
 * is a list of sections, each printing itself as text and as JSON, so new
 * facts (a daemon's source table, PTP port state) are one more entry in
 * sections[].
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/daemon_ctl.h"
#include "daemon/daemon_report.h"
#include "lib/cli.h"
#include "lib/device.h"
#include "lib/json.h"
#include "lib/units.h"
#include "lclk.h"

struct status {
	const char *path;
	struct lclk_info info;
	struct lclk_params model;
	struct lclk_stats stats;
	struct lclk_now now;		/* through the mmap reader */
	int64_t *cpu_offset_ns;		/* info.ncpus entries */
	bool vmclock_mapped;		/* the two markers below are read */
	__u64 vmclock_marker;		/* the hypervisor's, now */
	__u64 synced_marker;		/* the page's, as of the last sync */
};

struct status_section {
	void (*text)(const struct status *s);
	void (*json)(const struct status *s, struct json *j);
};

static void caps_text(__u32 caps, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", caps & LCLK_CAP_MMAP ? " mmap" : "",
		 caps & LCLK_CAP_PHC ? " phc" : "",
		 caps & LCLK_CAP_CPU_OFFSET ? " cpu-offset" : "",
		 caps & LCLK_CAP_VMCLOCK ? " vmclock" : "");
}

static void device_text(const struct status *s)
{
	char caps[64], phc[32] = "none";

	caps_text(s->info.caps, caps, sizeof(caps));
	if (s->info.phc_index >= 0)
		snprintf(phc, sizeof(phc), "/dev/ptp%d", s->info.phc_index);
	printf("device:       %s (ABI %u, %u CPUs, PTP clock %s, caps:%s)\n",
	       s->path, s->info.abi_version, s->info.ncpus, phc, caps);
	/* also what a module from before the vmclock says */
	if (!(s->info.caps & LCLK_CAP_VMCLOCK))
		printf("vmclock:      none (a snapshot restore or a migration is not seen)\n");
	else if (s->vmclock_mapped)
		printf("vmclock:      disruption marker %llu, %llu at the last sync%s\n",
		       (unsigned long long)s->vmclock_marker,
		       (unsigned long long)s->synced_marker,
		       s->vmclock_marker != s->synced_marker ? " (disrupted)" : "");
	else if (s->info.caps & LCLK_CAP_VMCLOCK)
		printf("vmclock:      present (its page cannot be mapped)\n");
}

static void device_json(const struct status *s, struct json *j)
{
	json_obj_begin(j, "device");
	json_str(j, "path", s->path);
	json_uint(j, "abi_version", s->info.abi_version);
	json_uint(j, "index", s->info.index);
	json_uint(j, "ncpus", s->info.ncpus);
	json_int(j, "phc_index", s->info.phc_index);
	json_bool(j, "mmap", s->info.caps & LCLK_CAP_MMAP);
	json_bool(j, "phc", s->info.caps & LCLK_CAP_PHC);
	json_bool(j, "cpu_offset", s->info.caps & LCLK_CAP_CPU_OFFSET);
	json_bool(j, "vmclock", s->info.caps & LCLK_CAP_VMCLOCK);
	if (s->vmclock_mapped) {
		json_uint(j, "vmclock_marker", s->vmclock_marker);
		json_uint(j, "vmclock_synced_marker", s->synced_marker);
	}
	json_int(j, "max_rate_ppt", s->info.max_rate_ppt);
	json_obj_end(j);
}

static const char *leap_name(unsigned int leap)
{
	return leap == LCLK_LEAP_INSERT ? "insert" :
	       leap == LCLK_LEAP_DELETE ? "delete" : "none";
}

static void time_text(const struct status *s)
{
	char b[UNITS_BUFSZ], stamp[40];
	time_t sec = s->now.time_ns / 1000000000LL;
	struct tm tm;

	gmtime_r(&sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	printf("status:       %s\n", lclk_status_name(s->now.status));
	printf("time:         %s.%09lld %s\n", stamp,
	       (long long)(s->now.time_ns % 1000000000LL),
	       s->model.model_flags & LCLK_MODEL_TAI ? "TAI" : "UTC");
	printf("bound:        %s\n", units_ns(b, sizeof(b), s->now.bound_ns));
	/* A leap second steps logical time at the end of the day (lclk(4)). */
	if (s->model.tai_offset_s)
		printf("leap second:  %s pending, TAI - UTC %d s\n",
		       leap_name(s->model.leap), s->model.tai_offset_s);
	else
		printf("leap second:  %s pending, TAI - UTC unknown\n",
		       leap_name(s->model.leap));
}

static void time_json(const struct status *s, struct json *j)
{
	json_str(j, "status", lclk_status_name(s->now.status));
	json_int(j, "time_ns", s->now.time_ns);
	json_int(j, "base_ns", s->now.base_ns);
	if (s->now.bound_ns == LCLK_BOUND_UNKNOWN)
		json_null(j, "bound_ns");
	else
		json_int(j, "bound_ns", s->now.bound_ns);
	json_str(j, "timescale", s->model.model_flags & LCLK_MODEL_TAI ? "TAI" : "UTC");
	json_str(j, "leap", leap_name(s->model.leap));
	if (s->model.tai_offset_s)
		json_int(j, "tai_offset_s", s->model.tai_offset_s);
	else
		json_null(j, "tai_offset_s");
}

static void model_text(const struct status *s)
{
	const struct lclk_params *m = &s->model;
	char a[UNITS_BUFSZ], b[UNITS_BUFSZ], c[UNITS_BUFSZ];

	printf("offset:       %s (logical - CLOCK_MONOTONIC at t0 %s)\n",
	       units_ns(a, sizeof(a), m->offset_ns), units_ns(b, sizeof(b), m->t0_ns));
	printf("rate:         %s\n", units_ppt(a, sizeof(a), m->rate_ppt));
	printf("last update:  %s (bound then %s, grows %u ppb)\n",
	       units_age(a, sizeof(a), s->now.base_ns, m->last_update_ns),
	       m->last_update_ns ? units_ns(b, sizeof(b), m->bound0_ns) : "unknown",
	       m->max_drift_ppb);
	printf("holdover:     %s\n", units_ns(c, sizeof(c), m->holdover_ns));
}

static void model_json(const struct status *s, struct json *j)
{
	const struct lclk_params *m = &s->model;

	json_obj_begin(j, "model");
	json_int(j, "t0_ns", m->t0_ns);
	json_int(j, "offset_ns", m->offset_ns);
	json_int(j, "rate_ppt", m->rate_ppt);
	json_int(j, "bound0_ns", m->bound0_ns);
	json_int(j, "last_update_ns", m->last_update_ns);
	json_int(j, "holdover_ns", m->holdover_ns);
	json_uint(j, "max_drift_ppb", m->max_drift_ppb);
	json_uint(j, "flags", m->model_flags);
	json_obj_end(j);
}

static void cpu_text(const struct status *s)
{
	char b[UNITS_BUFSZ];
	__u32 cpu;

	if (!s->cpu_offset_ns)
		return;
	printf("cpu offsets: ");
	for (cpu = 0; cpu < s->info.ncpus; cpu++) {
		if (cpu && cpu % 6 == 0)
			printf("\n             ");
		printf(" %u:%s", cpu, units_ns(b, sizeof(b), s->cpu_offset_ns[cpu]));
	}
	printf("\n");
}

static void cpu_json(const struct status *s, struct json *j)
{
	__u32 cpu;

	if (!s->cpu_offset_ns)
		return;
	json_arr_begin(j, "cpu_offset_ns");
	for (cpu = 0; cpu < s->info.ncpus; cpu++)
		json_int(j, NULL, s->cpu_offset_ns[cpu]);
	json_arr_end(j);
}

static void stats_text(const struct status *s)
{
	const struct lclk_stats *st = &s->stats;

	printf("stats:        %llu updates, %llu steps (%llu backward), %llu rejected, %llu via PTP clock\n",
	       (unsigned long long)st->updates, (unsigned long long)st->steps,
	       (unsigned long long)st->backward_steps,
	       (unsigned long long)st->rejected,
	       (unsigned long long)st->phc_adjustments);
}

static void stats_json(const struct status *s, struct json *j)
{
	json_obj_begin(j, "stats");
	json_uint(j, "updates", s->stats.updates);
	json_uint(j, "steps", s->stats.steps);
	json_uint(j, "backward_steps", s->stats.backward_steps);
	json_uint(j, "rejected", s->stats.rejected);
	json_uint(j, "phc_adjustments", s->stats.phc_adjustments);
	json_obj_end(j);
}

/* Printed in this order. */
static const struct status_section sections[] = {
	{ device_text, device_json },
	{ time_text, time_json },
	{ model_text, model_json },
	{ cpu_text, cpu_json },
	{ stats_text, stats_json },
	{ daemon_ctl_status_text, daemon_ctl_status_json },
};

#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

/* Fill s from the device; returns 0 or an exit code after a message. */
static int collect(struct status *s, int fd, struct lclk_clock *reader)
{
	static const char name[] = "status";
	int err;
	__u32 cpu;

	err = device_ioctl(fd, LCLK_IOC_INFO, &s->info);
	if (!err)
		err = device_ioctl(fd, LCLK_IOC_GET_MODEL, &s->model);
	if (!err)
		err = device_ioctl(fd, LCLK_IOC_GET_STATS, &s->stats);
	if (err)
		return device_error(name, s->path, "reading the model", err);
	err = lclk_open(reader, s->path);
	if (err)
		return device_error(name, s->path, "mapping the clock", err);
	lclk_now(reader, &s->now);
	/* the hypervisor's marker now, and the one the last sync saw */
	if (reader->page && reader->vmclock &&
	    !lclk_vmclock_marker(reader->vmclock, &s->vmclock_marker)) {
		s->vmclock_mapped = true;
		s->synced_marker = reader->page->vmclock_marker;
	}
	if (!(s->info.caps & LCLK_CAP_CPU_OFFSET) || !s->info.ncpus)
		return 0;
	s->cpu_offset_ns = calloc(s->info.ncpus, sizeof(*s->cpu_offset_ns));
	if (!s->cpu_offset_ns)
		return device_error(name, s->path, "per-CPU offsets", -ENOMEM);
	for (cpu = 0; cpu < s->info.ncpus; cpu++) {
		struct lclk_cpu_offset co = { .cpu = cpu };

		err = device_ioctl(fd, LCLK_IOC_GET_CPU_OFFSET, &co);
		if (err)
			return device_error(name, s->path, "per-CPU offsets", err);
		s->cpu_offset_ns[cpu] = co.offset_ns;
	}
	return 0;
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = { CLI_COMMON_LONGOPTS, {} };
	struct lclk_clock reader = { .fd = -1 };
	struct status s = {};
	int opt, fd, ret = -1;
	size_t i;

	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, &cmd_status, g, &ret)) != -1)
		return cli_usage_error(&cmd_status, "bad option");
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage_error(&cmd_status, "unexpected argument '%s'", argv[optind]);

	s.path = g->device;
	fd = device_open(s.path, false);
	if (fd < 0)
		return device_error("status", s.path, "open", fd);
	ret = collect(&s, fd, &reader);
	if (!ret) {
		if (g->json) {
			struct json j;

			json_init(&j, stdout);
			json_obj_begin(&j, NULL);
			for (i = 0; i < NSECTIONS; i++)
				sections[i].json(&s, &j);
			json_obj_end(&j);
			json_end(&j);
		} else {
			for (i = 0; i < NSECTIONS; i++)
				sections[i].text(&s);
		}
	}
	free(s.cpu_offset_ns);
	if (reader.fd >= 0)
		lclk_close(&reader);
	close(fd);
	return ret;
}

const struct cli_cmd cmd_status = {
	.name = "status",
	.summary = "show the logical clock: status, time, bound, model, per-CPU offsets, stats",
	.usage =
	"Usage: lclkctl status [-d /dev/lclkN] [--json]\n"
	"\n"
	"Show an instance's sync status, logical time and error bound now (read\n"
	"through the mmap page, as applications do), the model (offset, rate,\n"
	"last update, holdover, bound growth), per-CPU offsets and the module's\n"
	"counters. Needs no privilege.\n"
	"\n"
	"Examples:\n"
	"  lclkctl status\n"
	"  lclkctl -d /dev/lclk1 status --json | jq .bound_ns\n",
	.run = run,
};
