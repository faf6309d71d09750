/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * One configured source as the daemon runs it, as chrony's ntp_core.c runs
 * each source: its thread (source_runner.h), its own poll schedule, the
 * poll that is out and its latest measurement. A source is polled when its
 * own interval has passed and the source itself will take the poll (a
 * public NTP server's 64 s floor, a KoD RATE): "not due yet" is never a
 * failed poll. A reload keeps the whole of it, protocol state included, for
 * a source whose URL and options are unchanged.
 */
#ifndef LCLK_DAEMON_SOURCE_H
#define LCLK_DAEMON_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "sync/poll_sched.h"
#include "sync/source_runner.h"
#include "daemon_config.h"
#include "daemon_report.h"

struct daemon_source {
	struct source_runner runner;
	struct config_source cfg;
	struct source_opts opts;	/* its runner's, to compare at a reload */
	struct poll_sched sched;
	int64_t next_poll_ns;
	int64_t not_before_ns;		/* the source takes no poll before */
	bool out;			/* a poll is out, awaited until deadline_ns */
	int64_t deadline_ns;
	bool measured;			/* its first burst (iburst) is over */
	/*
	 * Its latest poll measured: m, and the reference's time at m.base_ns
	 * less m.base_ns, by the model of that moment. Against the clock as
	 * steered since, the offset is ref_minus_base_ns - (the model's
	 * logical time at m.base_ns - m.base_ns): the samples of all sources
	 * are compared on the clock of the moment, as chrony slews its
	 * stored samples when it adjusts the clock.
	 */
	bool valid;
	bool fresh;			/* m is new: not yet given to the servo */
	struct measurement m;
	int64_t ref_minus_base_ns;
	struct source_report report;
};

/*
 * Start source c's thread, due for a poll at now_ns. NULL with *err =
 * -errno on failure.
 */
struct daemon_source *dsrc_start(const struct config_source *c, const struct source_opts *opts,
				 const struct daemon_config *cfg, const struct target_clock *tc,
				 int wake_fd, int64_t now_ns, int *err);
/* Would a reload to c with opts keep s as it is (same URL, same options)? */
bool dsrc_same(const struct daemon_source *s, const struct config_source *c,
	       const struct source_opts *opts);
/* Take c's class and preference, and cfg's poll limits, keeping the rest. */
void dsrc_retune(struct daemon_source *s, const struct config_source *c,
		 const struct daemon_config *cfg);
void dsrc_stop(struct daemon_source *s);

/*
 * Ask for a measurement if one is due at now_ns: 1 if asked, 0 if none is
 * due, -EBUSY if the runner is still busy with an earlier poll (it misses
 * this one).
 */
int dsrc_poll(struct daemon_source *s, const struct daemon_config *cfg, int64_t now_ns);
/* The earliest of its next poll and the end of the poll that is out. */
int64_t dsrc_next_event(const struct daemon_source *s);
/* Schedule the next poll after a result at now_ns, with the schedule as it now is. */
void dsrc_schedule(struct daemon_source *s, int64_t now_ns);
/*
 * The clock was disturbed (a VM restore): poll at now_ns, or once the
 * source takes polls, then at the fast interval. A poll that is out is
 * left to end: its result is the caller's to drop, then call again.
 */
void dsrc_poll_now(struct daemon_source *s, int64_t now_ns);

#endif /* LCLK_DAEMON_SOURCE_H */
