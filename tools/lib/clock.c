// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <time.h>

#include "clock.h"
#include "clock_offset.h"

int target_open(struct target_clock *tc, const char *path, bool need_device)
{
	int err;

	tc->path = path;
	tc->logical = false;
	tc->lc.fd = -1;
	tc->lc.page = NULL;
	err = lclk_open(&tc->lc, path);
	if (!err) {
		tc->logical = true;
		return 0;
	}
	if (!need_device && err == -ENOENT)
		return 0;
	return err;
}

void target_close(struct target_clock *tc)
{
	if (tc->logical)
		lclk_close(&tc->lc);
	tc->logical = false;
}

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/*
 * CLOCK_REALTIME - CLOCK_MONOTONIC, read as the middle of the narrowest of
 * a few monotonic-realtime-monotonic windows.
 */
static int64_t realtime_minus_monotonic(void)
{
	int64_t best_width = INT64_MAX, best = 0;
	int i;

	for (i = 0; i < 5; i++) {
		struct timespec a, r, b;
		int64_t width;

		clock_gettime(CLOCK_MONOTONIC, &a);
		clock_gettime(CLOCK_REALTIME, &r);
		clock_gettime(CLOCK_MONOTONIC, &b);
		width = ts_ns(&b) - ts_ns(&a);
		if (width < best_width) {
			best_width = width;
			best = ts_ns(&r) - (ts_ns(&a) + width / 2);
		}
	}
	return best;
}

void target_now(const struct target_clock *tc, struct lclk_now *out)
{
	struct timespec m, r;

	if (tc->logical) {
		lclk_now(&tc->lc, out);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &m);
	clock_gettime(CLOCK_REALTIME, &r);
	out->base_ns = ts_ns(&m);
	out->time_ns = ts_ns(&r);
	out->bound_ns = LCLK_BOUND_UNKNOWN;
	out->status = LCLK_STATUS_UNSYNCED;
	out->cpu = -1;
}

int64_t target_from_base(const struct target_clock *tc, int64_t base_ns)
{
	struct lclk_now n;

	if (!tc->logical)
		return base_ns + realtime_minus_monotonic();
	lclk_from_base(&tc->lc, base_ns, -1, &n);
	return n.time_ns;
}

int target_from_realtime(const struct target_clock *tc, const struct realtime_track *t,
			 int64_t rt, int64_t lo, int64_t hi, int64_t *time, int64_t *base,
			 int64_t *err)
{
	int r = realtime_track_to_mono(t, rt, lo, hi, base, err);

	if (!tc->logical) {
		if (r)
			*base = rt - t->off;
		*time = rt;
		*err = 0;
		return 0;
	}
	if (r)
		return r;
	*err += 1;	/* the logical clock's reading rounds */
	*time = target_from_base(tc, *base);
	return 0;
}

void target_mark(const struct target_clock *tc, struct vmclock_mark *mark)
{
	__u64 marker = 0;
	int err = tc->logical ? lclk_disruption_marker(&tc->lc, &marker) : -EOPNOTSUPP;

	mark->vmclock = err != -EOPNOTSUPP;
	mark->known = !err;
	mark->marker = marker;
}

const char *target_name(const struct target_clock *tc)
{
	return tc->logical ? tc->path : "system clock";
}
