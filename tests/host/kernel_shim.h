/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kmod/lclk_state.h takes from the kernel, for building it on the
 * host: the same names with the same meaning, single-threaded (the
 * counters' atomics are plain increments here).
 */
#ifndef _LCLK_KERNEL_SHIM_H
#define _LCLK_KERNEL_SHIM_H

#include <errno.h>
#include <stdbool.h>
#include <linux/types.h>

typedef __s64 s64;
typedef __s32 s32;
typedef __u32 u32;
typedef __u64 u64;

#define BIT(n)			(1UL << (n))
#define NSEC_PER_SEC		1000000000L
#define check_add_overflow(a, b, d)	__builtin_add_overflow(a, b, d)
#define check_sub_overflow(a, b, d)	__builtin_sub_overflow(a, b, d)

/* Its uses here are all 64-bit (long is s64 on the host). */
static inline s64 clamp(s64 v, s64 lo, s64 hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* Truncates towards zero, as the kernel's does. */
static inline s64 div_s64(s64 dividend, __s32 divisor)
{
	return dividend / divisor;
}

typedef struct {
	s64 counter;
} atomic64_t;

static inline void atomic64_inc(atomic64_t *v)
{
	v->counter++;
}

#include "../../kmod/lclk_state.h"

/*
 * lclk_apply() (kmod/lclk_clock.c) without the lock, the clock and the
 * page: check, build, and on success take the new state and count the
 * change in ctr, if any.
 */
static inline int lclk_apply_state(struct lclk_state *st,
				   struct lclk_counters *ctr,
				   const struct lclk_change *c, s64 now,
				   s64 max_rate_ppt)
{
	struct lclk_state next;
	struct lclk_step_at at;
	int err;

	err = lclk_check_change(c, max_rate_ppt);
	if (!err)
		err = lclk_next(st, c, now, &next, &at);
	if (err)
		return err;
	*st = next;
	if (ctr)
		lclk_count_step(ctr, at.before, at.after);
	return 0;
}

#endif /* _LCLK_KERNEL_SHIM_H */
