/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * A Perfetto trace writer (protobuf TrackEvent): slices on one track per
 * thread, under a track per process, under a track per host.
 *
 * Files from several hosts open together (cat them into one file: a trace
 * is a sequence of packets): the tracks carry names, not pids (the trace
 * processor merges processes with equal pids, and hosts have equal pids),
 * and their uuids and the packet sequence id derive from the host name.
 *
 * The first packet declares the clock of the timestamps: lclk's logical
 * time is a clock of the sequence's own (id 64), declared equal to the
 * trace's BOOTTIME, so that every host's logical time lands on one
 * timeline; CLOCK_MONOTONIC is itself, related to BOOTTIME by a reading of
 * both.
 */
#ifndef LCLK_PERFETTO_H
#define LCLK_PERFETTO_H

#include <stdbool.h>
#include <stdint.h>

struct perfetto;

/* A debug annotation: str, or val when str is NULL. */
struct perfetto_arg {
	const char *name;
	const char *str;
	int64_t val;
};

struct perfetto_slice {
	uint32_t pid, tid;
	const char *thread_name;
	const char *category;	/* NULL: "syscall" */
	const char *name;
	int64_t start_ns, end_ns;
	const struct perfetto_arg *args;
	unsigned int nargs;
};

/* The clock slice times are in. */
struct perfetto_clock {
	bool logical;		/* lclk's logical time, else CLOCK_MONOTONIC */
	int64_t now_ns;		/* logical: the time now */
};

/* Create path (truncating it). NULL with errno set on failure. */
struct perfetto *perfetto_open(const char *path, const char *host,
			       const struct perfetto_clock *clock);

/*
 * Append one slice; the first slice of a thread also declares its track
 * (and its process's, named after /proc/PID/comm when the process is still
 * there, and its host's). Returns 0 or -errno.
 */
int perfetto_slice(struct perfetto *p, const struct perfetto_slice *s);

/* Flush and close; 0 or -errno (a write error anywhere). */
int perfetto_close(struct perfetto *p);

#endif /* LCLK_PERFETTO_H */
