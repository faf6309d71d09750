// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the vmclock page parser (vmclock_page.h): the
 * first 8 bytes are the counter read, the rest the page as the file or
 * device gave it, of any length. Any page is refused with a reason or
 * parsed; the time of a parsed page at the counter either does not fit
 * (-ERANGE), crosses the leap second a UTC page announces (-EDOM), or is
 * a time since 1970 with a bound of at least the page's maxerror and the
 * rounding; one count later is no earlier, and its bound, away from
 * counter_value, no smaller. A TAI - UTC taken is positive.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vmclock/vmclock_page.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmclock_params p;
	struct vmclock_time t, u;
	char err[192];
	uint64_t counter;
	int r;

	if (size < sizeof(counter))
		return 0;
	memcpy(&counter, data, sizeof(counter));
	err[0] = 0;
	r = vmclock_parse(data + sizeof(counter), size - sizeof(counter), &p, err, sizeof(err));
	if (r) {
		if ((r != -EINVAL && r != -ENODATA && r != -EOPNOTSUPP) || !err[0] ||
		    !memchr(err, 0, sizeof(err)))
			abort();
		return 0;
	}
	if (p.shift >= 64 || !p.period || p.leap < 0 || p.leap > 2)
		abort();
	r = vmclock_time_at(&p, counter, &t);
	if (r) {
		if (r != -ERANGE && (r != -EDOM || p.tai || p.leap_indicator == VMCLOCK_LEAP_NONE))
			abort();
		return 0;
	}
	if (p.utc_offset_valid && p.utc_offset <= 0)
		abort();
	if (t.time_ns < 0 || t.bound_ns < VMCLOCK_ROUNDING_NS ||
	    (uint64_t)t.bound_ns < p.maxerror_ns ||
	    t.delta != (int64_t)(counter - p.counter_value))
		abort();
	if (t.delta == INT64_MAX || vmclock_time_at(&p, counter + 1, &u))
		return 0;
	if (u.time_ns < t.time_ns || (t.delta >= 0 && u.bound_ns < t.bound_ns))
		abort();
	return 0;
}
