// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "pftrace_intern.h"

static uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * Eight bytes at a time, the last eight overlapping the word before (as
 * trace_merge.c's hash_words): a byte at a time, the two strings of each
 * event written were 7 % of a merge's instructions.
 */
static uint64_t hash_str(enum intern_kind kind, const char *s, size_t len)
{
	uint64_t h = (uint64_t)kind << 32 ^ len, w = 0;
	size_t i;

	if (len < sizeof(w)) {
		for (i = len; i; i--)
			w = w << 8 | (uint8_t)s[i - 1];
		return mix64(h ^ w) | 1;
	}
	for (i = 0; i + sizeof(w) < len; i += sizeof(w)) {
		memcpy(&w, s + i, sizeof(w));
		h = mix64(h ^ w);
	}
	memcpy(&w, s + len - sizeof(w), sizeof(w));
	return mix64(h ^ w) | 1;
}

static struct intern_entry *slot(struct intern_entry *slots, uint32_t cap, uint64_t hash,
				 enum intern_kind kind, const char *s, size_t len)
{
	uint32_t i = (uint32_t)(hash ^ hash >> 32) & (cap - 1);

	while (slots[i].hash && (slots[i].hash != hash || slots[i].kind != kind ||
				 slots[i].len != len || memcmp(slots[i].str, s, len)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct intern_table *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64, i;
	struct intern_entry *ns = calloc(cap, sizeof(*ns)), *e;

	if (!ns)
		return -1;
	for (i = 0; i < t->cap; i++) {
		e = &t->slots[i];
		if (e->hash)
			*slot(ns, cap, e->hash, e->kind, e->str, e->len) = *e;
	}
	free(t->slots);
	t->slots = ns;
	t->cap = cap;
	return 0;
}

uint32_t intern(struct intern_table *t, enum intern_kind kind, const char *s,
		size_t len, int *fresh)
{
	uint64_t hash = hash_str(kind, s, len);
	struct intern_entry *e;

	*fresh = 0;
	if (t->cap) {
		e = slot(t->slots, t->cap, hash, kind, s, len);
		if (e->hash)
			return e->iid;
	}
	if (t->n >= INTERN_MAX || len > UINT32_MAX)
		return 0;
	if (2 * (t->n + 1) > t->cap && grow(t))
		return 0;
	e = slot(t->slots, t->cap, hash, kind, s, len);
	e->str = malloc(len ? len : 1);
	if (!e->str)
		return 0;
	memcpy(e->str, s, len);
	e->hash = hash;
	e->len = len;
	e->kind = kind;
	e->iid = ++t->next_iid[kind];
	t->n++;
	*fresh = 1;
	return e->iid;
}

void intern_free(struct intern_table *t)
{
	uint32_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slots[i].str);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
