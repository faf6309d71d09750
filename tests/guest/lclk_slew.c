// SPDX-License-Identifier: GPL-2.0
/*
 * The system clock slewed under the logical clock. Logical time runs on
 * CLOCK_MONOTONIC, which adjtimex slews (chronyd at up to 83,333 ppm,
 * adjtime() at 500 ppm, a tick change by up to 10 %); the bound assumes
 * only max_drift. The truth here is CLOCK_MONOTONIC_RAW, which no adjtimex
 * call moves: the test puts logical time on a line of it, with a tight
 * bound, slews the system clock, and checks every reading of the page and
 * of GET_TIME against that line while the status vouches for the bound.
 *
 * The slews change the guest's clock only; the VM is the test's own.
 */
#include <sys/timex.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

static __s64 raw_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* What one run of readings found against truth = raw + line. */
struct slew_check {
	long readings;
	long vouched;		/* SYNCED or HOLDOVER */
	long violations;
	__s64 worst;		/* largest |err| - bound among vouched readings */
	__s64 max_err;
};

/*
 * One reading between two raw readings: its truth is known to within
 * half their distance, which counts in the reading's favour.
 */
static void check_one(struct slew_check *s, const struct lclk_now *n,
		      __s64 r1, __s64 r2, __s64 line, __s64 line_err)
{
	__s64 truth = r1 + (r2 - r1) / 2 + line;
	__s64 err = llabs(n->time_ns - truth) - (r2 - r1) / 2 - line_err - 1;

	s->readings++;
	if (err > s->max_err)
		s->max_err = err;
	if (n->status != LCLK_STATUS_SYNCED && n->status != LCLK_STATUS_HOLDOVER)
		return;
	s->vouched++;
	if (err - n->bound_ns > s->worst)
		s->worst = err - n->bound_ns;
	if (err > n->bound_ns && s->violations++ < 3)
		fprintf(stderr, "# violation: logical %lld, error %lld ns, bound %lld ns\n",
			(long long)n->time_ns, (long long)err,
			(long long)n->bound_ns);
}

/* Read the page and GET_TIME for ms milliseconds. */
static void read_for(struct lclk_clock *c, int ms, __s64 line, __s64 line_err,
		     struct slew_check *s)
{
	__s64 end = raw_ns() + ms * 1000000LL;
	struct lclk_now n;
	__s64 r1, r2;

	while ((r1 = raw_ns()) < end) {
		lclk_now(c, &n);
		r2 = raw_ns();
		check_one(s, &n, r1, r2, line, line_err);
		r1 = raw_ns();
		lclk_now_ioctl(c, &n);
		r2 = raw_ns();
		check_one(s, &n, r1, r2, line, line_err);
	}
}

FIXTURE(slew) {
	struct lclk_clock c;
	struct timex saved;
	__s64 line, line_err;	/* logical - raw, and how well it is known */
};

FIXTURE_SETUP(slew)
{
	struct lclk_now n;
	__s64 r1, r2;
	int i;

	memset(&self->saved, 0, sizeof(self->saved));
	ASSERT_LE(0, adjtimex(&self->saved));
	ASSERT_EQ(0, lclk_open(&self->c, LCLK_DEV0));
	ASSERT_EQ(0, lclk_reset(self->c.fd));
	/* A rate of 0 and no NTP in the guest: logical runs as raw does. */
	self->line_err = INT64_MAX;
	for (i = 0; i < 20; i++) {
		r1 = raw_ns();
		lclk_now(&self->c, &n);
		r2 = raw_ns();
		if ((r2 - r1) / 2 + 1 < self->line_err) {
			self->line_err = (r2 - r1) / 2 + 1;
			self->line = n.time_ns - (r1 + (r2 - r1) / 2);
		}
	}
	/* The bound starts at 100 us: room for the line's error, no more. */
	{
		struct lclk_set_model m;

		memset(&m, 0, sizeof(m));
		m.modes = LCLK_SET_BOUND;
		m.bound_ns = 100000;
		ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
	}
}

FIXTURE_TEARDOWN(slew)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_TICK | ADJ_FREQUENCY;
	tx.tick = self->saved.tick;
	tx.freq = self->saved.freq;
	adjtimex(&tx);
	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_OFFSET_SINGLESHOT;	/* cancels what remains of one */
	adjtimex(&tx);
	/*
	 * The kernel applies adjtime()'s slew a second at a time: the one
	 * under way runs to the next second. The next test syncs the clock
	 * as right on a line of CLOCK_MONOTONIC_RAW, which would be a lie
	 * while CLOCK_MONOTONIC still runs off it.
	 */
	usleep(1200000);
	lclk_close(&self->c);
}

static void report(struct __test_metadata *_metadata, const char *what,
		   const struct slew_check *s, const struct lclk_clock *c)
{
	struct lclk_now n;

	lclk_now_ioctl(c, &n);
	TH_LOG("%s: %ld readings, %ld vouched, %ld violations, worst error - bound %lld ns, max error %lld ns; now status %u bound %lld ns",
	       what, s->readings, s->vouched, s->violations,
	       (long long)s->worst, (long long)s->max_err, n.status,
	       (long long)n.bound_ns);
}

/* Slew the system clock with tx for ms, reading throughout and after. */
static void slew_and_read(struct __test_metadata *_metadata,
			  FIXTURE_DATA(slew) *self, struct timex *tx, int ms,
			  struct slew_check *s)
{
	memset(s, 0, sizeof(*s));
	s->worst = INT64_MIN;
	read_for(&self->c, 100, self->line, self->line_err, s);
	ASSERT_LE(0, adjtimex(tx));
	read_for(&self->c, ms, self->line, self->line_err, s);
}

/* tick +5 %: far past any drift the bound could be widened by. */
TEST_F(slew, tick_plus_5_percent)
{
	struct timex tx = { .modes = ADJ_TICK, .tick = 10500 };
	struct slew_check s;

	slew_and_read(_metadata, self, &tx, 2000, &s);
	report(_metadata, "tick +5 %", &s, &self->c);
	EXPECT_LE(50000000, s.max_err);		/* the slew happened */
	EXPECT_EQ(0, s.violations);
}

/* The frequency +400 ppm: within what the bound can be widened by. */
TEST_F(slew, frequency_plus_400_ppm)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = 400L << 16 };
	struct slew_check s;
	struct lclk_now n;

	slew_and_read(_metadata, self, &tx, 2000, &s);
	report(_metadata, "freq +400 ppm", &s, &self->c);
	EXPECT_LE(600000, s.max_err);
	EXPECT_EQ(0, s.violations);
	/* Still vouched for: widened, not given up. */
	lclk_now_ioctl(&self->c, &n);
	EXPECT_EQ(LCLK_STATUS_SYNCED, n.status);
}

/*
 * adjtime(): the kernel slews 500 ppm until the offset is spent, from the
 * next second on.
 */
TEST_F(slew, adjtime_singleshot)
{
	struct timex tx = { .modes = ADJ_OFFSET_SINGLESHOT, .offset = 500000 };
	struct slew_check s;

	slew_and_read(_metadata, self, &tx, 2000, &s);
	report(_metadata, "adjtime +0.5 s", &s, &self->c);
	EXPECT_LE(400000, s.max_err);
	EXPECT_EQ(0, s.violations);
}

/* After a sync the growth is max_drift's again, whatever the slew was. */
TEST_F(slew, a_sync_resets_the_widening)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = 200L << 16 };
	struct lclk_set_model m;
	struct lclk_params p;
	struct slew_check s;

	slew_and_read(_metadata, self, &tx, 300, &s);
	EXPECT_EQ(0, s.violations);
	p = lclk_model_of(self->c.fd);
	EXPECT_LT(lclk_ppb_to_mult(p.max_drift_ppb), p.drift_mult);
	/*
	 * Back to no slew before the sync: one under way would count in the
	 * growth after it too (max_drift of the oscillator, per raw ns).
	 */
	tx.freq = 0;
	ASSERT_LE(0, adjtimex(&tx));
	usleep(100000);
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_BOUND;
	m.bound_ns = 100000;
	ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
	p = lclk_model_of(self->c.fd);
	EXPECT_EQ(lclk_ppb_to_mult(p.max_drift_ppb), p.drift_mult);
}

TEST_HARNESS_MAIN
