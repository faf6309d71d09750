/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Readings of an instance checked against a truth that no adjtimex call
 * moves: a line of CLOCK_MONOTONIC_RAW, truth = raw + line, known within
 * line_err, stepped by step from the truth's time at on (a leap second;
 * INT64_MAX: never). For the guest tests that slew or step what lies
 * under logical time (lclk_slew, lclk_leap).
 */
#ifndef LCLK_TRUTH_H
#define LCLK_TRUTH_H

#include "lclk_test.h"

struct lclk_truth {
	__s64 line, line_err;	/* logical - raw, and how well it is known */
	__s64 at, step;
};

/* What a run of readings found against the truth. */
struct lclk_truth_check {
	long readings;
	long vouched;		/* SYNCED or HOLDOVER */
	long straddling;	/* the truth stepped between the raw readings */
	long violations;
	__s64 worst;		/* largest |err| - bound among vouched readings */
	__s64 max_err;
	__s64 max_bound;
};

static inline void lclk_truth_start(struct lclk_truth_check *s)
{
	memset(s, 0, sizeof(*s));
	s->worst = INT64_MIN;
}

/*
 * The line the instance is on now, from the tightest of 20 brackets of a
 * reading by two raw readings: where logical time runs as raw does (a
 * rate of 0, no NTP in the guest), the truth from here on. Never steps.
 */
static inline void lclk_truth_line(const struct lclk_clock *c,
				   struct lclk_truth *t)
{
	struct lclk_now n;
	__s64 r1, r2;
	int i;

	t->line_err = INT64_MAX;
	t->at = INT64_MAX;
	t->step = 0;
	for (i = 0; i < 20; i++) {
		r1 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
		lclk_now(c, &n);
		r2 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
		if ((r2 - r1) / 2 + 1 < t->line_err) {
			t->line_err = (r2 - r1) / 2 + 1;
			t->line = n.time_ns - (r1 + (r2 - r1) / 2);
		}
	}
}

/*
 * One reading between two raw readings: its truth is known to within
 * half their distance, which counts in the reading's favour; one whose
 * truth stepped in between is not judged.
 */
static inline void lclk_truth_check_one(struct lclk_truth_check *s,
					const struct lclk_truth *t,
					const struct lclk_now *n,
					__s64 r1, __s64 r2)
{
	__s64 mid = r1 + (r2 - r1) / 2 + t->line;
	__s64 err;

	s->readings++;
	if (r1 + t->line < t->at && r2 + t->line >= t->at) {
		s->straddling++;
		return;
	}
	if (mid >= t->at)
		mid += t->step;
	err = llabs(n->time_ns - mid) - (r2 - r1) / 2 - t->line_err - 1;
	if (err > s->max_err)
		s->max_err = err;
	if (n->status != LCLK_STATUS_SYNCED && n->status != LCLK_STATUS_HOLDOVER)
		return;
	s->vouched++;
	if (n->bound_ns > s->max_bound)
		s->max_bound = n->bound_ns;
	if (err - n->bound_ns > s->worst)
		s->worst = err - n->bound_ns;
	if (err > n->bound_ns && s->violations++ < 3)
		fprintf(stderr, "# violation: logical %lld, error %lld ns, bound %lld ns\n",
			(long long)n->time_ns, (long long)err,
			(long long)n->bound_ns);
}

/* Read the page and GET_TIME in turn for ms milliseconds. */
static inline void lclk_truth_read_for(const struct lclk_clock *c, int ms,
				       const struct lclk_truth *t,
				       struct lclk_truth_check *s)
{
	__s64 end = lclk_clock_ns(CLOCK_MONOTONIC_RAW) + ms * 1000000LL;
	struct lclk_now n;
	__s64 r1, r2;

	while ((r1 = lclk_clock_ns(CLOCK_MONOTONIC_RAW)) < end) {
		lclk_now(c, &n);
		r2 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
		lclk_truth_check_one(s, t, &n, r1, r2);
		r1 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
		lclk_now_ioctl(c, &n);
		r2 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
		lclk_truth_check_one(s, t, &n, r1, r2);
	}
}

#endif /* LCLK_TRUTH_H */
