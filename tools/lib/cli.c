// SPDX-License-Identifier: GPL-2.0
/* Option and number parsing shared by every lclkctl command. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lclkctl %s: ", cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'lclkctl %s --help'.\n", cmd->name);
	return EXIT_USAGE;
}

/* Handle opt if it is a common option; sets *exit_code for --help and '?'. */
static bool cli_common_opt(int opt, const struct cli_cmd *cmd,
			   struct cli_global *g, int *exit_code)
{
	switch (opt) {
	case 'd':
		g->device = optarg;
		return true;
	case CLI_OPT_JSON:
		g->json = true;
		return true;
	case 'v':
		g->verbose++;
		return true;
	case 'h':
		fputs(cmd->usage, stdout);
		*exit_code = EXIT_OK;
		return true;
	case '?':
		*exit_code = cli_usage_error(cmd, "bad option");
		return true;
	}
	return false;
}

int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, const struct cli_cmd *cmd,
	       struct cli_global *g, int *exit_code)
{
	int opt;

	while ((opt = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (!cli_common_opt(opt, cmd, g, exit_code))
			return opt;
		if (*exit_code >= 0)
			return -1;
	}
	return -1;
}

const char *cli_opt_name(const struct option *longopts, int opt)
{
	static char name[64];

	for (; longopts->name; longopts++)
		if (!longopts->flag && longopts->val == opt) {
			snprintf(name, sizeof(name), "--%s", longopts->name);
			return name;
		}
	return "?";
}

bool cli_parse_s64(const struct cli_cmd *cmd, const char *what,
		   const char *s, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno || end == s || *end) {
		cli_usage_error(cmd, "%s: '%s' is not an integer%s", what, s,
				errno == ERANGE ? " in range" : "");
		return false;
	}
	return true;
}

bool cli_parse_double(const struct cli_cmd *cmd, const char *what,
		      const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(*out)) {
		cli_usage_error(cmd, "%s: '%s' is not a number", what, s);
		return false;
	}
	return true;
}

static const struct {
	const char *suffix;
	double ns;
} units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	{ "m", 60e9 }, { "h", 3600e9 }, { "", 1 },
};

bool cli_parse_duration_ns(const struct cli_cmd *cmd, const char *what,
			   const char *s, long long *out)
{
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		v *= units[i].ns;
		if (fabs(v) >= 9.2e18)
			goto bad;
		*out = llround(v);
		return true;
	}
bad:
	cli_usage_error(cmd, "%s: '%s' is not a duration (e.g. 250ns, 20us, 1.5ms, 2s)",
			what, s);
	return false;
}
