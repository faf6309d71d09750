/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * What the daemon knows, in one plain structure: filled by the daemon's
 * loop, rendered as JSON on the control socket (daemon_ctl.c), as text by
 * "lclkctl status", and as Prometheus metrics (metrics_http.c).
 */
#ifndef LCLK_DAEMON_REPORT_H
#define LCLK_DAEMON_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon_config.h"

enum source_state {
	SRC_INIT,		/* not measured yet */
	SRC_SELECTED,		/* steers the clock */
	SRC_CANDIDATE,		/* agrees, but a better one steers */
	SRC_FALSETICKER,	/* outside the majority's intersection */
	SRC_UNREACHABLE,	/* its last poll gave no usable measurement */
	NR_SOURCE_STATES
};

struct source_report {
	char url[CONFIG_URL_MAX];
	enum source_class class;
	bool prefer;
	enum source_state state;
	uint8_t reach;		/* last 8 polls, newest in bit 0 */
	bool measured;		/* the fields below are set */
	int64_t offset_ns;	/* of the last measurement */
	int64_t delay_ns;
	int64_t bound_ns;
	int64_t base_ns;	/* CLOCK_MONOTONIC it was taken at */
	int stratum;
	char refid[32];
	uint64_t polls, failures, rejected;
	char error[128];	/* why the last poll failed */
};

struct daemon_report {
	char device[CONFIG_URL_MAX];
	uint32_t status;		/* LCLK_STATUS_* as of now_ns */
	int64_t now_ns;			/* CLOCK_MONOTONIC of the report */
	int64_t offset_ns;		/* last offset the servo saw */
	int64_t rate_ppt;		/* rate set now */
	int64_t freq_ppt;		/* the servo's frequency estimate */
	int64_t bound_ns;		/* bound now, LCLK_BOUND_UNKNOWN unsynced */
	int64_t poll_ns;		/* the selected source's poll interval, else the shortest */
	int64_t last_update_ns;		/* 0 if never */
	uint64_t updates, steps, rejected;
	uint64_t disruptions;		/* VM restores and migrations seen (vmclock) */
	int selected;			/* index into sources, -1 none */
	unsigned int nsources;
	struct source_report sources[CONFIG_MAX_SOURCES];
};

struct measurement;

/*
 * Account one poll of a source in its line of the report: ret is 0 for the
 * measurement m, or -errno with the reason err; -EAGAIN (the source held
 * the poll back, source.h) changes nothing. Returns true if m is new.
 */
bool source_report_poll(struct source_report *s, int ret,
			const struct measurement *m, const char *err);

/*
 * The poll just accounted measured, but its measurement is of no use (on
 * another timescale, with no UTC offset to convert it): a failure, err why.
 */
void source_report_unusable(struct source_report *s, const char *err);

/* "selected", "candidate", "falseticker", "unreachable", "init" */
const char *source_state_name(enum source_state s);
/* chronyc's one-character state: '*', '+', 'x', '?', ' ' */
char source_state_char(enum source_state s);
/* "unsynced", "synced", "holdover" */
const char *lclk_status_name(uint32_t status);

#endif /* LCLK_DAEMON_REPORT_H */
