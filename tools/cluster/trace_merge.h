/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/cluster/: other subsystems include this header.
 *
 * lclkctl trace merge: the Perfetto traces of many hosts (lclkctl trace
 * --trace-out, the Python recorder) onto one timeline, with a process
 * track per host, each event's [earliest, latest] window from the bound
 * its host recorded with it, and an arrow from each TCP send to the
 * receive that took its last byte.
 *
 * Streaming: every input is read in file order, which is the order events
 * ended in (give or take the ring buffer's per-CPU jitter, which a small
 * per-input reorder heap absorbs), and the inputs are merged k-way by end
 * time. What is held at once is one read buffer per input, the events of
 * the last --window (so that a receive stamped before its send on a
 * clock that runs ahead still gets its arrow) and the sends not yet
 * received: never the whole cluster's trace.
 */
#ifndef LCLK_TRACE_MERGE_H
#define LCLK_TRACE_MERGE_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster_match.h"
#include "cluster_round.h"
#include "cluster_wait.h"

/* Message records, as lclkctl trace --messages writes them. */
#define MSG_CATEGORY	"tcp"
#define MSG_SEND	"tcp_send"
#define MSG_RECV	"tcp_recv"
/* An endpoint's text with its NUL: "[IPv6]:port" fits. */
#define MSG_ENDPOINT_MAX	64

#define MERGE_DEFAULT_WINDOW_NS	250000000LL

struct merge_input_stats {
	char *name;			/* host label: the file's name without .pftrace */
	uint64_t events;
	uint64_t late;			/* ended before one handed over already */
	bool logical;			/* timestamps in logical time */
	int64_t max_bound_ns;		/* CLUSTER_BOUND_UNKNOWN if none known */
};

struct merge_opts {
	int64_t window_ns;		/* 0: MERGE_DEFAULT_WINDOW_NS */
	int64_t link_ns;		/* 0: CLUSTER_DEFAULT_LINK_NS (cluster_wait.h) */
	int64_t block_ns;		/* a waiting call or TCP receive this long is a
					 * wait (0: 1 ms) */
};

struct merge_result {
	unsigned int ninputs;
	struct merge_input_stats *inputs;
	uint64_t events;
	uint64_t flows;			/* arrows written */
	int64_t first_ns, last_ns;	/* span of the merged timeline */
	struct cluster_match *match;
	struct cluster_wait *wait;
	struct cluster_round *rounds;	/* by collective: the recorder's slices */
	char **rank_names;		/* "host process", by cluster_wait's rank */
	uint32_t nranks;
};

/*
 * Merge the traces at paths into out (NULL: analyse only). Returns 0 or
 * -errno, with *err_path the file it concerns.
 */
int trace_merge(const char *const *paths, unsigned int n, const char *out,
		const struct merge_opts *o, struct merge_result *res,
		const char **err_path);

void merge_result_free(struct merge_result *res);

#endif /* LCLK_TRACE_MERGE_H */
