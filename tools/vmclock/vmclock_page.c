// SPDX-License-Identifier: GPL-2.0
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sync/leap.h"
#include "vmclock_page.h"

#define NS_PER_SEC	1000000000ULL

/* The page must reach the time's maximum error: all a bound needs. */
#define VMCLOCK_NEEDED	(offsetof(struct vmclock_abi_page, time_maxerror_nanosec) + \
			 sizeof(uint64_t))

/* vmclock-abi.h's offsets, which the hypervisor writes to */
_Static_assert(offsetof(struct vmclock_abi_page, counter_value) == 40 &&
	       offsetof(struct vmclock_abi_page, time_maxerror_nanosec) == 96 &&
	       sizeof(struct vmclock_abi_page) == 112, "vmclock page layout");

/*
 * Neither the time nor the counts since counter_value (nor their error)
 * may reach 2^34 s (year 2514): past int64_t ns anyway, and it keeps the
 * sums below in 128 bits and the seconds times 10^9 in 64.
 */
#define VMCLOCK_MAX_SEC_LOG2	34

static const char *status_name(unsigned int s)
{
	static const char *const names[] = {
		"UNKNOWN", "INITIALIZING", "SYNCHRONIZED", "FREERUNNING", "UNRELIABLE"
	};

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "invalid";
}

static int check_time_type(unsigned int type, char *err, size_t errlen)
{
	switch (type) {
	case VMCLOCK_TIME_UTC:
	case VMCLOCK_TIME_TAI:
		return 0;
	case VMCLOCK_TIME_MONOTONIC:
		snprintf(err, errlen, "its time is MONOTONIC, from no epoch: not a time of day");
		break;
	case VMCLOCK_TIME_SMEARED:
	case VMCLOCK_TIME_MAYBE_SMEARED:
		/* the ABI never smears; a smear has no period to bound it with */
		snprintf(err, errlen, "its time is%s smeared (time_type %u), which the ABI does not support: no bound",
			 type == VMCLOCK_TIME_MAYBE_SMEARED ? " maybe" : "", type);
		break;
	default:
		snprintf(err, errlen, "unknown time_type %u", type);
		break;
	}
	return -ENODATA;
}

/*
 * As the project's leap indicator (NTP's), counted only on the last day
 * of June or December (leap_on_day()): "at the month's end" is that day.
 * After the leap (POST_*) there is none to expect. During 23:59:60 the
 * seconds since 1970 are ambiguous: no time then.
 */
static int leap_of(unsigned int li, int *leap, char *err, size_t errlen)
{
	switch (li) {
	case VMCLOCK_LEAP_NONE:
	case VMCLOCK_LEAP_POST_POS:
	case VMCLOCK_LEAP_POST_NEG:
		*leap = LEAP_NONE;
		return 0;
	case VMCLOCK_LEAP_PRE_POS:
		*leap = LEAP_INSERT;
		return 0;
	case VMCLOCK_LEAP_PRE_NEG:
		*leap = LEAP_DELETE;
		return 0;
	case VMCLOCK_LEAP_POS:
		snprintf(err, errlen, "inside a leap second (23:59:60): no time until it ends");
		return -ENODATA;
	}
	snprintf(err, errlen, "unknown leap_indicator %u", li);
	return -ENODATA;
}

static int check_counter(unsigned int id, char *err, size_t errlen)
{
#if defined(__x86_64__) || defined(__i386__)
	if (id == VMCLOCK_COUNTER_X86_TSC)
		return 0;
#endif
	snprintf(err, errlen, "its counter (counter_id %u%s) is not the x86 TSC, the only one lclkctl reads",
		 id, id == VMCLOCK_COUNTER_INVALID ? ", INVALID" : "");
	return -EOPNOTSUPP;
}

int vmclock_parse(const void *page, size_t len, struct vmclock_params *p,
		  char *err, size_t errlen)
{
	struct vmclock_abi_page v;
	uint64_t need = VMCLOCK_FLAG_TIME_MAXERROR_VALID | VMCLOCK_FLAG_PERIOD_MAXERROR_VALID;
	int r;

	memset(&v, 0, sizeof(v));
	memcpy(&v, page, len < sizeof(v) ? len : sizeof(v));
	if (len < offsetof(struct vmclock_abi_page, seq_count) ||
	    le32toh(v.magic) != VMCLOCK_PAGE_MAGIC) {
		snprintf(err, errlen, "not a vmclock page (no magic \"VCLK\")");
		return -EINVAL;
	}
	if (le16toh(v.version) != VMCLOCK_PAGE_VERSION) {
		snprintf(err, errlen, "vmclock version %u, not %u", le16toh(v.version),
			 VMCLOCK_PAGE_VERSION);
		return -EINVAL;
	}
	if (le32toh(v.size) < VMCLOCK_NEEDED || len < VMCLOCK_NEEDED) {
		snprintf(err, errlen, "the page (size %u, %zu bytes read) ends before its time's fields (%zu)",
			 le32toh(v.size), len, VMCLOCK_NEEDED);
		return -EINVAL;
	}
	if (v.clock_status != VMCLOCK_STATUS_SYNCHRONIZED) {
		/* FREERUNNING included: the hypervisor claims no bound then */
		snprintf(err, errlen, "the hypervisor's clock is %s (clock_status %u), not SYNCHRONIZED",
			 status_name(v.clock_status), v.clock_status);
		return -ENODATA;
	}
	r = check_time_type(v.time_type, err, errlen);
	if (!r)
		r = check_counter(v.counter_id, err, errlen);
	if (r)
		return r;
	memset(p, 0, sizeof(*p));
	p->flags = le64toh(v.flags);
	if ((p->flags & need) != need) {
		snprintf(err, errlen, "no maximum error of the %s (flags %#llx): no bound",
			 p->flags & VMCLOCK_FLAG_TIME_MAXERROR_VALID ? "counter's period" : "time",
			 (unsigned long long)p->flags);
		return -ENODATA;
	}
	r = leap_of(v.leap_indicator, &p->leap, err, errlen);
	if (r)
		return r;
	if (v.counter_period_shift >= 64 || !v.counter_period_frac_sec) {
		snprintf(err, errlen, "counter period %llu >> %u is not a period",
			 (unsigned long long)le64toh(v.counter_period_frac_sec),
			 v.counter_period_shift);
		return -EINVAL;
	}
	p->marker = le64toh(v.disruption_marker);
	p->counter_value = le64toh(v.counter_value);
	p->period = le64toh(v.counter_period_frac_sec);
	p->period_maxerror = le64toh(v.counter_period_maxerror_rate_frac_sec);
	p->shift = v.counter_period_shift;
	p->time_sec = le64toh(v.time_sec);
	p->time_frac = le64toh(v.time_frac_sec);
	p->maxerror_ns = le64toh(v.time_maxerror_nanosec);
	p->tai = v.time_type == VMCLOCK_TIME_TAI;
	p->leap_indicator = v.leap_indicator;
	if ((p->flags & VMCLOCK_FLAG_TAI_OFFSET_VALID) && (int16_t)le16toh(v.tai_offset_sec) > 0) {
		p->utc_offset_valid = true;
		p->utc_offset = (int16_t)le16toh(v.tai_offset_sec);
	}
	return 0;
}

/* x / 2^(64 + shift) s in ns, rounded up: x < 2^(64 + shift + 34). */
static uint64_t ceil_ns(unsigned __int128 x, unsigned int shift)
{
	/* in 2^-64 s, rounded up */
	unsigned __int128 y = (x >> shift) + !!(x & (((unsigned __int128)1 << shift) - 1));

	return (uint64_t)(y >> 64) * NS_PER_SEC +
	       (uint64_t)(((y & UINT64_MAX) * NS_PER_SEC + UINT64_MAX) >> 64);
}

/* The first second of sec's month (UTC), or of the month after. */
static int64_t month_start(uint64_t sec, bool next)
{
	time_t t = (time_t)sec;
	struct tm tm;

	gmtime_r(&t, &tm);
	tm.tm_mday = 1;
	tm.tm_hour = 0;
	tm.tm_min = 0;
	tm.tm_sec = 0;
	tm.tm_mon += next;	/* timegm() carries December into January */
	return (int64_t)timegm(&tm);
}

/*
 * A UTC time extrapolated across the leap second its page announces: at
 * or after 23:59:59 of the month's last day (which a deletion skips, and
 * after which an insertion repeats a second), or, after one, before the
 * first second of the month is over.
 */
static bool across_leap(const struct vmclock_params *p, int64_t time_ns)
{
	int64_t sec = time_ns / (int64_t)NS_PER_SEC;

	if (p->tai)
		return false;
	switch (p->leap_indicator) {
	case VMCLOCK_LEAP_PRE_POS:
	case VMCLOCK_LEAP_PRE_NEG:
		return sec >= month_start(p->time_sec, true) - 1;
	case VMCLOCK_LEAP_POST_POS:
	case VMCLOCK_LEAP_POST_NEG:
		return sec < month_start(p->time_sec, false) + 1;
	}
	return false;
}

int vmclock_time_at(const struct vmclock_params *p, uint64_t counter,
		    struct vmclock_time *t)
{
	int64_t delta = (int64_t)(counter - p->counter_value);
	uint64_t n = delta < 0 ? -(uint64_t)delta : (uint64_t)delta;
	/* |delta| x period and its error, in 2^-(64 + shift) s: < 2^128 */
	unsigned __int128 span = (unsigned __int128)n * p->period;
	unsigned __int128 drift = (unsigned __int128)n * p->period_maxerror;
	unsigned __int128 at, el, bound;
	uint64_t sec;

	if (p->time_sec >> VMCLOCK_MAX_SEC_LOG2 || span >> (64 + p->shift) >> VMCLOCK_MAX_SEC_LOG2 ||
	    drift >> (64 + p->shift) >> VMCLOCK_MAX_SEC_LOG2)
		return -ERANGE;
	/*
	 * The time at counter in 2^-64 s, as ptp_vmclock.c computes it,
	 * rounded down: counts after counter_value truncate, counts before
	 * it round away from it.
	 */
	at = (unsigned __int128)p->time_sec << 64 | p->time_frac;
	el = span >> p->shift;
	if (delta >= 0) {
		at += el;
	} else {
		if (span & (((unsigned __int128)1 << p->shift) - 1))
			el++;
		if (el > at)
			return -ERANGE;
		at -= el;
	}
	sec = (uint64_t)(at >> 64);
	if (sec >= INT64_MAX / NS_PER_SEC)
		return -ERANGE;
	/* the fraction to ns, rounded down: with the first, < 2 ns in all */
	t->time_ns = (int64_t)(sec * NS_PER_SEC +
			       (uint64_t)(((at & UINT64_MAX) * NS_PER_SEC) >> 64));
	bound = (unsigned __int128)p->maxerror_ns + ceil_ns(drift, p->shift) +
		VMCLOCK_ROUNDING_NS;
	if (bound > INT64_MAX)
		return -ERANGE;
	if (across_leap(p, t->time_ns))
		return -EDOM;
	t->bound_ns = (int64_t)bound;
	t->delta = delta;
	return 0;
}
