/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * The daemon's synchronisation loop, apart from its I/O: polls each source
 * on its own schedule (daemon_source.h, one thread each), selects and picks
 * one over the sources' latest measurements (select.h, sync_policy.h),
 * feeds the selected source's samples to the servo as they come and writes
 * rate and bound to the module; holds over when no source is left. cmd_daemon.c drives it
 * from its event loop with daemon_next_event() and daemon_run_due().
 */
#ifndef LCLK_DAEMON_H
#define LCLK_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/clock.h"
#include "sync/servo.h"
#include "daemon_config.h"
#include "daemon_report.h"
#include "daemon_source.h"

struct daemon {
	struct daemon_config cfg;
	struct target_clock tc;		/* reads the clock through the mmap page */
	int fd;				/* the device, for changes */
	int lock_fd;			/* DAEMON_LOCK_DIR/NAME.lock, flocked */
	struct lclk_info info;
	uint32_t drift_ppb;		/* the oscillator's: configured or the module's */
	int64_t max_rate_ppt;		/* min(maxslew, the module's limit) */
	struct servo *servo;

	/* Each with its own poll schedule (daemon_source.h). */
	struct daemon_source *src[CONFIG_MAX_SOURCES];
	unsigned int nsrc;
	int wake[2];			/* runners write, the loop reads */

	int64_t correction_end_ns;	/* 0: the rate is the frequency alone */
	int64_t rate_before_ppt;	/* the clock's rate before its last change */
	int64_t rate_changed_ns;	/* when that change was made */
	unsigned int updates;		/* since start, for makestep's limit */
	bool no_source;			/* holding over */
	int64_t leap_at;		/* logical instant of the last leap set, 0: none */
	/*
	 * The vmclock's disruption marker as last seen (.vmclock: the VM has
	 * one), looked at on each wakeup and at least every
	 * DISRUPTION_CHECK_NS (watch_disruption()).
	 */
	struct vmclock_mark mark;
	int64_t next_mark_check_ns;
	struct daemon_report report;
};

/*
 * One daemon per device: two would steer it in turns. The lock is a file of
 * root's in a directory of root's, not the device node, which any user may
 * open and flock. $LCLK_LOCK_DIR overrides the directory (tests).
 */
#define DAEMON_LOCK_DIR	"/run/lclk"

/*
 * Open the device (and lock it: one daemon per device), apply the
 * configuration's holdover and drift. 0 or an exit code (cli.h) after a
 * logged message. daemon_start() then starts the source threads: between
 * the two, with no thread but the caller's, the caller drops privileges.
 */
int daemon_init(struct daemon *d, const struct daemon_config *cfg);
int daemon_start(struct daemon *d);
/* Stop the source threads and end the correction, before a reload. */
void daemon_stop_sources(struct daemon *d);
/* Take a new configuration (SIGHUP): sources, servo, schedule, limits. */
void daemon_reload(struct daemon *d, const struct daemon_config *cfg);
/* Stop the threads; the model stays, its rate without correction. */
void daemon_fini(struct daemon *d);

/* CLOCK_MONOTONIC of the next thing to do. */
int64_t daemon_next_event(const struct daemon *d);
/* Do what is due at now_ns (also after a wake-up from a runner). */
void daemon_run_due(struct daemon *d, int64_t now_ns);
/* Bring the report's clock fields up to date. */
const struct daemon_report *daemon_report(struct daemon *d);

int64_t daemon_now_ns(void);

#endif /* LCLK_DAEMON_H */
