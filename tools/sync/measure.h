/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * Measure a set of sources given as URLs, in parallel (one thread each, so
 * the time to answer is one burst however many sources), select and
 * combine, and report: shared by query and sync.
 */
#ifndef LCLK_MEASURE_H
#define LCLK_MEASURE_H

#include <getopt.h>

#include "lib/cli.h"
#include "lib/json.h"
#include "select.h"
#include "source.h"

struct measure_item {
	struct source src;
	bool opened;
	struct measurement m;
	int err;		/* 0: m is valid */
	char msg[256];		/* why not */
	enum select_state state;
};

struct measure_set {
	unsigned int n;
	struct measure_item *items;
	const struct target_clock *tc;
	uint32_t drift_ppb;
	int combine_err;	/* of select_combine */
	struct measurement combined;
};

/* Options of the burst, for query and sync. */
#define MEASURE_OPT_SAMPLES	0x2000
#define MEASURE_OPT_INTERVAL	0x2001
#define MEASURE_OPT_TIMEOUT	0x2002
#define MEASURE_LONGOPTS						\
	{ "samples",	required_argument, NULL, MEASURE_OPT_SAMPLES },	\
	{ "interval",	required_argument, NULL, MEASURE_OPT_INTERVAL },	\
	{ "timeout",	required_argument, NULL, MEASURE_OPT_TIMEOUT }
#define MEASURE_USAGE							\
	"  --samples N         samples per source (default 8, 1..64)\n"	\
	"  --interval DUR      between samples (default: 100ms to private\n"	\
	"                      addresses, 2s to public servers, as they ask)\n"	\
	"  --timeout DUR       wait for each reply (default 1s)\n"

/* Defaults; interval_ns < 0 leaves the spacing to each backend. */
void measure_default_opts(struct source_opts *o, int verbose);
/* true if opt was a burst option; false and *exit_code on bad values. */
bool measure_parse_opt(int opt, const struct cli_cmd *cmd, struct source_opts *o,
		       int *exit_code);

/*
 * Open every URL. A bad URL is a usage error: EXIT_USAGE after a message.
 * A source that cannot be opened (unknown host) is reported and skipped.
 */
int measure_open(struct measure_set *ms, const struct cli_cmd *cmd, char **urls,
		 unsigned int n, const struct source_opts *o);
/* Measure all, then select and combine at the latest measurement's time. */
void measure_run(struct measure_set *ms, const struct target_clock *tc);
void measure_close(struct measure_set *ms);

/* The table, with the combined result, as text or as JSON members. */
void measure_print_text(const struct measure_set *ms);
void measure_print_json(const struct measure_set *ms, struct json *j);

#endif /* LCLK_MEASURE_H */
