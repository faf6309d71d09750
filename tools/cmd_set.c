// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl set: replace parts of the model by hand, in one LCLK_IOC_SET_MODEL
 * so the module applies all of them or none.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/clock_offset.h"
#include "lib/device.h"
#include "lclk.h"

enum {
	OPT_OFFSET = 0x100, OPT_REALTIME, OPT_RATE_PPM, OPT_RATE_PPT, OPT_BOUND,
	OPT_HOLDOVER, OPT_MAX_DRIFT, OPT_TAI, OPT_UTC, OPT_UNSYNC, OPT_BACKWARD,
};

/* CLOCK_REALTIME - CLOCK_MONOTONIC, and half the window it was read in. */
static int64_t realtime_offset(int64_t *err_ns)
{
	int64_t off = 0, width = 0;

	clock_offset_from_mono(CLOCK_REALTIME, 16, &off, &width);
	*err_ns = (width + 1) / 2;
	return off;
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "offset",	    required_argument, NULL, OPT_OFFSET },
		{ "realtime",	    no_argument,       NULL, OPT_REALTIME },
		{ "rate",	    required_argument, NULL, OPT_RATE_PPM },
		{ "rate-ppt",	    required_argument, NULL, OPT_RATE_PPT },
		{ "bound",	    required_argument, NULL, OPT_BOUND },
		{ "holdover",	    required_argument, NULL, OPT_HOLDOVER },
		{ "max-drift",	    required_argument, NULL, OPT_MAX_DRIFT },
		{ "tai",	    no_argument,       NULL, OPT_TAI },
		{ "utc",	    no_argument,       NULL, OPT_UTC },
		{ "unsync",	    no_argument,       NULL, OPT_UNSYNC },
		{ "allow-backward", no_argument,       NULL, OPT_BACKWARD },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_set;
	struct lclk_set_model sm = {};
	int64_t realtime_err = 0;
	long long v;
	double d;
	int opt, fd, err, ret = -1;

	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		switch (opt) {
		case OPT_OFFSET:
			if (!cli_parse_duration_ns(cmd, "--offset", optarg, &v))
				return EXIT_USAGE;
			if (llabs(v) > LCLK_MAX_OFFSET_NS)
				return cli_usage_error(cmd, "--offset: beyond the module's limit");
			sm.modes |= LCLK_SET_OFFSET;
			sm.offset_ns = v;
			break;
		case OPT_REALTIME:
			sm.modes |= LCLK_SET_OFFSET;
			sm.offset_ns = realtime_offset(&realtime_err);
			break;
		case OPT_RATE_PPM:
			if (!cli_parse_double(cmd, "--rate", optarg, &d))
				return EXIT_USAGE;
			if (fabs(d) * 1e6 > LCLK_MAX_RATE_PPT)
				return cli_usage_error(cmd, "--rate: |%s| ppm is above 1000 ppm", optarg);
			sm.modes |= LCLK_SET_RATE;
			sm.rate_ppt = llround(d * 1e6);
			break;
		case OPT_RATE_PPT:
			if (!cli_parse_s64(cmd, "--rate-ppt", optarg, &v))
				return EXIT_USAGE;
			if (llabs(v) > LCLK_MAX_RATE_PPT)
				return cli_usage_error(cmd, "--rate-ppt: |%s| is above 10^9", optarg);
			sm.modes |= LCLK_SET_RATE;
			sm.rate_ppt = v;
			break;
		case OPT_BOUND:
			if (!cli_parse_duration_ns(cmd, "--bound", optarg, &v))
				return EXIT_USAGE;
			if (v < 0 || v > LCLK_MAX_BOUND_NS)
				return cli_usage_error(cmd, "--bound: must be 0..%lld ns", LCLK_MAX_BOUND_NS);
			sm.modes |= LCLK_SET_BOUND;
			sm.bound_ns = v;
			break;
		case OPT_HOLDOVER:
			if (!cli_parse_duration_ns(cmd, "--holdover", optarg, &v))
				return EXIT_USAGE;
			if (v < 0)
				return cli_usage_error(cmd, "--holdover: must not be negative");
			sm.modes |= LCLK_SET_HOLDOVER;
			sm.holdover_ns = v;
			break;
		case OPT_MAX_DRIFT:
			if (!cli_parse_s64(cmd, "--max-drift", optarg, &v))
				return EXIT_USAGE;
			if (v < 0 || v > LCLK_MAX_DRIFT_PPB)
				return cli_usage_error(cmd, "--max-drift: must be 0..%u ppb", LCLK_MAX_DRIFT_PPB);
			sm.modes |= LCLK_SET_MAX_DRIFT;
			sm.max_drift_ppb = v;
			break;
		case OPT_TAI:
		case OPT_UTC:
			sm.modes |= LCLK_SET_FLAGS;
			sm.model_flags = opt == OPT_TAI ? LCLK_MODEL_TAI : 0;
			break;
		case OPT_UNSYNC:
			sm.modes |= LCLK_SET_UNSYNC;
			break;
		case OPT_BACKWARD:
			sm.flags |= LCLK_ALLOW_BACKWARD;
			break;
		default:
			return cli_usage_error(cmd, "bad option");
		}
	}
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!sm.modes)
		return cli_usage_error(cmd, "nothing to set");
	if ((sm.modes & LCLK_SET_UNSYNC) && (sm.modes & LCLK_SET_BOUND))
		return cli_usage_error(cmd, "--unsync and --bound contradict each other");
	/* Taking the offset from the system clock inherits the pairing error. */
	if ((sm.modes & LCLK_SET_BOUND) && realtime_err)
		sm.bound_ns += realtime_err;

	fd = device_open(g->device, true);
	if (fd < 0)
		return device_error(cmd->name, g->device, "open", fd);
	err = device_ioctl(fd, LCLK_IOC_SET_MODEL, &sm);
	close(fd);
	if (err)
		return device_error(cmd->name, g->device, "set model", err);
	if (g->verbose)
		fprintf(stderr, "lclkctl set: %s: model updated\n", g->device);
	return EXIT_OK;
}

const struct cli_cmd cmd_set = {
	.name = "set",
	.summary = "set parts of the model (offset, rate, bound, holdover, ...) at once",
	.usage =
	"Usage: lclkctl set [OPTIONS]\n"
	"\n"
	"Replace the given parts of the model in one atomic update; the rest is\n"
	"kept. The module refuses a change that moves logical time backwards\n"
	"unless --allow-backward is given. Needs CAP_SYS_TIME.\n"
	"\n"
	"  --offset DUR        logical - CLOCK_MONOTONIC from now on (e.g. 1.5ms)\n"
	"  --realtime          offset such that logical time = CLOCK_REALTIME now\n"
	"  --rate PPM          run faster by PPM parts per million (e.g. -2.5)\n"
	"  --rate-ppt N        the same in parts per trillion\n"
	"  --bound DUR         error bound now; marks the clock synchronised\n"
	"  --holdover DUR      synced turns holdover this long after an update\n"
	"  --max-drift PPB     growth of the bound, in ns per s (0..1000000)\n"
	"  --tai | --utc       timescale of the logical clock\n"
	"  --unsync            mark the clock unsynchronised (bound unknown)\n"
	"  --allow-backward    let logical time step back\n"
	"\n"
	"Examples:\n"
	"  lclkctl set --realtime --bound 10ms\n"
	"  lclkctl set --rate -1.25 --max-drift 20000\n"
	"  lclkctl set --offset 1700000000s --allow-backward\n",
	.run = run,
};
