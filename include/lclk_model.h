/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Evaluation of the lclk clock model, shared by the kernel module, the
 * userspace reader, the tools and the tests, so that every one of them
 * computes bit-identical logical time from the same model.
 *
 * Products use 128-bit intermediates: (t - t0) * rate_mult cannot overflow
 * for any elapsed time below 2^63 ns and any |rate| <= LCLK_MAX_RATE_PPT.
 * Needs a 64-bit architecture with __int128 (x86_64, arm64).
 */
#ifndef _LCLK_MODEL_H
#define _LCLK_MODEL_H

#ifndef __SIZEOF_INT128__
#error "lclk_model.h needs __int128: a 64-bit architecture such as x86_64 or arm64"
#endif

#ifdef __KERNEL__
#include <linux/math64.h>
#include <linux/types.h>
#else
#include <linux/types.h>
#endif
/* installed as <linux/lclk.h>; in the tree under include/uapi */
#include <linux/lclk.h>

/* 10^12 = 2^12 * 5^12, so ppt * 2^40 / 10^12 = ppt * 2^28 / 5^12. */
#define LCLK_POW5_12	244140625LL

/* Parts per trillion to 2^-LCLK_RATE_SHIFT ns/ns; |ppt| <= LCLK_MAX_RATE_PPT. */
static inline __s64 lclk_ppt_to_mult(__s64 ppt)
{
	__s64 scaled = ppt * (1LL << (LCLK_RATE_SHIFT - 12));

#ifdef __KERNEL__
	return div_s64(scaled, LCLK_POW5_12);
#else
	return scaled / LCLK_POW5_12;
#endif
}

/*
 * max_drift in ppb to the bound's growth in 2^-LCLK_RATE_SHIFT ns/ns,
 * rounded up, and one unit more: the rate's own multiplier is truncated
 * (lclk_ppt_to_mult()) by less than one unit, which the clock runs off the
 * rate it was given by. The bound grows at least as fast as max_drift and
 * that truncation together, never slower through rounding.
 */
static inline __s64 lclk_ppb_to_mult(__u32 ppb)
{
	__s64 scaled = (__s64)ppb * 1000 * (1LL << (LCLK_RATE_SHIFT - 12)) +
		       LCLK_POW5_12 - 1;

#ifdef __KERNEL__
	return div_s64(scaled, LCLK_POW5_12) + 1;
#else
	return scaled / LCLK_POW5_12 + 1;
#endif
}

/* delta * mult / 2^LCLK_RATE_SHIFT, rounded towards minus infinity. */
static inline __s64 lclk_scale(__s64 delta, __s64 mult)
{
	return (__s64)(((__int128)delta * mult) >> LCLK_RATE_SHIFT);
}

/*
 * Logical time at base time t, without the per-CPU offset. Monotonic in t
 * because |rate_mult| < 2^LCLK_RATE_SHIFT: the rate term can lose at most
 * 1 ns when t gains 1 ns.
 */
static inline __s64 lclk_logical(__s64 t, __s64 t0, __s64 offset,
				 __s64 rate_mult)
{
	return t + offset + lclk_scale(t - t0, rate_mult);
}

/* Bound at base time t; unknown (S64 max) while the clock was never synced. */
#define LCLK_BOUND_UNKNOWN	0x7fffffffffffffffLL

/*
 * What the bound adds for rounding, so that it never rounds in the
 * reader's favour: the reading is the model's line floored to whole ns,
 * and so is the growth.
 */
#define LCLK_BOUND_ROUNDING_NS	2

static inline __s64 lclk_bound(__s64 t, __u32 status, __s64 bound0,
			       __s64 last_update, __s64 drift_mult)
{
	/*
	 * A time before the last sync (a stamp taken earlier, converted now)
	 * is as far from that measurement as one after it: a true clock
	 * within max_drift strays as far either way, so the bound grows
	 * backwards as it grows forwards.
	 *
	 * |t - last_update| is exact in unsigned arithmetic for any two s64
	 * (it is below 2^64), and so is the growth: drift_mult is never
	 * negative and the module keeps it below 2^34 (a widened drift and a
	 * correction's growth together), so an age of 2^64 - 1 ns grows it by
	 * less than 2^58, and bound0 (at most 2^52) plus that cannot overflow.
	 * No saturation, no sign fix-up: this is on every reader's path.
	 */
	__u64 age = t >= last_update ? (__u64)t - (__u64)last_update :
				       (__u64)last_update - (__u64)t;
	__s64 growth = (__s64)(((__uint128_t)age * (__u64)drift_mult) >>
			       LCLK_RATE_SHIFT);

	return status == LCLK_STATUS_UNSYNCED ? LCLK_BOUND_UNKNOWN :
		bound0 + growth + LCLK_BOUND_ROUNDING_NS;
}

/*
 * Status as of base time t, from the stored status: UNSYNCED, SYNCED, or
 * HOLDOVER, which a resume stores (no one disciplined the clock through
 * the sleep) and which stays until the next sync.
 */
static inline __u32 lclk_status(__s64 t, __u32 status, __s64 last_update,
				__s64 holdover)
{
	/* HOLDOVER is SYNCED + 1: no branch on every reader's path */
	return status + ((status == LCLK_STATUS_SYNCED) &
			 (t - last_update > holdover));
}

#endif /* _LCLK_MODEL_H */
