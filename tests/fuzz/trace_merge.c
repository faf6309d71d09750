// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace merge on arbitrary bytes: the input twice, as two hosts
 * (so that its sends can match the other copy's receives), merged into
 * /dev/null. Whatever the bytes, no crash, and the counts add up: the
 * rounds by collective too (a straggler only where a wait was, one of the
 * ranks, every round of one verdict).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cluster/trace_merge.h"

static bool rounds_add_up(const struct merge_result *res)
{
	const struct cluster_round *cr = res->rounds;
	uint64_t sum = 0;
	size_t i;
	int v;

	for (v = 0; v < ROUND_VERDICTS; v++)
		sum += cluster_round_total(cr, v);
	if (sum != cluster_round_count(cr))
		return false;
	for (i = 0; i < cluster_round_count(cr); i++) {
		const struct round_result *r = cluster_round_get(cr, i);

		if ((r->verdict == ROUND_NO_WAIT) != (r->waits == 0) ||
		    (r->straggler < 0) != (r->waits == 0) || r->straggler >= res->nranks ||
		    !r->nranks)
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[2][64];
	const char *paths[2] = { path[0], path[1] }, *err_path;
	struct merge_result res;
	int fd[2], i;

	for (i = 0; i < 2; i++) {
		fd[i] = memfd_create("trace", 0);
		if (fd[i] < 0 || write(fd[i], data, size) != (ssize_t)size)
			abort();
		snprintf(path[i], sizeof(path[i]), "/proc/self/fd/%d", fd[i]);
	}
	if (!trace_merge(paths, 2, "/dev/null", NULL, &res, &err_path)) {
		const struct cluster_counts *c = cluster_counts(res.match);

		if (res.inputs[0].events + res.inputs[1].events != res.events ||
		    c->matched > c->recvs || res.flows > c->matched ||
		    cluster_wait_rounds(res.wait) > c->matched || !rounds_add_up(&res))
			abort();
	}
	merge_result_free(&res);
	close(fd[0]);
	close(fd[1]);
	return 0;
}
