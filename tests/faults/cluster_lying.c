// SPDX-License-Identifier: GPL-2.0
/*
 * The cluster scenario's traces (issue 30 #10): three hosts whose true
 * clock errors are known, written with lclkctl trace's own Perfetto writer
 * as cluster_gen does. node00 and node01 are honest (error within their
 * 10 us bound); node02 is 3 ms off while it claims 10 us: it lies. Each
 * pair exchanges ROUNDS messages each way, 50 us in flight; the first
 * message of each pair is sent while the sender is unsynced (bound
 * unknown), the fault: one such message switched the check off for the
 * whole trace.
 *
 *	cluster_lying DIR ROUNDS
 *
 * The truth is the generator's: the pairs with node02 lie, the other
 * does not. tests/faults/cluster_lying.sh compares lclkctl trace merge's
 * lying_pairs with it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfetto/perfetto.h"
#include "cluster/trace_merge.h"

#define US		1000LL
#define CHUNK		4096u
#define HOSTS		3
#define UNKNOWN		0x7fffffffffffffffLL

struct host {
	struct perfetto *pf;
	char addr[32];
	int64_t error, bound;
	uint32_t seq_out[HOSTS], seq_in[HOSTS];
};

/* One message from a to b sent at true time t, its ends stamped by each. */
static int message(struct host *h, int a, int b, int64_t t, int64_t bound_a)
{
	struct host *s = &h[a], *r = &h[b];
	struct perfetto_arg args[] = {
		{ .name = "src", .str = s->addr },
		{ .name = "dst", .str = r->addr },
		{ .name = "seq", .val = 0 },
		{ .name = "len", .val = CHUNK },
		{ .name = "bound_begin_ns", .val = 0 },
		{ .name = "bound_end_ns", .val = 0 },
	};
	struct perfetto_slice sl = {
		.pid = 4242, .tid = 4243, .thread_name = "nccl-net",
		.category = MSG_CATEGORY, .args = args, .nargs = 6,
	};
	int err;

	args[2].val = s->seq_out[b];
	args[4].val = args[5].val = bound_a;
	sl.name = MSG_SEND;
	sl.start_ns = t + s->error;
	sl.end_ns = t + 5 * US + s->error;
	err = perfetto_slice(s->pf, &sl);
	s->seq_out[b] += CHUNK;
	args[2].val = r->seq_in[a];
	args[4].val = args[5].val = r->bound;
	sl.name = MSG_RECV;
	sl.start_ns = t + 45 * US + r->error;
	sl.end_ns = t + 50 * US + r->error;
	r->seq_in[a] += CHUNK;
	return err ?: perfetto_slice(r->pf, &sl);
}

int main(int argc, char **argv)
{
	struct perfetto_clock clock = { .logical = true, .now_ns = 0 };
	static const int64_t error[HOSTS] = { 4 * US, -6 * US, 3000 * US };
	struct host h[HOSTS] = { 0 };
	int rounds, r, a, b, err = 0;
	char path[512], name[32];

	if (argc != 3 || (rounds = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: cluster_lying DIR ROUNDS\n");
		return 2;
	}
	for (a = 0; a < HOSTS; a++) {
		snprintf(name, sizeof(name), "node%02d", a);
		snprintf(path, sizeof(path), "%s/%s.pftrace", argv[1], name);
		snprintf(h[a].addr, sizeof(h[a].addr), "10.0.0.%d:%d", a + 1, 40000 + a);
		h[a].error = error[a];
		h[a].bound = 10 * US;
		h[a].pf = perfetto_open(path, name, &clock);
		if (!h[a].pf) {
			perror(path);
			return 1;
		}
	}
	/* per host, in the order the events end: one pair at a time */
	for (r = 0; r < rounds && !err; r++) {
		int64_t t = 1000000000LL + r * 1000 * US;

		for (a = 0; a < HOSTS; a++)
			for (b = 0; b < HOSTS; b++)
				if (a != b && !err)
					err = message(h, a, b, t + (a * HOSTS + b) * 100 * US,
						      r ? h[a].bound : UNKNOWN);
	}
	for (a = 0; a < HOSTS; a++)
		err = perfetto_close(h[a].pf) ?: err;
	if (err)
		fprintf(stderr, "cluster_lying: write error %d\n", err);
	return !!err;
}
