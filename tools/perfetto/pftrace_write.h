/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * The merged trace's writer: tracks declared by the caller (processes and
 * threads with their descriptors, named tracks under a process), slices
 * that keep their original annotations as encoded and gain some, and flow
 * arrows. One packet sequence; event names and categories interned
 * (pftrace_intern.h). The packet before the first event declares the
 * timestamps' clock: CLOCK_ID_LOGICAL_GLOBAL (perfetto_proto.h), lclk's
 * logical time, related to BOOTTIME one to one by a ClockSnapshot at 0, so
 * that importers put it on their timeline as it is, and know it is not the
 * machine's BOOTTIME; or CLOCK_MONOTONIC, for traces in it.
 *
 * A flow starts on its sending slice's begin (flow_ids) and ends on its
 * receiving slice's end (terminating_flow_ids), or on the instant: a
 * receive that blocked began before the send, and Perfetto drops a
 * terminating id whose flow has not started yet in timestamp order.
 */
#ifndef LCLK_PFTRACE_WRITE_H
#define LCLK_PFTRACE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pftrace_writer;

struct pftrace_int_arg {
	const char *name;
	size_t name_len;
	int64_t val;
};

/* An arg named by a string literal, its length counted at compile time. */
#define PFTRACE_INT_ARG(lit, v)	((struct pftrace_int_arg){ lit, sizeof(lit) - 1, (v) })

/* The most int args an event takes. */
#define PFTRACE_MAX_ARGS	4

struct pftrace_event {
	uint64_t track;
	int64_t begin_ns, end_ns;
	int instant;			/* else a slice [begin, end] */
	const char *name;
	size_t name_len;
	const char *category;		/* NULL: none */
	size_t category_len;
	const uint8_t *annotations;	/* encoded DebugAnnotation fields (4) */
	size_t annotations_len;
	const struct pftrace_int_arg *args;
	unsigned int nargs;
	const uint64_t *flows_out;	/* arrows starting here */
	unsigned int nflows_out;
	const uint64_t *flows_in;	/* arrows ending here: at its end */
	unsigned int nflows_in;
};

/* NULL with errno set on failure. */
struct pftrace_writer *pftrace_writer_open(const char *path);

/* The clock of the timestamps (default: logical), before the first event. */
void pftrace_writer_clock(struct pftrace_writer *w, bool logical);

/* A named track under parent (0: none). 0 or -errno. */
int pftrace_track(struct pftrace_writer *w, uint64_t uuid, uint64_t parent,
		  const char *name);

/* A process's track (ProcessDescriptor: pid, process_name). 0 or -errno. */
int pftrace_process(struct pftrace_writer *w, uint64_t uuid, int32_t pid, const char *name);

/* A thread's track (ThreadDescriptor: pid, tid, thread_name). 0 or -errno. */
int pftrace_thread(struct pftrace_writer *w, uint64_t uuid, int32_t pid, int64_t tid,
		   const char *name);

/*
 * 0 or -errno: -EMSGSIZE for a packet larger than the output buffer,
 * -EINVAL for more than PFTRACE_MAX_ARGS args.
 */
int pftrace_event(struct pftrace_writer *w, const struct pftrace_event *e);

/* Flush and close; 0 or the first error. */
int pftrace_writer_close(struct pftrace_writer *w);

#endif /* LCLK_PFTRACE_WRITE_H */
