// SPDX-License-Identifier: GPL-2.0
/*
 * Synthetic cluster traces for the merge benchmark: HOSTS files in DIR,
 * written by lclkctl trace's own Perfetto writer, of a ring allreduce run
 * ROUNDS times. Per host and round: the send to the next host and the
 * receive from the previous one as message records (in two chunks each,
 * as a ring's steps come), the poll the receiver blocked in, and a
 * collective slice as the Python recorder writes one; clocks off by up
 * to their bound.
 *
 *	cluster_gen DIR HOSTS ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>

#include "perfetto/perfetto.h"
#include "cluster/trace_merge.h"

#define US	1000LL
#define CHUNK	65536u

struct host {
	struct perfetto *pf;
	char addr[32];
	int64_t offset, bound;
	uint32_t seq_out, seq_in;
};

static int slice(struct host *h, const char *cat, const char *name, int64_t begin,
		 int64_t end, const struct perfetto_arg *args, unsigned int nargs,
		 uint32_t tid)
{
	struct perfetto_slice s = {
		.pid = 4242, .tid = tid, .thread_name = tid == 4242 ? "python3" : "nccl-net",
		.category = cat, .name = name,
		.start_ns = begin + h->offset, .end_ns = end + h->offset,
		.args = args, .nargs = nargs,
	};

	return perfetto_slice(h->pf, &s);
}

static int message(struct host *h, struct host *peer, bool send, int64_t begin,
		   int64_t end, uint32_t seq)
{
	struct perfetto_arg args[] = {
		{ .name = "src", .str = send ? h->addr : peer->addr },
		{ .name = "dst", .str = send ? peer->addr : h->addr },
		{ .name = "seq", .val = seq },
		{ .name = "len", .val = CHUNK },
		{ .name = "bound_begin_ns", .val = h->bound },
		{ .name = "bound_end_ns", .val = h->bound },
	};

	return slice(h, MSG_CATEGORY, send ? MSG_SEND : MSG_RECV, begin, end, args, 6, 4243);
}

int main(int argc, char **argv)
{
	struct perfetto_clock clock = { .logical = true, .now_ns = 0 };
	struct host *hosts;
	int n, rounds, r, i, c, err = 0;
	char path[512], name[32];

	if (argc != 4 || (n = atoi(argv[2])) < 2 || (rounds = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: cluster_gen DIR HOSTS ROUNDS\n");
		return 2;
	}
	hosts = calloc(n, sizeof(*hosts));
	srandom(1);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "node%02d", i);
		snprintf(path, sizeof(path), "%s/%s.pftrace", argv[1], name);
		snprintf(hosts[i].addr, sizeof(hosts[i].addr), "10.0.%d.%d:%d", i / 250, i % 250 + 1,
			 40000 + i);
		hosts[i].bound = 20 * US + random() % (30 * US);
		hosts[i].offset = random() % (2 * hosts[i].bound) - hosts[i].bound;
		hosts[i].pf = perfetto_open(path, name, &clock);
		if (!hosts[i].pf) {
			perror(path);
			return 1;
		}
	}
	/* Per host, events are written in the order they end, as lclkctl does. */
	for (r = 0; r < rounds && !err; r++) {
		int64_t t = 1000000000LL + r * 2000 * US;

		for (i = 0; i < n && !err; i++) {
			struct host *h = &hosts[i], *next = &hosts[(i + 1) % n];
			struct host *prev = &hosts[(i + n - 1) % n];
			int64_t jitter = random() % (20 * US), begin = t + jitter;
			struct perfetto_arg coll[] = {
				{ .name = "seq", .val = r }, { .name = "rank", .val = i },
				{ .name = "group", .str = "default" },
				{ .name = "bound_begin_ns", .val = h->bound },
				{ .name = "bound_end_ns", .val = h->bound },
			};
			struct perfetto_arg poll[] = {
				{ .name = "outcome", .str = "data" }, { .name = "fd", .val = 7 },
				{ .name = "bound_begin_ns", .val = h->bound },
				{ .name = "bound_end_ns", .val = h->bound },
			};

			for (c = 0; c < 2 && !err; c++) {
				int64_t s = begin + c * 400 * US;

				err = message(h, next, true, s, s + 30 * US, h->seq_out);
				h->seq_out += CHUNK;
				/* the previous host's chunk left at about the same time */
				err = err ?: slice(h, "syscall", "poll", s + 30 * US, s + 150 * US,
						   poll, 4, 4243);
				err = err ?: message(h, prev, false, s + 150 * US, s + 180 * US,
						     h->seq_in);
				h->seq_in += CHUNK;
			}
			err = err ?: slice(h, "lclk.collective", "allreduce", begin,
					   begin + 900 * US, coll, 5, 4242);
		}
	}
	for (i = 0; i < n; i++)
		err = perfetto_close(hosts[i].pf) ?: err;
	free(hosts);
	if (err)
		fprintf(stderr, "cluster_gen: write error %d\n", err);
	return !!err;
}
