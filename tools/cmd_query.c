// SPDX-License-Identifier: GPL-2.0
/* lclkctl query: measure the clock against time sources, change nothing. */
#include <getopt.h>
#include <stdio.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "sync/measure.h"

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = { MEASURE_LONGOPTS, CLI_COMMON_LONGOPTS, {} };
	const struct cli_cmd *cmd = &cmd_query;
	struct source_opts so;
	struct target_clock tc;
	struct measure_set ms;
	int opt, err, ret = -1;

	measure_default_opts(&so, 0);
	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (measure_parse_opt(opt, cmd, &so, &ret)) {
			if (ret >= 0)
				return ret;
			continue;
		}
		return cli_usage_error(cmd, "bad option");
	}
	if (ret >= 0)
		return ret;
	so.verbose = g->verbose;
	if (optind >= argc)
		return cli_usage_error(cmd, "no source given");

	ret = measure_open(&ms, cmd, argv + optind, argc - optind, &so);
	if (ret)
		return ret;
	err = target_open(&tc, g->device, false);
	if (err) {
		measure_close(&ms);
		return device_error(cmd->name, g->device, "open", err);
	}
	if (!tc.logical && !g->json)
		printf("no %s: measuring the system clock (CLOCK_REALTIME) instead\n", g->device);
	measure_run(&ms, &tc);
	if (g->json) {
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j, NULL);
		measure_print_json(&ms, &j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		measure_print_text(&ms);
	}
	ret = ms.combine_err ? EXIT_NOSOURCE : EXIT_OK;
	measure_close(&ms);
	target_close(&tc);
	return ret;
}

const struct cli_cmd cmd_query = {
	.name = "query",
	.summary = "measure offset, delay and error bound against time sources",
	.usage =
	"Usage: lclkctl query [OPTIONS] SOURCE...\n"
	"\n"
	"Measure the logical clock (or, without the module, the system clock)\n"
	"against each SOURCE, in parallel, and change nothing. A burst of samples\n"
	"per source goes through a clock filter; with several sources an\n"
	"intersection step marks falsetickers and the survivors are combined.\n"
	"OFFSET is reference - clock; BOUND is the root distance: the true offset\n"
	"lies within OFFSET +- BOUND if the source is honest. Rejected replies are\n"
	"reported on stderr with the reason. Exit status 5 when no source gives\n"
	"a usable measurement.\n"
	"\n"
	"Sources:\n"
	"  ntp://HOST[:PORT]   NTP server (name, IPv4, or [IPv6]:PORT; port 123)\n"
	"                      Kernel timestamps at our end; servers that offer\n"
	"                      interleaved mode (chronyd, lclkctl serve) send\n"
	"                      their kernel's transmit times too (-vv shows it).\n"
	"\n"
	"Options:\n"
	MEASURE_USAGE
	"\n"
	"Examples:\n"
	"  lclkctl query ntp://192.0.2.1\n"
	"  lclkctl query --json ntp://a.example ntp://b.example ntp://[2001:db8::1]:123\n"
	"  lclkctl query --samples 4 --interval 2s ntp://pool.ntp.org\n",
	.run = run,
};
