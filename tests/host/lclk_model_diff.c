// SPDX-License-Identifier: GPL-2.0
/*
 * Differential check of the model arithmetic. Random sequences of changes
 * (set model in random combinations, step, rate alone, the PTP clock's
 * adjfine/adjtime/settime through the module's own mapping, suspends of
 * random length, per-CPU offsets) with time passing between them (1 ns to
 * hours) go to the real code - kmod/lclk_state.h (lclk_check_change,
 * lclk_next) and include/lclk_model.h / include/lclk.h (lclk_eval) built
 * for the host - and to a reference in exact arithmetic that shares none
 * of their code:
 *
 *   R   the line at the rate the multiplier represents (rate_mult / 2^40),
 *       in 2^-40 ns, re-anchored at each change at the integer reading
 *       (the model's "logical(now) does not change"): floor(R) must be
 *       what the real code reads, to the nanosecond;
 *   Em  the same line re-anchored exactly (no floor at re-anchoring);
 *   Ep  the line at the rate in ppt, exactly, in 10^-12 ns: the model as
 *       the ABI defines it;
 *   a true clock, whose rate is Ep's plus a deviation within +-max_drift
 *   (varying piecewise), placed at each sync anywhere within the bound
 *   (often at its edge), and an exact bound B = bound0 + |t - last| *
 *   max_drift that it never leaves.
 *
 * Checks, one TAP line each:
 *   1 the real logical time == floor(R) at every sampled time: exact, so
 *     any change to lclk_scale()'s rounding shows at once;
 *   2 accept/refuse and errno, status (as of t), bound0, last_update, the
 *     PTP mapping (lclk_phc_adjfine() against scaled_ppm * 15625 / 1024)
 *     and the per-CPU offsets (lclk_eval() with the page) as the
 *     reference says;
 *   3 the reference itself: |Ep - true| <= B (the generator is honest);
 *   4 |real - Ep| within what the model's arithmetic may lose: < 1 ns per
 *     re-anchor (a floor each), 1 ns for the reading's floor, and < 2^-40
 *     of the span run since Ep, Em and R were last equal (the multiplier
 *     truncates the ppt rate towards zero);
 *   5 |real - Ep| <= 1 ns: a TODO that reports how far that goes;
 *   6 real bound == B at and after the last update, within the bound's
 *     rounding (floors, the 2^-40 drift multiplier);
 *   7 the same before the last update (timestamps converted after a sync
 *     that they predate): B grows with |t - last update|;
 *   8, 9 |real - true| <= real bound, at/after and before the last update:
 *     the promise itself, with no allowance. The bound rounds up (the drift
 *     multiplier, one more unit for the rate's truncation, 1 ns for each
 *     re-anchor's floor since the sync), so the rounding never eats it.
 *
 * Exact values are in 10^-12 ns (Ep, B, the true clock) or 2^-40 ns (R, Em)
 * in 128 bits: at most ~10^31 over the ~12 years of base time a run spans.
 *
 * LCLK_DIFF_SEED and LCLK_DIFF_OPS override the seed and the number of
 * changes; a failure prints the seed, the op number and the changes that
 * led to it from a printed state, enough to replay it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lclk.h"
#include "kernel_shim.h"
#include "rand.h"

typedef __int128 i128;

#define S		1000000000LL
#define MS		1000000LL
#define HOUR		(3600 * S)
#define PS		((i128)1000000000000LL)	/* 10^-12 ns per ns */
#define ONE		((i128)1 << LCLK_RATE_SHIFT)
#define MAX_RATE_PPT	500000000LL	/* the module's default limit */
#define NCPU		4
#define DEFAULT_OPS	1000000L
#define RING		48

static int tests, failures;

/* ---- random numbers ----------------------------------------------------- */

static int chance(int percent)
{
	return (int)(test_rand() % 100) < percent;
}

/* Log-uniform in [0, 2^maxbits]: as many nanoseconds as hours. */
static s64 logu(int maxbits)
{
	int k = (int)test_between(0, maxbits);

	return test_between(0, (s64)1 << k);
}

static s64 sign(s64 v)
{
	return chance(50) ? v : -v;
}

/* ---- the exact reference ------------------------------------------------ */

static i128 abs128(i128 x)
{
	return x < 0 ? -x : x;
}

/* floor(x / 2^40), written out rather than shifted, to share nothing. */
static i128 floor40(i128 x)
{
	i128 q = x / ONE;

	return (x % ONE < 0) ? q - 1 : q;
}

/* rate_ppt in 2^-40 ns per ns, truncated towards zero (the ABI's). */
static s64 ref_mult(s64 ppt)
{
	return (s64)((i128)ppt * ONE / PS);
}

/* max_drift in 2^-40 ns per ns as the bound grows: rounded up, +1 unit. */
static s64 ref_dmult(u32 ppb)
{
	return (s64)(((i128)ppb * 1000 * ONE + PS - 1) / PS) + 1;
}

struct ref {
	s64 T;		/* base time the lines are anchored at */
	i128 V;		/* R at T: an integer reading */
	i128 em;	/* Em at T, 2^-40 ns */
	i128 ep;	/* Ep at T, 10^-12 ns */
	s64 ppt, mult;
	u32 status;	/* stored */
	s64 L;		/* last update */
	s64 H;		/* holdover */
	u32 D;		/* max_drift ppb */
	s64 dmult;
	s64 b0;		/* bound0 as the model defines it, integer ns */
	i128 B0;	/* the exact bound at L, 10^-12 ns */
	i128 bslack;	/* rounding b0 took since the sync, 10^-12 ns */
	/*
	 * Rates set through the PTP clock since the sync widen the growth:
	 * wppt exactly (ppt), wmult in the real multiplier's units (the
	 * module's cap is on it), which exceeds wppt by up to wunits per ns.
	 */
	s64 wppt;
	s64 wmult;
	s64 wunits;
	/* the true clock: forward segment, and the one from the last sync */
	s64 TT;
	i128 TV;	/* 10^-12 ns */
	s64 rt;		/* its rate, ppt: Ep's plus a deviation */
	int from_sync;	/* the sync's segment still describes t < L */
	s64 sync_tt;
	i128 sync_tv;
	s64 sync_rt;
	s64 cpu_off[NCPU];
	/* what the real code may have lost since Ep, Em and R were equal */
	long nre;	/* re-anchors (a floor each) */
	i128 path;	/* ns the lines ran, anchor to anchor (sleeps too) */
};

static i128 r_at(const struct ref *r, s64 t)	/* 2^-40 ns */
{
	return r->V * ONE + (i128)(t - r->T) * (ONE + r->mult);
}

static i128 em_at(const struct ref *r, s64 t)
{
	return r->em + (i128)(t - r->T) * (ONE + r->mult);
}

static i128 ep_at(const struct ref *r, s64 t)
{
	return r->ep + (i128)(t - r->T) * (PS + r->ppt);
}

static i128 b_at(const struct ref *r, s64 t)
{
	return r->B0 + abs128((i128)t - r->L) * ((i128)r->D * 1000 + r->wppt);
}

static i128 true_at(const struct ref *r, s64 t)
{
	if (t < r->TT && r->from_sync)
		return r->sync_tv + (i128)(t - r->sync_tt) * (PS + r->sync_rt);
	return r->TV + (i128)(t - r->TT) * (PS + r->rt);
}

/*
 * An unmeasured rate (adjfine): the line leaves the old one by the change
 * of rate either way from now, so the exact bound grows by it from the
 * last update on, and takes it over the age at now. The real multiplier's
 * change is the truncated rates' plus 2, as the module adds.
 */
static void ref_widen_rate(const struct ref *o, s64 now, struct ref *n)
{
	s64 dppt = n->ppt - o->ppt, dmult = n->mult - o->mult;
	i128 age = abs128((i128)now - n->L);

	if (dppt < 0)
		dppt = -dppt;
	if (dmult < 0)
		dmult = -dmult;
	if (dmult)
		dmult += 2;
	if (n->dmult + n->wmult > 4 * ref_mult(LCLK_MAX_RATE_PPT) - dmult) {
		n->status = LCLK_STATUS_UNSYNCED;
		return;
	}
	n->wmult += dmult;
	n->wppt += dppt;
	n->wunits += 3;		/* dmult - dppt's units: up to 2 + 1 */
	n->b0 += (s64)floor40(age * dmult) + 1;
	n->B0 += age * dppt;
	n->bslack += 2 * PS + abs128(age * dmult * PS / ONE - age * dppt);
	if (n->b0 > (1LL << 52))
		n->status = LCLK_STATUS_UNSYNCED;
}

static u32 ref_status(const struct ref *r, s64 t)
{
	if (r->status == LCLK_STATUS_SYNCED && (i128)t - r->L > r->H)
		return LCLK_STATUS_HOLDOVER;
	return r->status;
}

static s64 new_dev(const struct ref *r)	/* ppt, within +-max_drift */
{
	s64 d = (s64)r->D * 1000;

	return chance(50) ? sign(d) : test_between(-d, d);
}

/* Keep the true clock where the exact bound says it is, at now. */
static void true_clamp(struct ref *r, s64 now)
{
	i128 tv = true_at(r, now), e = ep_at(r, now), b = b_at(r, now);
	s64 d = (s64)r->D * 1000;
	s64 dev = r->rt - r->ppt;

	if (tv > e + b)
		tv = e + b;
	if (tv < e - b)
		tv = e - b;
	if (dev > d || dev < -d)
		dev = new_dev(r);
	r->TT = now;
	r->TV = tv;
	r->rt = r->ppt + dev;
}

/* The ABI's limits, written out from include/uapi/linux/lclk.h. */
static int ref_check(const struct lclk_change *c)
{
	u32 m = c->modes;

	if (c->flags & ~1U)
		return -EINVAL;
	if ((m & LCLK_SET_BOUND) && (m & LCLK_SET_UNSYNC))
		return -EINVAL;
	if ((m & (LCLK_SET_OFFSET | LCLK_SET_BOUND)) && c->t0_ns < 0)
		return -EINVAL;
	if ((m & LCLK_SET_OFFSET) && (c->offset_ns > (1LL << 62) ||
				      c->offset_ns < -(1LL << 62)))
		return -EINVAL;
	if ((m & LCLK_SET_RATE) && (c->rate_ppt > MAX_RATE_PPT ||
				    c->rate_ppt < -MAX_RATE_PPT))
		return -EINVAL;
	if ((m & LCLK_SET_BOUND) && (c->bound_ns < 0 ||
				     c->bound_ns > (1LL << 52)))
		return -EINVAL;
	if ((m & LCLK_SET_HOLDOVER) && c->holdover_ns < 0)
		return -EINVAL;
	if ((m & LCLK_SET_MAX_DRIFT) && c->max_drift_ppb > 1000000)
		return -EINVAL;
	if ((m & LCLK_SET_FLAGS) && (c->model_flags & ~1U))
		return -EINVAL;
	if ((m & LCLK_CHANGE_STEP) && (c->step_ns > (1LL << 62) ||
				       c->step_ns < -(1LL << 62)))
		return -EINVAL;
	if ((m & LCLK_CHANGE_SLEEP) &&
	    (m != LCLK_CHANGE_SLEEP || c->sleep_ns <= 0))
		return -EINVAL;
	return 0;
}

static int offset_ok(i128 off)
{
	return off >= -((i128)1 << 62) && off <= ((i128)1 << 62);
}

/*
 * The change at base time now, on the reference: 0 and *n, or the errno
 * the model must refuse it with. sleep_err is how far off (10^-12 ns of
 * true time) the kernel's measurement of a sleep was.
 */
static int ref_apply(const struct ref *o, const struct lclk_change *c,
		     s64 now, i128 sleep_err, struct ref *n)
{
	u32 m = c->modes;
	i128 r0, e0p, step;
	int err = ref_check(c);

	if (err)
		return err;
	*n = *o;
	r0 = floor40(r_at(o, now));
	n->path += abs128((i128)now - o->T);
	e0p = ep_at(o, now);
	n->T = now;
	n->V = r0;
	n->em = em_at(o, now);
	n->ep = e0p;

	if (m & LCLK_CHANGE_SLEEP) {
		s64 sl = c->sleep_ns;
		i128 v = floor40(r_at(o, now + sl));

		n->nre++;
		if (!offset_ok(v - now)) {
			n->status = LCLK_STATUS_UNSYNCED;
			n->from_sync = 0;
			return 0;
		}
		n->path += sl;
		n->V = v;
		n->em = em_at(o, now + sl);
		n->ep = ep_at(o, now + sl);
		if (o->status == LCLK_STATUS_UNSYNCED)
			return 0;
		if (o->b0 > (1LL << 52) - S - 1) {
			n->status = LCLK_STATUS_UNSYNCED;
			n->from_sync = 0;
			return 0;
		}
		n->L -= sl;
		n->b0 += S + 1;		/* the module's 1 ns for the fold's floor */
		n->bslack += PS;
		n->B0 += S * PS;
		n->status = LCLK_STATUS_HOLDOVER;
		/* the true clock ran through the sleep, the base clock not */
		n->TV = true_at(o, now) + (i128)sl * (PS + o->rt) + sleep_err;
		n->TT = now;
		n->from_sync = 0;
		return 0;
	}

	n->nre++;
	if (m & LCLK_SET_RATE) {
		n->ppt = c->rate_ppt;
		n->mult = ref_mult(c->rate_ppt);
	}
	if (m & LCLK_SET_OFFSET) {
		s64 t0 = c->t0_ns ? c->t0_ns : now;
		i128 at0 = (i128)t0 + c->offset_ns;

		n->em = at0 * ONE + (i128)(now - t0) * (ONE + n->mult);
		n->V = floor40(n->em);
		n->ep = at0 * PS + (i128)(now - t0) * (PS + n->ppt);
		n->nre = 1;
		n->path = abs128((i128)now - t0);
	}
	if (m & LCLK_CHANGE_STEP) {
		n->V += c->step_ns;
		n->em += c->step_ns * ONE;
		n->ep += c->step_ns * PS;
	}
	if (m & LCLK_CHANGE_TIME) {
		n->V = c->time_ns;
		n->em = c->time_ns * ONE;
		n->ep = c->time_ns * PS;
		n->nre = 0;
		n->path = 0;
	}
	if (!offset_ok(n->V - now))
		return -EOVERFLOW;
	if (m & LCLK_SET_MAX_DRIFT) {
		n->D = c->max_drift_ppb;
		n->dmult = ref_dmult(c->max_drift_ppb);
	}
	if (m & LCLK_SET_HOLDOVER)
		n->H = c->holdover_ns;
	if (m & LCLK_SET_BOUND) {
		s64 t0 = c->t0_ns ? c->t0_ns : now;
		i128 b = c->bound_ns;

		if (now > t0)
			b += floor40((i128)(now - t0) * n->dmult) + 1;
		if (b > (1LL << 52))
			return -EOVERFLOW;
		/*
		 * A measurement of the clock as it reads: the exact lines start
		 * again from its reading (what the real one lost before the sync
		 * is in the offset measured, not an error the bound must carry).
		 */
		n->em = n->V * ONE;
		n->ep = n->V * PS;
		n->nre = 0;
		n->path = 0;
		n->wppt = 0;	/* max_drift's growth again */
		n->wmult = 0;
		n->wunits = 0;
		n->b0 = (s64)b;
		n->L = now;
		n->status = LCLK_STATUS_SYNCED;
		n->B0 = c->bound_ns * PS;
		if (now > t0)
			n->B0 += (i128)(now - t0) * n->D * 1000;
		/* one floor and the 1 ns for it, and the multiplier's rounding */
		n->bslack = 2 * PS;
		if (now > t0)
			n->bslack += ((i128)(now - t0) * PS + ONE - 1) / ONE;
	}
	if (m & LCLK_SET_UNSYNC)
		n->status = LCLK_STATUS_UNSYNCED;
	/* the module's 1 ns for the re-anchor's floor, unless a sync */
	if (!(m & LCLK_SET_BOUND) && n->status != LCLK_STATUS_UNSYNCED) {
		if (n->b0 >= (1LL << 52)) {
			n->status = LCLK_STATUS_UNSYNCED;
		} else {
			n->b0++;
			n->bslack += PS;
		}
	}
	if ((m & LCLK_CHANGE_WIDEN) && n->status != LCLK_STATUS_UNSYNCED) {
		i128 exact = abs128(n->ep - e0p);

		step = abs128(n->V - r0);
		if (n->b0 > (1LL << 52) - step) {
			n->status = LCLK_STATUS_UNSYNCED;
		} else {
			n->b0 += (s64)step;
			n->B0 += exact;
			n->bslack += abs128(step * PS - exact);
		}
		if ((m & LCLK_SET_RATE) && n->status != LCLK_STATUS_UNSYNCED)
			ref_widen_rate(o, now, n);
	}
	if (n->V < r0 && !(c->flags & LCLK_ALLOW_BACKWARD))
		return -ERANGE;

	/* The true clock. */
	if (n->status == LCLK_STATUS_UNSYNCED) {
		n->from_sync = 0;
	} else if (m & LCLK_SET_BOUND) {
		/* measured at t0 within bound_ns: anywhere there, often the edge */
		s64 t0 = c->t0_ns ? c->t0_ns : now;
		i128 u = chance(50) ? c->bound_ns * PS :
			 (i128)test_between(0, c->bound_ns) * PS +
			 test_between(0, 999999999999LL);

		if (u > c->bound_ns * PS)
			u = c->bound_ns * PS;
		if (chance(50))
			u = -u;
		n->rt = n->ppt + new_dev(n);
		n->TT = t0;
		n->TV = ep_at(n, t0) + u;
		n->sync_tt = n->TT;
		n->sync_tv = n->TV;
		n->sync_rt = n->rt;
		n->from_sync = 1;
	} else if (m & LCLK_CHANGE_WIDEN) {
		/* the step says nothing: the true clock stays, B widened */
	} else if (m & (LCLK_SET_RATE | LCLK_SET_OFFSET | LCLK_CHANGE_STEP |
			LCLK_CHANGE_TIME | LCLK_SET_MAX_DRIFT)) {
		/*
		 * Measured changes without a sync: the true clock is one the
		 * new model's claim holds for; its rate follows a new rate.
		 */
		n->TV = true_at(o, now);
		n->TT = now;
		if (m & LCLK_SET_RATE)
			n->rt = n->ppt + new_dev(n);
		true_clamp(n, now);
		n->from_sync = 0;
	}
	return 0;
}

/* ---- the real code -------------------------------------------------------- */

struct real {
	struct lclk_state st;
	struct lclk_counters ctr;
	struct lclk_page *page;
};

static int real_apply(struct real *x, const struct lclk_change *c, s64 now)
{
	struct lclk_state next;
	struct lclk_step_at at;
	int err;

	err = lclk_check_change(c, MAX_RATE_PPT);
	if (!err)
		err = lclk_next(&x->st, c, now, &next, &at);
	if (err)
		return err;
	x->st = next;
	lclk_count_step(&x->ctr, at.before, at.after);
	return 0;
}

/* ---- the operations ------------------------------------------------------- */

enum op_kind {
	OP_SET, OP_SYNC, OP_STEP, OP_RATE, OP_ADJFINE, OP_ADJTIME,
	OP_SETTIME, OP_SLEEP, OP_CPU, OP_KINDS
};

static const char *const op_name[OP_KINDS] = {
	"set_model", "sync", "step", "rate", "phc_adjfine", "phc_adjtime",
	"phc_settime", "sleep", "cpu_offset",
};

struct op {
	long n;
	enum op_kind kind;
	s64 now;
	struct lclk_change c;
	long scaled_ppm;	/* OP_ADJFINE */
	u32 cpu;		/* OP_CPU */
	s64 cpu_off;
	u32 cpu_flags;
	i128 sleep_err;
	int err;
	struct lclk_state before;
};

static struct op ring[RING];
static long seed_used;

static void print_op(const struct op *p)
{
	const struct lclk_change *c = &p->c;

	printf("#   op %ld at base %lld: %s", p->n, (long long)p->now,
	       op_name[p->kind]);
	if (p->kind == OP_CPU) {
		printf(" cpu %u offset %lld flags %u", p->cpu,
		       (long long)p->cpu_off, p->cpu_flags);
	} else {
		if (p->kind == OP_ADJFINE)
			printf(" scaled_ppm %ld", p->scaled_ppm);
		printf(" modes %#x flags %u t0 %lld offset %lld rate %lld bound %lld holdover %lld drift %u mflags %u step %lld time %lld sleep %lld",
		       c->modes, c->flags, (long long)c->t0_ns,
		       (long long)c->offset_ns, (long long)c->rate_ppt,
		       (long long)c->bound_ns, (long long)c->holdover_ns,
		       c->max_drift_ppb, c->model_flags,
		       (long long)c->step_ns, (long long)c->time_ns,
		       (long long)c->sleep_ns);
	}
	printf(" -> %d\n", p->err);
}

static void print_state(const struct lclk_state *s)
{
	const struct lclk_params *m = &s->params;

	printf("#   state: t0 %lld offset %lld rate %lld mult %lld bound0 %lld last %lld holdover %lld drift %u dmult %lld status %u\n",
	       (long long)m->t0_ns, (long long)m->offset_ns,
	       (long long)m->rate_ppt, (long long)m->rate_mult,
	       (long long)m->bound0_ns, (long long)m->last_update_ns,
	       (long long)m->holdover_ns, m->max_drift_ppb,
	       (long long)m->drift_mult, m->status);
}

/* The seed, and the changes up to op n from the state before the first. */
static void print_history(long n)
{
	long first = n - RING + 1 < 0 ? 0 : n - RING + 1;
	long i;

	printf("# seed %ld: LCLK_DIFF_SEED=%ld LCLK_DIFF_OPS=%ld replays it\n",
	       seed_used, seed_used, n + 1);
	print_state(&ring[first % RING].before);
	for (i = first; i <= n; i++)
		print_op(&ring[i % RING]);
}

/* ---- a class of check: count, worst case, first failure ---------------- */

struct check {
	const char *what;
	long samples, bad;
	long beyond;		/* of them beyond the rounding allowed */
	double worst;		/* ns */
	long worst_op;
	char worst_how[200];
	int printed;
};

/* 10^-12 ns as ns */
static double ns(i128 x)
{
	return (double)x / 1e12;
}

/* A failed sample; the first one not quiet prints how to replay it. */
static __attribute__((format(printf, 5, 6)))
void fail_q(struct check *k, long n, double amount, int quiet,
	    const char *fmt, ...)
{
	va_list ap;

	k->bad++;
	if (amount > k->worst) {
		k->worst = amount;
		k->worst_op = n;
	}
	if (quiet || k->printed++)
		return;
	printf("# FAIL %s at op %ld: ", k->what, n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	print_history(n);
}

#define fail(k, n, amount, ...) fail_q(k, n, amount, 0, __VA_ARGS__)

/* 2^-40 ns to 10^-12 ns, without overflowing 128 bits */
static i128 em_to_ps(i128 x)
{
	return x / ONE * PS + x % ONE * PS / ONE;
}

static struct check k_read = { .what = "real logical == floor(R)" };
static struct check k_trans = { .what = "transitions: errno, status, bound0, last update, PHC mapping, CPU offsets" };
static struct check k_sane = { .what = "reference: |Ep - true| <= B" };
static struct check k_dev = { .what = "|real - Ep| <= 1 ns per re-anchor + 1 ns + 2^-40 of the span" };
static struct check k_dev1 = { .what = "|real - Ep| <= 1 ns" };
static struct check k_bound = { .what = "bound == B within its rounding, t >= last update" };
static struct check k_before = { .what = "bound == B within its rounding, t < last update (timestamps older than the sync)" };
static struct check k_true = { .what = "|real - true| <= bound, t >= last update" };
static struct check k_true_before = { .what = "|real - true| <= bound, t < last update (timestamps older than the sync)" };

/* the parts of |real - Ep|: re-anchoring floors and the multiplier */
static double max_reanchor, max_trunc, max_trunc_hours;
static long max_reanchor_n;

/* ---- one sample ------------------------------------------------------------ */

static void sample(const struct real *x, const struct ref *r, long n, s64 t,
		   int before)
{
	struct lclk_now out, oc;
	i128 rr = r_at(r, t), em = em_at(r, t), ep = ep_at(r, t);
	i128 dev, dev_allowed, age, slack, deficit, err, excess;
	s64 want = (s64)floor40(rr);
	u32 cpu = (u32)test_between(0, NCPU - 1);
	double span, d;
	struct check *k;

	lclk_eval(&x->st.params, x->page, t, -1, &out);
	k_read.samples++;
	if (out.time_ns != want)
		fail(&k_read, n, (double)(out.time_ns > want ?
				out.time_ns - want : want - out.time_ns),
		     "real %lld, floor(R) %lld at base %lld",
		     (long long)out.time_ns, (long long)want, (long long)t);

	k_trans.samples++;
	lclk_eval(&x->st.params, x->page, t, (__s32)cpu, &oc);
	if (oc.time_ns != out.time_ns + r->cpu_off[cpu])
		fail(&k_trans, n, 0, "cpu reading %lld, model %lld + offset %lld",
		     (long long)oc.time_ns, (long long)out.time_ns,
		     (long long)r->cpu_off[cpu]);
	if (out.status != ref_status(r, t))
		fail(&k_trans, n, 0, "status %u, reference %u at base %lld",
		     out.status, ref_status(r, t), (long long)t);

	/* |real - Ep|: what the floors and the multiplier may lose */
	span = (double)(r->path + abs128((i128)t - r->T));
	dev = abs128((i128)out.time_ns * PS - ep);
	dev_allowed = (r->nre + 1) * PS +
		      (r->path + abs128((i128)t - r->T)) * PS / ONE + 1;
	k_dev.samples++;
	k_dev1.samples++;
	if (dev > dev_allowed)
		fail(&k_dev, n, ns(dev - dev_allowed),
		     "|real - Ep| %.3f ns, %ld re-anchors, span %.0f ns",
		     ns(dev), r->nre, span);
	if (dev > PS)
		fail(&k_dev1, n, ns(dev),
		     "|real - Ep| %.3f ns after %ld re-anchors over %.0f ns",
		     ns(dev), r->nre, span);
	d = (double)(em - rr) / (double)ONE;
	if (d > max_reanchor) {
		max_reanchor = d;
		max_reanchor_n = r->nre;
	}
	d = ns(abs128(em_to_ps(em) - ep));
	if (d > max_trunc) {
		max_trunc = d;
		max_trunc_hours = span / HOUR;
	}

	if (r->status == LCLK_STATUS_UNSYNCED) {
		if (out.bound_ns != LCLK_BOUND_UNKNOWN)
			fail(&k_trans, n, 0, "bound %lld, unsynced, at base %lld",
			     (long long)out.bound_ns, (long long)t);
		return;
	}

	/* the reference's own claim */
	k_sane.samples++;
	if (abs128(ep - true_at(r, t)) > b_at(r, t))
		fail(&k_sane, n, ns(abs128(ep - true_at(r, t)) - b_at(r, t)),
		     "|Ep - true| %.3f ns > B %.3f ns at base %lld",
		     ns(abs128(ep - true_at(r, t))), ns(b_at(r, t)),
		     (long long)t);

	/* the bound against the exact one */
	k = before ? &k_before : &k_bound;
	age = abs128((i128)t - r->L);
	/* + the reading's two rounding ns, and the multipliers' units */
	slack = r->bslack + (1 + LCLK_BOUND_ROUNDING_NS) * PS +
		(age * (2 + r->wunits) * PS + ONE - 1) / ONE;
	deficit = b_at(r, t) - (i128)out.bound_ns * PS;
	k->samples++;
	if (abs128(deficit) > slack)
		fail(k, n, ns(abs128(deficit)),
		     "bound %lld ns, exact %.3f ns, at %lld ns from the last update",
		     (long long)out.bound_ns, ns(b_at(r, t)),
		     (long long)((i128)t - r->L));

	/*
	 * The true clock against the real clock and bound: by how much the
	 * bound misses it, and whether the floors and truncations that lines
	 * 4 and 6 allow explain that.
	 */
	k = before ? &k_true_before : &k_true;
	err = abs128((i128)out.time_ns * PS - true_at(r, t));
	excess = err - (i128)out.bound_ns * PS;
	k->samples++;
	if (excess > 0) {
		int beyond = excess > dev_allowed + slack;

		k->beyond += beyond;
		if (ns(excess) > k->worst)
			snprintf(k->worst_how, sizeof(k->worst_how),
				 "|real - Ep| %.3f ns (%ld re-anchors, span %.1f h), bound short of B by %.3f ns, %.0f ns from the last update",
				 ns(dev), r->nre, span / HOUR, ns(deficit),
				 (double)((i128)t - r->L));
		fail_q(k, n, ns(excess), !beyond,
		     "|real - true| %.3f ns > bound %lld ns, at %lld ns from the last update",
		     ns(err), (long long)out.bound_ns,
		     (long long)((i128)t - r->L));
	}
}

/* ---- making changes ---------------------------------------------------- */

static s64 rand_rate(void)
{
	switch (test_between(0, 9)) {
	case 0:
		return 0;
	case 1:
		return sign(MAX_RATE_PPT);
	case 2:
		return sign(MAX_RATE_PPT + test_between(1, 1000));	/* EINVAL */
	case 3:
		return sign(test_between(0, 1000));
	default:
		return test_between(-MAX_RATE_PPT, MAX_RATE_PPT);
	}
}

static s64 rand_bound(void)
{
	if (chance(2))
		return (1LL << 52) - logu(40);	/* at the limit */
	if (chance(1))
		return -1;			/* EINVAL */
	return logu(40);
}

static u32 rand_drift(void)
{
	switch (test_between(0, 7)) {
	case 0:
		return 0;
	case 1:
		return LCLK_MAX_DRIFT_PPB;
	case 2:
		return chance(10) ? LCLK_MAX_DRIFT_PPB + 1 : 1;
	default:
		return (u32)test_between(0, LCLK_MAX_DRIFT_PPB);
	}
}

/* An offset near the clock's, or anywhere, or out of range. */
static s64 rand_offset(const struct real *x, s64 now)
{
	s64 cur = lclk_logical(now, x->st.params.t0_ns,
			       x->st.params.offset_ns,
			       x->st.params.rate_mult) - now;

	if (chance(3))
		return sign((1LL << 62) - logu(30) + (chance(20) ? 5 : 0));
	if (chance(10))
		return test_between(-(1LL << 50), 1LL << 50);
	return cur + sign(logu(36));
}

/* t0 of a set: now (0), a past base time, or (offsets only) a later one. */
static s64 rand_t0(s64 now, int future_ok)
{
	s64 t;

	if (chance(60))
		return 0;
	if (future_ok && chance(10))
		return now + logu(30);
	t = now - logu(40);
	return t < 1 ? 1 : t;
}

static void make_change(struct op *p, const struct real *x)
{
	struct lclk_change *c = &p->c;
	s64 now = p->now;

	memset(c, 0, sizeof(*c));
	switch (p->kind) {
	case OP_SET:
		/*
		 * Not corrections (LCLK_SET_CORRECTION): the reference has no
		 * model of them yet; tests/host/lclk_corr.c holds them to a
		 * true clock of its own.
		 */
		c->modes = (u32)test_between(1, LCLK_SET_CORRECTION - 1);
		c->flags = chance(60) ? LCLK_ALLOW_BACKWARD : 0;
		if (chance(1))
			c->flags |= 2;				/* EINVAL */
		c->t0_ns = rand_t0(now, !(c->modes & LCLK_SET_BOUND));
		c->offset_ns = rand_offset(x, now);
		c->rate_ppt = rand_rate();
		c->bound_ns = rand_bound();
		c->holdover_ns = chance(1) ? -1 : logu(44);
		c->max_drift_ppb = rand_drift();
		c->model_flags = (u32)test_between(0, chance(2) ? 3 : 1);
		break;
	case OP_SYNC:	/* what a servo sends: offset, rate, bound */
		c->modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND;
		if (chance(20))
			c->modes |= LCLK_SET_MAX_DRIFT;
		c->flags = LCLK_ALLOW_BACKWARD;
		c->t0_ns = rand_t0(now, 0);
		c->offset_ns = rand_offset(x, now);
		c->rate_ppt = rand_rate();
		c->bound_ns = rand_bound();
		c->max_drift_ppb = rand_drift();
		break;
	case OP_STEP:
		c->modes = LCLK_CHANGE_STEP;
		c->flags = chance(50) ? LCLK_ALLOW_BACKWARD : 0;
		c->step_ns = chance(2) ? sign((1LL << 62) + 1) : sign(logu(40));
		break;
	case OP_RATE:
		c->modes = LCLK_SET_RATE;
		c->rate_ppt = rand_rate();
		break;
	case OP_ADJFINE:
		if (chance(5))
			p->scaled_ppm = (long)test_rand();	/* any long */
		else
			p->scaled_ppm = (long)test_between(-33000000, 33000000);
		lclk_phc_adjfine(p->scaled_ppm, MAX_RATE_PPT, c);
		c->flags = LCLK_ALLOW_BACKWARD;		/* lclk_ptp_change() */
		break;
	case OP_ADJTIME:
		lclk_phc_adjtime(chance(1) ? sign((1LL << 62) + 1) :
				 sign(logu(40)), c);
		c->flags = LCLK_ALLOW_BACKWARD;
		break;
	case OP_SETTIME:
		lclk_phc_settime(lclk_logical(now, x->st.params.t0_ns,
					      x->st.params.offset_ns,
					      x->st.params.rate_mult) +
				 sign(logu(40)), c);
		c->flags = LCLK_ALLOW_BACKWARD;
		break;
	case OP_SLEEP:
		c->modes = LCLK_CHANGE_SLEEP;
		c->sleep_ns = chance(1) ? 0 : logu(47);	/* 0: EINVAL */
		if (!c->sleep_ns && chance(50))
			c->sleep_ns = 1;
		p->sleep_err = chance(50) ? sign(S) * PS :
			       (i128)test_between(-S, S) * PS;
		break;
	default:
		break;
	}
}

/* The PTP core's scaled_ppm as ppt, exactly, truncated and clamped. */
static s64 ref_adjfine(long scaled_ppm)
{
	i128 ppt = (i128)scaled_ppm * 15625 / 1024;

	if (ppt > MAX_RATE_PPT)
		return MAX_RATE_PPT;
	if (ppt < -MAX_RATE_PPT)
		return -MAX_RATE_PPT;
	return (s64)ppt;
}

static enum op_kind rand_kind(void)
{
	static const int weight[OP_KINDS] = {
		[OP_SET] = 22, [OP_SYNC] = 14, [OP_STEP] = 8, [OP_RATE] = 8,
		[OP_ADJFINE] = 16, [OP_ADJTIME] = 8, [OP_SETTIME] = 5,
		[OP_SLEEP] = 7, [OP_CPU] = 12,
	};
	int w = (int)test_between(0, 99), k;

	for (k = 0; k < OP_KINDS - 1; k++) {
		if (w < weight[k])
			return (enum op_kind)k;
		w -= weight[k];
	}
	return OP_CPU;
}

/* ---- the run --------------------------------------------------------------- */

/* One TAP line. A failure is a TODO only where directive says so. */
static void tap(const struct check *k, const char *directive)
{
	int good = !k->bad;

	tests++;
	if (!good && !directive)
		failures++;
	printf("%s %d - %s: %ld samples, %ld bad", good ? "ok" : "not ok",
	       tests, k->what, k->samples, k->bad);
	if (k->bad)
		printf(", worst %.3f ns at op %ld", k->worst, k->worst_op);
	if (k->worst_how[0])
		printf(" (%s); %ld beyond rounding", k->worst_how, k->beyond);
	if (!good && directive)
		printf(" # TODO %s", directive);
	printf("\n");
}

int main(void)
{
	const char *env_seed = getenv("LCLK_DIFF_SEED");
	const char *env_ops = getenv("LCLK_DIFF_OPS");
	long ops = env_ops ? atol(env_ops) : DEFAULT_OPS;
	long counts[OP_KINDS] = { 0 }, refused = 0, n;
	struct real x;
	struct ref r;
	s64 now;

	seed_used = env_seed ? atol(env_seed) : 20240530;
	test_rng = (__u64)seed_used;
	printf("TAP version 13\n1..9\n# seed %ld, %ld changes\n", seed_used,
	       ops);

	memset(&x, 0, sizeof(x));
	x.page = calloc(1, sizeof(*x.page) + NCPU * sizeof(__s64));
	if (!x.page)
		return 1;
	x.page->ncpus = NCPU;

	/* As lclk_clock_init() starts: at "realtime", unsynced. */
	now = test_between(1, 1000 * S);
	x.st.params.t0_ns = now;
	x.st.params.offset_ns = 1700000000 * S;
	x.st.params.holdover_ns = 60 * S;
	x.st.params.max_drift_ppb = 10000;
	x.st.params.drift_mult = lclk_ppb_to_mult(10000);
	x.st.params.status = LCLK_STATUS_UNSYNCED;

	memset(&r, 0, sizeof(r));
	r.T = now;
	r.V = now + 1700000000 * S;
	r.em = r.V * ONE;
	r.ep = r.V * PS;
	r.H = 60 * S;
	r.D = 10000;
	r.dmult = ref_dmult(10000);
	r.status = LCLK_STATUS_UNSYNCED;

	for (n = 0; n < ops; n++) {
		struct op *p = &ring[n % RING];
		struct ref next;
		int want, i;
		s64 gap, t;

		p->n = n;
		p->kind = rand_kind();
		p->now = now;
		p->before = x.st;
		counts[p->kind]++;

		if (p->kind == OP_CPU) {
			s64 old;

			p->cpu = (u32)test_between(0, NCPU - 1);
			p->cpu_off = chance(2) ? sign(MS + 1) :
				     test_between(-MS, MS);
			p->cpu_flags = chance(50) ? LCLK_ALLOW_BACKWARD : 0;
			old = r.cpu_off[p->cpu];
			/* lclk_set_cpu_offset()'s rules (not host-built) */
			if (p->cpu_off < -MS || p->cpu_off > MS)
				p->err = -EINVAL;
			else if (p->cpu_off < old &&
				 !(p->cpu_flags & LCLK_ALLOW_BACKWARD))
				p->err = -ERANGE;
			else
				p->err = 0;
			if (!p->err) {
				r.cpu_off[p->cpu] = p->cpu_off;
				x.page->cpu_offset_ns[p->cpu] = p->cpu_off;
			}
		} else {
			make_change(p, &x);
			if (p->kind == OP_ADJFINE) {
				k_trans.samples++;
				if (p->c.rate_ppt != ref_adjfine(p->scaled_ppm))
					fail(&k_trans, n, 0,
					     "adjfine(%ld) gave %lld ppt, want %lld",
					     p->scaled_ppm,
					     (long long)p->c.rate_ppt,
					     (long long)ref_adjfine(p->scaled_ppm));
			}
			p->err = real_apply(&x, &p->c, now);
			want = ref_apply(&r, &p->c, now, p->sleep_err, &next);
			k_trans.samples++;
			if (p->err != want)
				fail(&k_trans, n, 0, "errno %d, reference %d",
				     p->err, want);
			if (!want)
				r = next;
			if (!p->err && !want && r.status !=
			    LCLK_STATUS_UNSYNCED &&
			    (x.st.params.bound0_ns != r.b0 ||
			     x.st.params.last_update_ns != r.L))
				fail(&k_trans, n, 0,
				     "bound0 %lld last %lld, reference %lld and %lld",
				     (long long)x.st.params.bound0_ns,
				     (long long)x.st.params.last_update_ns,
				     (long long)r.b0, (long long)r.L);
			if (p->err)
				refused++;
		}

		/* time passes to the next change; sample in between */
		gap = now > (1LL << 61) ? logu(10) : logu(44);
		sample(&x, &r, n, now, 0);
		sample(&x, &r, n, now + gap, 0);
		for (i = 0; i < 2; i++)
			sample(&x, &r, n, now + test_between(0, gap), 0);
		if (r.status != LCLK_STATUS_UNSYNCED && r.from_sync) {
			/* timestamps taken before the sync, converted after */
			t = r.L - (chance(25) ? S : 1 + logu(42));
			sample(&x, &r, n, t, 1);
		}
		now += gap;
		/* the true clock's rate wanders within max_drift */
		if (r.status != LCLK_STATUS_UNSYNCED && chance(25)) {
			r.TV = true_at(&r, now);
			r.TT = now;
			r.rt = r.ppt + new_dev(&r);
		}
	}

	printf("# changes:");
	for (n = 0; n < OP_KINDS; n++)
		printf(" %s %ld", op_name[n], counts[n]);
	printf("; refused %ld; base time at the end %lld s\n", refused,
	       (long long)(now / S));

	tap(&k_read, NULL);
	tap(&k_trans, NULL);
	tap(&k_sane, NULL);

	tap(&k_dev, NULL);
	tap(&k_dev1, "the model loses < 1 ns per re-anchor and < 2^-40 of each span");
	printf("# |real - Ep|'s parts: re-anchoring floors up to %.3f ns (after %ld re-anchors), the multiplier's truncation up to %.3f ns (over %.1f h)\n",
	       max_reanchor, max_reanchor_n, max_trunc, max_trunc_hours);
	tap(&k_bound, NULL);
	tap(&k_before, NULL);
	tap(&k_true, NULL);
	tap(&k_true_before, NULL);
	free(x.page);
	return failures ? 1 : 0;
}
