// SPDX-License-Identifier: GPL-2.0
/*
 * Per rank, its last few collective slices (where a wait that settles
 * later finds its round) and its last few waits that no slice held yet
 * (a slice is handed over at its end, which may come after the wait
 * settled: an async collective completes late); the open rounds, found
 * by (group, seq) through a hash table (a job with many process groups
 * and fast collectives has thousands open); the closed rounds' results
 * and per rank its tally. Names are interned through a hash table too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_match.h"
#include "cluster_round.h"

#define SLICES	16
#define UNPLACED	8
#define NAME_MAX_LEN	127

struct rslice {
	uint64_t seq;
	uint32_t group;
	int64_t begin, end;
};

struct participant {
	uint32_t rank;
	int64_t begin, bound_begin;
};

struct rwait {
	uint32_t waiter, root;
	int64_t wait_ns;
	bool proven;
};

struct round {
	uint64_t seq;
	uint32_t group, op;
	int64_t begin, end;
	struct participant *parts;
	uint32_t nparts, parts_cap;
	struct rwait *waits;
	uint32_t nwaits, waits_cap;
};

struct rank_rounds {
	struct rslice slices[SLICES];	/* a ring, last at nslices - 1 */
	unsigned int nslices;
	struct settled_wait unplaced[UNPLACED];	/* oldest first */
	unsigned int nunplaced;
	uint64_t straggler[ROUND_VERDICTS];
};

struct cluster_round {
	int64_t horizon_ns, link_ns;
	char **names;
	size_t nnames, names_cap;
	uint32_t *name_idx;		/* open addressing: name index + 1, 0: free */
	size_t name_idx_cap;		/* a power of two, over twice nnames */
	uint32_t *open_idx;		/* the same, of open rounds by (group, seq) */
	size_t open_idx_cap;
	struct rank_rounds *ranks;
	uint32_t nranks;
	struct round *open;		/* in the order their first slice ended */
	size_t nopen, open_cap;
	struct round_result *done;
	size_t ndone, done_cap;
	uint64_t total[ROUND_VERDICTS];
	uint64_t late, unplaced, unpaired;
};

struct cluster_round *cluster_round_new(int64_t horizon_ns, int64_t link_ns)
{
	struct cluster_round *cr = calloc(1, sizeof(*cr));

	if (cr) {
		cr->horizon_ns = horizon_ns;
		cr->link_ns = link_ns;
	}
	return cr;
}

/* w ends inside s, or (late) within link_ns after s ended. */
static bool holds(const struct cluster_round *cr, int64_t begin, int64_t end,
		  const struct settled_wait *w, bool late)
{
	if (!late)
		return w->end >= begin && w->end <= end;
	return w->end > end && (__int128)w->end - end <= cr->link_ns;
}

static void round_free(struct round *r)
{
	free(r->parts);
	free(r->waits);
}

void cluster_round_free(struct cluster_round *cr)
{
	size_t i;

	if (!cr)
		return;
	for (i = 0; i < cr->nnames; i++)
		free(cr->names[i]);
	free(cr->names);
	free(cr->name_idx);
	free(cr->open_idx);
	free(cr->ranks);
	for (i = 0; i < cr->nopen; i++)
		round_free(&cr->open[i]);
	free(cr->open);
	free(cr->done);
	free(cr);
}

/* Grow *v (of *cap elements of size) to hold n + 1. */
static int grow(void **v, size_t size, size_t n, size_t *cap)
{
	size_t c = *cap ? 2 * *cap : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*v, c * size);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

static int grow32(void **v, size_t size, uint32_t n, uint32_t *cap)
{
	size_t c = *cap;
	int err;

	if (c >= UINT32_MAX / 2)
		return -ENOMEM;
	err = grow(v, size, n, &c);
	*cap = (uint32_t)c;
	return err;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	while (n--)
		h = (h ^ *p++) * 0x100000001b3ULL;
	return h;
}

static uint64_t hash_round(uint32_t group, uint64_t seq)
{
	uint64_t x = seq * 0x9e3779b97f4a7c15ULL ^ group;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	return x ^ (x >> 31);
}

/* A table of cap (a power of two) slots, over twice n: 0 or -ENOMEM. */
static int table_room(uint32_t **t, size_t *cap, size_t n)
{
	size_t c = *cap ? *cap : 16;
	uint32_t *nt;

	while (2 * (n + 1) > c)
		c *= 2;
	if (c == *cap)
		return 0;
	nt = calloc(c, sizeof(*nt));
	if (!nt)
		return -ENOMEM;
	free(*t);
	*t = nt;
	*cap = c;
	return 1;	/* emptied: the caller fills it again */
}

static void name_insert(struct cluster_round *cr, size_t idx)
{
	const char *s = cr->names[idx];
	size_t i = hash_bytes((const uint8_t *)s, strlen(s)) & (cr->name_idx_cap - 1);

	while (cr->name_idx[i])
		i = (i + 1) & (cr->name_idx_cap - 1);
	cr->name_idx[i] = (uint32_t)idx + 1;
}

uint32_t cluster_round_intern(struct cluster_round *cr, const uint8_t *name, size_t len)
{
	size_t i, k;
	char *s;
	int err;

	if (len > NAME_MAX_LEN)
		len = NAME_MAX_LEN;
	for (i = cr->name_idx_cap ? hash_bytes(name, len) & (cr->name_idx_cap - 1) : 0;
	     cr->name_idx_cap && cr->name_idx[i]; i = (i + 1) & (cr->name_idx_cap - 1)) {
		const char *n = cr->names[cr->name_idx[i] - 1];

		if (!strncmp(n, (const char *)name, len) && !n[len])
			return cr->name_idx[i] - 1;
	}
	if (cr->nnames >= UINT32_MAX - 1 ||
	    grow((void **)&cr->names, sizeof(*cr->names), cr->nnames, &cr->names_cap))
		return UINT32_MAX;
	err = table_room(&cr->name_idx, &cr->name_idx_cap, cr->nnames);
	if (err < 0)
		return UINT32_MAX;
	if (err)
		for (k = 0; k < cr->nnames; k++)
			name_insert(cr, k);
	s = malloc(len + 1);
	if (!s)
		return UINT32_MAX;
	memcpy(s, name, len);
	s[len] = 0;
	cr->names[cr->nnames] = s;
	name_insert(cr, cr->nnames);
	return (uint32_t)cr->nnames++;
}

const char *cluster_round_group(const struct cluster_round *cr, uint32_t idx)
{
	return idx < cr->nnames ? cr->names[idx] : "?";
}

static struct rank_rounds *rank_get(struct cluster_round *cr, uint32_t rank)
{
	if (rank >= cr->nranks) {
		uint32_t n = rank + 16;
		struct rank_rounds *r;

		if (rank >= UINT32_MAX - 16)
			return NULL;
		r = realloc(cr->ranks, n * sizeof(*r));
		if (!r)
			return NULL;
		memset(r + cr->nranks, 0, (n - cr->nranks) * sizeof(*r));
		cr->ranks = r;
		cr->nranks = n;
	}
	return &cr->ranks[rank];
}

static struct round *open_round(struct cluster_round *cr, uint32_t group, uint64_t seq)
{
	size_t i, mask = cr->open_idx_cap - 1;

	if (!cr->open_idx_cap)
		return NULL;
	for (i = hash_round(group, seq) & mask; cr->open_idx[i]; i = (i + 1) & mask) {
		struct round *r = &cr->open[cr->open_idx[i] - 1];

		if (r->group == group && r->seq == seq)
			return r;
	}
	return NULL;
}

static void open_insert(struct cluster_round *cr, size_t idx)
{
	size_t mask = cr->open_idx_cap - 1;
	size_t i = hash_round(cr->open[idx].group, cr->open[idx].seq) & mask;

	while (cr->open_idx[i])
		i = (i + 1) & mask;
	cr->open_idx[i] = (uint32_t)idx + 1;
}

/* The table of open rounds again, from scratch: after they moved. */
static void open_reindex(struct cluster_round *cr)
{
	size_t i;

	if (!cr->open_idx_cap)
		return;
	memset(cr->open_idx, 0, cr->open_idx_cap * sizeof(*cr->open_idx));
	for (i = 0; i < cr->nopen; i++)
		open_insert(cr, i);
}

/* Whether (group, seq) was closed already: among the last closed. */
static bool closed_round(const struct cluster_round *cr, uint32_t group, uint64_t seq)
{
	size_t i;

	for (i = cr->ndone; i > 0 && cr->ndone - i < 4096; i--)
		if (cr->done[i - 1].group == group && cr->done[i - 1].seq == seq)
			return true;
	return false;
}

static int place(struct round *r, const struct settled_wait *w)
{
	if (grow32((void **)&r->waits, sizeof(*r->waits), r->nwaits, &r->waits_cap))
		return -ENOMEM;
	r->waits[r->nwaits++] = (struct rwait){
		.waiter = w->waiter,
		.root = w->root,
		.wait_ns = w->end - w->begin,
		.proven = w->proven,
	};
	return 0;
}

int cluster_round_slice(struct cluster_round *cr, uint32_t rank, uint32_t group,
			uint32_t op, uint64_t seq, int64_t begin, int64_t end,
			int64_t bound_begin, int64_t bound_end)
{
	struct rank_rounds *rr = rank_get(cr, rank);
	struct round *r;
	unsigned int i, kept;
	uint32_t j;

	(void)bound_end;
	if (!rr)
		return -ENOMEM;
	if (end < begin)
		return 0;	/* no slice: a writer's error */
	r = open_round(cr, group, seq);
	if (!r && closed_round(cr, group, seq)) {
		cr->late++;
		return 0;
	}
	if (!r) {
		int err;

		if (cr->nopen >= UINT32_MAX - 1 ||
		    grow((void **)&cr->open, sizeof(*cr->open), cr->nopen, &cr->open_cap))
			return -ENOMEM;
		err = table_room(&cr->open_idx, &cr->open_idx_cap, cr->nopen);
		if (err < 0)
			return err;
		if (err)
			open_reindex(cr);
		r = &cr->open[cr->nopen];
		*r = (struct round){ .seq = seq, .group = group, .op = op,
				     .begin = begin, .end = end };
		open_insert(cr, cr->nopen++);
	}
	for (j = 0; j < r->nparts; j++)
		if (r->parts[j].rank == rank)
			return 0;	/* recorded twice: the first counts */
	if (grow32((void **)&r->parts, sizeof(*r->parts), r->nparts, &r->parts_cap))
		return -ENOMEM;
	r->parts[r->nparts++] = (struct participant){ rank, begin, bound_begin };
	if (begin < r->begin)
		r->begin = begin;
	if (end > r->end)
		r->end = end;
	rr->slices[rr->nslices++ % SLICES] = (struct rslice){ seq, group, begin, end };
	/* The rank's waits that settled before their slice was seen. */
	for (i = kept = 0; i < rr->nunplaced; i++) {
		const struct settled_wait *w = &rr->unplaced[i];

		if (holds(cr, begin, end, w, false) || holds(cr, begin, end, w, true)) {
			if (place(r, w))
				return -ENOMEM;
		} else {
			rr->unplaced[kept++] = *w;
		}
	}
	rr->nunplaced = kept;
	return 0;
}

int cluster_round_wait(struct cluster_round *cr, const struct settled_wait *w)
{
	struct rank_rounds *rr = rank_get(cr, w->waiter);
	unsigned int i, late;

	if (!rr)
		return -ENOMEM;
	/* A slice that holds it, else one that ended just before it did. */
	for (late = 0; late < 2; late++)
		for (i = rr->nslices; i > 0 && rr->nslices - i < SLICES; i--) {
			const struct rslice *s = &rr->slices[(i - 1) % SLICES];
			struct round *r;

			if (!holds(cr, s->begin, s->end, w, late))
				continue;
			r = open_round(cr, s->group, s->seq);
			if (!r) {
				cr->unplaced++;		/* its round closed already */
				return 0;
			}
			return place(r, w);
		}
	if (rr->nunplaced == UNPLACED) {	/* the oldest found no slice */
		memmove(rr->unplaced, rr->unplaced + 1, --rr->nunplaced * sizeof(*rr->unplaced));
		cr->unplaced++;
	}
	rr->unplaced[rr->nunplaced++] = *w;
	return 0;
}

static const struct participant *part_of(const struct round *r, uint32_t rank)
{
	uint32_t i;

	for (i = 0; i < r->nparts; i++)
		if (r->parts[i].rank == rank)
			return &r->parts[i];
	return NULL;
}

static bool waited(const struct round *r, uint32_t rank)
{
	uint32_t i;

	for (i = 0; i < r->nwaits; i++)
		if (r->waits[i].waiter == rank)
			return true;
	return false;
}

/* p began its slice before s began its own, beyond both bounds. */
static bool began_before(const struct participant *p, const struct participant *s)
{
	int64_t eps = cluster_bound_sum(p->bound_begin, s->bound_begin);

	return eps != CLUSTER_BOUND_UNKNOWN && (__int128)s->begin - p->begin > eps;
}

/* The root the round's waits waited on longest (the first on a tie). */
static uint32_t longest_root(const struct round *r, int64_t *total)
{
	uint32_t best = r->waits[0].root, i, k;
	__int128 best_ns = -1;

	for (i = 0; i < r->nwaits; i++) {
		__int128 ns = 0;

		for (k = 0; k < r->nwaits; k++)
			if (r->waits[k].root == r->waits[i].root)
				ns += r->waits[k].wait_ns;
		if (ns > best_ns) {
			best_ns = ns;
			best = r->waits[i].root;
		}
	}
	for (i = 0, *total = 0; i < r->nwaits; i++)
		if (*total <= INT64_MAX - r->waits[i].wait_ns)
			*total += r->waits[i].wait_ns;
	return best;
}

/*
 * Certain only when the bounds prove the straggler came last: every wait
 * rooted at it and proven, every other rank of the collective either one
 * of those waiters or provably earlier to begin its slice.
 */
static enum round_verdict verdict(const struct round *r, uint32_t s)
{
	const struct participant *sp = part_of(r, s);
	uint32_t i;

	for (i = 0; i < r->nwaits; i++)
		if (r->waits[i].root != s || !r->waits[i].proven)
			return ROUND_AMBIGUOUS;
	for (i = 0; i < r->nparts; i++) {
		const struct participant *p = &r->parts[i];

		if (p->rank == s || waited(r, p->rank))
			continue;
		if (!sp || !began_before(p, sp))
			return ROUND_AMBIGUOUS;
	}
	return ROUND_CERTAIN;
}

static int close_round(struct cluster_round *cr, struct round *r)
{
	struct round_result res = {
		.seq = r->seq, .group = r->group, .op = r->op,
		.nranks = r->nparts, .waits = r->nwaits,
		.begin_ns = r->begin, .end_ns = r->end,
		.straggler = -1, .verdict = ROUND_NO_WAIT,
	};
	struct rank_rounds *rr;

	if (r->nwaits) {
		uint32_t s = longest_root(r, &res.waited_ns);

		res.straggler = s;
		res.verdict = verdict(r, s);
		rr = rank_get(cr, s);
		if (!rr)
			return -ENOMEM;
		rr->straggler[res.verdict]++;
	}
	if (grow((void **)&cr->done, sizeof(*cr->done), cr->ndone, &cr->done_cap))
		return -ENOMEM;
	cr->done[cr->ndone++] = res;
	cr->total[res.verdict]++;
	return 0;
}

int cluster_round_settle(struct cluster_round *cr, int64_t now_ns)
{
	size_t i, kept = 0;
	uint32_t k;
	int err = 0;

	for (i = 0; i < cr->nopen; i++) {
		struct round *r = &cr->open[i];

		if (now_ns == INT64_MAX ||
		    (__int128)r->end + 2 * (__int128)cr->horizon_ns < now_ns) {
			err = err ?: close_round(cr, r);
			round_free(r);
		} else {
			cr->open[kept++] = *r;
		}
	}
	if (kept != cr->nopen) {
		cr->nopen = kept;
		open_reindex(cr);
	}
	if (now_ns == INT64_MAX)
		for (k = 0; k < cr->nranks; k++) {
			cr->unplaced += cr->ranks[k].nunplaced;
			cr->ranks[k].nunplaced = 0;
		}
	return err;
}

size_t cluster_round_count(const struct cluster_round *cr)
{
	return cr->ndone;
}

const struct round_result *cluster_round_get(const struct cluster_round *cr, size_t i)
{
	return &cr->done[i];
}

uint64_t cluster_round_total(const struct cluster_round *cr, enum round_verdict v)
{
	return cr->total[v];
}

uint64_t cluster_round_straggler_of(const struct cluster_round *cr, uint32_t rank,
				    enum round_verdict v)
{
	return rank < cr->nranks ? cr->ranks[rank].straggler[v] : 0;
}

uint64_t cluster_round_late(const struct cluster_round *cr)
{
	return cr->late;
}

uint64_t cluster_round_unplaced(const struct cluster_round *cr)
{
	return cr->unplaced;
}

uint64_t cluster_round_unpaired(const struct cluster_round *cr)
{
	return cr->unpaired;
}

void cluster_round_count_unpaired(struct cluster_round *cr)
{
	cr->unpaired++;
}

const char *round_verdict_name(enum round_verdict v)
{
	static const char *const names[] = {
		[ROUND_NO_WAIT] = "no wait",
		[ROUND_CERTAIN] = "certain",
		[ROUND_AMBIGUOUS] = "ambiguous",
	};

	return v < ROUND_VERDICTS ? names[v] : "?";
}
