// SPDX-License-Identifier: GPL-2.0
/* lclkctl cpu-offset: read or set one CPU's correction to the base clock. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "lib/json.h"
#include "lib/units.h"
#include "uapi/linux/lclk.h"

#define OPT_BACKWARD 0x100

static int show(int fd, const struct cli_global *g, long long only)
{
	struct lclk_info info;
	struct json j;
	char b[UNITS_BUFSZ];
	__u32 cpu;
	int err;

	err = device_ioctl(fd, LCLK_IOC_INFO, &info);
	if (err)
		return device_error(cmd_cpu_offset.name, g->device, "info", err);
	if (only >= (long long)info.ncpus)
		return cli_usage_error(&cmd_cpu_offset, "CPU %lld: the instance has %u CPUs",
				       only, info.ncpus);
	if (g->json) {
		json_init(&j, stdout);
		json_arr_begin(&j, NULL);
	}
	for (cpu = 0; cpu < info.ncpus; cpu++) {
		struct lclk_cpu_offset co = { .cpu = cpu };

		if (only >= 0 && cpu != only)
			continue;
		err = device_ioctl(fd, LCLK_IOC_GET_CPU_OFFSET, &co);
		if (err)
			return device_error(cmd_cpu_offset.name, g->device, "get", err);
		if (g->json) {
			json_obj_begin(&j, NULL);
			json_uint(&j, "cpu", cpu);
			json_int(&j, "offset_ns", co.offset_ns);
			json_obj_end(&j);
		} else {
			printf("cpu%-4u %s\n", cpu, units_ns(b, sizeof(b), co.offset_ns));
		}
	}
	if (g->json) {
		json_arr_end(&j);
		json_end(&j);
	}
	return EXIT_OK;
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "allow-backward", no_argument, NULL, OPT_BACKWARD },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_cpu_offset;
	struct lclk_cpu_offset co = {};
	long long cpu = -1, off;
	int opt, fd, err, ret = -1;

	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		if (opt != OPT_BACKWARD)
			return cli_usage_error(cmd, "bad option");
		co.flags |= LCLK_ALLOW_BACKWARD;
	}
	if (ret >= 0)
		return ret;
	if (argc - optind > 2)
		return cli_usage_error(cmd, "expected [CPU [OFFSET]]");
	if (argc - optind >= 1) {
		if (!cli_parse_s64(cmd, "CPU", argv[optind], &cpu))
			return EXIT_USAGE;
		if (cpu < 0 || cpu > 0xffffffffLL)
			return cli_usage_error(cmd, "CPU: '%s' is not a CPU number", argv[optind]);
	}
	if (argc - optind == 2) {
		if (!cli_parse_duration_ns(cmd, "OFFSET", argv[optind + 1], &off))
			return EXIT_USAGE;
		if (llabs(off) > LCLK_MAX_CPU_OFFSET_NS)
			return cli_usage_error(cmd, "OFFSET: |%s| is above the 1ms limit",
					       argv[optind + 1]);
	}

	fd = device_open(g->device, argc - optind == 2);
	if (fd < 0)
		return device_error(cmd->name, g->device, "open", fd);
	if (argc - optind < 2) {
		ret = show(fd, g, cpu);
		close(fd);
		return ret;
	}
	co.cpu = cpu;
	co.offset_ns = off;
	err = device_ioctl(fd, LCLK_IOC_SET_CPU_OFFSET, &co);
	close(fd);
	if (err)
		return device_error(cmd->name, g->device, "set", err);
	return EXIT_OK;
}

const struct cli_cmd cmd_cpu_offset = {
	.name = "cpu-offset",
	.summary = "show or set per-CPU corrections of the base clock",
	.usage =
	"Usage: lclkctl cpu-offset [--allow-backward] [CPU [--] [OFFSET]]\n"
	"\n"
	"Without arguments, list every CPU's offset; with CPU, show that one;\n"
	"with CPU and OFFSET (|OFFSET| <= 1ms), set it: logical time read on\n"
	"that CPU is shifted by OFFSET. Lowering an offset moves that CPU's time\n"
	"back and needs --allow-backward. Setting needs CAP_SYS_TIME.\n"
	"\"lclkctl cpu-skew --apply\" measures and sets them all.\n"
	"\n"
	"Examples:\n"
	"  lclkctl cpu-offset\n"
	"  lclkctl cpu-offset 3 120ns\n"
	"  lclkctl cpu-offset --allow-backward -- 3 -80ns\n",
	.run = run,
};
