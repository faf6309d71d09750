/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rounds by collective. The recorder (lclk.torch) writes a slice per
 * collective per rank, named by its process group and that group's
 * sequence number: equal (group, seq) on every rank is one collective, one
 * round. The waits cluster_wait attributes (each to the rank at the root
 * of its chain, proven or not) are put in the round of the waiter's slice
 * that holds the wait's end, and each round names its straggler: the root
 * the round's waits waited on longest.
 *
 * A wait ending within link_ns after the waiter's slice ended is still
 * that collective's when no slice of the rank holds it: the recorder
 * stamps an async collective's end when its completion callback runs,
 * which may be just before the thread that waited for it is woken.
 *
 * The verdict is certain only when the bounds prove that the straggler
 * came last: every wait of the round is rooted at it and proven (every
 * hop, as cluster_wait.h says), and every other rank of the collective
 * either waited so, or began its slice before the straggler began its
 * own by more than both clocks' bounds. Anything less is ambiguous (a
 * wait rooted elsewhere, an ordering inside the bounds, a bound unknown,
 * a rank that neither waited nor provably came first). A round without a
 * wait has no straggler: nobody was held up.
 *
 * A round is open while waits may still settle into it: until the merge
 * is two horizons past the last end of its slices (a wait settles one
 * horizon after it ends, and ends inside its slice). Then it is closed
 * into a small result; a slice of it arriving later (a rank stalled for
 * longer) is counted late, not reopened. Open rounds and per rank the
 * last few slices and unplaced waits are held; each closed round keeps
 * its result, sizeof(struct round_result) bytes.
 */
#ifndef LCLK_CLUSTER_ROUND_H
#define LCLK_CLUSTER_ROUND_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* The recorder's collective slices (python/lclk/torch.py). */
#define ROUND_CATEGORY	"lclk.collective"

enum round_verdict { ROUND_NO_WAIT, ROUND_CERTAIN, ROUND_AMBIGUOUS, ROUND_VERDICTS };

struct round_result {
	uint64_t seq;
	uint32_t group, op;		/* cluster_round_group() names them */
	uint32_t nranks;		/* ranks with a slice of it */
	uint32_t waits;			/* waits placed in it */
	int64_t waited_ns;		/* their total */
	int64_t begin_ns, end_ns;	/* its slices' first begin, last end */
	int64_t straggler;		/* a rank, -1 without a wait */
	enum round_verdict verdict;
};

/* A wait as cluster_wait settled it: counted as a round, rooted at root. */
struct settled_wait {
	uint32_t waiter, root;
	int64_t begin, end;
	bool proven;			/* every hop to the root beyond the bounds */
};

struct cluster_round;

struct cluster_round *cluster_round_new(int64_t horizon_ns, int64_t link_ns);
void cluster_round_free(struct cluster_round *cr);

/*
 * A group's or op's name, interned: its index. UINT32_MAX on -ENOMEM.
 * Names longer than 127 bytes are cut.
 */
uint32_t cluster_round_intern(struct cluster_round *cr, const uint8_t *name, size_t len);
const char *cluster_round_group(const struct cluster_round *cr, uint32_t idx);

/*
 * Rank's slice of collective (group, seq), in the order slices end, its
 * bounds at begin and end (CLUSTER_BOUND_UNKNOWN: unknown). 0 or -ENOMEM.
 */
int cluster_round_slice(struct cluster_round *cr, uint32_t rank, uint32_t group,
			uint32_t op, uint64_t seq, int64_t begin, int64_t end,
			int64_t bound_begin, int64_t bound_end);

/* A settled wait (cluster_wait's hook). 0 or -ENOMEM. */
int cluster_round_wait(struct cluster_round *cr, const struct settled_wait *w);

/* Close the rounds the merge, now at now_ns, is done with (INT64_MAX: all). */
int cluster_round_settle(struct cluster_round *cr, int64_t now_ns);

/* Closed rounds, in the order they closed. */
size_t cluster_round_count(const struct cluster_round *cr);
const struct round_result *cluster_round_get(const struct cluster_round *cr, size_t i);
/* Rounds of a verdict; of them, those whose straggler was rank. */
uint64_t cluster_round_total(const struct cluster_round *cr, enum round_verdict v);
uint64_t cluster_round_straggler_of(const struct cluster_round *cr, uint32_t rank,
				    enum round_verdict v);
/* Slices of a round already closed; settled waits in no slice of theirs. */
uint64_t cluster_round_late(const struct cluster_round *cr);
uint64_t cluster_round_unplaced(const struct cluster_round *cr);
/* Recorder processes the merge could not pair with one tracer process. */
uint64_t cluster_round_unpaired(const struct cluster_round *cr);
void cluster_round_count_unpaired(struct cluster_round *cr);

const char *round_verdict_name(enum round_verdict v);

#endif /* LCLK_CLUSTER_ROUND_H */
