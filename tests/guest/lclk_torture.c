// SPDX-License-Identifier: GPL-2.0
/*
 * Torture: a writer changes the model as fast as it can while a reader
 * pinned to every CPU checks each reading (mmap reader, and every 16th
 * through the ioctl).
 *
 * two_models: the writer flips between two complete models A and B. Each
 * reading must be exactly one of them, in time and bound alike (a torn read
 * mixes them), and readings of one model must not go backwards.
 *
 * rate_flips: the writer flips the rate between +max and -max, which never
 * steps time. Each CPU's readings must never go backwards, and must advance
 * at a rate within the limits.
 *
 * Each runs LCLK_TORTURE_SECONDS (default 10) and expects zero violations.
 */
#include <stdatomic.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

#define MAX_READERS	64
#define REPORT		5	/* violations printed per reader */

struct model {
	__s64 offset, rate_ppt, bound, t0;
	__u32 drift_ppb;
	__s64 mult, drift_mult;
};

struct torture {
	int fd;
	struct lclk_clock c;
	atomic_int stop;
	int rate_flips;		/* which test */
	struct model m[2];
	__s64 max_rate_ppt;
	long long writes, write_errors;
};

struct reader {
	pthread_t thread;
	struct torture *tt;
	int cpu;
	long long reads, ioctl_reads, violations, per_model[2];
};

static int seconds(void)
{
	const char *s = getenv("LCLK_TORTURE_SECONDS");

	return s && atoi(s) > 0 ? atoi(s) : 10;
}

static void violation(struct reader *r, const char *fmt, long long a,
		      long long b, long long c)
{
	if (r->violations++ < REPORT) {
		fprintf(stderr, "# cpu %d: ", r->cpu);
		fprintf(stderr, fmt, a, b, c);
		fputc('\n', stderr);
	}
}

/* Which model a reading belongs to, or -1. Rounding of re-anchoring: +-1. */
static int which(const struct torture *tt, __s64 base, __s64 time,
		 __s64 bound)
{
	int i, found = -1;

	for (i = 0; i < 2; i++) {
		const struct model *m = &tt->m[i];
		__s64 t = base + m->offset + lclk_scale(base - m->t0, m->mult);
		/* + 1 ns for the floor of the growth to the sync, and a reading's */
		__s64 b = m->bound + lclk_scale(base - m->t0, m->drift_mult) +
			  1 + LCLK_BOUND_ROUNDING_NS;

		if (llabs(time - t) <= 1 && llabs(bound - b) <= 1) {
			if (found >= 0)
				return -2;	/* ambiguous: models too close */
			found = i;
		}
	}
	return found;
}

/* One reading, through the page or the ioctl, on this CPU. */
static int read_one(struct reader *r, struct lclk_now *n)
{
	struct lclk_time t;

	if ((r->reads & 15) != 15)
		return lclk_now(&r->tt->c, n);
	if (lclk_get_time(r->tt->fd, &t))
		return -1;
	r->ioctl_reads++;
	n->time_ns = t.logical_ns;
	n->bound_ns = t.bound_ns;
	n->base_ns = t.base_ns;
	n->status = t.status;
	n->cpu = t.cpu;
	return 0;
}

static void *reader(void *arg)
{
	struct reader *r = arg;
	struct torture *tt = r->tt;
	__s64 last_time[2] = { LLONG_MIN, LLONG_MIN }, last_base = 0;
	__s64 prev_time = LLONG_MIN, prev_base = 0, dt, db, slack;
	struct lclk_now n;
	int k;

	if (lclk_pin(r->cpu)) {
		violation(r, "cannot pin%lld%lld%lld", 0, 0, 0);
		return NULL;
	}
	while (!atomic_load_explicit(&tt->stop, memory_order_relaxed)) {
		if (read_one(r, &n)) {
			violation(r, "get-time failed%lld%lld%lld", 0, 0, 0);
			continue;
		}
		r->reads++;
		if (n.base_ns < last_base)
			violation(r, "base went back %lld -> %lld%lld",
				  last_base, n.base_ns, 0);
		last_base = n.base_ns;
		if (n.status != LCLK_STATUS_SYNCED)
			violation(r, "status %lld%lld%lld", n.status, 0, 0);

		if (!tt->rate_flips) {
			k = which(tt, n.base_ns, n.time_ns, n.bound_ns);
			if (k < 0) {
				violation(r, "base %lld time %lld bound %lld: neither model",
					  n.base_ns, n.time_ns, n.bound_ns);
				continue;
			}
			r->per_model[k]++;
			if (n.time_ns + 1 < last_time[k])
				violation(r, "model time went back %lld -> %lld (%lld)",
					  last_time[k], n.time_ns, k);
			last_time[k] = n.time_ns;
			continue;
		}

		/* rate flips: this CPU's offset, forward only, bounded rate */
		if (n.cpu != r->cpu)
			violation(r, "read on cpu %lld, pinned to %lld%lld",
				  n.cpu, r->cpu, 0);
		if (prev_time != LLONG_MIN) {
			dt = n.time_ns - prev_time;
			db = n.base_ns - prev_base;
			slack = db * tt->max_rate_ppt / 1000000000000LL + 2;
			if (dt < 0)
				violation(r, "time went back %lld -> %lld%lld",
					  prev_time, n.time_ns, 0);
			else if (dt < db - slack || dt > db + slack)
				violation(r, "advanced %lld in %lld base ns%lld",
					  dt, db, 0);
		}
		prev_time = n.time_ns;
		prev_base = n.base_ns;
	}
	return NULL;
}

static void *writer(void *arg)
{
	struct torture *tt = arg;
	struct lclk_set_model s;
	int k = 0;

	while (!atomic_load_explicit(&tt->stop, memory_order_relaxed)) {
		memset(&s, 0, sizeof(s));
		if (tt->rate_flips) {
			/* no ALLOW_BACKWARD: a backward step would fail */
			s.modes = LCLK_SET_RATE;
			s.rate_ppt = k ? tt->max_rate_ppt : -tt->max_rate_ppt;
		} else {
			s.modes = LCLK_SET_OFFSET | LCLK_SET_RATE |
				  LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT;
			s.flags = LCLK_ALLOW_BACKWARD;
			s.t0_ns = tt->m[k].t0;
			s.offset_ns = tt->m[k].offset;
			s.rate_ppt = tt->m[k].rate_ppt;
			s.bound_ns = tt->m[k].bound;
			s.max_drift_ppb = tt->m[k].drift_ppb;
		}
		if (lclk_ioc(tt->fd, LCLK_IOC_SET_MODEL, &s))
			tt->write_errors++;
		tt->writes++;
		k ^= 1;
	}
	return NULL;
}

static void set_model(struct model *m, __s64 t0, __s64 offset, __s64 rate,
		      __s64 bound, __u32 drift)
{
	m->t0 = t0;
	m->offset = offset;
	m->rate_ppt = rate;
	m->bound = bound;
	m->drift_ppb = drift;
	m->mult = lclk_ppt_to_mult(rate);
	m->drift_mult = lclk_ppb_to_mult(drift);
}

static void run(struct __test_metadata *_metadata, int rate_flips)
{
	static struct reader readers[MAX_READERS];
	struct torture tt;
	struct lclk_stats s0, s1;
	pthread_t w;
	int cpus[MAX_READERS], n, i;
	long long reads = 0, ioctl_reads = 0, bad = 0, per[2] = { 0, 0 };
	__s64 t0;

	memset(&tt, 0, sizeof(tt));
	tt.fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, tt.fd);
	ASSERT_EQ(0, lclk_reset(tt.fd));
	ASSERT_EQ(0, lclk_open(&tt.c, LCLK_DEV0));
	tt.max_rate_ppt = lclk_info_of(tt.fd).max_rate_ppt;
	tt.rate_flips = rate_flips;
	n = lclk_cpus(cpus, MAX_READERS);
	ASSERT_LT(0, n);

	/* A and B are a second apart and never meet within 2000 s. */
	t0 = lclk_monotonic_ns() - NSEC;
	set_model(&tt.m[0], t0, lclk_model_of(tt.fd).offset_ns, 300000000,
		  1000, 50000);
	set_model(&tt.m[1], t0, tt.m[0].offset + NSEC, -200000000, 7777,
		  200000);
	if (rate_flips) {
		/* the per-CPU path of the reader, too */
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, lclk_set_cpu(tt.fd, cpus[i],
						  100 * (cpus[i] + 1), 0));
	} else {
		struct lclk_set_model s;

		memset(&s, 0, sizeof(s));
		s.modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND |
			  LCLK_SET_MAX_DRIFT;
		s.t0_ns = t0;
		s.offset_ns = tt.m[0].offset;
		s.rate_ppt = tt.m[0].rate_ppt;
		s.bound_ns = tt.m[0].bound;
		s.max_drift_ppb = tt.m[0].drift_ppb;
		ASSERT_EQ(0, lclk_ioc(tt.fd, LCLK_IOC_SET_MODEL, &s));
	}
	s0 = lclk_stats_of(tt.fd);

	for (i = 0; i < n; i++) {
		readers[i] = (struct reader){ .tt = &tt, .cpu = cpus[i] };
		ASSERT_EQ(0, pthread_create(&readers[i].thread, NULL, reader,
					    &readers[i]));
	}
	ASSERT_EQ(0, pthread_create(&w, NULL, writer, &tt));
	sleep(seconds());
	atomic_store(&tt.stop, 1);
	pthread_join(w, NULL);
	for (i = 0; i < n; i++) {
		pthread_join(readers[i].thread, NULL);
		reads += readers[i].reads;
		ioctl_reads += readers[i].ioctl_reads;
		bad += readers[i].violations;
		per[0] += readers[i].per_model[0];
		per[1] += readers[i].per_model[1];
	}
	s1 = lclk_stats_of(tt.fd);

	TH_LOG("%d s, %d readers: %lld writes, %lld reads (%lld by ioctl), %lld violations",
	       seconds(), n, tt.writes, reads, ioctl_reads, bad);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, tt.write_errors);
	EXPECT_LT(1000, tt.writes);
	EXPECT_LT(10000, reads);
	EXPECT_EQ(s0.updates + tt.writes, s1.updates);
	if (rate_flips) {
		/* rates alone never step */
		EXPECT_EQ(s0.steps, s1.steps);
		EXPECT_EQ(s0.backward_steps, s1.backward_steps);
	} else {
		/* both models were seen, many times */
		TH_LOG("readings: %lld of A, %lld of B", per[0], per[1]);
		EXPECT_LT(100, per[0]);
		EXPECT_LT(100, per[1]);
	}
	lclk_close(&tt.c);
	lclk_reset(tt.fd);
	close(tt.fd);
}

FIXTURE(torture) {
	int unused;
};

FIXTURE_SETUP(torture)
{
}

FIXTURE_TEARDOWN(torture)
{
}

TEST_F_TIMEOUT(torture, two_models, 120)
{
	run(_metadata, 0);
}

TEST_F_TIMEOUT(torture, rate_flips, 120)
{
	run(_metadata, 1);
}

TEST_HARNESS_MAIN
