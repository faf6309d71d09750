// SPDX-License-Identifier: GPL-2.0
/* REALTIME - MONOTONIC across REALTIME steps, for software timestamps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock_offset.h"
#include "realtime_track.h"

/* Tries per measurement: the narrowest of 3 windows, as for every stamp. */
#define MEASURE_TRIES	3

void realtime_track_init(struct realtime_track *t, int64_t off, int64_t err, int64_t now)
{
	t->off = t->best_off = off;
	t->err = t->best_err = err;
	t->at = t->best_at = now;
	t->nsteps = 0;
	t->forgot_lo = t->forgot_hi = INT64_MIN;
}

bool realtime_track_update(struct realtime_track *t, int64_t off, int64_t err, int64_t now)
{
	bool from_last = llabs(off - t->off) > err + t->err;
	bool step = from_last || llabs(off - t->best_off) > err + t->best_err;

	if (step) {
		if (t->nsteps == REALTIME_TRACK_STEPS) {
			t->forgot_lo = t->steps[REALTIME_TRACK_STEPS - 1].lo;
			t->forgot_hi = t->steps[REALTIME_TRACK_STEPS - 1].hi;
			t->nsteps--;
		}
		memmove(&t->steps[1], &t->steps[0], t->nsteps * sizeof(t->steps[0]));
		t->nsteps++;
		/* After the last measurement, or only after the narrowest. */
		t->steps[0].old_off = from_last ? t->off : t->best_off;
		t->steps[0].old_err = from_last ? t->err : t->best_err;
		t->steps[0].lo = from_last ? t->at : t->best_at;
		t->steps[0].hi = now;
	}
	if (step || err <= t->best_err) {
		t->best_off = off;
		t->best_err = err;
		t->best_at = now;
	}
	t->off = off;
	t->err = err;
	t->at = now;
	return step;
}

static int measure(struct realtime_track *t, bool start)
{
	int64_t off, width;
	int r = clock_offset_from_mono(CLOCK_REALTIME, MEASURE_TRIES, &off, &width);

	if (r)
		return r;
	if (start)
		realtime_track_init(t, off, (width + 1) / 2, monotonic_ns());
	else
		realtime_track_update(t, off, (width + 1) / 2, monotonic_ns());
	return 0;
}

int realtime_track_start(struct realtime_track *t)
{
	return measure(t, true);
}

int realtime_track_measure(struct realtime_track *t)
{
	return measure(t, false);
}

/*
 * Difference i: 0 the one of now, i >= 1 the one before step i - 1; and
 * the CLOCK_MONOTONIC span it can have been in force over: from the
 * opening of the window of the step that began it (INT64_MIN: from the
 * start, or before a step forgotten) to the close of the next one's.
 */
static void difference(const struct realtime_track *t, unsigned int i, int64_t *off,
		       int64_t *err, int64_t *from, int64_t *until)
{
	*off = i ? t->steps[i - 1].old_off : t->off;
	*err = i ? t->steps[i - 1].old_err : t->err;
	*from = i < t->nsteps ? t->steps[i].lo : t->forgot_lo;
	*until = i ? t->steps[i - 1].hi : INT64_MAX;
}

/* Whether mono +- err can lie in [lo, hi]. */
static bool fits(int64_t mono, int64_t err, int64_t lo, int64_t hi)
{
	return mono + err >= lo && mono - err <= hi;
}

int realtime_track_to_mono(const struct realtime_track *t, int64_t rt, int64_t lo,
			   int64_t hi, int64_t *mono, int64_t *err)
{
	unsigned int i, found = 0;

	/* Taken under a difference forgotten, for all the caller knows. */
	if (lo != INT64_MIN && t->forgot_hi != INT64_MIN && lo <= t->forgot_hi)
		return -ERANGE;
	for (i = 0; i <= t->nsteps; i++) {
		int64_t off, e, from, until, m;

		difference(t, i, &off, &e, &from, &until);
		m = rt - off;
		if (!fits(m, e, lo, hi) || !fits(m, e, from, until))
			continue;
		if (found++)
			return -ERANGE;
		*mono = m;
		*err = e;
	}
	return found ? 0 : -ERANGE;
}

int realtime_track_to_rt(const struct realtime_track *t, int64_t mono, int64_t err,
			 int64_t *rt, int64_t *rt_err)
{
	unsigned int i;

	/* Difference i: after the window of step i (if any), before step i - 1's. */
	for (i = 0; i < t->nsteps && mono - err <= t->steps[i].hi; i++)
		;
	if (i && mono + err >= t->steps[i - 1].lo)
		return -ERANGE;		/* within a step's window */
	if (i == t->nsteps && t->forgot_hi != INT64_MIN && mono - err <= t->forgot_hi)
		return -ERANGE;		/* maybe before a step forgotten */
	*rt = mono + (i ? t->steps[i - 1].old_off : t->off);
	*rt_err = err + (i ? t->steps[i - 1].old_err : t->err);
	return 0;
}
