// SPDX-License-Identifier: GPL-2.0
/*
 * The vmclock: source on pages in a file, as the hypervisor would fill
 * them (no hypervisor here fills the time: QEMU leaves clock_status
 * UNKNOWN). A page made from this host's own TSC, its rate measured
 * against the clock the target reads (CLOCK_REALTIME for the system
 * clock, CLOCK_MONOTONIC plus an offset for a fake logical clock), must
 * give an offset within the bound, and a bound within a few us of the
 * page's maxerror: the bracket of the TSC read is plausible. Then the
 * page QEMU leaves, a page the hypervisor keeps writing (odd seq_count,
 * given up after 100 ms) and one it finishes writing while the source
 * waits, the leap indicator and the timescale, a disruption marker that
 * is not the VM's, and files that are no vmclock page.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "fake_logical.h"
#include "lib/priv.h"
#include "sync/leap.h"
#include "sync/source.h"
#include "vm_pages.h"
#include "vmclock/vmclock_page.h"

#define MAXERROR_NS	1000

static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t tsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return (uint64_t)hi << 32 | lo;
}

/* The TSC and the clock's time at it, the middle of the narrowest of 20. */
static void pair(clockid_t id, uint64_t *c, int64_t *t, int64_t *half)
{
	int64_t best = INT64_MAX;
	int i;

	for (i = 0; i < 20; i++) {
		int64_t a = clock_ns(id);
		uint64_t x = tsc();
		int64_t b = clock_ns(id);

		if (b - a < best) {
			best = b - a;
			*c = x;
			*t = a + (b - a) / 2;
		}
	}
	*half = (best + 2) / 2;
}

FIXTURE(vmsrc) {
	char path[64];
	int fd;
	struct vmclock_abi_page *v;	/* the file, mapped to write */
	struct target_clock tc;
	struct source src;
	struct source_opts opts;
	char err[256];
	bool open;
};

FIXTURE_SETUP(vmsrc)
{
	snprintf(self->path, sizeof(self->path), "/tmp/lclk-vmclock-XXXXXX");
	self->fd = mkstemp(self->path);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, 4096));
	self->v = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->v);
	self->v->magic = VMCLOCK_PAGE_MAGIC;
	self->v->size = 4096;
	self->v->version = 1;
	self->v->seq_count = 2;
	self->v->disruption_marker = 8;
	ASSERT_EQ(0, target_open(&self->tc, "/dev/lclk-none-such", false));
	self->opts = (struct source_opts){ .samples = 4 };
	self->open = false;
}

FIXTURE_TEARDOWN(vmsrc)
{
	if (self->open)
		source_close(&self->src);
	munmap(self->v, 4096);
	close(self->fd);
	unlink(self->path);
}

/*
 * A page of this host's TSC against clock id (+ add): the rate over
 * 200 ms, the page's time at the end of it, within MAXERROR_NS and the
 * pair's own half window; the period within 50 ppm.
 */
static void fill_from_tsc(struct vmclock_abi_page *v, clockid_t id, int64_t add)
{
	uint64_t c1, c2, period;
	int64_t t1, t2, h1, h2, at;

	pair(id, &c1, &t1, &h1);
	usleep(200000);
	pair(id, &c2, &t2, &h2);
	/* 2^-64 s per count: ns per count x 2^64 / 10^9 */
	period = (uint64_t)((((unsigned __int128)(t2 - t1)) << 64) /
			    ((unsigned __int128)(c2 - c1) * 1000000000ULL));
	at = t2 + add;
	test_vmclock_time(v, c2, (uint64_t)(at / 1000000000LL),
			  (uint64_t)((((unsigned __int128)(at % 1000000000LL)) << 64) / 1000000000ULL),
			  MAXERROR_NS + h2, period, 0, period / 20000);
}

static int measure(struct __test_metadata *_metadata, FIXTURE_DATA(vmsrc) *self,
		   const char *url, struct measurement *m)
{
	int r;

	if (!self->open) {
		r = source_open(&self->src, url, &self->opts, self->err, sizeof(self->err));
		if (r)
			return r;
		self->open = true;
	}
	return self->src.ops->measure(&self->src, &self->tc, m, self->err, sizeof(self->err));
}

static void within_bound(struct __test_metadata *_metadata, const struct measurement *m,
			 int64_t slack_ns)
{
	EXPECT_LE(llabs(m->offset_ns), m->bound_ns) {
		TH_LOG("offset %lld ns, bound %lld ns", (long long)m->offset_ns,
		       (long long)m->bound_ns);
	}
	/* the page's maxerror, its rounding and a bracket of a few us at most */
	EXPECT_LE(m->bound_ns, MAXERROR_NS + slack_ns) {
		TH_LOG("bound %lld ns", (long long)m->bound_ns);
	}
	TH_LOG("offset %lld ns, bound %lld ns, window %lld ns", (long long)m->offset_ns,
	       (long long)m->bound_ns, (long long)m->delay_ns);
}

TEST_F(vmsrc, system_clock)
{
	char url[80];
	struct measurement m;

	fill_from_tsc(self->v, CLOCK_REALTIME, 0);
	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	within_bound(_metadata, &m, 20000);
	EXPECT_STREQ("VMCLOCK", m.refid);
	EXPECT_EQ(LEAP_NONE, m.leap);
	EXPECT_FALSE(m.tai);
	EXPECT_EQ(4, m.samples);
	/* 200 ms on: 10 us of the period's 50 ppm more */
	usleep(200000);
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	within_bound(_metadata, &m, 30000);
	EXPECT_LE(10000, m.bound_ns - MAXERROR_NS);
}

/* vmclock:///PATH says the same, as a file: URL does. */
TEST_F(vmsrc, logical_clock_and_marker)
{
	struct lclk_vmclock_head *vm = test_vmclock_new(8);
	struct lclk_page page;
	char url[80];
	struct measurement m;

	fake_logical(&self->tc, &page);
	self->tc.lc.vmclock = vm;
	fill_from_tsc(self->v, CLOCK_MONOTONIC, FAKE_LOGICAL);
	snprintf(url, sizeof(url), "vmclock://%s", self->path);
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	within_bound(_metadata, &m, 20000);
	/* another VM's page, or a disruption since */
	test_vmclock_disrupt(vm, 9);
	EXPECT_EQ(-ESTALE, measure(_metadata, self, url, &m));
	EXPECT_TRUE(strstr(self->err, "disruption marker 8 is not the VM's (9") != NULL)
		TH_LOG("%s", self->err);
	free(vm);
}

/* QEMU 11's page, as its guest reads it: a disruption marker, no time. */
TEST_F(vmsrc, qemu_page_is_refused)
{
	char url[80], want[200];
	struct measurement m;

	self->v->counter_id = VMCLOCK_COUNTER_INVALID;
	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	EXPECT_EQ(-ENODATA, measure(_metadata, self, url, &m));
	snprintf(want, sizeof(want), "%s: the hypervisor's clock is UNKNOWN (clock_status 0), not SYNCHRONIZED",
		 self->path);
	EXPECT_STREQ(want, self->err);
}

TEST_F(vmsrc, leap_and_tai)
{
	char url[80];
	struct measurement m;

	fill_from_tsc(self->v, CLOCK_REALTIME, 0);
	self->v->leap_indicator = VMCLOCK_LEAP_PRE_NEG;
	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	EXPECT_EQ(LEAP_DELETE, m.leap);
	self->v->leap_indicator = VMCLOCK_LEAP_POS;
	EXPECT_EQ(-ENODATA, measure(_metadata, self, url, &m));
	EXPECT_TRUE(strstr(self->err, "inside a leap second") != NULL) TH_LOG("%s", self->err);
	self->v->leap_indicator = VMCLOCK_LEAP_NONE;
	self->v->time_type = VMCLOCK_TIME_TAI;
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	EXPECT_TRUE(m.tai);
	EXPECT_FALSE(m.utc_offset_valid);
	self->v->flags |= VMCLOCK_FLAG_TAI_OFFSET_VALID;
	self->v->tai_offset_sec = 37;
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	EXPECT_TRUE(m.utc_offset_valid);
	EXPECT_EQ(37, m.utc_offset);
}

TEST_F(vmsrc, hypervisor_never_done)
{
	char url[80];
	struct measurement m;
	int64_t t0;

	fill_from_tsc(self->v, CLOCK_REALTIME, 0);
	self->v->seq_count = 3;
	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	t0 = clock_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(-EBUSY, measure(_metadata, self, url, &m));
	EXPECT_TRUE(strstr(self->err, "kept writing the page") != NULL) TH_LOG("%s", self->err);
	/* 100 ms, as ptp_vmclock.c waits */
	EXPECT_LE(100000000, clock_ns(CLOCK_MONOTONIC) - t0);
}

/* Writes the page's new time 5 ms on, as a hypervisor would, then seq even. */
static void *hypervisor(void *arg)
{
	struct vmclock_abi_page *v = arg;

	usleep(5000);
	v->time_maxerror_nanosec = 100;
	v->counter_period_maxerror_rate_frac_sec = 0;
	__atomic_store_n(&v->seq_count, v->seq_count + 1, __ATOMIC_RELEASE);
	return NULL;
}

TEST_F(vmsrc, waits_for_the_write)
{
	char url[80];
	struct measurement m;
	pthread_t th;

	fill_from_tsc(self->v, CLOCK_REALTIME, 0);
	self->v->seq_count = 5;
	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	ASSERT_EQ(0, pthread_create(&th, NULL, hypervisor, self->v));
	ASSERT_EQ(0, measure(_metadata, self, url, &m)) TH_LOG("%s", self->err);
	pthread_join(th, NULL);
	/* the new page's: its maxerror is in the bound */
	EXPECT_LE(100, m.bound_ns);
	EXPECT_GT(MAXERROR_NS, m.bound_ns);
}

TEST_F(vmsrc, not_a_page)
{
	struct measurement m;
	char url[80];

	snprintf(url, sizeof(url), "vmclock:%s", self->path);
	ASSERT_EQ(0, ftruncate(self->fd, 20));
	EXPECT_EQ(-EINVAL, measure(_metadata, self, url, &m));
	EXPECT_TRUE(strstr(self->err, "ends before its time's fields") != NULL)
		TH_LOG("%s", self->err);
	source_close(&self->src);
	self->open = false;
	ASSERT_EQ(0, ftruncate(self->fd, 0));
	EXPECT_EQ(-EINVAL, measure(_metadata, self, url, &m));
	EXPECT_TRUE(strstr(self->err, "empty") != NULL) TH_LOG("%s", self->err);
	EXPECT_EQ(-ENOENT, measure(_metadata, self, "vmclock:/nonexistent/vmclock0", &m));
}

TEST(caps_and_default_path)
{
	EXPECT_EQ(PRIV_CAP(CAP_DAC_READ_SEARCH), source_caps("vmclock:"));
	EXPECT_EQ(PRIV_CAP(CAP_DAC_READ_SEARCH), source_caps("vmclock:/dev/vmclock0"));
}

TEST_HARNESS_MAIN
