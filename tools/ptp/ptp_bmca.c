// SPDX-License-Identifier: GPL-2.0
/* Foreign-master records and the best master choice among them. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "ptp_bmca.h"

void ptp_bmca_init(struct ptp_bmca *b, const uint8_t *own_clock_id)
{
	memset(b, 0, sizeof(*b));
	memcpy(b->own_id, own_clock_id, PTP_CLOCK_ID_LEN);
}

int ptp_bmca_allow(struct ptp_bmca *b, const uint8_t *clock_id)
{
	if (b->nallow == PTP_MAX_ALLOW)
		return -ENOSPC;
	memcpy(b->allow[b->nallow++], clock_id, PTP_CLOCK_ID_LEN);
	return 0;
}

static bool allowed(const struct ptp_bmca *b, const uint8_t *clock_id)
{
	unsigned int i;

	for (i = 0; i < b->nallow; i++)
		if (!memcmp(b->allow[i], clock_id, PTP_CLOCK_ID_LEN))
			return true;
	return !b->nallow;
}

int64_t ptp_announce_interval_ns(int8_t log_interval)
{
	/* 1588 allows -128..127; beyond 1/128 s .. 64 s is nonsense. */
	if (log_interval < -7)
		log_interval = -7;
	if (log_interval > 6)
		log_interval = 6;
	if (log_interval >= 0)
		return 1000000000LL << log_interval;
	return 1000000000LL >> -log_interval;
}

static int64_t window_ns(const struct ptp_foreign *f)
{
	return PTP_FOREIGN_MASTER_WINDOW * ptp_announce_interval_ns(f->log_interval);
}

static int64_t receipt_timeout_ns(const struct ptp_foreign *f)
{
	return PTP_ANNOUNCE_RECEIPT_TIMEOUT * ptp_announce_interval_ns(f->log_interval);
}

static struct ptp_foreign *find(struct ptp_bmca *b, const struct ptp_port_id *id)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		if (ptp_port_id_eq(&b->fm[i].sender, id))
			return &b->fm[i];
	return NULL;
}

/* Sequence ids are 16-bit and wrap: newer means 1..32767 ahead. */
static int seq_newer(uint16_t seq, uint16_t last)
{
	uint16_t d = (uint16_t)(seq - last);

	return d != 0 && d < 0x8000;
}

/*
 * A record for a new sender: a free one, or the worst, when the sender is
 * better than it. NULL: no room.
 */
static struct ptp_foreign *make_room(struct ptp_bmca *b, const struct ptp_msg *m)
{
	struct ptp_foreign *worst = NULL, candidate = { .sender = m->h.source, .ann = m->announce };
	unsigned int i;

	if (b->n < PTP_MAX_FOREIGN)
		return &b->fm[b->n++];
	for (i = 0; i < b->n; i++)
		if (!worst || ptp_dataset_cmp(&b->fm[i], worst) > 0)
			worst = &b->fm[i];
	return ptp_dataset_cmp(&candidate, worst) < 0 ? worst : NULL;
}

int ptp_bmca_announce(struct ptp_bmca *b, const struct ptp_msg *m, int64_t now,
		      const char **reason)
{
	struct ptp_foreign *f;

	if (!memcmp(m->h.source.clock_id, b->own_id, PTP_CLOCK_ID_LEN)) {
		*reason = "announce from our own clock identity";
		return -EINVAL;
	}
	if (!allowed(b, m->h.source.clock_id)) {
		*reason = "announce from a master not in allow=";
		return -EINVAL;
	}
	if (m->announce.steps_removed >= 255) {
		*reason = "announce with stepsRemoved >= 255";
		return -EINVAL;
	}
	f = find(b, &m->h.source);
	if (f && !seq_newer(m->h.seq, f->last_seq)) {
		*reason = "announce with a repeated or old sequence id";
		return -EINVAL;
	}
	if (!f) {
		f = make_room(b, m);
		if (!f) {
			*reason = "too many foreign masters, all better";
			return -EINVAL;
		}
		memset(f, 0, sizeof(*f));
		f->sender = m->h.source;
	}
	f->ann = m->announce;
	f->flags = m->h.flags;
	f->last_seq = m->h.seq;
	f->log_interval = m->h.log_interval;
	if (f->nrx == PTP_FOREIGN_MASTER_THRESHOLD) {
		memmove(f->rx, f->rx + 1, sizeof(f->rx) - sizeof(f->rx[0]));
		f->nrx--;
	}
	f->rx[f->nrx++] = now;
	return 0;
}

static int qualified(const struct ptp_foreign *f, int64_t now)
{
	return f->nrx == PTP_FOREIGN_MASTER_THRESHOLD && now - f->rx[0] <= window_ns(f);
}

static void expire(struct ptp_bmca *b, int64_t now)
{
	unsigned int i = 0;

	while (i < b->n) {
		struct ptp_foreign *f = &b->fm[i];

		if (now - f->rx[f->nrx - 1] > receipt_timeout_ns(f)) {
			memmove(f, f + 1, (b->n - i - 1) * sizeof(*f));
			b->n--;
			continue;
		}
		i++;
	}
}

const struct ptp_foreign *ptp_bmca_best(struct ptp_bmca *b, int64_t now)
{
	const struct ptp_foreign *best = NULL;
	unsigned int i;

	expire(b, now);
	for (i = 0; i < b->n; i++) {
		const struct ptp_foreign *f = &b->fm[i];

		if (qualified(f, now) && (!best || ptp_dataset_cmp(f, best) < 0))
			best = f;
	}
	return best;
}

static int cmp_u(unsigned int a, unsigned int b)
{
	return (a > b) - (a < b);
}

int ptp_dataset_cmp(const struct ptp_foreign *a, const struct ptp_foreign *b)
{
	const struct ptp_announce *x = &a->ann, *y = &b->ann;
	int c;

	/* Different grandmasters: their qualities decide (figure 34). */
	c = memcmp(x->gm_id, y->gm_id, PTP_CLOCK_ID_LEN);
	if (c) {
		if ((c = cmp_u(x->priority1, y->priority1)) ||
		    (c = cmp_u(x->quality.clock_class, y->quality.clock_class)) ||
		    (c = cmp_u(x->quality.accuracy, y->quality.accuracy)) ||
		    (c = cmp_u(x->quality.variance, y->quality.variance)) ||
		    (c = cmp_u(x->priority2, y->priority2)))
			return c;
		return memcmp(x->gm_id, y->gm_id, PTP_CLOCK_ID_LEN) < 0 ? -1 : 1;
	}
	/*
	 * Same grandmaster through different masters (figure 35): the shorter
	 * path wins, then the lower sender identity. With a single receiving
	 * port the receiver-identity tie-breaks cannot arise.
	 */
	if ((c = cmp_u(x->steps_removed, y->steps_removed)))
		return c;
	c = ptp_port_id_cmp(&a->sender, &b->sender);
	return (c > 0) - (c < 0);
}
