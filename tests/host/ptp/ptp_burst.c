// SPDX-License-Identifier: GPL-2.0
/*
 * A ptp:// burst's result against the system clock while CLOCK_REALTIME is
 * stepped: during the burst, after it, between a Sync and its Delay_Req.
 * The master is the system clock itself, as in tests/integration/ptp.sh (a
 * ptp4l in a network namespace of the same host): the true offset is 0 at
 * every instant, whatever the steps. Every result must have |offset| <=
 * bound, or be refused.
 *
 * The samples are built as ptp_slave makes them from kernel software
 * stamps converted correctly (ptp_net, realtime_track); this process's
 * CLOCK_REALTIME, which the result may read for the system clock, is
 * CLOCK_MONOTONIC + the difference in force "now" (fake_d, fake_realtime.h):
 * the machine's clock is never touched.
 */
#include <errno.h>
#include <stdlib.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "fake_realtime.h"
#include "ptp/ptp_burst.h"

#define US		1000LL
#define MS		1000000LL
#define D0		FAKE_D0				/* REALTIME - MONOTONIC */
#define FWD		(15 * US)			/* path delays */
#define BWD		(15 * US)
#define SYNC_EVERY	(125 * MS)			/* logSyncInterval -3 */
#define DREQ_AFTER	(40 * MS)
#define CONV_ERR	50				/* realtime_track's error */
#define DRIFT_PPB	1000				/* 1 ppm */

/* REALTIME - MONOTONIC over time: D0 plus steps[i].by from steps[i].at on. */
struct step {
	int64_t at, by;
};

struct history {
	const struct step *steps;
	int n;
	/*
	 * The master's clock: the system clock (false), or a clock of its
	 * own that REALTIME's steps leave alone, MASTER ahead of D0.
	 */
	bool independent;
};


static int64_t d_at(const struct history *h, int64_t mono)
{
	int64_t d = D0;
	int i;

	for (i = 0; i < h->n; i++)
		if (mono >= h->steps[i].at)
			d += h->steps[i].by;
	return d;
}

#define MASTER		(7 * US)

/* The master's time at monotonic mono. */
static int64_t master_at(const struct history *h, int64_t mono)
{
	return mono + (h->independent ? D0 + MASTER : d_at(h, mono));
}

/* The true offset, master - system clock, at monotonic mono. */
static int64_t truth_at(const struct history *h, int64_t mono)
{
	return master_at(h, mono) - (mono + d_at(h, mono));
}

/*
 * The samples of Syncs received at t0 + k * SYNC_EVERY, k < n, every
 * other one with its own Delay_Req DREQ_AFTER later, as ptp_slave makes
 * them (an exchange whose path delay comes out negative is rejected).
 * Returns how many.
 */
static int burst(const struct history *h, int64_t t0, int n, struct ptp_sample *smp)
{
	int64_t hi_ns = 0, hi_at = 0, hi_rt = 0, delay = 0;
	bool have_exchange = false;
	int k, got = 0;

	for (k = 0; k < n; k++) {
		int64_t t2 = t0 + k * SYNC_EVERY, t3 = t2 + DREQ_AFTER;
		int64_t t1 = master_at(h, t2 - FWD), t4 = master_at(h, t3 + BWD);
		struct ptp_sample *s = &smp[got];

		s->lo_ns = t1 - t2;
		s->lo_at = t2;
		s->lo_err = CONV_ERR;
		s->lo_rt = t2 + d_at(h, t2);
		s->lo_rt_err = 0;
		s->master_gen = 1;
		if (k % 2 == 0 && t4 - t3 >= t1 - t2) {
			hi_ns = t4 - t3;
			hi_at = t3;
			hi_rt = t3 + d_at(h, t3);
			delay = (hi_ns - s->lo_ns) / 2;
			have_exchange = true;
			s->own_delay = true;
			s->base_ns = t2 + (t3 - t2) / 2;
		} else {
			if (!have_exchange)
				continue;
			s->own_delay = false;
			s->base_ns = t2;
		}
		s->hi_ns = hi_ns;
		s->hi_at = hi_at;
		s->hi_err = CONV_ERR;
		s->hi_rt = hi_rt;
		s->hi_rt_err = 0;
		s->delay_ns = delay;
		s->offset_ns = s->lo_ns + delay;
		got++;
	}
	return got;
}

/*
 * The result of a burst of n Syncs from t0 against the system clock, with
 * the difference of "now" (the measurement's end, at t_end): |offset| <=
 * bound, or refused. Returns 0 if refused, 1 if it held.
 */
static int check(struct __test_metadata *_metadata, const struct history *h, int64_t t0,
		 int n, int64_t t_end)
{
	struct target_clock tc = { .logical = false, .path = "system clock" };
	struct ptp_sample smp[PTP_BURST_MAX];
	struct ptp_burst res;
	int got = burst(h, t0, n, smp);

	fake_d = d_at(h, t_end);
	if (ptp_burst_result(smp, got, &tc, DRIFT_PPB, &res))
		return 0;
	EXPECT_LE(llabs(res.offset_ns - truth_at(h, res.base_ns)), res.bound_ns)
		TH_LOG("offset %lld ns, bound %lld ns (%d of %d samples), true %lld ns",
		       (long long)res.offset_ns, (long long)res.bound_ns, res.used, got,
		       (long long)truth_at(h, res.base_ns));
	return llabs(res.offset_ns - truth_at(h, res.base_ns)) <= res.bound_ns;
}

/* A monotonic time a few seconds ago: the burst's samples lie in the past. */
static int64_t ago(int64_t ns)
{
	return monotonic_ns() - ns;
}

TEST(no_step_holds_and_stays_tight)
{
	struct history h = { .n = 0 };
	struct target_clock tc = { .logical = false, .path = "system clock" };
	struct ptp_sample smp[PTP_BURST_MAX];
	struct ptp_burst res;
	int64_t t0 = ago(2000 * MS);
	int got = burst(&h, t0, 8, smp);

	fake_d = D0;
	ASSERT_EQ(0, ptp_burst_result(smp, got, &tc, DRIFT_PPB, &res));
	EXPECT_EQ(8, res.used);
	EXPECT_LE(llabs(res.offset_ns), res.bound_ns);
	/* The half round trip, conversion errors, 1 ppm over the 40 ms to the base. */
	EXPECT_LE(res.bound_ns, FWD + 2 * CONV_ERR + 40 + 1)
		TH_LOG("bound %lld ns", (long long)res.bound_ns);
}

/*
 * The incident: REALTIME stepped (+2 ms) after the burst's Syncs, before
 * the result was made of them. Every sample came out -2 ms.
 */
TEST(step_after_the_burst)
{
	int64_t t0 = ago(2000 * MS), end = monotonic_ns();
	struct step st = { t0 + 8 * SYNC_EVERY, 2 * MS };
	struct history h = { .steps = &st, .n = 1 };

	EXPECT_EQ(1, check(_metadata, &h, t0, 8, end));
	st.by = -2 * MS;
	EXPECT_EQ(1, check(_metadata, &h, t0, 8, end));
}

/* Stepped between the burst's Syncs: the samples before it are of another D. */
TEST(step_during_the_burst)
{
	int64_t t0 = ago(2000 * MS), end = monotonic_ns(), by;

	for (by = -5 * MS; by <= 5 * MS; by += MS) {
		struct step st = { t0 + 4 * SYNC_EVERY + 60 * MS, by };
		struct history h = { .steps = &st, .n = 1 };

		if (!by)
			continue;
		check(_metadata, &h, t0, 8, end);
	}
}

/* Stepped between a Sync and its own Delay_Req, both ways, small and large. */
TEST(step_inside_an_exchange)
{
	static const int64_t by[] = { -5 * MS, -1 * MS, -20 * US, -10 * US, -1 * US,
				      1 * US, 20 * US, 1 * MS, 5 * MS };
	int64_t t0 = ago(2000 * MS), end = monotonic_ns();
	unsigned int i;

	for (i = 0; i < sizeof(by) / sizeof(by[0]); i++) {
		struct step st = { t0 + 4 * SYNC_EVERY + 20 * MS, by[i] };
		struct history h = { .steps = &st, .n = 1 };

		check(_metadata, &h, t0, 8, end);
	}
}

/*
 * Steps of 1 to 5 ms either way every 0.5 s, as a guest agent catching a
 * paused VM's clock up might make: bursts of 8 Syncs, back to back. Most
 * must still give a result.
 */
TEST(repeated_steps)
{
	struct step st[64];
	struct history h = { .steps = st, .n = 64 };
	int64_t t0 = ago(40 * 1000 * MS);
	unsigned int seed = 1;
	int i, held = 0;

	for (i = 0; i < 64; i++) {
		st[i].at = t0 + i * 500 * MS + rand_r(&seed) % (500 * MS);
		st[i].by = (1 + rand_r(&seed) % 5) * MS * (rand_r(&seed) % 2 ? 1 : -1);
	}
	for (i = 0; i < 30; i++) {
		int64_t start = t0 + i * 8 * SYNC_EVERY;

		held += check(_metadata, &h, start, 8, start + 8 * SYNC_EVERY);
	}
	EXPECT_GE(held, 15) TH_LOG("%d of 30 bursts gave a result", held);
}

/*
 * A master of its own (a real grandmaster): REALTIME's steps move the
 * system clock against it, and the offset at the result's base is the one
 * of the system clock then, whichever side of a step.
 */
TEST(independent_master)
{
	int64_t t0 = ago(40 * 1000 * MS), by;
	int held = 0, i = 0;

	for (by = -5 * MS; by <= 5 * MS; by += MS, i++) {
		int64_t start = t0 + i * 2 * 8 * SYNC_EVERY;
		struct step st[2] = { { start + 3 * SYNC_EVERY + 60 * MS, by },
				      { start + 5 * SYNC_EVERY + 20 * MS, -by / 2 } };
		struct history h = { st, 2, true };

		held += check(_metadata, &h, start, 8, start + 8 * SYNC_EVERY);
	}
	EXPECT_EQ(11, held);
}

TEST_HARNESS_MAIN
