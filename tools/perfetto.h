/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A Perfetto trace writer (protobuf TrackEvent): slices on one track per
 * thread, grouped by process. Timestamps are written as given (lclkctl
 * trace gives logical time), in the trace's default clock domain.
 *
 * Files from several hosts open together (cat them into one file: a trace
 * is a sequence of packets): pids and tids are mapped into a range chosen
 * by a hash of the host name, (1 + hash % 511) << 22 | pid (Linux pids are
 * below 2^22), processes are named "HOST: COMM", and track uuids and the
 * packet sequence id are derived from the host name too.
 */
#ifndef LCLK_PERFETTO_H
#define LCLK_PERFETTO_H

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
	const char *name;
	int64_t start_ns, end_ns;
	const struct perfetto_arg *args;
	unsigned int nargs;
};

/* Create path (truncating it). NULL with errno set on failure. */
struct perfetto *perfetto_open(const char *path, const char *host);

/*
 * Append one slice; the first slice of a thread also declares its track
 * (and its process's, named after /proc/PID/comm when the process is still
 * there). Returns 0 or -errno.
 */
int perfetto_slice(struct perfetto *p, const struct perfetto_slice *s);

/* The pid (or tid) as written to the file. */
uint32_t perfetto_host_pid(const struct perfetto *p, uint32_t pid);

/* Flush and close; 0 or -errno (a write error anywhere). */
int perfetto_close(struct perfetto *p);

#endif /* LCLK_PERFETTO_H */
