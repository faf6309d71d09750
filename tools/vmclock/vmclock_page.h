/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/vmclock/: other subsystems include this header.
 *
 * The time a hypervisor publishes in its vmclock page (Linux 6.13+,
 * include/uapi/linux/vmclock-abi.h): a counter value paired with the time
 * it stood for, the counter's period, and the errors of both. Parsing a
 * copy of the page (taken under its seq_count) into what a measurement
 * needs, refusing every page that makes no claim lclk can turn into a
 * bound; and the time at a counter value, in exact fixed point, with the
 * bound that goes with it. No device, no counter read: pure functions, so
 * the host tests check them against arithmetic of their own.
 */
#ifndef LCLK_VMCLOCK_PAGE_H
#define LCLK_VMCLOCK_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The page's layout, as vmclock-abi.h defines it (every field
 * little-endian; the headers of Debian 12 do not have it). Fields the
 * hypervisor changes are read under seq_count.
 */
struct vmclock_abi_page {
	uint32_t magic;
	uint32_t size;
	uint16_t version;
	uint8_t counter_id;
	uint8_t time_type;
	uint32_t seq_count;		/* odd while the hypervisor writes */
	uint64_t disruption_marker;
	uint64_t flags;
	uint8_t pad[2];
	uint8_t clock_status;
	uint8_t leap_second_smearing_hint;
	uint16_t tai_offset_sec;
	uint8_t leap_indicator;
	uint8_t counter_period_shift;
	uint64_t counter_value;
	uint64_t counter_period_frac_sec;	/* 2^-(64 + shift) s */
	uint64_t counter_period_esterror_rate_frac_sec;
	uint64_t counter_period_maxerror_rate_frac_sec;
	uint64_t time_sec;
	uint64_t time_frac_sec;			/* 2^-64 s */
	uint64_t time_esterror_nanosec;
	uint64_t time_maxerror_nanosec;
	uint64_t vm_generation_counter;
};

#define VMCLOCK_PAGE_MAGIC		0x4b4c4356	/* "VCLK" */
#define VMCLOCK_PAGE_VERSION		1

#define VMCLOCK_COUNTER_ARM_VCNT	0
#define VMCLOCK_COUNTER_X86_TSC		1
#define VMCLOCK_COUNTER_INVALID		0xff	/* QEMU's: it fills no time */

#define VMCLOCK_TIME_UTC		0
#define VMCLOCK_TIME_TAI		1
#define VMCLOCK_TIME_MONOTONIC		2
#define VMCLOCK_TIME_SMEARED		3
#define VMCLOCK_TIME_MAYBE_SMEARED	4

#define VMCLOCK_STATUS_UNKNOWN		0
#define VMCLOCK_STATUS_INITIALIZING	1
#define VMCLOCK_STATUS_SYNCHRONIZED	2
#define VMCLOCK_STATUS_FREERUNNING	3
#define VMCLOCK_STATUS_UNRELIABLE	4

#define VMCLOCK_FLAG_TAI_OFFSET_VALID		(1ULL << 0)
#define VMCLOCK_FLAG_DISRUPTION_SOON		(1ULL << 1)
#define VMCLOCK_FLAG_DISRUPTION_IMMINENT	(1ULL << 2)
#define VMCLOCK_FLAG_PERIOD_MAXERROR_VALID	(1ULL << 4)
#define VMCLOCK_FLAG_TIME_MAXERROR_VALID	(1ULL << 6)

#define VMCLOCK_LEAP_NONE		0
#define VMCLOCK_LEAP_PRE_POS		1	/* an insertion at the month's end */
#define VMCLOCK_LEAP_PRE_NEG		2	/* a deletion at the month's end */
#define VMCLOCK_LEAP_POS		3	/* during 23:59:60 */
#define VMCLOCK_LEAP_POST_POS		4
#define VMCLOCK_LEAP_POST_NEG		5

/*
 * Rounding of vmclock_time_at(): the true time is in
 * [time_ns, time_ns + VMCLOCK_ROUNDING_NS) of the page's exact one.
 */
#define VMCLOCK_ROUNDING_NS		2

/* What a measurement takes from a page that claims a bound. */
struct vmclock_params {
	uint64_t marker;		/* disruption_marker */
	uint64_t counter_value;
	uint64_t period;		/* 2^-(64 + shift) s per count */
	uint64_t period_maxerror;	/* same unit */
	uint8_t shift;
	uint64_t time_sec;		/* at counter_value */
	uint64_t time_frac;		/* 2^-64 s */
	uint64_t maxerror_ns;		/* of the time at counter_value */
	bool tai;			/* time_type TAI, else UTC */
	/*
	 * TAI - UTC (tai_offset_sec, 37 in 2026) where the page says it is
	 * valid and it is positive: UAPI.13 VMClock makes it TAI - UTC,
	 * ptp_vmclock.c's tai_adjust() adds it to TAI to make UTC. Of either
	 * sign only the spec's is taken, and the other has not been seen.
	 */
	bool utc_offset_valid;
	int utc_offset;
	int leap;			/* LEAP_NONE, LEAP_INSERT, LEAP_DELETE */
	uint8_t leap_indicator;		/* the page's, VMCLOCK_LEAP_* */
	uint64_t flags;
};

/*
 * A copy of the page, len bytes of it (what the file or device had),
 * into *p. Returns 0, or -errno with the reason in err: a page that is
 * not a vmclock's (-EINVAL), or one with no time to give with a bound
 * (-ENODATA: clock_status not SYNCHRONIZED, a time that is not UTC or
 * TAI, no maximum error of the time or of the period, inside a leap
 * second), or a counter this build cannot read (-EOPNOTSUPP). The
 * hypervisor's clock_status comes first: a page with no time in it
 * (QEMU's) is refused for that, not for its counter.
 */
int vmclock_parse(const void *page, size_t len, struct vmclock_params *p,
		  char *err, size_t errlen);

/* The time the page gives at a counter reading, and its bound. */
struct vmclock_time {
	int64_t time_ns;	/* since 1970, UTC or TAI as the page counts */
	int64_t bound_ns;	/* |true time - time_ns| <= bound_ns */
	int64_t delta;		/* counter - counter_value */
};

/*
 * At counter (which may be before counter_value): the page's time
 * extrapolated over the counts since counter_value, and the bound
 * maxerror + |delta| x period_maxerror + rounding (UAPI.13 VMClock, "Time
 * error calculation": the true time is within T1 +- T_maxerr + (P +-
 * P_maxerr)(C_now - C1)). Returns 0, -ERANGE when the result does not fit
 * int64_t ns (counter impossibly far from counter_value, a time past
 * 2262), or -EDOM when a UTC time would be extrapolated across the leap
 * second its page announces (from 23:59:59 of the month's last day on,
 * or back over the start of the month after one): 1 s off, since the
 * counts know no leap.
 */
int vmclock_time_at(const struct vmclock_params *p, uint64_t counter,
		    struct vmclock_time *t);

#endif /* LCLK_VMCLOCK_PAGE_H */
