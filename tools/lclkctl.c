// SPDX-License-Identifier: GPL-2.0
/* lclkctl: status, control and synchronisation of lclk logical clocks. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "lib/cli.h"
#include "uapi/linux/lclk.h"

#define LCLKCTL_VERSION "0.1"

/* Listed in "lclkctl help" in this order; NULL-terminated. */
static const struct cli_cmd *const commands[] = {
	&cmd_status,
	&cmd_set,
	&cmd_step,
	&cmd_cpu_offset,
	&cmd_query,
	&cmd_sync,
	&cmd_cpu_skew,
	&cmd_trace,
	&cmd_daemon,
	&cmd_serve,
	NULL
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f,
		"Usage: lclkctl [-d /dev/lclkN] [--json] [-v] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n");
	for (i = 0; commands[i]; i++)
		fprintf(f, "  %-12s %s\n", commands[i]->name, commands[i]->summary);
	fprintf(f,
		"  %-12s %s\n  %-12s %s\n"
		"\n"
		"Options valid before or after COMMAND:\n"
		"  -d, --device DEV  lclk instance (default /dev/lclk0)\n"
		"      --json        machine-readable output\n"
		"  -v, --verbose     more detail (repeat for more)\n"
		"  -h, --help        help (\"lclkctl COMMAND --help\" for a command)\n"
		"\n"
		"Exit status:\n"
		"  0  success\n"
		"  1  the operation failed\n"
		"  2  bad command line\n"
		"  3  permission denied (CAP_SYS_TIME to change the clock,\n"
		"     CAP_BPF and CAP_PERFMON to trace)\n"
		"  4  no lclk device (is the module loaded?)\n"
		"  5  no usable reply from any time source\n",
		"help", "this text", "version", "print the version and ABI");
}

static const struct cli_cmd *find_command(const char *name)
{
	size_t i;

	for (i = 0; commands[i]; i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device",	required_argument, NULL, 'd' },
		{ "json",	no_argument,	   NULL, CLI_OPT_JSON },
		{ "verbose",	no_argument,	   NULL, 'v' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ "version",	no_argument,	   NULL, 'V' },
		{}
	};
	struct cli_global g = { .device = "/dev/lclk0" };
	const struct cli_cmd *cmd;
	int opt;

	/* "+": stop at the command name; the command parses the rest. */
	while ((opt = getopt_long(argc, argv, "+d:vhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			g.device = optarg;
			break;
		case CLI_OPT_JSON:
			g.json = true;
			break;
		case 'v':
			g.verbose++;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("lclkctl %s (lclk ABI %d)\n", LCLKCTL_VERSION, LCLK_ABI_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		if (optind + 1 < argc && (cmd = find_command(argv[optind + 1]))) {
			fputs(cmd->usage, stdout);
			return EXIT_OK;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[optind], "version")) {
		printf("lclkctl %s (lclk ABI %d)\n", LCLKCTL_VERSION, LCLK_ABI_VERSION);
		return EXIT_OK;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "lclkctl: unknown command '%s'\n"
			"Try 'lclkctl help'.\n", argv[optind]);
		return EXIT_USAGE;
	}
	argv += optind;
	argc -= optind;
	optind = 1;	/* the command's getopt_long starts afresh */
	return cmd->run(argc, argv, &g);
}
