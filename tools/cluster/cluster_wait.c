// SPDX-License-Identifier: GPL-2.0
/*
 * Per rank, the last few blocks still waiting for the message that ended
 * them (a poll is handed over before the receive that follows it; with a
 * clock running ahead, the match may come later still), the last few
 * matched receives that may end one of them, held until the merge is the
 * horizon past the link's time before them (the receive that ended it may
 * be matched after a later one: its send's record ends later), and the
 * last few matched receives no block took (a futex wait ends after the
 * receive that woke it), and its last few sends (where its waits begin);
 * then the
 * woken waits held until the receive that woke them has had its chance to
 * be matched, and the attributions waiting to be settled, both by the end
 * of their wait; then per rank its last settled attributions, where a
 * later wait looks up whether its sender had just been released.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_wait.h"

#define PENDING	8
#define RECENT	8
#define SETTLED	16
#define SENDS	8
#define MAINS	32
/* An auxiliary thread's wait waits for its rank's main thread this many horizons. */
#define AUX_HOLD	10

struct block {
	int64_t begin, end, bound_begin;
	bool aux;	/* CLUSTER_BLOCK_AUX */
};

enum verdict { CERTAIN, AMBIGUOUS, INCONSISTENT, TRANSIT };

/*
 * A wait and the message that ended it, root still to be found; the
 * verdict is given when it is settled, an auxiliary thread's wait cut to
 * its rank's main thread's blocked time first.
 */
struct attribution {
	int64_t begin, end, bound_begin;
	int64_t send_ns, send_bound_ns;
	uint32_t waiter, culprit;
	bool aux;
};

/*
 * A matched receive, the send it matched, and how far the sender's clock
 * may be ahead (cluster_wait_message()).
 */
struct received {
	int64_t t_ns;
	struct msg_end send;
	int64_t ahead_ns;
};

struct settled {
	int64_t begin, end;
	uint32_t root;
	bool proven;	/* every hop from the wait to its root: certain */
};

struct sent {
	int64_t t_ns, bound_ns;
};

/*
 * A woken wait, held until the merge is the horizon past its end, as the
 * attributions are: the receive that woke it may be matched after the wait
 * is seen (its send's record ends later in the merge's order: the sender's
 * clock ahead, a send call that lasted). Its rank's receives no block took
 * in (begin, end] and within link_ns of end, by time, and its rank's sends
 * in (begin, end) (where it begins), as they come. begin: its call's.
 */
struct woken {
	struct block b;
	uint32_t rank;
	struct received wakers[RECENT];	/* by time, the latest kept */
	unsigned int nwakers;
	struct sent sends[SENDS];	/* the latest kept */
	unsigned int nsends;
};

/* A waiting call of the rank's main thread. */
struct blocked {
	int64_t begin, end, bound_begin;
};

struct rank_state {
	struct rank_wait st;
	struct block pending[PENDING];	/* oldest first */
	unsigned int npending;
	struct received held[RECENT];	/* by time, the earliest first */
	unsigned int nheld;
	struct received recent[RECENT];	/* a ring, last at nrecent - 1 */
	unsigned int nrecent;
	struct sent sends[SENDS];	/* a ring, last at nsends - 1 */
	unsigned int nsends;
	int64_t last_begin, last_end;	/* the last block seen */
	struct settled settled[SETTLED];	/* a ring, last at nsettled - 1 */
	unsigned int nsettled;
	struct blocked mains[MAINS];	/* a ring, last at nmains - 1 */
	unsigned int nmains;
	int64_t main_seen;		/* the latest end of those */
};

struct cluster_wait {
	int64_t link_ns, horizon_ns, min_ns;
	struct rank_state *ranks;
	uint32_t nranks, cap;
	uint64_t rounds;
	struct woken *woken;		/* by end */
	size_t nwoken, woken_cap;
	struct attribution *attrs;	/* by end */
	size_t nattrs, attrs_cap;
	cluster_wait_fn hook;
	void *hook_ctx;
	int hook_err;
};

struct cluster_wait *cluster_wait_new(int64_t link_ns, int64_t horizon_ns, int64_t min_ns)
{
	struct cluster_wait *w = calloc(1, sizeof(*w));

	if (w) {
		w->link_ns = link_ns ? link_ns : CLUSTER_DEFAULT_LINK_NS;
		w->horizon_ns = horizon_ns;
		w->min_ns = min_ns;
	}
	return w;
}

void cluster_wait_free(struct cluster_wait *w)
{
	if (w) {
		free(w->ranks);
		free(w->woken);
		free(w->attrs);
	}
	free(w);
}

static struct rank_state *rank_get(struct cluster_wait *w, uint32_t rank)
{
	if (rank >= w->cap) {
		uint32_t cap = rank + 16;
		struct rank_state *r = realloc(w->ranks, cap * sizeof(*r));

		if (!r)
			return NULL;
		memset(r + w->cap, 0, (cap - w->cap) * sizeof(*r));
		w->ranks = r;
		w->cap = cap;
	}
	if (rank >= w->nranks)
		w->nranks = rank + 1;
	return &w->ranks[rank];
}

static void attribute(struct cluster_wait *w, uint32_t waiter, const struct block *b,
		      const struct msg_end *send);
static void take_oldest(struct cluster_wait *w, uint32_t rank);

/*
 * The receives no block took, in (begin, end] and within link_ns of end:
 * the latest, which woke the wait, and the time of the first (*first_ns):
 * the rank's sends after it answer it, they do not begin the wait.
 */
static const struct received *woke(const struct cluster_wait *w, const struct rank_state *r,
				   int64_t begin, int64_t end, int64_t *first_ns)
{
	const struct received *last = NULL;
	unsigned int i;

	for (i = r->nrecent; i > 0 && r->nrecent - i < RECENT; i--) {
		const struct received *m = &r->recent[(i - 1) % RECENT];

		if (m->t_ns > end)
			continue;
		if (m->t_ns <= begin || end - m->t_ns > w->link_ns)
			break;
		if (!last)
			last = m;
		*first_ns = m->t_ns;
	}
	return last;
}

/* The rank's latest send in (begin, before), NULL if none is remembered. */
static const struct sent *sent_within(const struct rank_state *r, int64_t begin, int64_t before)
{
	const struct sent *last = NULL;
	unsigned int i;

	for (i = 0; i < r->nsends && i < SENDS; i++) {
		const struct sent *s = &r->sends[i];

		if (s->t_ns > begin && s->t_ns < before && (!last || s->t_ns > last->t_ns))
			last = s;
	}
	return last;
}

/* Whether a receive at t_ns may have woken b: in (begin, end], within link_ns of end. */
static bool may_wake(const struct cluster_wait *w, const struct block *b, int64_t t_ns)
{
	return t_ns > b->begin && t_ns <= b->end && b->end - t_ns <= w->link_ns;
}

/*
 * Into v, *n of RECENT receives by time (the latest after an equal one);
 * when full, the oldest goes, into *gone. Whether one went.
 */
static bool add_by_time(struct received *v, unsigned int *n, const struct received *m,
			struct received *gone)
{
	bool full = *n == RECENT;
	unsigned int i;

	if (full) {
		if (m->t_ns < v[0].t_ns) {
			*gone = *m;
			return true;
		}
		*gone = v[0];
		memmove(v, v + 1, --*n * sizeof(*v));
	}
	for (i = *n; i > 0 && v[i - 1].t_ns > m->t_ns; i--)
		v[i] = v[i - 1];
	v[i] = *m;
	(*n)++;
	return full;
}

/* Into h's receives; the oldest goes: the latest woke it. */
static void add_waker(struct woken *h, const struct received *m)
{
	struct received gone;

	add_by_time(h->wakers, &h->nwakers, m, &gone);
}

/* Into h's sends, if in its wait; the earliest goes. */
static void add_send(struct woken *h, const struct sent *s)
{
	unsigned int i, earliest = 0;

	if (s->t_ns <= h->b.begin || s->t_ns >= h->b.end)
		return;
	if (h->nsends < SENDS) {
		h->sends[h->nsends++] = *s;
		return;
	}
	for (i = 1; i < SENDS; i++)
		if (h->sends[i].t_ns < h->sends[earliest].t_ns)
			earliest = i;
	if (s->t_ns > h->sends[earliest].t_ns)
		h->sends[earliest] = *s;
}

/*
 * Hold the woken wait call of rank, with the receives and sends the merge
 * has seen already, in the order of the waits' ends. 0 or -ENOMEM.
 */
static int hold_woken(struct cluster_wait *w, uint32_t rank, const struct block *call)
{
	const struct rank_state *r = &w->ranks[rank];
	struct woken *h;
	unsigned int i;
	size_t at;

	if (w->nwoken == w->woken_cap) {
		size_t cap = w->woken_cap ? 2 * w->woken_cap : 16;
		struct woken *v = realloc(w->woken, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->woken = v;
		w->woken_cap = cap;
	}
	for (at = w->nwoken; at > 0 && w->woken[at - 1].b.end > call->end; at--)
		;
	memmove(w->woken + at + 1, w->woken + at, (w->nwoken - at) * sizeof(*w->woken));
	w->nwoken++;
	h = &w->woken[at];
	*h = (struct woken){ .b = *call, .rank = rank };
	/* Oldest first: a ring's entries from nrecent - RECENT on. */
	for (i = r->nrecent > RECENT ? r->nrecent - RECENT : 0; i < r->nrecent; i++)
		if (may_wake(w, &h->b, r->recent[i % RECENT].t_ns))
			add_waker(h, &r->recent[i % RECENT]);
	for (i = 0; i < r->nsends && i < SENDS; i++)
		add_send(h, &r->sends[i]);
	return 0;
}

/*
 * A woken wait, the merge the horizon past its end: attributed to the
 * latest of its receives, from the rank's latest send before the first of
 * them (the sends after answer them), if that is still long enough a wait.
 * Without a receive, the one that woke it was not seen: no attribution.
 */
static void resolve_woken(struct cluster_wait *w, const struct woken *h)
{
	struct block b = h->b;
	const struct sent *s = NULL;
	int64_t answered;
	unsigned int i;

	if (!h->nwakers)
		return;
	answered = h->wakers[0].t_ns;
	for (i = 0; i < h->nsends; i++)
		if (h->sends[i].t_ns < answered && (!s || h->sends[i].t_ns > s->t_ns))
			s = &h->sends[i];
	if (s) {
		b.begin = s->t_ns;
		b.bound_begin = s->bound_ns;
	}
	if (b.end - b.begin < w->min_ns) {
		w->ranks[h->rank].st.blocks--;	/* no wait after all */
		return;
	}
	attribute(w, h->rank, &b, &h->wakers[h->nwakers - 1].send);
}

int cluster_wait_block(struct cluster_wait *w, uint32_t rank, int64_t begin,
		       int64_t end, int64_t bound_begin_ns, unsigned int flags)
{
	bool woken = flags & CLUSTER_BLOCK_WOKEN;
	struct block call = { begin, end, bound_begin_ns, flags & CLUSTER_BLOCK_AUX };
	struct rank_state *r = rank_get(w, rank);
	int64_t answered = end;
	const struct sent *s;
	struct block b;

	if (!r)
		return -ENOMEM;
	/*
	 * Woken from a futex by another thread of the rank, after it received.
	 * Until that receive is matched, a send in the link's time before the
	 * end may be what answers it.
	 */
	if (woken && !woke(w, r, begin, end, &answered))
		answered = end - w->link_ns;
	/*
	 * A rank waits from its own last send, when it entered the exchange:
	 * a thread of it that went idle earlier (gloo's I/O thread, in epoll
	 * from one collective to the next) idled while the rank computed. Not
	 * from a send after the receives that woke it: those answer them.
	 */
	s = sent_within(r, begin, answered);
	if (s) {
		begin = s->t_ns;
		bound_begin_ns = s->bound_ns;
	}
	if (end - begin < w->min_ns)
		return 0;
	/*
	 * The same wait seen twice: a TCP receive inside the recv call that
	 * made it (the receive ends first, and may be attributed already), or
	 * two threads of the rank waiting for the same message.
	 */
	if (r->st.blocks && begin <= r->last_end && end >= r->last_begin)
		return 0;
	r->last_begin = begin;
	r->last_end = end;
	r->st.blocks++;
	if (woken)	/* by the receive that woke it, once it has been matched */
		return hold_woken(w, rank, &call);
	b = (struct block){ begin, end, bound_begin_ns, flags & CLUSTER_BLOCK_AUX };
	/* Full: the rank's held receives take their turn now, before any block goes. */
	while (r->npending == PENDING && r->nheld)
		take_oldest(w, rank);
	if (r->npending == PENDING)	/* the oldest never found its message */
		memmove(r->pending, r->pending + 1, --r->npending * sizeof(*r->pending));
	r->pending[r->npending++] = b;
	return 0;
}

int cluster_wait_main(struct cluster_wait *w, uint32_t rank, int64_t begin,
		      int64_t end, int64_t bound_begin_ns)
{
	struct rank_state *r = rank_get(w, rank);

	if (!r)
		return -ENOMEM;
	r->mains[r->nmains++ % MAINS] = (struct blocked){ begin, end, bound_begin_ns };
	if (r->nmains == 1 || end > r->main_seen)
		r->main_seen = end;
	return 0;
}

int cluster_wait_seen(struct cluster_wait *w, uint32_t rank, bool send,
		      int64_t t_ns, int64_t bound_ns)
{
	struct rank_state *r = rank_get(w, rank);

	if (!r)
		return -ENOMEM;
	if (send) {
		struct sent s = { t_ns, bound_ns };
		size_t i;

		r->sends[r->nsends++ % SENDS] = s;
		for (i = 0; i < w->nwoken; i++)
			if (w->woken[i].rank == rank)
				add_send(&w->woken[i], &s);
	}
	if (send && (!r->st.sent || t_ns > r->st.last_send_ns)) {
		r->st.sent = true;
		r->st.last_send_ns = t_ns;
		r->st.last_send_bound_ns = bound_ns;
	} else if (!send && (!r->st.received || t_ns > r->st.last_recv_ns)) {
		r->st.received = true;
		r->st.last_recv_ns = t_ns;
		r->st.last_recv_bound_ns = bound_ns;
	}
	return 0;
}

/* Kept in order of the wait's end: matches come nearly in that order. */
static int add_attribution(struct cluster_wait *w, const struct attribution *a)
{
	size_t i;

	if (w->nattrs == w->attrs_cap) {
		size_t cap = w->attrs_cap ? 2 * w->attrs_cap : 64;
		struct attribution *v = realloc(w->attrs, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		w->attrs = v;
		w->attrs_cap = cap;
	}
	for (i = w->nattrs; i > 0 && w->attrs[i - 1].end > a->end; i--)
		w->attrs[i] = w->attrs[i - 1];
	w->attrs[i] = *a;
	w->nattrs++;
	return 0;
}

static void attribute(struct cluster_wait *w, uint32_t waiter, const struct block *b,
		      const struct msg_end *send)
{
	struct attribution a = {
		.begin = b->begin,
		.end = b->end,
		.bound_begin = b->bound_begin,
		.send_ns = send->t_ns,
		.send_bound_ns = send->bound_ns,
		.waiter = waiter,
		.culprit = send->rank,
		.aux = b->aux,
	};

	add_attribution(w, &a);
}

/*
 * The ordering of a wait [begin, ...) with bound bound_begin and the
 * message that ended it; *proven: the message left after the wait began,
 * beyond both bounds.
 */
static enum verdict judge(const struct attribution *a, int64_t begin, int64_t bound_begin,
			  bool *proven)
{
	/* In 128 bits: times and bounds of any int64 value, no sum wraps. */
	__int128 gap = (__int128)a->send_ns - begin;
	int64_t eps = cluster_bound_sum(a->send_bound_ns, bound_begin);

	*proven = eps != CLUSTER_BOUND_UNKNOWN && gap > eps;
	if (eps == CLUSTER_BOUND_UNKNOWN)
		return AMBIGUOUS;
	if (gap < -eps)
		return INCONSISTENT;
	if (2 * (gap + eps) < (__int128)a->end - begin)
		/* sent in the first half of the wait, even at the bounds' edge */
		return TRANSIT;
	return gap <= eps ? AMBIGUOUS : CERTAIN;
}

/*
 * An auxiliary thread's wait (gloo's I/O thread in epoll_wait, a worker
 * on a futex) is its rank's only while the rank's main thread was blocked
 * too, in a waiting call that held the wait's end: from the later of the
 * two beginnings. Else the thread idled while the rank slept or computed
 * (gloo's I/O thread from one collective to the next), and the message
 * that woke it kept nobody waiting. *begin, *bound_begin: where the wait
 * begins. Whether the rank's main thread was seen blocked so.
 */
static bool main_blocked(const struct rank_state *r, int64_t end, int64_t *begin,
			 int64_t *bound_begin)
{
	unsigned int i;

	for (i = r->nmains; i > 0 && r->nmains - i < MAINS; i--) {
		const struct blocked *m = &r->mains[(i - 1) % MAINS];

		if (m->begin > end || m->end < end)
			continue;
		if (m->begin > *begin) {
			*begin = m->begin;
			*bound_begin = m->bound_begin;
		}
		return true;
	}
	return false;
}

/*
 * Whether the message left after the wait ended, even if the sender's
 * clock is ahead_ns ahead: then it did not end it. The one that did was
 * not recorded (a tracer that lost the call), and the next receive is not
 * its stand-in.
 */
static bool sent_after(const struct msg_end *send, const struct block *b, int64_t ahead_ns)
{
	return ahead_ns != CLUSTER_AHEAD_UNKNOWN && send->t_ns - b->end > ahead_ns;
}

/*
 * The first of r's pending blocks that m may have ended (within link_ns
 * after it, its message not sent after it), npending if none.
 */
static unsigned int block_ended_by(const struct cluster_wait *w, const struct rank_state *r,
				   const struct received *m)
{
	unsigned int i;

	for (i = 0; i < r->npending; i++) {
		const struct block *b = &r->pending[i];

		if (m->t_ns >= b->end && m->t_ns - b->end <= w->link_ns &&
		    !sent_after(&m->send, b, m->ahead_ns))
			break;
	}
	return i;
}

/* A receive of rank no block took: for a wait woken by it, held already or ending later. */
static void add_recent(struct cluster_wait *w, uint32_t rank, const struct received *m)
{
	struct rank_state *r = &w->ranks[rank];
	size_t j;

	r->recent[r->nrecent++ % RECENT] = *m;
	for (j = 0; j < w->nwoken; j++)
		if (w->woken[j].rank == rank && may_wake(w, &w->woken[j].b, m->t_ns))
			add_waker(&w->woken[j], m);
}

/*
 * A matched receive of rank in its turn, by time: ends the first pending
 * block it may have ended, and any older one left unattributed is done
 * with; or no block.
 */
static void take(struct cluster_wait *w, uint32_t rank, const struct received *m)
{
	struct rank_state *r = &w->ranks[rank];
	unsigned int i = block_ended_by(w, r, m);
	struct block b;

	if (i == r->npending) {
		add_recent(w, rank, m);
		return;
	}
	b = r->pending[i];
	memmove(r->pending, r->pending + i + 1, (r->npending - i - 1) * sizeof(*r->pending));
	r->npending -= i + 1;
	attribute(w, rank, &b, &m->send);
}

/* The rank's earliest held receive, in its turn. */
static void take_oldest(struct cluster_wait *w, uint32_t rank)
{
	struct rank_state *r = &w->ranks[rank];
	struct received m = r->held[0];

	memmove(r->held, r->held + 1, --r->nheld * sizeof(*r->held));
	take(w, rank, &m);
}

/*
 * A receive that may end a pending block takes its turn once the merge is
 * the horizon past link_ns before it (due()): messages are matched as the later of their two
 * records reaches the merge, so an earlier receive of the rank, which
 * ended the block, may be matched after it (its send's record ends later:
 * a send call that lasted, the sender's clock ahead). Else its sender is
 * charged, maybe as certain. The last RECENT are held; an older one takes
 * its turn at once.
 */
void cluster_wait_message(struct cluster_wait *w, const struct msg_end *send,
			  const struct msg_end *recv, int64_t ahead_ns)
{
	struct received m = { recv->t_ns, *send, ahead_ns }, gone;
	struct rank_state *r;

	if (!rank_get(w, recv->rank) || !rank_get(w, send->rank))
		return;
	r = &w->ranks[recv->rank];
	if (block_ended_by(w, r, &m) == r->npending)
		add_recent(w, recv->rank, &m);
	else if (add_by_time(r->held, &r->nheld, &m, &gone))
		take(w, recv->rank, &gone);
}

/*
 * Whether the culprit's wait s, the last that ended before it sent, passes
 * the blame on: it sent within link_ns of that wait's end, or it spent at
 * least half of the time from the waiter's wait beginning to its send
 * waiting itself (on a loaded host a released rank may take long to send;
 * it was still not the one everybody waited on).
 */
static bool passes_blame(const struct cluster_wait *w, const struct attribution *a,
			 int64_t begin, const struct settled *s)
{
	int64_t from;

	if (a->send_ns - s->end <= w->link_ns)
		return true;
	if (a->send_ns <= begin)
		return false;
	from = s->begin > begin ? s->begin : begin;
	return s->end > from && 2 * (s->end - from) >= a->send_ns - begin;
}

/*
 * The culprit's own wait that ended just before it sent: its root, or
 * itself. a's wait begins at begin; *proven: whether the order of every
 * hop from a's wait to that root is proven beyond the bounds (a's own,
 * given in *proven, and the culprit's chain's).
 */
static uint32_t root_of(const struct cluster_wait *w, const struct attribution *a,
			int64_t begin, bool *proven)
{
	const struct rank_state *c = &w->ranks[a->culprit];
	unsigned int i;

	if (a->culprit == a->waiter)
		return a->culprit;
	for (i = c->nsettled; i > 0 && c->nsettled - i < SETTLED; i--) {
		const struct settled *s = &c->settled[(i - 1) % SETTLED];

		if (s->end > a->send_ns)
			continue;
		if (!passes_blame(w, a, begin, s))
			return a->culprit;
		*proven = *proven && s->proven;
		return s->root;
	}
	return a->culprit;
}

/*
 * Whether the fate of a, an auxiliary thread's wait, can be told: its
 * rank's main thread has been seen past the wait's end (its calls come
 * in order: one that held the end is known by then), or the merge is
 * far past it (a main thread that made no call since, or the end).
 */
static bool aux_ready(const struct cluster_wait *w, const struct attribution *a, int64_t now_ns)
{
	const struct rank_state *r = &w->ranks[a->waiter];

	return now_ns == INT64_MAX || (r->nmains && r->main_seen >= a->end) ||
	       (__int128)a->end < (__int128)now_ns - (__int128)AUX_HOLD * w->horizon_ns;
}

/*
 * Into the rank's settled waits, in the order they ended: an auxiliary
 * thread's wait may settle after waits that ended later.
 */
static void push_settled(struct rank_state *r, struct settled s)
{
	unsigned int i = r->nsettled++, n = r->nsettled < SETTLED ? r->nsettled : SETTLED;

	for (; r->nsettled - i < n && i > 0 && r->settled[(i - 1) % SETTLED].end > s.end; i--)
		r->settled[i % SETTLED] = r->settled[(i - 1) % SETTLED];
	r->settled[i % SETTLED] = s;
}

static void settle_one(struct cluster_wait *w, const struct attribution *a)
{
	int64_t begin = a->begin, bound_begin = a->bound_begin;
	struct rank_state *rs, *ws = &w->ranks[a->waiter];
	enum verdict verdict;
	uint32_t root;
	bool proven;

	if (a->aux && (!main_blocked(ws, a->end, &begin, &bound_begin) ||
		       a->end - begin < w->min_ns)) {
		ws->st.blocks--;	/* not the rank's */
		return;
	}
	ws->st.attributed++;
	ws->st.wait_ns += a->end - begin;
	verdict = judge(a, begin, bound_begin, &proven);
	root = root_of(w, a, begin, &proven);
	rs = &w->ranks[root];
	if (verdict == INCONSISTENT || verdict == TRANSIT) {
		/*
		 * Not a wait for the sender: no round, no blame. Whoever waits
		 * on the waiter next waited on it, or, in transit, on the rank
		 * the message's sender itself waited on (the message was late
		 * because a straggler held it up).
		 */
		if (verdict == INCONSISTENT || root == a->culprit) {
			root = a->waiter;
			proven = true;	/* no hop between them */
		}
		push_settled(ws, (struct settled){ begin, a->end, root, proven });
		if (verdict == INCONSISTENT)	/* its message, not its root's */
			w->ranks[a->culprit].st.inconsistent++;
		else
			ws->st.transit++;
		return;
	}
	push_settled(ws, (struct settled){ begin, a->end, root, proven });
	rs->st.waited_on_ns += a->end - begin;
	rs->st.last++;
	/* Certain only if every hop to the root is, not only the last. */
	rs->st.certain += proven;
	rs->st.ambiguous += !proven;
	w->rounds++;
	if (w->hook) {
		struct settled_wait sw = {
			.waiter = a->waiter, .root = root,
			.begin = begin, .end = a->end, .proven = proven,
		};
		int err = w->hook(w->hook_ctx, &sw);

		if (err && !w->hook_err)
			w->hook_err = err;
	}
}

/*
 * Whether a's culprit has a wait still held (attrs[0, kept)) that ended
 * before it sent: its root is to be found through that wait, when it is
 * settled.
 */
static bool culprit_held(const struct cluster_wait *w, const struct attribution *a, size_t kept)
{
	size_t i;

	for (i = 0; i < kept; i++)
		if (w->attrs[i].waiter == a->culprit && w->attrs[i].end <= a->send_ns)
			return true;
	return false;
}

/* Whether the merge, at now_ns, is the horizon past t_ns. */
static bool past(const struct cluster_wait *w, __int128 t_ns, int64_t now_ns)
{
	return now_ns == INT64_MAX || t_ns < (__int128)now_ns - w->horizon_ns;
}

/*
 * Whether a held receive at t_ns takes its turn: once every block it may
 * end (from link_ns before it) is the horizon past, so that its wait is an
 * attribution before the waits that ended after it settle (a later wait
 * on its rank looks for that one, as the rank's own).
 */
static bool due(const struct cluster_wait *w, int64_t t_ns, int64_t now_ns)
{
	return past(w, (__int128)t_ns - w->link_ns, now_ns);
}

/*
 * In the order the waits ended, but for an auxiliary thread's whose rank's
 * main thread is still to be seen past it: it waits, and so does a wait
 * on a message its rank sent after it; the others go on.
 */
void cluster_wait_settle(struct cluster_wait *w, int64_t now_ns)
{
	size_t n, kept = 0;
	uint32_t rank;

	/*
	 * Before the woken waits (a receive no block takes may have woken
	 * one) and the attributions: theirs join them, by end, to settle now.
	 */
	for (rank = 0; rank < w->nranks; rank++)
		while (w->ranks[rank].nheld && due(w, w->ranks[rank].held[0].t_ns, now_ns))
			take_oldest(w, rank);
	for (n = 0; n < w->nwoken && past(w, w->woken[n].b.end, now_ns); n++)
		resolve_woken(w, &w->woken[n]);
	if (n) {	/* none held yet: w->woken may be NULL */
		memmove(w->woken, w->woken + n, (w->nwoken - n) * sizeof(*w->woken));
		w->nwoken -= n;
	}
	for (n = 0; n < w->nattrs && past(w, w->attrs[n].end, now_ns); n++) {
		const struct attribution *a = &w->attrs[n];

		if ((a->aux && !aux_ready(w, a, now_ns)) || culprit_held(w, a, kept))
			w->attrs[kept++] = *a;
		else
			settle_one(w, a);
	}
	if (n == kept)
		return;
	memmove(w->attrs + kept, w->attrs + n, (w->nattrs - n) * sizeof(*w->attrs));
	w->nattrs -= n - kept;
}

void cluster_wait_set_hook(struct cluster_wait *w, cluster_wait_fn fn, void *ctx)
{
	w->hook = fn;
	w->hook_ctx = ctx;
}

int cluster_wait_hook_err(const struct cluster_wait *w)
{
	return w->hook_err;
}

uint32_t cluster_wait_nranks(const struct cluster_wait *w)
{
	return w->nranks;
}

const struct rank_wait *cluster_wait_rank(const struct cluster_wait *w, uint32_t rank)
{
	return &w->ranks[rank].st;
}

uint64_t cluster_wait_rounds(const struct cluster_wait *w)
{
	return w->rounds;
}
