/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/sync/: other subsystems include this header.
 *
 * One thread per configured source, so that a slow or dead source (a burst
 * of timeouts, a PTP port waiting for a master) never delays the others or
 * the daemon's loop. The loop asks for a measurement with runner_poll();
 * the thread opens the source if it is not open yet (an interface may come
 * up later), measures, stores the result and writes a byte to wake_fd.
 * Between polls it runs the source's idle op, if it has one, in slices of
 * RUNNER_IDLE_NS: a poll waits for the end of the slice. A paused runner
 * has no thread but keeps its source open, with the protocol state the
 * source keeps (an NTP server's spacing, a Kiss-o'-Death): a reload
 * pauses them all and resumes those whose configuration is unchanged.
 */
#ifndef LCLK_SOURCE_RUNNER_H
#define LCLK_SOURCE_RUNNER_H

#include <pthread.h>
#include <stdbool.h>

#include "lib/clock.h"
#include "source.h"

#define RUNNER_IDLE_NS	100000000LL

struct runner_result {
	int ret;			/* 0 or -errno of open/measure */
	struct measurement m;		/* when ret == 0 */
	char err[128];			/* when ret != 0 */
	int64_t not_before_ns;		/* the source takes no poll before (next_due) */
};

struct source_runner {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* under lock: */
	bool requested, busy, done, quit;
	struct runner_result result;
	/* the thread's own: */
	struct source src;
	bool open;
	bool running;			/* the thread exists */
	bool idle_failed;		/* until the next measurement */
	/*
	 * The vmclock's marker before any sample that the next measurement
	 * may use: as of the call, or for a source that uses samples from
	 * before it (samples_before), as of its opening, then of the end of
	 * each measurement.
	 */
	struct vmclock_mark mark;
	char url[256];
	struct source_opts opts;
	const struct target_clock *tc;
	int wake_fd;
};

/* Start the thread (the source is opened on the first poll). 0 or -errno. */
int runner_start(struct source_runner *r, const char *url,
		 const struct source_opts *opts, const struct target_clock *tc,
		 int wake_fd);
/*
 * Ask for one measurement; false if the previous one is still running. A
 * result of an earlier poll that was never collected is dropped.
 */
bool runner_poll(struct source_runner *r);
/* Take a finished result; false if none is waiting. */
bool runner_collect(struct source_runner *r, struct runner_result *out);
/* Stop the thread, waiting for a measurement in progress, and close. */
void runner_stop(struct source_runner *r);
/*
 * End the thread, waiting for a measurement in progress, but keep the
 * source open and a result not yet collected; runner_resume() starts a
 * new thread on them. 0 or -errno.
 */
void runner_pause(struct source_runner *r);
int runner_resume(struct source_runner *r);

#endif /* LCLK_SOURCE_RUNNER_H */
