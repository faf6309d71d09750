// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "poll_sched.h"

void poll_sched_init(struct poll_sched *ps, int64_t min_ns, int64_t max_ns,
		     unsigned int fastpolls, int64_t disturbance_ns)
{
	ps->min_ns = min_ns;
	ps->max_ns = max_ns;
	ps->fastpolls = fastpolls;
	ps->disturbance_ns = disturbance_ns;
	ps->interval_ns = min_ns;
	ps->fast_left = fastpolls;
}

static void back_off(struct poll_sched *ps)
{
	if (ps->fast_left) {
		ps->fast_left--;
		ps->interval_ns = ps->min_ns;
		return;
	}
	ps->interval_ns = ps->interval_ns > ps->max_ns / 2 ? ps->max_ns : ps->interval_ns * 2;
}

void poll_sched_update(struct poll_sched *ps, int64_t offset_ns, bool disturbed)
{
	if (disturbed || llabs(offset_ns) > ps->disturbance_ns) {
		ps->interval_ns = ps->min_ns;
		ps->fast_left = ps->fastpolls;
		return;
	}
	back_off(ps);
}

void poll_sched_failed(struct poll_sched *ps)
{
	back_off(ps);
}
