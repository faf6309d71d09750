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

#include "lclk_truth.h"
#include "kselftest_harness.h"

FIXTURE(slew) {
	struct lclk_clock c;
	struct timex saved;
	struct lclk_truth t;
};

FIXTURE_SETUP(slew)
{
	memset(&self->saved, 0, sizeof(self->saved));
	ASSERT_LE(0, adjtimex(&self->saved));
	ASSERT_EQ(0, lclk_open(&self->c, LCLK_DEV0));
	ASSERT_EQ(0, lclk_reset(self->c.fd));
	lclk_truth_line(&self->c, &self->t);
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
		   const struct lclk_truth_check *s, const struct lclk_clock *c)
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
			  struct lclk_truth_check *s)
{
	lclk_truth_start(s);
	lclk_truth_read_for(&self->c, 100, &self->t, s);
	ASSERT_LE(0, adjtimex(tx));
	lclk_truth_read_for(&self->c, ms, &self->t, s);
}

/* tick +5 %: far past any drift the bound could be widened by. */
TEST_F(slew, tick_plus_5_percent)
{
	struct timex tx = { .modes = ADJ_TICK, .tick = 10500 };
	struct lclk_truth_check s;

	slew_and_read(_metadata, self, &tx, 2000, &s);
	report(_metadata, "tick +5 %", &s, &self->c);
	EXPECT_LE(50000000, s.max_err);		/* the slew happened */
	EXPECT_EQ(0, s.violations);
}

/* The frequency +400 ppm: within what the bound can be widened by. */
TEST_F(slew, frequency_plus_400_ppm)
{
	struct timex tx = { .modes = ADJ_FREQUENCY, .freq = 400L << 16 };
	struct lclk_truth_check s;
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
	struct lclk_truth_check s;

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
	struct lclk_truth_check s;

	slew_and_read(_metadata, self, &tx, 300, &s);
	EXPECT_EQ(0, s.violations);
	p = lclk_model_of(self->c.fd);
	EXPECT_LT(lclk_ppb_to_mult(p.max_drift_ppb), p.drift_mult);
	/*
	 * Back to no slew before the sync: a sync takes the clock's rate as
	 * right for the slew of its moment, and the rate of 0 here is right
	 * for an unslewed CLOCK_MONOTONIC only.
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
