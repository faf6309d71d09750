// SPDX-License-Identifier: GPL-2.0
/*
 * The chained-wait scenario's truth check (issue 30 #9), through the
 * cluster view's wait attribution (tools/cluster/cluster_wait.c, as
 * lclkctl trace merge drives it): chains of HOPS waits, rank k waiting
 * from T0 for rank k + 1, which forwards 100 us after its own wait ends;
 * the root, rank HOPS, sends 10 ms after T0. One hop's sender, INSIDE,
 * claims a 20 ms bound and its clock is truly 15 ms ahead (within its
 * bound): that message truly left 5 ms before the wait it ended began.
 *
 *	cluster_chain CHAINS
 *
 * Truth: the generated true times. A wait of rank k is truly rooted at
 * rank HOPS only if every hop from k to the root truly left after its
 * wait began; the waits through hop INSIDE are not. A certain verdict
 * charged to the root beyond the truly rooted waits is a violation.
 * Why the fault cannot move it: the true times are the generator's; the
 * fault (a long chain with one loose hop) is in what the stamps say.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cluster/cluster_wait.h"

#define US	1000LL
#define MS	1000000LL
#define T0	(1000 * MS)

int main(int argc, char **argv)
{
	long chains = argc > 1 ? atol(argv[1]) : 1000, readings = 0, violations = 0, i;

	srandom(30);
	for (i = 0; i < chains; i++) {
		int hops = 2 + (int)(random() % 3), inside = (int)(random() % hops), j;
		struct cluster_wait *w = cluster_wait_new(MS, 0, 0);
		const struct rank_wait *root;
		long truly = 0;

		if (!w)
			return 1;
		for (j = hops; j >= 1; j--) {
			int64_t sent = T0 + 10 * MS + (hops - j) * 200 * US;
			bool loose = j - 1 == inside;
			struct msg_end s = { .host = j, .rank = j, .t_ns = sent,
					     .bound_ns = loose ? 20 * MS : 10 * US };
			struct msg_end r = { .host = j - 1, .rank = j - 1,
					     .t_ns = sent + 100 * US, .bound_ns = 10 * US };

			cluster_wait_block(w, j - 1, T0, sent + 100 * US, 10 * US, false);
			cluster_wait_message(w, &s, &r, CLUSTER_AHEAD_UNKNOWN);
		}
		cluster_wait_settle(w, INT64_MAX);
		/* waits of ranks inside + 1 .. hops - 1: every hop truly after */
		truly = hops - 1 - inside;
		root = cluster_wait_rank(w, hops);
		readings += hops;
		if (root && (long)root->certain > truly) {
			violations += (long)root->certain - truly;
			if (violations <= 20)
				printf("VIOLATION cluster_chain hops=%d loose_hop=%d certain=%llu truly_rooted=%ld\n",
				       hops, inside, (unsigned long long)root->certain, truly);
		}
		cluster_wait_free(w);
	}
	printf("START cluster_chain verdicts\n");
	printf("READER cluster_chain verdicts readings %ld synced %ld violations %ld max_err_over_bound 0 max_err_ns 0\n",
	       readings, readings, violations);
	return 0;
}
