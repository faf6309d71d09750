// SPDX-License-Identifier: GPL-2.0
/* REALTIME - MONOTONIC across REALTIME steps, for software timestamps. */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "clock_offset.h"
#include "realtime_track.h"

/* Tries per measurement: the narrowest of 3 windows, as for every stamp. */
#define MEASURE_TRIES	3

void realtime_track_init(struct realtime_track *t, int64_t off, int64_t err, int64_t now)
{
	t->off = off;
	t->err = err;
	t->at = now;
	t->stepped = false;
}

bool realtime_track_update(struct realtime_track *t, int64_t off, int64_t err, int64_t now)
{
	bool step = llabs(off - t->off) > err + t->err;

	if (step) {
		t->stepped = true;
		t->old_off = t->off;
		t->old_err = t->err;
		t->step_lo = t->at;
		t->step_hi = now;
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

/* Whether rt - off +- err can lie in [lo, hi]. */
static bool fits(int64_t mono, int64_t err, int64_t lo, int64_t hi)
{
	return mono + err >= lo && mono - err <= hi;
}

int realtime_track_to_mono(const struct realtime_track *t, int64_t rt, int64_t lo,
			   int64_t hi, int64_t *mono, int64_t *err)
{
	int64_t now_mono = rt - t->off, old_mono;
	bool now_fits, old_fits;

	if (!t->stepped) {
		if (!fits(now_mono, t->err, lo, hi))
			return -ERANGE;
		*mono = now_mono;
		*err = t->err;
		return 0;
	}
	/* Taken after the step (its window opened), or before (it closed). */
	old_mono = rt - t->old_off;
	now_fits = fits(now_mono, t->err, lo, hi) && now_mono + t->err >= t->step_lo;
	old_fits = fits(old_mono, t->old_err, lo, hi) && old_mono - t->old_err <= t->step_hi;
	if (now_fits == old_fits)
		return -ERANGE;
	*mono = now_fits ? now_mono : old_mono;
	*err = now_fits ? t->err : t->old_err;
	return 0;
}

int realtime_track_to_rt(const struct realtime_track *t, int64_t mono, int64_t err,
			 int64_t *rt, int64_t *rt_err)
{
	if (t->stepped && mono - err <= t->step_hi)
		return -ERANGE;
	*rt = mono + t->off;
	*rt_err = err + t->err;
	return 0;
}
