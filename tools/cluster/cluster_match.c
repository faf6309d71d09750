// SPDX-License-Identifier: GPL-2.0
/*
 * Per connection and direction, the sends not yet consumed and the
 * receives still waiting for their send (when the receiver's clock runs
 * ahead, the merge hands a receive over before its send), both in
 * sequence order. Sequence numbers compare modulo 2^32, as TCP's do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_match.h"

/* A FIFO of message ends, oldest first. */
struct msg_fifo {
	struct msg_end *v;
	uint32_t head, n, cap;
};

struct conn {
	uint64_t key;		/* 0: free slot */
	struct msg_fifo sends, recvs;
};

struct cluster_match {
	unsigned int nhosts;
	int64_t horizon_ns;
	cluster_match_fn fn;
	void *ctx;
	struct conn *conns;	/* open addressing, power-of-two size */
	uint32_t nconns, cap;
	struct cluster_pair *pairs;	/* [from * nhosts + to] */
	struct cluster_counts counts;
};

static bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

/* seq in [lo, lo + len) */
static bool seq_in(uint32_t seq, uint32_t lo, uint32_t len)
{
	return seq - lo < len;
}

static struct msg_end *fifo_at(struct msg_fifo *q, uint32_t i)
{
	return &q->v[(q->head + i) & (q->cap - 1)];
}

static int fifo_push(struct msg_fifo *q, const struct msg_end *e)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 8, i;
		struct msg_end *v = malloc(cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (i = 0; i < q->n; i++)
			v[i] = *fifo_at(q, i);
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	*fifo_at(q, q->n++) = *e;
	return 0;
}

static void fifo_pop(struct msg_fifo *q)
{
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
}

struct cluster_match *cluster_match_new(unsigned int nhosts, int64_t horizon_ns,
					cluster_match_fn fn, void *ctx)
{
	struct cluster_match *m = calloc(1, sizeof(*m));
	unsigned int i;

	if (!m)
		return NULL;
	m->nhosts = nhosts;
	m->horizon_ns = horizon_ns;
	m->fn = fn;
	m->ctx = ctx;
	m->cap = 64;
	m->conns = calloc(m->cap, sizeof(*m->conns));
	m->pairs = calloc((size_t)nhosts * nhosts, sizeof(*m->pairs));
	if (!m->conns || !m->pairs) {
		cluster_match_free(m);
		return NULL;
	}
	for (i = 0; i < nhosts * nhosts; i++) {
		m->pairs[i].min_owd_ns = INT64_MAX;
		m->pairs[i].max_bound_ns = CLUSTER_BOUND_UNKNOWN;	/* none known yet */
	}
	return m;
}

void cluster_match_free(struct cluster_match *m)
{
	uint32_t i;

	if (!m)
		return;
	for (i = 0; m->conns && i < m->cap; i++) {
		free(m->conns[i].sends.v);
		free(m->conns[i].recvs.v);
	}
	free(m->conns);
	free(m->pairs);
	free(m);
}

/* Keys are hashes already; 0 is mapped away from the free-slot marker. */
static struct conn *conn_slot(struct conn *conns, uint32_t cap, uint64_t key)
{
	uint32_t i = (uint32_t)(key ^ key >> 32) & (cap - 1);

	while (conns[i].key && conns[i].key != key)
		i = (i + 1) & (cap - 1);
	return &conns[i];
}

static struct conn *conn_get(struct cluster_match *m, uint64_t key)
{
	struct conn *c;

	key |= !key;
	c = conn_slot(m->conns, m->cap, key);
	if (c->key)
		return c;
	if (2 * (m->nconns + 1) > m->cap) {
		uint32_t cap = m->cap * 2, i;
		struct conn *nc = calloc(cap, sizeof(*nc));

		if (!nc)
			return NULL;
		for (i = 0; i < m->cap; i++)
			if (m->conns[i].key)
				*conn_slot(nc, cap, m->conns[i].key) = m->conns[i];
		free(m->conns);
		m->conns = nc;
		m->cap = cap;
		c = conn_slot(m->conns, m->cap, key);
	}
	c->key = key;
	m->nconns++;
	return c;
}

static void matched(struct cluster_match *m, const struct msg_end *s,
		    const struct msg_end *r)
{
	struct cluster_pair *p;
	int64_t owd = r->t_ns - s->t_ns, eps = cluster_bound_sum(s->bound_ns, r->bound_ns);

	m->counts.matched++;
	if (s->host < m->nhosts && r->host < m->nhosts) {
		p = &m->pairs[s->host * m->nhosts + r->host];
		p->matched++;
		if (owd < p->min_owd_ns)
			p->min_owd_ns = owd;
		if (eps == CLUSTER_BOUND_UNKNOWN) {
			/* No bound to hold it to: its order is not known. */
			p->unknown++;
			p->ambiguous++;
			if (owd < 0)
				p->inversions++;
		} else {
			if (p->max_bound_ns == CLUSTER_BOUND_UNKNOWN || eps > p->max_bound_ns)
				p->max_bound_ns = eps;
			if (owd <= eps && owd >= -eps)
				p->ambiguous++;
			if (owd < -eps)
				p->violations++;	/* beyond this message's own bounds */
			else if (owd < 0)
				p->inversions++;
		}
	}
	if (m->fn)
		m->fn(m->ctx, s, r);
}

static uint32_t last_byte(const struct msg_end *e)
{
	return e->seq + e->len - 1;
}

int cluster_send(struct cluster_match *m, uint64_t conn, const struct msg_end *s)
{
	struct conn *c = conn_get(m, conn);
	struct msg_end *r;

	if (!c)
		return -ENOMEM;
	if (!s->len)
		return 0;
	m->counts.sends++;
	/* Receives that came first: those ending in this send are its. */
	while (c->recvs.n) {
		r = fifo_at(&c->recvs, 0);
		if (seq_in(last_byte(r), s->seq, s->len))
			matched(m, s, r);
		else if (!seq_before(last_byte(r), s->seq))
			break;		/* for a later send */
		else
			m->counts.unmatched_recvs++;	/* its send was not seen */
		fifo_pop(&c->recvs);
	}
	return fifo_push(&c->sends, s);
}

int cluster_recv(struct cluster_match *m, uint64_t conn, const struct msg_end *r)
{
	struct conn *c = conn_get(m, conn);
	struct msg_end *s;
	uint32_t i;

	if (!c)
		return -ENOMEM;
	if (!r->len)
		return 0;
	m->counts.recvs++;
	/* Sends wholly before these bytes are consumed: the copy is in order. */
	while (c->sends.n) {
		s = fifo_at(&c->sends, 0);
		if (!seq_before(last_byte(s), r->seq))
			break;
		fifo_pop(&c->sends);
	}
	for (i = 0; i < c->sends.n; i++) {
		s = fifo_at(&c->sends, i);
		if (seq_in(last_byte(r), s->seq, s->len)) {
			matched(m, s, r);
			return 0;
		}
		if (seq_before(last_byte(r), s->seq))
			break;
	}
	return fifo_push(&c->recvs, r);
}

void cluster_expire(struct cluster_match *m, int64_t now_ns)
{
	int64_t limit = now_ns - m->horizon_ns;
	uint32_t i;

	for (i = 0; i < m->cap; i++) {
		struct conn *c = &m->conns[i];

		if (!c->key)
			continue;
		while (c->recvs.n && fifo_at(&c->recvs, 0)->t_ns < limit) {
			fifo_pop(&c->recvs);
			m->counts.unmatched_recvs++;
		}
		/* A send ends waiting when its receiver has had time to take it. */
		while (c->sends.n && fifo_at(&c->sends, 0)->t_ns < limit)
			fifo_pop(&c->sends);
	}
}

const struct cluster_pair *cluster_pair(const struct cluster_match *m,
					unsigned int from, unsigned int to)
{
	return &m->pairs[from * m->nhosts + to];
}

const struct cluster_counts *cluster_counts(const struct cluster_match *m)
{
	return &m->counts;
}

bool cluster_check_pair(const struct cluster_match *m, unsigned int a,
			unsigned int b, struct cluster_clock_check *c)
{
	const struct cluster_pair *ab = cluster_pair(m, a, b), *ba = cluster_pair(m, b, a);

	if (!ab->matched || !ba->matched)
		return false;
	c->lo_ns = -ba->min_owd_ns;
	c->hi_ns = ab->min_owd_ns;
	if (ab->max_bound_ns == CLUSTER_BOUND_UNKNOWN)
		c->claim_ns = ba->max_bound_ns;
	else if (ba->max_bound_ns == CLUSTER_BOUND_UNKNOWN)
		c->claim_ns = ab->max_bound_ns;
	else
		c->claim_ns = ab->max_bound_ns > ba->max_bound_ns ? ab->max_bound_ns :
								    ba->max_bound_ns;
	/*
	 * Not the intervals against the widest claim: one message of unknown
	 * (or huge) bound would make that claim everything, and a lying pair
	 * would pass. Each message with known bounds is held to its own.
	 */
	c->violations = ab->violations + ba->violations;
	c->unknown = ab->unknown + ba->unknown;
	c->lying = c->violations > 0;
	return true;
}
