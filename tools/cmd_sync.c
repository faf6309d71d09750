// SPDX-License-Identifier: GPL-2.0
/* lclkctl sync: measure against time sources, then correct the clock. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "lib/units.h"
#include "sync/apply.h"
#include "sync/measure.h"

enum { OPT_THRESHOLD = 0x100, OPT_BACKWARD, OPT_DRY_RUN };

static void print_plan_text(const struct apply_plan *p, bool dry_run)
{
	char o[UNITS_BUFSZ], b[UNITS_BUFSZ], d[UNITS_BUFSZ];

	units_ns(o, sizeof(o), p->m.offset_ns);
	units_ns(b, sizeof(b), p->m.bound_ns);
	if (p->action == APPLY_STEP)
		printf("%s: step by %s, bound %s\n", dry_run ? "would" : "sync", o, b);
	else
		printf("%s: slew by %s over %s (rate %+.3f ppm), bound %s\n",
		       dry_run ? "would" : "sync", o, units_ns(d, sizeof(d), p->slew_ns),
		       p->slew_ppt / 1e6, b);
}

static void print_json(const struct measure_set *ms, const struct apply_plan *p,
		       bool planned, bool applied, const char *error, int64_t residual)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	measure_print_json(ms, &j);
	if (planned) {
		json_str(&j, "action", p->action == APPLY_STEP ? "step" : "slew");
		json_int(&j, "correction_ns", p->m.offset_ns);
		json_int(&j, "bound_ns", p->m.bound_ns);
		if (p->action == APPLY_SLEW) {
			json_int(&j, "slew_ns", p->slew_ns);
			json_int(&j, "slew_ppt", p->slew_ppt);
		}
		json_int(&j, "residual_ns", residual);
	}
	json_bool(&j, "applied", applied);
	if (error)
		json_str(&j, "error", error);
	json_obj_end(&j);
	json_end(&j);
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "step-threshold", required_argument, NULL, OPT_THRESHOLD },
		{ "allow-backward", no_argument,       NULL, OPT_BACKWARD },
		{ "dry-run",	    no_argument,       NULL, OPT_DRY_RUN },
		MEASURE_LONGOPTS,
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_sync;
	struct apply_opts ao = { .step_threshold_ns = APPLY_DEFAULT_STEP_THRESHOLD_NS };
	struct lclk_info info;
	struct lclk_params model;
	struct target_clock tc;
	struct measure_set ms;
	struct apply_plan plan;
	struct source_opts so;
	char err[256] = "";
	int64_t residual = 0;
	bool dry_run = false, planned = false, applied = false;
	long long v;
	int opt, fd, e, ret = -1;

	measure_default_opts(&so, 0);
	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (measure_parse_opt(opt, cmd, &so, &ret)) {
			if (ret >= 0)
				return ret;
			continue;
		}
		switch (opt) {
		case OPT_THRESHOLD:
			if (!cli_parse_duration_ns(cmd, "--step-threshold", optarg, &v))
				return EXIT_USAGE;
			if (v < 0)
				return cli_usage_error(cmd, "--step-threshold: must not be negative");
			ao.step_threshold_ns = v;
			break;
		case OPT_BACKWARD:
			ao.allow_backward = true;
			break;
		case OPT_DRY_RUN:
			dry_run = true;
			break;
		default:
			return cli_usage_error(cmd, "bad option");
		}
	}
	if (ret >= 0)
		return ret;
	so.verbose = g->verbose;
	if (optind >= argc)
		return cli_usage_error(cmd, "no source given");

	/* Refuse before spending a burst on measuring. */
	fd = device_open(g->device, !dry_run);
	if (fd < 0)
		return device_error(cmd->name, g->device, "open", fd);
	if (!dry_run && !device_can_set_time()) {
		close(fd);
		return device_error(cmd->name, g->device, "sync", -EPERM);
	}
	e = device_ioctl(fd, LCLK_IOC_INFO, &info);
	if (!e)
		e = target_open(&tc, g->device, true);
	if (e) {
		close(fd);
		return device_error(cmd->name, g->device, "open", e);
	}
	ret = measure_open(&ms, cmd, argv + optind, argc - optind, &so);
	if (ret)
		goto out_target;

	measure_run(&ms, &tc);
	if (!g->json)
		measure_print_text(&ms);
	if (ms.combine_err) {
		ret = EXIT_NOSOURCE;
		snprintf(err, sizeof(err), "no measurement to apply: nothing changed");
		goto report;
	}
	e = device_ioctl(fd, LCLK_IOC_GET_MODEL, &model);
	if (e) {
		ret = device_error(cmd->name, g->device, "reading the model", e);
		goto out;
	}
	e = apply_plan(&ms.combined, &model, &info, &ao, &plan, err, sizeof(err));
	if (e) {
		ret = e == -ERANGE ? EXIT_USAGE : EXIT_FAIL;
		goto report;
	}
	planned = true;
	if (!g->json)
		print_plan_text(&plan, dry_run);
	if (dry_run) {
		ret = EXIT_OK;
		goto report;
	}
	e = apply_execute(fd, &plan, &residual, err, sizeof(err));
	applied = !e || plan.action == APPLY_SLEW;
	ret = e ? (e == -EPERM || e == -EACCES ? EXIT_PERM : EXIT_FAIL) : EXIT_OK;
	if (!e && residual && !g->json) {
		char r[UNITS_BUFSZ];

		printf("slew overshot by %s (interrupted?): kept, and added to the bound\n",
		       units_ns(r, sizeof(r), residual));
	}
report:
	if (g->json)
		print_json(&ms, &plan, planned, applied, *err ? err : NULL, residual);
	if (*err)
		fprintf(stderr, "lclkctl sync: %s\n", err);
out:
	measure_close(&ms);
out_target:
	target_close(&tc);
	close(fd);
	return ret;
}

const struct cli_cmd cmd_sync = {
	.name = "sync",
	.summary = "measure against time sources and correct the logical clock",
	.usage =
	"Usage: lclkctl sync [OPTIONS] SOURCE...\n"
	"\n"
	"Measure as \"lclkctl query\" does, then correct the clock with the combined\n"
	"offset: step it when |offset| exceeds the step threshold, otherwise slew\n"
	"it through the rate within the module's limit (sync waits for the slew;\n"
	"Ctrl-C ends it early and cleanly; if sync is killed, the module ends\n"
	"the slew). The bound is set from the measurement and holds at every\n"
	"instant, during the slew too. The rate is restored after a slew: sync\n"
	"corrects the offset, not the frequency. Nothing is\n"
	"changed when no source gives a usable measurement (exit 5), or when the\n"
	"clock would have to step back without --allow-backward (exit 2).\n"
	"Needs CAP_SYS_TIME.\n"
	"\n"
	"Options:\n"
	"  --step-threshold DUR  step above this |offset| (default 1ms), else slew\n"
	"  --allow-backward      a step may move logical time back\n"
	"  --dry-run             measure and print the plan, change nothing\n"
	MEASURE_USAGE
	"\n"
	"Sources: as for \"lclkctl query\".\n"
	"\n"
	"Examples:\n"
	"  lclkctl sync ntp://192.0.2.1\n"
	"  lclkctl sync --step-threshold 100us ntp://a.example ntp://b.example ntp://c.example\n"
	"  lclkctl sync --allow-backward --json ntp://[2001:db8::1]\n",
	.run = run,
};
