// SPDX-License-Identifier: GPL-2.0
/* Histogram snapshots of lclkctl trace: slot edges, deltas, printing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_hist.h"

uint64_t trace_slot_high(unsigned int slot)
{
	return slot ? 1ULL << slot : 1;
}

uint64_t trace_slot_low(unsigned int slot)
{
	return slot ? (1ULL << (slot - 1)) + 1 : 0;
}

unsigned int trace_slot_of(uint64_t ns)
{
	unsigned int slot;

	if (ns <= 1)
		return 0;
	slot = 64 - __builtin_clzll(ns - 1);
	return slot < TRACE_SLOTS ? slot : TRACE_SLOTS - 1;
}

int trace_snapshot_append(struct trace_snapshot *snap,
			  const struct trace_key *key,
			  const struct trace_hist *h)
{
	struct trace_series *s;
	unsigned int i;

	if (snap->n == snap->cap) {
		size_t cap = snap->cap ? 2 * snap->cap : 64;

		s = realloc(snap->s, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		snap->s = s;
		snap->cap = cap;
	}
	s = &snap->s[snap->n++];
	s->key = *key;
	s->h = *h;
	s->calls = 0;
	for (i = 0; i < TRACE_SLOTS; i++)
		s->calls += h->slots[i];
	return 0;
}

static int key_cmp(const struct trace_key *a, const struct trace_key *b)
{
	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	if (a->sys != b->sys)
		return a->sys - b->sys;
	if (a->outcome != b->outcome)
		return a->outcome - b->outcome;
	return a->dev - b->dev;
}

static int series_cmp(const void *a, const void *b)
{
	return key_cmp(&((const struct trace_series *)a)->key,
		       &((const struct trace_series *)b)->key);
}

/* Add b's counts to a's. */
static void series_add(struct trace_series *a, const struct trace_series *b)
{
	int k;

	for (k = 0; k < TRACE_SLOTS; k++)
		a->h.slots[k] += b->h.slots[k];
	a->h.sum_ns += b->h.sum_ns;
	a->h.bytes += b->h.bytes;
	a->calls += b->calls;
}

void trace_snapshot_sort(struct trace_snapshot *snap)
{
	size_t i, n = 0;

	if (!snap->n)
		return;
	qsort(snap->s, snap->n, sizeof(*snap->s), series_cmp);
	for (i = 1; i < snap->n; i++) {
		if (!series_cmp(&snap->s[n], &snap->s[i]))
			series_add(&snap->s[n], &snap->s[i]);
		else
			snap->s[++n] = snap->s[i];
	}
	snap->n = n + 1;
}

void trace_snapshot_free(struct trace_snapshot *snap)
{
	free(snap->s);
	memset(snap, 0, sizeof(*snap));
}

int trace_snapshot_delta(const struct trace_snapshot *cur,
			 const struct trace_snapshot *prev,
			 struct trace_snapshot *out)
{
	size_t i;
	int k;

	memset(out, 0, sizeof(*out));
	for (k = 0; k < TRACE_DROP_NR; k++)
		out->drops[k] = cur->drops[k] - prev->drops[k];
	for (i = 0; i < cur->n; i++) {
		const struct trace_series *c = &cur->s[i], *p;
		struct trace_hist d = c->h;
		int err;

		p = prev->n ? bsearch(c, prev->s, prev->n, sizeof(*c), series_cmp) : NULL;
		if (p && p->calls == c->calls)
			continue;
		if (p) {
			for (k = 0; k < TRACE_SLOTS; k++)
				d.slots[k] -= p->h.slots[k];
			d.sum_ns -= p->h.sum_ns;
			d.bytes -= p->h.bytes;
		}
		err = trace_snapshot_append(out, &c->key, &d);
		if (err) {
			trace_snapshot_free(out);
			return err;
		}
	}
	return 0;
}

void trace_proc_next(const struct trace_snapshot *snap, size_t *i,
		     struct trace_proc_sum *sum)
{
	const struct trace_series *s = &snap->s[*i];

	memset(sum, 0, sizeof(*sum));
	sum->tgid = s->key.tgid;
	sum->comm = s->h.comm;
	for (; *i < snap->n && snap->s[*i].key.tgid == sum->tgid; (*i)++) {
		s = &snap->s[*i];
		sum->calls += s->calls;
		sum->blocked_ns += s->h.sum_ns;
		sum->bytes += s->h.bytes;
		if (s->key.outcome == TRACE_OUT_EAGAIN)
			sum->eagain += s->calls;
	}
}

static void print_stars(FILE *f, uint64_t val, uint64_t max, int width)
{
	int n = max ? (int)((val * width + max - 1) / max) : 0, i;

	for (i = 0; i < width; i++)
		fputc(i < n ? '*' : ' ', f);
}

void trace_print_log2_hist(FILE *f, const __u64 slots[TRACE_SLOTS])
{
	int first = -1, last = -1, i;
	uint64_t max = 0;

	for (i = 0; i < TRACE_SLOTS; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	if (first < 0)
		return;
	fprintf(f, "%28s : count     distribution\n", "nsecs");
	for (i = first; i <= last; i++) {
		char range[48];

		if (i == TRACE_SLOTS - 1)
			snprintf(range, sizeof(range), "%llu -> ...",
				 (unsigned long long)trace_slot_low(i));
		else
			snprintf(range, sizeof(range), "%llu -> %llu",
				 (unsigned long long)trace_slot_low(i),
				 (unsigned long long)trace_slot_high(i));
		fprintf(f, "%28s : %-9llu |", range, (unsigned long long)slots[i]);
		print_stars(f, slots[i], max, 40);
		fputs("|\n", f);
	}
}
