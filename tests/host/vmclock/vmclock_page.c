// SPDX-License-Identifier: GPL-2.0
/*
 * The vmclock page's time (vmclock_page.h): the time at a counter value
 * against exact arithmetic of the test's own, grouped otherwise than the
 * code's (the period's product split at the second, each part times 10^9
 * with its remainder kept): time_ns within VMCLOCK_ROUNDING_NS below the
 * page's exact time, the bound at least maxerror + the period's error over
 * the counts + that rounding, and within 4 ns of it. Then every page that
 * makes no claim a bound can come from, refused with its reason; the leap
 * indicator; TAI.
 */
#include <errno.h>
#include <string.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "rand.h"
#include "sync/leap.h"
#include "vm_pages.h"
#include "vmclock/vmclock_page.h"

typedef unsigned __int128 u128;
typedef __int128 s128;

#define E9	1000000000ULL

struct exact {
	s128 floor_ns;		/* floor of the page's exact time, in ns */
	s128 drift_ns;		/* ceil of |delta| x period_maxerror, in ns */
};

/*
 * time_sec * 10^9 + time_frac * 10^9 / 2^64 + delta * period * 10^9 /
 * 2^(64 + shift), each part split into whole ns and a remainder, the
 * remainders summed last. shift <= 30 and |delta| < 2^62 keep it in 128
 * bits.
 */
static struct exact exact(const struct vmclock_abi_page *v, __u64 counter)
{
	unsigned int s = v->counter_period_shift;
	s128 d = (__s64)(counter - v->counter_value);
	u128 one = (u128)1 << (64 + s);
	u128 b = (u128)v->time_frac_sec * E9;		/* / 2^64 */
	s128 dp = d * (s128)v->counter_period_frac_sec;	/* / 2^(64 + s) */
	s128 q = dp >> (64 + s);			/* floor */
	u128 r = (u128)(dp - q * (s128)one);		/* in [0, one) */
	u128 c = r * E9;				/* / 2^(64 + s) */
	u128 rest = ((b & UINT64_MAX) << s) + (c & (one - 1));
	u128 x = (u128)(d < 0 ? -d : d) * v->counter_period_maxerror_rate_frac_sec;
	struct exact e;

	e.floor_ns = (s128)v->time_sec * E9 + (s128)(b >> 64) + q * (s128)E9 +
		     (s128)(c >> (64 + s)) + (s128)(rest >> (64 + s));
	e.drift_ns = (s128)(x >> (64 + s)) * E9 +
		     (s128)(((x & (one - 1)) * E9 + one - 1) >> (64 + s));
	return e;
}

static struct vmclock_abi_page *page(void)
{
	return (struct vmclock_abi_page *)test_vmclock_new(42);
}

/* The code's result at counter against the exact one. */
static void check_at(struct __test_metadata *_metadata,
		     const struct vmclock_abi_page *v, __u64 counter)
{
	struct vmclock_params p;
	struct vmclock_time t;
	struct exact e = exact(v, counter);
	s128 need;
	char err[192];

	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	ASSERT_EQ(0, vmclock_time_at(&p, counter, &t));
	EXPECT_EQ((__s64)(counter - v->counter_value), t.delta);
	/* exact in [time_ns, time_ns + 2): its floor is time_ns or the ns after */
	EXPECT_TRUE(t.time_ns == e.floor_ns || t.time_ns + 1 == e.floor_ns) {
		TH_LOG("counter %llu: time_ns %lld, exact floor %lld", (unsigned long long)counter,
		       (long long)t.time_ns, (long long)e.floor_ns);
	}
	/* maxerror + drift + (exact - time_ns), the last < floor + 1 - time_ns */
	need = (s128)v->time_maxerror_nanosec + e.drift_ns + e.floor_ns + 1 - t.time_ns;
	EXPECT_TRUE(t.bound_ns >= need && t.bound_ns <= need + 4) {
		TH_LOG("counter %llu: bound %lld, needed %lld", (unsigned long long)counter,
		       (long long)t.bound_ns, (long long)need);
	}
}

/* A 3 GHz TSC, shift 0: 2^64 / 3e9 of a second per count, within 50 ppm. */
#define TSC_PERIOD	6148914691ULL
#define TSC_PMAX	(TSC_PERIOD / 20000)

TEST(tsc_3ghz)
{
	struct vmclock_abi_page *v = page();
	__u64 c0 = 123456789012345ULL;

	test_vmclock_time(v, c0, 1796601600, 0x8000000000000000ULL, 1500,
			  TSC_PERIOD, 0, TSC_PMAX);
	check_at(_metadata, v, c0);
	check_at(_metadata, v, c0 + 1);
	check_at(_metadata, v, c0 + 3000000000ULL);		/* 1 s later */
	check_at(_metadata, v, c0 + 3000000000ULL * 3600);	/* an hour */
	check_at(_metadata, v, c0 - 3000000000ULL);		/* 1 s before */
	check_at(_metadata, v, c0 - 7);
	free(v);
}

TEST(one_second_later_is_one_second_later)
{
	struct vmclock_abi_page *v = page();
	struct vmclock_params p;
	struct vmclock_time t;
	char err[192];

	/* a 2^30 Hz counter, exact in binary: period 2^38 / 2^(64 + 4) s */
	test_vmclock_time(v, 1000, 1800000000, 0, 0, 1ULL << 38, 4, 0);
	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	ASSERT_EQ(0, vmclock_time_at(&p, 1000 + (1ULL << 30), &t));
	EXPECT_EQ(1800000000LL * 1000000000LL + 1000000000LL, t.time_ns);
	EXPECT_EQ(VMCLOCK_ROUNDING_NS, t.bound_ns);
	free(v);
}

TEST(fraction_carries_into_the_second)
{
	struct vmclock_abi_page *v = page();

	test_vmclock_time(v, 5, 1800000000, UINT64_MAX, 10, TSC_PERIOD, 0, TSC_PMAX);
	check_at(_metadata, v, 5);
	check_at(_metadata, v, 6);
	check_at(_metadata, v, 4);
	free(v);
}

TEST(shifts)
{
	struct vmclock_abi_page *v = page();
	unsigned int s;

	for (s = 0; s <= 30; s += 5) {
		test_vmclock_time(v, 1ULL << 40, 1800000000, 12345678901234567ULL, 100,
				  TSC_PERIOD << s | 0x55, s, (TSC_PMAX << s) + 3);
		check_at(_metadata, v, (1ULL << 40) + 987654321987ULL);
		check_at(_metadata, v, (1ULL << 40) - 987654321ULL);
	}
	free(v);
}

TEST(counter_wraps_past_zero)
{
	struct vmclock_abi_page *v = page();

	test_vmclock_time(v, UINT64_MAX - 100, 1800000000, 0, 10, TSC_PERIOD, 0, TSC_PMAX);
	check_at(_metadata, v, 200);	/* 301 counts on, across the wrap */
	free(v);
}

/* Random pages and counters, seeded: counters within a day at 0.1 to 5 GHz. */
TEST(random_pages)
{
	struct vmclock_abi_page *v = page();
	int i;

	for (i = 0; i < 20000; i++) {
		unsigned int s = test_rand() % 31;
		__u64 hz = (__u64)test_between(100000000, 5000000000LL);
		__u64 period = (__u64)(((u128)1 << (64 + s)) / hz);
		__u64 c0 = test_rand();
		__s64 d = test_between(-(__s64)hz * 86400, (__s64)hz * 86400);

		test_vmclock_time(v, c0, (__u64)test_between(1000000, 4000000000LL), test_rand(),
				  (__u64)test_between(0, 1000000000), period, (__u8)s,
				  period / (__u64)test_between(1000, 10000000));
		check_at(_metadata, v, c0 + (__u64)d);
	}
	free(v);
}

TEST(out_of_range)
{
	struct vmclock_abi_page *v = page();
	struct vmclock_params p;
	struct vmclock_time t;
	char err[192];

	test_vmclock_time(v, 0, 1800000000, 0, 10, TSC_PERIOD, 0, TSC_PMAX);
	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	/* 1.9e9 s before: before 1970 */
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, -(3000000000ULL * 1900000000ULL), &t));
	/* 3e8 s after 2255: past 2262 */
	p.time_sec = 9000000000ULL;
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, 3000000000ULL * 300000000ULL, &t));
	p.time_sec = 1ULL << 34;
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, 0, &t));
	/* 2^62 counts of 1 - 2^-64 s */
	p.time_sec = 1800000000;
	p.period = UINT64_MAX;
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, 1ULL << 62, &t));
	p.period = TSC_PERIOD;
	p.period_maxerror = UINT64_MAX;
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, 1ULL << 62, &t));
	p.period_maxerror = TSC_PMAX;
	p.time_sec = 1800000000;
	p.maxerror_ns = UINT64_MAX;
	EXPECT_EQ(-ERANGE, vmclock_time_at(&p, 0, &t));
	free(v);
}

/* Parse v, expecting ret and a reason that says want. */
static void refused(struct __test_metadata *_metadata, const struct vmclock_abi_page *v,
		    size_t len, int ret, const char *want)
{
	struct vmclock_params p;
	char err[192] = "";

	EXPECT_EQ(ret, vmclock_parse(v, len, &p, err, sizeof(err)));
	EXPECT_TRUE(strstr(err, want) != NULL) {
		TH_LOG("'%s' does not say '%s'", err, want);
	}
}

static void good(struct vmclock_abi_page *v)
{
	memset(v, 0, 4096);
	v->magic = VMCLOCK_PAGE_MAGIC;
	v->size = 4096;
	v->version = 1;
	v->seq_count = 2;
	test_vmclock_time(v, 1, 1800000000, 0, 1000, TSC_PERIOD, 0, TSC_PMAX);
}

TEST(refusals)
{
	struct vmclock_abi_page *v = page();

	good(v);
	v->magic = 0;
	refused(_metadata, v, 4096, -EINVAL, "not a vmclock page");
	refused(_metadata, v, 0, -EINVAL, "not a vmclock page");
	good(v);
	v->version = 2;
	refused(_metadata, v, 4096, -EINVAL, "version 2");
	good(v);
	v->size = 64;
	refused(_metadata, v, 4096, -EINVAL, "ends before its time");
	good(v);
	refused(_metadata, v, 100, -EINVAL, "100 bytes read");
	good(v);
	v->counter_id = VMCLOCK_COUNTER_ARM_VCNT;
	refused(_metadata, v, 4096, -EOPNOTSUPP, "(counter_id 0) is not the x86 TSC");
	v->counter_id = VMCLOCK_COUNTER_INVALID;
	refused(_metadata, v, 4096, -EOPNOTSUPP, "(counter_id 255, INVALID) is not the x86 TSC");
	/* the hypervisor's claim comes first: QEMU's page is UNKNOWN */
	v->clock_status = VMCLOCK_STATUS_UNKNOWN;
	refused(_metadata, v, 4096, -ENODATA, "UNKNOWN");
	good(v);
	v->clock_status = VMCLOCK_STATUS_UNKNOWN;	/* QEMU's */
	refused(_metadata, v, 4096, -ENODATA, "UNKNOWN (clock_status 0), not SYNCHRONIZED");
	v->clock_status = VMCLOCK_STATUS_INITIALIZING;
	refused(_metadata, v, 4096, -ENODATA, "INITIALIZING");
	v->clock_status = VMCLOCK_STATUS_FREERUNNING;
	refused(_metadata, v, 4096, -ENODATA, "FREERUNNING");
	v->clock_status = VMCLOCK_STATUS_UNRELIABLE;
	refused(_metadata, v, 4096, -ENODATA, "UNRELIABLE");
	v->clock_status = 9;
	refused(_metadata, v, 4096, -ENODATA, "invalid (clock_status 9)");
	good(v);
	v->time_type = VMCLOCK_TIME_MONOTONIC;
	refused(_metadata, v, 4096, -ENODATA, "MONOTONIC");
	v->time_type = VMCLOCK_TIME_SMEARED;
	refused(_metadata, v, 4096, -ENODATA, "is smeared");
	v->time_type = VMCLOCK_TIME_MAYBE_SMEARED;
	refused(_metadata, v, 4096, -ENODATA, "maybe smeared");
	v->time_type = 7;
	refused(_metadata, v, 4096, -ENODATA, "unknown time_type 7");
	good(v);
	v->flags &= ~VMCLOCK_FLAG_TIME_MAXERROR_VALID;
	refused(_metadata, v, 4096, -ENODATA, "no maximum error of the time");
	good(v);
	v->flags &= ~VMCLOCK_FLAG_PERIOD_MAXERROR_VALID;
	refused(_metadata, v, 4096, -ENODATA, "no maximum error of the counter's period");
	good(v);
	v->leap_indicator = VMCLOCK_LEAP_POS;
	refused(_metadata, v, 4096, -ENODATA, "inside a leap second");
	v->leap_indicator = 6;
	refused(_metadata, v, 4096, -ENODATA, "unknown leap_indicator 6");
	good(v);
	v->counter_period_shift = 64;
	refused(_metadata, v, 4096, -EINVAL, "not a period");
	good(v);
	v->counter_period_frac_sec = 0;
	refused(_metadata, v, 4096, -EINVAL, "not a period");
	free(v);
}

TEST(leap_and_timescale)
{
	static const struct {
		__u8 li;
		int leap;
	} cases[] = {
		{ VMCLOCK_LEAP_NONE, LEAP_NONE },
		{ VMCLOCK_LEAP_PRE_POS, LEAP_INSERT },
		{ VMCLOCK_LEAP_PRE_NEG, LEAP_DELETE },
		{ VMCLOCK_LEAP_POST_POS, LEAP_NONE },
		{ VMCLOCK_LEAP_POST_NEG, LEAP_NONE },
	};
	struct vmclock_abi_page *v = page();
	struct vmclock_params p;
	char err[192];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		good(v);
		v->leap_indicator = cases[i].li;
		ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
		EXPECT_EQ(cases[i].leap, p.leap);
		EXPECT_FALSE(p.tai);
	}
	good(v);
	v->time_type = VMCLOCK_TIME_TAI;
	v->disruption_marker = 77;
	v->tai_offset_sec = 37;
	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	EXPECT_TRUE(p.tai);
	EXPECT_EQ(77, p.marker);
	EXPECT_FALSE(p.utc_offset_valid);	/* not TAI_OFFSET_VALID */
	v->flags |= VMCLOCK_FLAG_TAI_OFFSET_VALID;
	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	EXPECT_TRUE(p.utc_offset_valid);
	EXPECT_EQ(37, p.utc_offset);
	/* the sign ptp_vmclock.c's tai_adjust() assumes: not taken */
	v->tai_offset_sec = (__u16)-37;
	ASSERT_EQ(0, vmclock_parse(v, 4096, &p, err, sizeof(err)));
	EXPECT_FALSE(p.utc_offset_valid);
	free(v);
}

/* The time at sec + 0.5 + s seconds, on a 2^30 Hz counter. */
static int leap_at(struct vmclock_abi_page *v, __u64 sec, __u8 li, __u8 type, double s)
{
	struct vmclock_params p;
	struct vmclock_time t;
	char err[192];

	good(v);
	test_vmclock_time(v, 1ULL << 40, sec, 1ULL << 63, 10, 1ULL << 34, 0, 0);
	v->leap_indicator = li;
	v->time_type = type;
	if (vmclock_parse(v, 4096, &p, err, sizeof(err)))
		return -EINVAL;
	return vmclock_time_at(&p, (1ULL << 40) + (__u64)(__s64)(s * (1 << 30)), &t);
}

/* Extrapolating UTC across an announced leap is 1 s off: refused. */
TEST(leap_crossing)
{
	struct vmclock_abi_page *v = page();
	__u64 before = 1798761600 - 2;	/* 2026-12-31 23:59:58 */
	__u64 after = 1798761600 + 2;	/* 2027-01-01 00:00:02 */

	EXPECT_EQ(0, leap_at(v, before, VMCLOCK_LEAP_PRE_POS, VMCLOCK_TIME_UTC, 0.4));
	EXPECT_EQ(-EDOM, leap_at(v, before, VMCLOCK_LEAP_PRE_POS, VMCLOCK_TIME_UTC, 0.5));
	EXPECT_EQ(-EDOM, leap_at(v, before, VMCLOCK_LEAP_PRE_NEG, VMCLOCK_TIME_UTC, 3));
	EXPECT_EQ(0, leap_at(v, before, VMCLOCK_LEAP_NONE, VMCLOCK_TIME_UTC, 3));
	/* TAI counts through it */
	EXPECT_EQ(0, leap_at(v, before, VMCLOCK_LEAP_PRE_POS, VMCLOCK_TIME_TAI, 3));
	/* after one: back over the month's first second */
	EXPECT_EQ(0, leap_at(v, after, VMCLOCK_LEAP_POST_POS, VMCLOCK_TIME_UTC, 0));
	EXPECT_EQ(0, leap_at(v, after, VMCLOCK_LEAP_POST_POS, VMCLOCK_TIME_UTC, -1.4));
	EXPECT_EQ(-EDOM, leap_at(v, after, VMCLOCK_LEAP_POST_POS, VMCLOCK_TIME_UTC, -1.6));
	EXPECT_EQ(-EDOM, leap_at(v, after, VMCLOCK_LEAP_POST_NEG, VMCLOCK_TIME_UTC, -3));
	/* the end of June, a month that is not the year's */
	EXPECT_EQ(-EDOM, leap_at(v, 1782864000 - 1, VMCLOCK_LEAP_PRE_NEG, VMCLOCK_TIME_UTC, 0));
	EXPECT_EQ(0, leap_at(v, 1782864000 - 3, VMCLOCK_LEAP_PRE_NEG, VMCLOCK_TIME_UTC, 0));
	free(v);
}

TEST_HARNESS_MAIN
