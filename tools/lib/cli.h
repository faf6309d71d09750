/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * lclkctl's command table, exit codes and options every command shares.
 */
#ifndef LCLK_CLI_H
#define LCLK_CLI_H

#include <getopt.h>
#include <stdbool.h>

/* Exit codes, documented in "lclkctl help". */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,	/* the operation failed */
	EXIT_USAGE	= 2,	/* bad command line */
	EXIT_PERM	= 3,	/* needs CAP_SYS_TIME / CAP_BPF / root */
	EXIT_NODEV	= 4,	/* no lclk device (module not loaded?) */
	EXIT_NOSOURCE	= 5,	/* no usable reply from any source */
};

struct cli_global {
	const char *device;	/* -d, --device: /dev/lclkN */
	bool json;		/* --json */
	int verbose;		/* -v, --verbose */
};

struct cli_cmd {
	const char *name;
	const char *summary;	/* one line for "lclkctl help" */
	const char *usage;	/* "lclkctl NAME --help": options and examples */
	int (*run)(int argc, char **argv, struct cli_global *g);
};

/* Options every command accepts, to be appended to its own long options. */
#define CLI_COMMON_SHORTOPTS	"d:vh"
#define CLI_OPT_JSON		0x1000
#define CLI_COMMON_LONGOPTS					\
	{ "device",	required_argument, NULL, 'd' },		\
	{ "json",	no_argument,	   NULL, CLI_OPT_JSON },	\
	{ "verbose",	no_argument,	   NULL, 'v' },		\
	{ "help",	no_argument,	   NULL, 'h' }

/*
 * getopt_long() for a command: handles the common options itself and
 * returns the next option of the command's own, or -1 when there are no
 * more. *exit_code (initialised to -1 by the caller) is set when the
 * command must return it at once: --help printed, or a bad option.
 */
int cli_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts, const struct cli_cmd *cmd,
	       struct cli_global *g, int *exit_code);

/* "--NAME" of the long option opt returns (for messages); "?" if none. */
const char *cli_opt_name(const struct option *longopts, int opt);

/* Print "lclkctl CMD: message" to stderr and return EXIT_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse helpers: false (and a message) on bad input. */
bool cli_parse_s64(const struct cli_cmd *cmd, const char *what,
		   const char *s, long long *out);
bool cli_parse_double(const struct cli_cmd *cmd, const char *what,
		      const char *s, double *out);
/* "1.5ms", "20us", "3s", "100ns", "250" (ns); negative allowed. */
bool cli_parse_duration_ns(const struct cli_cmd *cmd, const char *what,
			   const char *s, long long *out);

/* The commands, each in its own file. */
extern const struct cli_cmd cmd_status;
extern const struct cli_cmd cmd_set;
extern const struct cli_cmd cmd_step;
extern const struct cli_cmd cmd_cpu_offset;
extern const struct cli_cmd cmd_query;
extern const struct cli_cmd cmd_sync;
extern const struct cli_cmd cmd_cpu_skew;
extern const struct cli_cmd cmd_trace;
extern const struct cli_cmd cmd_daemon;
extern const struct cli_cmd cmd_serve;

/* lclkctl trace merge, dispatched by lclkctl trace. */
int cmd_trace_merge_run(int argc, char **argv, struct cli_global *g);

#endif /* LCLK_CLI_H */
