// SPDX-License-Identifier: GPL-2.0
/*
 * The PTP clock of an instance steers the same logical clock as the lclk
 * ioctls, so it takes the same privilege (CAP_SYS_TIME, whatever the mode
 * of /dev/ptpN), and a step through it keeps the bound honest: the
 * reference that was within +-bound of logical time before a step of
 * delta is within +-(bound + |delta|) after it.
 */
#include <sys/timex.h>

#include "lclk_test.h"
#include "kselftest_harness.h"

#ifndef ADJ_SETOFFSET
#define ADJ_SETOFFSET	0x0100
#endif
#ifndef ADJ_NANO
#define ADJ_NANO	0x2000
#endif

FIXTURE(phc) {
	int fd;		/* /dev/lclk0 */
	int ptp;	/* its /dev/ptpN, read-write */
	clockid_t clk;
};

FIXTURE_SETUP(phc)
{
	char path[32];
	int n = lclk_phc_of(0);

	if (n < 0)
		SKIP(return, "lclk0 has no PTP clock");
	self->fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, lclk_reset(self->fd));
	snprintf(path, sizeof(path), "/dev/ptp%d", n);
	self->ptp = open(path, O_RDWR);
	ASSERT_LE(0, self->ptp);
	self->clk = LCLK_FD_TO_CLOCKID(self->ptp);
}

FIXTURE_TEARDOWN(phc)
{
	if (self->fd < 0)
		return;
	lclk_reset(self->fd);
	close(self->ptp);
	close(self->fd);
}

static int step_phc(clockid_t clk, __s64 delta_ns)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_SETOFFSET | ADJ_NANO;
	tx.time.tv_sec = delta_ns / NSEC;
	tx.time.tv_usec = delta_ns % NSEC;
	if (tx.time.tv_usec < 0) {
		tx.time.tv_sec--;
		tx.time.tv_usec += NSEC;
	}
	return clock_adjtime(clk, &tx) < 0 ? -errno : 0;
}

static int set_freq(clockid_t clk, long scaled_ppm)
{
	struct timex tx;

	memset(&tx, 0, sizeof(tx));
	tx.modes = ADJ_FREQUENCY;
	tx.freq = scaled_ppm;
	return clock_adjtime(clk, &tx) < 0 ? -errno : 0;
}

/* In a child without CAP_SYS_TIME: every change through the PHC fails. */
TEST_F(phc, changes_need_cap_sys_time)
{
	struct lclk_params m0 = lclk_model_of(self->fd), m1;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct timespec ts;
		int bad = 0;

		if (lclk_drop_sys_time())
			_exit(10);
		if (clock_gettime(self->clk, &ts))
			bad |= 1;		/* reading needs nothing */
		ts.tv_sec += 3600;
		if (clock_settime(self->clk, &ts) == 0 || errno != EPERM)
			bad |= 2;
		if (step_phc(self->clk, 10 * NSEC) != -EPERM)
			bad |= 4;
		if (set_freq(self->clk, 65536) != -EPERM)
			bad |= 8;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("bits: 2 settime, 4 adjtime, 8 adjfine went through, 1 gettime failed");
	}
	m1 = lclk_model_of(self->fd);
	EXPECT_EQ(m0.offset_ns + m0.t0_ns, m1.offset_ns + m1.t0_ns);
	EXPECT_EQ(m0.rate_ppt, m1.rate_ppt);
}

/* phc_ctl set to a wrong time: the bound says by how much it may be wrong. */
TEST_F(phc, settime_widens_the_bound)
{
	struct lclk_time t0, t1;
	struct timespec ts;
	__s64 target;

	ASSERT_EQ(0, lclk_get_time(self->fd, &t0));
	ASSERT_GT(1000000, t0.bound_ns);
	target = t0.logical_ns + 10 * NSEC;
	ts.tv_sec = target / NSEC;
	ts.tv_nsec = target % NSEC;
	ASSERT_EQ(0, clock_settime(self->clk, &ts));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t1));
	TH_LOG("after a 10 s settime: bound %lld ns, status %u",
	       t1.bound_ns, t1.status);
	EXPECT_LE(10 * NSEC - 100000000LL, t1.bound_ns);
	EXPECT_GT(12 * NSEC, t1.bound_ns);
	/* The reference (CLOCK_REALTIME, as lclk_reset() set it) is inside. */
	EXPECT_LE(t1.logical_ns - t1.bound_ns, t1.base_ns + (t0.logical_ns - t0.base_ns));
}

TEST_F(phc, adjtime_widens_the_bound)
{
	struct lclk_time t0, t1, t2;

	ASSERT_EQ(0, lclk_get_time(self->fd, &t0));
	ASSERT_EQ(0, step_phc(self->clk, -5 * NSEC));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t1));
	EXPECT_LE(t0.bound_ns + 5 * NSEC, t1.bound_ns);
	EXPECT_GT(t0.bound_ns + 5 * NSEC + 1000000, t1.bound_ns);
	ASSERT_EQ(0, step_phc(self->clk, 2 * NSEC));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t2));
	EXPECT_LE(t1.bound_ns + 2 * NSEC, t2.bound_ns);
}

/*
 * phc_ctl freq / phc2sys: a rate lclkctl did not set. The reference is the
 * line the clock followed before (synced to it, bound 1 us, rate 0): after
 * +500 ppm for 0.3 s, logical time is 150 us off it, and the bound has to
 * say so, now and for a stamp taken before the change, until the next sync
 * brings the bound's growth back to max_drift.
 */
TEST_F(phc, adjfine_widens_the_bound)
{
	struct lclk_clock c;
	struct lclk_time t0, t1;
	struct lclk_now past;
	struct lclk_params m;
	struct lclk_set_model sync;
	__s64 line, err;

	ASSERT_EQ(0, lclk_open(&c, LCLK_DEV0));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t0));
	line = t0.logical_ns - t0.base_ns;
	usleep(200000);
	ASSERT_EQ(0, set_freq(self->clk, 500 * 65536L));
	usleep(300000);
	ASSERT_EQ(0, lclk_get_time(self->fd, &t1));
	err = t1.logical_ns - (t1.base_ns + line);
	TH_LOG("+500 ppm: %lld ns off the line followed before, bound %lld ns",
	       (long long)err, (long long)t1.bound_ns);
	EXPECT_LE(140000, err);
	EXPECT_LE(llabs(err), t1.bound_ns);
	lclk_from_base(&c, t0.base_ns, -1, &past);
	err = past.time_ns - t0.logical_ns;
	TH_LOG("a stamp from before the change: %lld ns off, bound %lld ns",
	       (long long)err, (long long)past.bound_ns);
	EXPECT_LE(llabs(err), past.bound_ns);

	/* A sync measures the clock again: the bound grows at max_drift. */
	memset(&sync, 0, sizeof(sync));
	sync.modes = LCLK_SET_BOUND;
	sync.bound_ns = 1000;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &sync));
	m = lclk_model_of(self->fd);
	EXPECT_EQ(lclk_ppb_to_mult(m.max_drift_ppb), m.drift_mult);
	lclk_close(&c);
}

TEST_HARNESS_MAIN
