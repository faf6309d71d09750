/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/perfetto/: other subsystems include this header.
 *
 * The interning of the merged trace's event names and categories (as
 * Perfetto's TrackEvent docs describe): each string is written once, in
 * the InternedData of the packet that first uses it, and then named by
 * its iid. Names and categories have iids of their own, from 1.
 */
#ifndef LCLK_PFTRACE_INTERN_H
#define LCLK_PFTRACE_INTERN_H

#include <stddef.h>
#include <stdint.h>

/* Past this many strings, new ones are written out in full, not interned. */
#define INTERN_MAX	(1u << 16)

enum intern_kind { INTERN_CATEGORY, INTERN_NAME, INTERN_KINDS };

struct intern_entry {
	uint64_t hash;			/* 0: free slot */
	char *str;
	uint32_t len, iid;
	enum intern_kind kind;
};

struct intern_table {
	struct intern_entry *slots;	/* open addressing, power of two */
	uint32_t cap, n;
	uint32_t next_iid[INTERN_KINDS];
};

/*
 * The iid of s (len bytes) of kind; *fresh is set when it was interned
 * just now (the caller then writes its definition). 0 when it is not
 * interned (INTERN_MAX reached, or no memory): write it in full.
 */
uint32_t intern(struct intern_table *t, enum intern_kind kind, const char *s,
		size_t len, int *fresh);

void intern_free(struct intern_table *t);

#endif /* LCLK_PFTRACE_INTERN_H */
