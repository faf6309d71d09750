// SPDX-License-Identifier: GPL-2.0
/* lclkctl step: add a delta to logical time. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "uapi/linux/lclk.h"

#define OPT_BACKWARD 0x100

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "allow-backward", no_argument, NULL, OPT_BACKWARD },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_step;
	struct lclk_step st = {};
	long long delta;
	int opt, fd, err, ret = -1;

	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (opt != OPT_BACKWARD)
			return cli_usage_error(cmd, "bad option");
		st.flags |= LCLK_ALLOW_BACKWARD;
	}
	if (ret >= 0)
		return ret;
	if (argc - optind != 1)
		return cli_usage_error(cmd, "expected one DELTA");
	if (!cli_parse_duration_ns(cmd, "DELTA", argv[optind], &delta))
		return EXIT_USAGE;
	if (llabs(delta) > LCLK_MAX_OFFSET_NS)
		return cli_usage_error(cmd, "DELTA: beyond the module's limit");
	if (delta < 0 && !(st.flags & LCLK_ALLOW_BACKWARD))
		return cli_usage_error(cmd, "a negative DELTA steps time back: add --allow-backward");
	st.delta_ns = delta;

	fd = device_open(g->device, true);
	if (fd < 0)
		return device_error(cmd->name, g->device, "open", fd);
	err = device_ioctl(fd, LCLK_IOC_STEP, &st);
	close(fd);
	if (err)
		return device_error(cmd->name, g->device, "step", err);
	return EXIT_OK;
}

const struct cli_cmd cmd_step = {
	.name = "step",
	.summary = "step logical time by a delta",
	.usage =
	"Usage: lclkctl step [--allow-backward] [--] DELTA\n"
	"\n"
	"Add DELTA (250ns, 20us, 1.5ms, 2s; a bare number is ns) to logical time.\n"
	"A negative DELTA steps time back and needs --allow-backward; put \"--\"\n"
	"before it so it is not read as an option. The bound is not changed.\n"
	"Needs CAP_SYS_TIME.\n"
	"\n"
	"Examples:\n"
	"  lclkctl step 1.5ms\n"
	"  lclkctl step --allow-backward -- -20us\n",
	.run = run,
};
