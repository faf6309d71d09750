/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who waited on whom. A blocking interval of a rank (a waiting call the
 * tracer recorded: poll, epoll, select, recv, read, or a TCP receive that
 * lasted), counted from the rank's own last send (when it entered the
 * exchange; not a send that answers what ended the wait), is attributed
 * to the message that ended it: the first matched receive of that rank
 * ending within link_ns after it (or the receive itself) whose message
 * left before the block ended, the sender's clock taken as far ahead as
 * the traffic the other way allows (else the one that ended it was lost),
 * first by time, each taking its turn once the merge is horizon_ns past
 * link_ns before it (an earlier receive may be matched after it: its
 * send's record ends later);
 * a futex wait woken by another thread of the rank, to the receive of
 * that rank within link_ns before its end, looked for once the merge is
 * horizon_ns past the wait (that receive may be matched after the wait is
 * seen: its send's record ends later). A wait of a thread that idles by
 * design (CLUSTER_BLOCK_AUX: gloo's I/O thread in epoll, its workers on
 * futexes) is the rank's only while the rank's main thread is blocked
 * too. Its sender is the direct
 * cause; when the sender had itself just stopped waiting (it sent within
 * link_ns of the end of an attributed wait, or spent most of the time it
 * was waited on waiting itself) the blame passes along to that wait's
 * root, so that in a ring or a tree the rank everyone waited on is named,
 * not its neighbour. Roots are settled once the merge is horizon_ns past
 * a wait, in the order the waits ended: a sender's own wait may be
 * attributed after the wait it caused (its message reached the merge
 * late, stamped by a clock ahead).
 *
 * Each attribution is an ordering: "the message left after the wait began".
 * It is certain when the gap exceeds the two clocks' bounds at those
 * instants, ambiguous within them, and inconsistent when the message left
 * before the wait began by more than the bounds (a clock outside its
 * bound, or a wait that was for something else): counted on the sender.
 * A message that left in the first half of the wait, even at the bounds'
 * edge, kept the waiter waiting in transit (the network, the waiter's own
 * CPU), not by leaving late: counted on the waiter. Neither is a round,
 * nor passes blame.
 *
 * A wait charged through a chain to its root is as certain as its least
 * certain hop: certain only when every hop's ordering is (each message
 * left after the wait it ended began, beyond both clocks' bounds), else
 * ambiguous. The root is not proven to have held up the last waiter when
 * it is not proven to have held up the first.
 */
#ifndef LCLK_CLUSTER_WAIT_H
#define LCLK_CLUSTER_WAIT_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster_match.h"
#include "cluster_round.h"

#define CLUSTER_DEFAULT_LINK_NS	1000000LL

struct rank_wait {
	uint64_t blocks;		/* blocking intervals seen */
	uint64_t attributed;		/* ... attributed to a message */
	int64_t wait_ns;		/* time in attributed blocks */
	int64_t waited_on_ns;		/* others' blocked time rooted here */
	uint64_t last;			/* attributed blocks rooted here: rounds it came last */
	uint64_t certain, ambiguous;	/* of those */
	uint64_t inconsistent;		/* others' blocks ended by a message of
					 * its sent before they began, beyond
					 * the bounds: not in last */
	uint64_t transit;		/* its blocks on messages sent early in them */
	/* The stall report: the last message each way, and its bound. */
	int64_t last_send_ns, last_send_bound_ns;
	int64_t last_recv_ns, last_recv_bound_ns;
	bool sent, received;
};

struct cluster_wait;

struct cluster_wait *cluster_wait_new(int64_t link_ns, int64_t horizon_ns, int64_t min_ns);
void cluster_wait_free(struct cluster_wait *w);

/* A futex wait another thread ended. */
#define CLUSTER_BLOCK_WOKEN	1u
/*
 * A wait of a thread that idles by design, not the rank's main thread: an
 * event loop's (gloo's I/O thread, in epoll_wait from one collective to the
 * next) or a helper's woken futex (a gloo worker, a torch thread, woken
 * when the main thread hands it work). It is the rank's wait only where
 * the rank's main thread was blocked too (cluster_wait_main()), in a
 * waiting call that held its end, and from the later of their beginnings.
 */
#define CLUSTER_BLOCK_AUX	2u

/*
 * A blocking interval [begin, end] of rank, in the order they end (flags:
 * CLUSTER_BLOCK_*). Shorter than min_ns from the rank's last send, it is no
 * wait; one that overlaps the rank's previous one is the same wait, and
 * ignored. 0 or -ENOMEM.
 */
int cluster_wait_block(struct cluster_wait *w, uint32_t rank, int64_t begin,
		       int64_t end, int64_t bound_begin_ns, unsigned int flags);

/*
 * A waiting call [begin, end] of rank's main thread, of any length, in the
 * order they end: where the waits of its CLUSTER_BLOCK_AUX threads count.
 * 0 or -ENOMEM.
 */
int cluster_wait_main(struct cluster_wait *w, uint32_t rank, int64_t begin,
		      int64_t end, int64_t bound_begin_ns);

/* A message end seen (matched or not): the stall report. 0 or -ENOMEM. */
int cluster_wait_seen(struct cluster_wait *w, uint32_t rank, bool send,
		      int64_t t_ns, int64_t bound_ns);

#define CLUSTER_AHEAD_UNKNOWN	INT64_MAX

/*
 * A matched message: may end a block of the receiver, unless it left after
 * the block ended; held until the merge is horizon_ns past link_ns before
 * its receive, so that the earliest receive ends the block. ahead_ns: the most the
 * sender's clock can be ahead of the receiver's, as the traffic the other
 * way shows (the least receive minus send of the receiver's messages to
 * it), or CLUSTER_AHEAD_UNKNOWN.
 * Not the hosts' bounds: a clock outside its bound would lose its rounds.
 */
void cluster_wait_message(struct cluster_wait *w, const struct msg_end *send,
			  const struct msg_end *recv, int64_t ahead_ns);

/*
 * Settle the roots of the waits that ended before now_ns - horizon_ns
 * (INT64_MAX: all).
 */
void cluster_wait_settle(struct cluster_wait *w, int64_t now_ns);

/*
 * Called with each wait settled as a round (not inconsistent, not in
 * transit), its root found: cluster_round.h's rounds by collective. A
 * non-zero return is kept, cluster_wait_hook_err() gives the first.
 */
typedef int (*cluster_wait_fn)(void *ctx, const struct settled_wait *w);
void cluster_wait_set_hook(struct cluster_wait *w, cluster_wait_fn fn, void *ctx);
int cluster_wait_hook_err(const struct cluster_wait *w);

/* Ranks seen so far (their indexes are the callers'). */
uint32_t cluster_wait_nranks(const struct cluster_wait *w);
const struct rank_wait *cluster_wait_rank(const struct cluster_wait *w, uint32_t rank);
/* Attributed blocks of all ranks, settled: the rounds. */
uint64_t cluster_wait_rounds(const struct cluster_wait *w);

#endif /* LCLK_CLUSTER_WAIT_H */
