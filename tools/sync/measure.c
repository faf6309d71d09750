// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"
#include "clock_quality.h"
#include "measure.h"

void measure_default_opts(struct source_opts *o, int verbose)
{
	/* Whole: a field added later must not take what was on the stack. */
	*o = (struct source_opts){
		.samples = 8,
		.interval_ns = -1,	/* the backend's choice */
		.timeout_ns = 1000000000LL,
		.verbose = verbose,
	};
}

bool measure_parse_opt(int opt, const struct cli_cmd *cmd, struct source_opts *o,
		       int *exit_code)
{
	long long v;

	switch (opt) {
	case MEASURE_OPT_SAMPLES:
		if (!cli_parse_s64(cmd, "--samples", optarg, &v)) {
			*exit_code = EXIT_USAGE;
		} else if (v < 1 || v > 64) {
			*exit_code = cli_usage_error(cmd, "--samples: must be 1..64");
		} else {
			o->samples = v;
		}
		return true;
	case MEASURE_OPT_INTERVAL:
	case MEASURE_OPT_TIMEOUT:
		if (!cli_parse_duration_ns(cmd, opt == MEASURE_OPT_INTERVAL ? "--interval" :
					   "--timeout", optarg, &v)) {
			*exit_code = EXIT_USAGE;
		} else if (v < (opt == MEASURE_OPT_TIMEOUT) || v > 3600000000000LL) {
			*exit_code = cli_usage_error(cmd, "%s: must be %s..1h",
						     opt == MEASURE_OPT_INTERVAL ? "--interval" : "--timeout",
						     opt == MEASURE_OPT_INTERVAL ? "0" : "1ns");
		} else if (opt == MEASURE_OPT_INTERVAL) {
			o->interval_ns = v;
		} else {
			o->timeout_ns = v;
		}
		return true;
	}
	return false;
}

int measure_open(struct measure_set *ms, const struct cli_cmd *cmd, char **urls,
		 unsigned int n, const struct source_opts *o)
{
	unsigned int i;

	memset(ms, 0, sizeof(*ms));
	if (n > 64)
		return cli_usage_error(cmd, "at most 64 sources");
	ms->items = calloc(n, sizeof(*ms->items));
	if (!ms->items) {
		fprintf(stderr, "lclkctl %s: out of memory\n", cmd->name);
		return EXIT_FAIL;
	}
	ms->n = n;
	for (i = 0; i < n; i++) {
		struct measure_item *it = &ms->items[i];

		it->err = source_open(&it->src, urls[i], o, it->msg, sizeof(it->msg));
		if (it->err == -EINVAL) {
			cli_usage_error(cmd, "%s", it->msg);
			measure_close(ms);
			return EXIT_USAGE;
		}
		it->opened = !it->err;
	}
	return EXIT_OK;
}

struct job {
	struct measure_item *it;
	const struct target_clock *tc;
};

static void *measure_one(void *arg)
{
	struct job *j = arg;
	struct measure_item *it = j->it;

	it->err = it->src.ops->measure(&it->src, j->tc, &it->m, it->msg, sizeof(it->msg));
	return NULL;
}

void measure_run(struct measure_set *ms, const struct target_clock *tc)
{
	pthread_t *tid = calloc(ms->n, sizeof(*tid));
	struct job *jobs = calloc(ms->n, sizeof(*jobs));
	bool *started = calloc(ms->n, sizeof(*started));
	struct measurement m[64];
	bool valid[64];
	enum select_state state[64];
	bool threaded = tid && jobs && started;
	struct vmclock_mark mark;
	int64_t latest = 0;
	unsigned int i;

	ms->tc = tc;
	ms->drift_ppb = clock_quality_drift_ppb(tc);
	target_mark(tc, &mark);
	for (i = 0; i < ms->n; i++) {
		struct measure_item *it = &ms->items[i];

		if (!it->opened)
			continue;
		if (threaded) {
			jobs[i] = (struct job){ it, tc };
			started[i] = !pthread_create(&tid[i], NULL, measure_one, &jobs[i]);
			if (started[i])
				continue;
		}
		/* Without a thread (or memory for one), right here. */
		measure_one(&(struct job){ it, tc });
	}
	for (i = 0; threaded && i < ms->n; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	free(tid);
	free(jobs);
	free(started);

	for (i = 0; i < ms->n; i++) {
		struct measure_item *it = &ms->items[i];

		valid[i] = it->opened && !it->err;
		it->m.vmclock = mark;
		m[i] = it->m;
	}
	for (i = 0; i < ms->n; i++)
		if (valid[i] && ms->items[i].m.base_ns > latest)
			latest = ms->items[i].m.base_ns;
	ms->combine_err = select_combine(m, valid, ms->n, ms->drift_ppb,
					 latest, state, &ms->combined);
	ms->combined.vmclock = mark;
	for (i = 0; i < ms->n; i++)
		ms->items[i].state = state[i];
}

void measure_close(struct measure_set *ms)
{
	unsigned int i;

	for (i = 0; i < ms->n; i++)
		if (ms->items[i].opened)
			source_close(&ms->items[i].src);
	free(ms->items);
	ms->items = NULL;
	ms->n = 0;
}

static const char *state_name(const struct measure_item *it)
{
	if (!it->opened || it->err)
		return "failed";
	switch (it->state) {
	case SELECT_SURVIVOR:
		return "survivor";
	case SELECT_FALSETICKER:
		return "falseticker";
	default:
		return "unused";
	}
}

static const char *combine_msg(int err)
{
	switch (err) {
	case -ENODATA:
		return "no source gave a usable measurement";
	case -EDOM:
		return "no majority of sources agrees: falsetickers cannot be told apart";
	case -EINVAL:
		return "sources disagree on the timescale (TAI vs UTC)";
	}
	return "ok";
}

void measure_print_text(const struct measure_set *ms)
{
	char o[UNITS_BUFSZ], d[UNITS_BUFSZ], b[UNITS_BUFSZ];
	unsigned int i;

	printf("%-28s %-11s %2s %-15s %12s %12s %12s %5s %4s\n", "SOURCE", "STATE", "ST",
	       "REFID", "OFFSET", "DELAY", "BOUND", "USED", "REJ");
	for (i = 0; i < ms->n; i++) {
		const struct measure_item *it = &ms->items[i];
		const struct measurement *m = &it->m;

		if (!it->opened || it->err) {
			printf("%-28s %-11s %s\n", it->src.url ? it->src.url : "?",
			       state_name(it), it->msg);
			continue;
		}
		printf("%-28s %-11s %2d %-15s %12s %12s %12s %5u %4u\n", it->src.url,
		       state_name(it), m->stratum, m->refid,
		       units_ns(o, sizeof(o), m->offset_ns), units_ns(d, sizeof(d), m->delay_ns),
		       units_ns(b, sizeof(b), m->bound_ns), m->samples, m->rejected);
	}
	if (ms->combine_err) {
		printf("combined: none: %s\n", combine_msg(ms->combine_err));
		return;
	}
	printf("combined: offset %s +- %s (reference - %s)\n",
	       units_ns(o, sizeof(o), ms->combined.offset_ns),
	       units_ns(b, sizeof(b), ms->combined.bound_ns), target_name(ms->tc));
}

void measure_print_json(const struct measure_set *ms, struct json *j)
{
	unsigned int i;

	json_str(j, "clock", target_name(ms->tc));
	json_bool(j, "logical", ms->tc->logical);
	json_arr_begin(j, "sources");
	for (i = 0; i < ms->n; i++) {
		const struct measure_item *it = &ms->items[i];
		const struct measurement *m = &it->m;

		json_obj_begin(j, NULL);
		json_str(j, "url", it->src.url ? it->src.url : "");
		json_str(j, "state", state_name(it));
		if (!it->opened || it->err) {
			json_str(j, "error", it->msg);
		} else {
			json_int(j, "offset_ns", m->offset_ns);
			json_int(j, "delay_ns", m->delay_ns);
			json_int(j, "bound_ns", m->bound_ns);
			json_int(j, "base_ns", m->base_ns);
			json_int(j, "stratum", m->stratum);
			json_int(j, "leap", m->leap);
			json_str(j, "refid", m->refid);
			json_uint(j, "samples", m->samples);
			json_uint(j, "rejected", m->rejected);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_begin(j, "combined");
	if (ms->combine_err) {
		json_str(j, "error", combine_msg(ms->combine_err));
	} else {
		json_int(j, "offset_ns", ms->combined.offset_ns);
		json_int(j, "bound_ns", ms->combined.bound_ns);
		json_int(j, "base_ns", ms->combined.base_ns);
		json_int(j, "stratum", ms->combined.stratum);
	}
	json_obj_end(j);
}
