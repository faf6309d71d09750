// SPDX-License-Identifier: GPL-2.0
/*
 * Every ioctl of /dev/lclkN: the happy path, every rejection, the stats
 * they leave behind, and EPERM without CAP_SYS_TIME.
 */
#include "lclk_test.h"
#include "kselftest_harness.h"

FIXTURE(dev) {
	int fd;
	struct lclk_info info;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, self->fd);
	self->info = lclk_info_of(self->fd);
	ASSERT_EQ(0, lclk_reset(self->fd));
}

FIXTURE_TEARDOWN(dev)
{
	lclk_reset(self->fd);
	close(self->fd);
}

static long read_param(const char *name)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/lclk/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		if (*c++)
			return 0;
	return 1;
}

/* A change that must fail with err, be counted, and change nothing. */
static int refused(int fd, unsigned long cmd, void *arg, int err)
{
	struct lclk_stats s0 = lclk_stats_of(fd), s1;
	struct lclk_params m0 = lclk_model_of(fd), m1;
	int ret = lclk_ioc(fd, cmd, arg);

	s1 = lclk_stats_of(fd);
	m1 = lclk_model_of(fd);
	if (ret != err) {
		fprintf(stderr, "# ioctl %#lx: %d (%s), expected %d\n", cmd,
			ret, strerror(-ret), err);
		return 0;
	}
	if (s1.rejected != s0.rejected + 1 || s1.updates != s0.updates) {
		fprintf(stderr, "# ioctl %#lx: not counted as rejected\n", cmd);
		return 0;
	}
	return m1.t0_ns == m0.t0_ns && m1.offset_ns == m0.offset_ns &&
	       m1.rate_ppt == m0.rate_ppt && m1.bound0_ns == m0.bound0_ns &&
	       m1.holdover_ns == m0.holdover_ns &&
	       m1.max_drift_ppb == m0.max_drift_ppb &&
	       m1.status == m0.status && m1.model_flags == m0.model_flags;
}

static int set_model_refused(int fd, struct lclk_set_model *m, int err)
{
	return refused(fd, LCLK_IOC_SET_MODEL, m, err);
}

static struct lclk_set_model rate_only(__s64 ppt)
{
	struct lclk_set_model m;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE;
	m.rate_ppt = ppt;
	return m;
}

/* ---- INFO ----------------------------------------------------------------- */

TEST_F(dev, info)
{
	struct lclk_info *i = &self->info;
	size_t want = sizeof(struct lclk_page) + 8 * (size_t)i->ncpus;
	size_t page = sysconf(_SC_PAGESIZE);
	char path[96], name[32] = "";
	FILE *f;

	EXPECT_EQ(LCLK_ABI_VERSION, i->abi_version);
	EXPECT_EQ(LCLK_CAP_MMAP | LCLK_CAP_PHC | LCLK_CAP_CPU_OFFSET, i->caps);
	EXPECT_EQ(0, i->index);
	EXPECT_LE(sysconf(_SC_NPROCESSORS_CONF), i->ncpus);
	EXPECT_EQ((want + page - 1) / page * page, i->mmap_size);
	EXPECT_EQ(read_param("max_rate_ppb") * 1000, i->max_rate_ppt);
	EXPECT_EQ(read_param("max_drift_ppb"), i->max_drift_ppb);
	EXPECT_TRUE(all_zero(i->rsv, sizeof(i->rsv)));

	/* The PTP clock it names is ours. */
	ASSERT_LE(0, i->phc_index);
	snprintf(path, sizeof(path), "/sys/class/ptp/ptp%d/clock_name",
		 i->phc_index);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%31s", name));
	fclose(f);
	EXPECT_STREQ("lclk0", name);
}

TEST_F(dev, info_second_instance)
{
	struct lclk_info i;
	int fd = open(LCLK_DEV1, O_RDONLY);

	if (fd < 0)
		SKIP(return, "no /dev/lclk1 (instances=1)");
	i = lclk_info_of(fd);
	EXPECT_EQ(1, i.index);
	EXPECT_NE(self->info.phc_index, i.phc_index);
	close(fd);
}

/* Outputs are zeroed: reserved fields come back zero whatever was there. */
TEST_F(dev, outputs_zeroed)
{
	struct lclk_info i;
	struct lclk_params m;
	struct lclk_stats s;
	struct lclk_time t;

	memset(&i, 0xa5, sizeof(i));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_INFO, &i));
	EXPECT_TRUE(all_zero(i.rsv, sizeof(i.rsv)));
	memset(&m, 0xa5, sizeof(m));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_GET_MODEL, &m));
	EXPECT_TRUE(all_zero(&m.rsv, sizeof(m.rsv)));
	memset(&s, 0xa5, sizeof(s));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_GET_STATS, &s));
	EXPECT_TRUE(all_zero(s.rsv, sizeof(s.rsv)));
	/* get-time's inputs must be zero; its outputs may hold anything. */
	memset(&t, 0, sizeof(t));
	t.cpu = 0xa5a5a5a5;
	t.base_ns = t.logical_ns = t.bound_ns = -1;
	t.status = 77;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, &t));
	EXPECT_TRUE(all_zero(t.rsv, sizeof(t.rsv)));
	EXPECT_EQ(0, t.flags);
	EXPECT_EQ(LCLK_STATUS_SYNCED, t.status);
}

/* ---- GET_TIME -------------------------------------------------------------- */

TEST_F(dev, get_time)
{
	struct lclk_params m;
	struct lclk_time t;
	__s64 before, after, mult;

	ASSERT_EQ(0, lclk_reset(self->fd));
	m = lclk_model_of(self->fd);
	mult = lclk_ppt_to_mult(m.rate_ppt);
	before = lclk_monotonic_ns();
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	after = lclk_monotonic_ns();

	EXPECT_LE(before, t.base_ns);
	EXPECT_GE(after, t.base_ns);
	EXPECT_LT(t.cpu, self->info.ncpus);
	EXPECT_EQ(lclk_logical(t.base_ns, m.t0_ns, m.offset_ns, mult),
		  t.logical_ns);
	EXPECT_EQ(lclk_bound(t.base_ns, LCLK_STATUS_SYNCED, m.bound0_ns,
			     m.last_update_ns,
			     lclk_ppb_to_mult(m.max_drift_ppb)),
		  t.bound_ns);
	EXPECT_EQ(LCLK_STATUS_SYNCED, t.status);
}

TEST_F(dev, get_time_rejects)
{
	struct lclk_stats s0 = lclk_stats_of(self->fd), s1;
	struct lclk_time t;
	void *ro;
	int i;

	memset(&t, 0, sizeof(t));
	t.flags = 1;
	EXPECT_EQ(-EINVAL, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, &t));
	for (i = 0; i < 5; i++) {
		memset(&t, 0, sizeof(t));
		t.rsv[i] = 1;
		EXPECT_EQ(-EINVAL, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, &t));
	}
	EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, NULL));
	EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, LCLK_IOC_GET_TIME,
				    (void *)16));
	/* readable but not writable: the input is fine, the output faults */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, ro));
	/* the structure straddles the end of the mapping */
	EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, LCLK_IOC_GET_TIME,
				    (char *)ro + 4096 - 8));
	munmap(ro, 4096);
	/* Reads are not change requests: not counted. */
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.rejected, s1.rejected);
}

/* Any alignment will do for the caller's structure. */
TEST_F(dev, get_time_unaligned)
{
	char buf[sizeof(struct lclk_time) + 8] __attribute__((aligned(8)));
	struct lclk_time t, *u = (struct lclk_time *)(buf + 3);

	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_GET_TIME, u));
	memcpy(&t, u, sizeof(t));
	EXPECT_EQ(LCLK_STATUS_SYNCED, t.status);
	EXPECT_LT(0, t.base_ns);
	EXPECT_TRUE(all_zero(t.rsv, sizeof(t.rsv)));
}

/* The other reads fault cleanly on bad pointers too. */
TEST_F(dev, reads_efault)
{
	static const unsigned long cmds[] = {
		LCLK_IOC_INFO, LCLK_IOC_GET_MODEL, LCLK_IOC_GET_STATS,
		LCLK_IOC_GET_CPU_OFFSET,
	};
	unsigned int i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, cmds[i], NULL));
		EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, cmds[i], (void *)8));
	}
}

/* ---- GET_MODEL / SET_MODEL ------------------------------------------------ */

TEST_F(dev, set_model_all)
{
	struct lclk_set_model m;
	struct lclk_stats s0, s1;
	struct lclk_params got;
	__s64 before, after;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND |
		  LCLK_SET_HOLDOVER | LCLK_SET_MAX_DRIFT | LCLK_SET_FLAGS;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.offset_ns = 123456789012LL;
	m.rate_ppt = -250000000;	/* -250 ppm */
	m.bound_ns = 4242;
	m.holdover_ns = 7 * NSEC;
	m.max_drift_ppb = 12345;
	m.model_flags = LCLK_MODEL_TAI;
	s0 = lclk_stats_of(self->fd);
	before = lclk_monotonic_ns();
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	after = lclk_monotonic_ns();
	s1 = lclk_stats_of(self->fd);
	got = lclk_model_of(self->fd);

	/* t0 = 0 means now: the offset holds at the update's own time. */
	EXPECT_LE(before, got.t0_ns);
	EXPECT_GE(after, got.t0_ns);
	EXPECT_EQ(m.offset_ns, got.offset_ns);
	EXPECT_EQ(m.rate_ppt, got.rate_ppt);
	EXPECT_EQ(m.bound_ns, got.bound0_ns);
	EXPECT_EQ(got.t0_ns, got.last_update_ns);
	EXPECT_EQ(m.holdover_ns, got.holdover_ns);
	EXPECT_EQ(m.max_drift_ppb, got.max_drift_ppb);
	EXPECT_EQ(LCLK_MODEL_TAI, got.model_flags);
	EXPECT_EQ(LCLK_STATUS_SYNCED, got.status);
	EXPECT_EQ(s0.updates + 1, s1.updates);
}

/* An offset given for a t0 in the past is carried forward with the rate. */
TEST_F(dev, set_model_past_t0)
{
	struct lclk_set_model m;
	struct lclk_params got;
	struct lclk_time t;
	__s64 t0 = lclk_monotonic_ns() - 2 * NSEC, mult, want;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND |
		  LCLK_SET_MAX_DRIFT;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.t0_ns = t0;
	m.offset_ns = 5 * NSEC;
	m.rate_ppt = 400000000;		/* 400 ppm */
	m.bound_ns = 1000;
	m.max_drift_ppb = 100000;	/* 100 ppm */
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	got = lclk_model_of(self->fd);
	mult = lclk_ppt_to_mult(m.rate_ppt);

	/* Re-anchored at the update, same line to within the rounding. */
	EXPECT_LT(t0, got.t0_ns);
	want = m.offset_ns + lclk_scale(got.t0_ns - t0, mult);
	EXPECT_EQ(want, got.offset_ns);
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	want = t.base_ns + m.offset_ns + lclk_scale(t.base_ns - t0, mult);
	EXPECT_LE(want - 1, t.logical_ns);
	EXPECT_GE(want + 1, t.logical_ns);
	/* The bound, measured at t0, has grown by 100 ppm since (+1: floor). */
	EXPECT_EQ(m.bound_ns + lclk_scale(got.t0_ns - t0,
					  lclk_ppb_to_mult(m.max_drift_ppb)) + 1,
		  got.bound0_ns);
}

/* A rate change alone re-anchors without stepping. */
TEST_F(dev, set_rate_never_steps)
{
	struct lclk_params a, b;
	struct lclk_stats s0, s1;
	struct lclk_set_model m = rate_only(-500000000);
	int i;

	for (i = 0; i < 100; i++) {
		a = lclk_model_of(self->fd);
		s0 = lclk_stats_of(self->fd);
		m.rate_ppt = (i & 1 ? 1 : -1) * self->info.max_rate_ppt;
		ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
		b = lclk_model_of(self->fd);
		s1 = lclk_stats_of(self->fd);
		EXPECT_EQ(m.rate_ppt, b.rate_ppt);
		EXPECT_EQ(a.offset_ns + lclk_scale(b.t0_ns - a.t0_ns,
					lclk_ppt_to_mult(a.rate_ppt)),
			  b.offset_ns);
		EXPECT_EQ(s0.steps, s1.steps);
		EXPECT_EQ(s0.updates + 1, s1.updates);
	}
}

TEST_F(dev, set_model_forward_and_backward)
{
	struct lclk_set_model m;
	struct lclk_stats s0, s1;
	struct lclk_params a = lclk_model_of(self->fd), b;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET;
	m.offset_ns = a.offset_ns + NSEC;	/* forward: no flag needed */
	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.steps + 1, s1.steps);
	EXPECT_EQ(s0.backward_steps, s1.backward_steps);

	m.offset_ns = a.offset_ns;		/* back by 1 s */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -ERANGE));

	m.flags = LCLK_ALLOW_BACKWARD;
	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	s1 = lclk_stats_of(self->fd);
	b = lclk_model_of(self->fd);
	EXPECT_EQ(a.offset_ns, b.offset_ns);
	EXPECT_EQ(s0.steps + 1, s1.steps);
	EXPECT_EQ(s0.backward_steps + 1, s1.backward_steps);

	/* The same offset again is an update but no step. */
	s0 = s1;
	m.flags = 0;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.updates + 1, s1.updates);
	EXPECT_EQ(s0.steps, s1.steps);
}

TEST_F(dev, status_holdover_unsync)
{
	struct lclk_set_model m;
	struct lclk_time t;
	struct lclk_params got;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_BOUND | LCLK_SET_HOLDOVER;
	m.bound_ns = 10;
	m.holdover_ns = 2000000;	/* 2 ms */
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	usleep(20000);
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	EXPECT_EQ(LCLK_STATUS_HOLDOVER, t.status);
	got = lclk_model_of(self->fd);
	EXPECT_EQ(LCLK_STATUS_HOLDOVER, got.status);

	/* A new sync makes it SYNCED again. */
	m.modes = LCLK_SET_BOUND;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	EXPECT_EQ(LCLK_STATUS_SYNCED, t.status);

	m.modes = LCLK_SET_UNSYNC;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, t.status);
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, t.bound_ns);
	got = lclk_model_of(self->fd);
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, got.status);
	/* The last sync is still reported. */
	EXPECT_NE(0, got.last_update_ns);
}

TEST_F(dev, max_drift_grows_bound)
{
	struct lclk_set_model m;
	struct lclk_params got;
	struct lclk_time t;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_BOUND | LCLK_SET_MAX_DRIFT;
	m.bound_ns = 500;
	m.max_drift_ppb = LCLK_MAX_DRIFT_PPB;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	usleep(10000);
	ASSERT_EQ(0, lclk_get_time(self->fd, &t));
	got = lclk_model_of(self->fd);
	EXPECT_EQ(500 + lclk_scale(t.base_ns - got.last_update_ns,
				   lclk_ppb_to_mult(LCLK_MAX_DRIFT_PPB)) +
		  LCLK_BOUND_ROUNDING_NS, t.bound_ns);
	/* 10 ms at 1000 ppm: at least 10 us more. */
	EXPECT_LE(500 + 9999, t.bound_ns);
}

TEST_F(dev, set_model_rejects)
{
	struct lclk_set_model m;
	__s64 max = self->info.max_rate_ppt;

#define RESET() do { memset(&m, 0, sizeof(m)); m.modes = LCLK_SET_RATE; } while (0)
	RESET();
	m.modes = 0;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	RESET();
	m.modes |= 1U << 10;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	RESET();
	m.rsv[2] = 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	RESET();
	m.modes |= 1U << 16;	/* the module's internal modes are not ABI */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	RESET();
	m.flags = 2;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	RESET();
	m.rate_ppt = max + 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.rate_ppt = -max - 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.rate_ppt = LLONG_MIN;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.rate_ppt = max;
	EXPECT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	m.rate_ppt = -max;
	EXPECT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));

	RESET();
	m.modes = LCLK_SET_OFFSET;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.offset_ns = LCLK_MAX_OFFSET_NS + 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.offset_ns = -LCLK_MAX_OFFSET_NS - 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.offset_ns = 0;
	m.t0_ns = -1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));

	RESET();
	m.modes = LCLK_SET_BOUND;
	m.bound_ns = -1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.bound_ns = LCLK_MAX_BOUND_NS + 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.bound_ns = 1;
	m.t0_ns = -5;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	/* The bound at an old t0 has grown past the limit by now. */
	m.t0_ns = 1;
	m.bound_ns = LCLK_MAX_BOUND_NS;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EOVERFLOW));

	RESET();
	m.modes = LCLK_SET_BOUND | LCLK_SET_UNSYNC;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));

	RESET();
	m.modes = LCLK_SET_HOLDOVER;
	m.holdover_ns = -1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));

	RESET();
	m.modes = LCLK_SET_MAX_DRIFT;
	m.max_drift_ppb = LCLK_MAX_DRIFT_PPB + 1;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m.max_drift_ppb = UINT_MAX;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));

	RESET();
	m.modes = LCLK_SET_FLAGS;
	m.model_flags = 2;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));

	/* Fields of modes not selected are ignored. */
	RESET();
	m.rate_ppt = 1;
	m.offset_ns = LLONG_MIN;
	m.bound_ns = -1;
	m.holdover_ns = -1;
	m.max_drift_ppb = UINT_MAX;
	m.model_flags = ~0U;
	m.t0_ns = -1;
	m.corr_ppt = LLONG_MIN;
	m.corr_ns = -1;
	EXPECT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));

	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_MODEL, NULL, -EFAULT));
#undef RESET
}

/*
 * SET_MODEL's structure grows at its end (uapi lclk.h): a caller built
 * before vmclock_marker passes its own size, and one built after this
 * module passes more, which must be zero.
 */
TEST_F(dev, set_model_sizes)
{
	struct {
		struct lclk_set_model m;
		__u64 later[2];
	} newer;
	struct lclk_set_model m = rate_only(1000);

	/* what lies past an old caller's size is not its: never read */
	m.rsv[0] = 1;
	EXPECT_EQ(0, lclk_ioc(self->fd, _IOW(LCLK_IOC_MAGIC, 0x04,
					     char[LCLK_SET_MODEL_SIZE_VER0]), &m));
	EXPECT_EQ(1000, lclk_model_of(self->fd).rate_ppt);

	memset(&newer, 0, sizeof(newer));
	newer.m = rate_only(2000);
	EXPECT_EQ(0, lclk_ioc(self->fd, _IOW(LCLK_IOC_MAGIC, 0x04, char[sizeof(newer)]), &newer));
	EXPECT_EQ(2000, lclk_model_of(self->fd).rate_ppt);
	newer.m.rate_ppt = 3000;
	newer.later[1] = 1;
	EXPECT_TRUE(refused(self->fd, _IOW(LCLK_IOC_MAGIC, 0x04, char[sizeof(newer)]), &newer,
			    -E2BIG));
	EXPECT_EQ(2000, lclk_model_of(self->fd).rate_ppt);
}

/*
 * On a machine without a vmclock (the test bed's QEMU has none; the
 * snapshot test, tests/vm/snapshot-restore -s, has one): no marker to
 * read, and a change conditional on one is refused rather than made
 * unchecked.
 */
TEST_F(dev, vmclock_conditions_without_one)
{
	struct lclk_set_model m = rate_only(1000);
	struct lclk_disruption d;

	if (self->info.caps & LCLK_CAP_VMCLOCK)
		SKIP(return, "this machine has a vmclock");
	EXPECT_EQ(-EOPNOTSUPP, lclk_ioc(self->fd, LCLK_IOC_GET_DISRUPTION, &d));
	m.modes |= LCLK_SET_VMCLOCK;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EOPNOTSUPP));
	/* a condition alone changes nothing: refused whatever the machine */
	m.modes = LCLK_SET_VMCLOCK;
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
}

/* ---- corrections ---------------------------------------------------------- */

static struct lclk_set_model correction(__s64 free_ppt, __s64 corr_ppt,
					__s64 corr_ns)
{
	struct lclk_set_model m = rate_only(free_ppt);

	m.modes |= LCLK_SET_CORRECTION;
	m.corr_ppt = corr_ppt;
	m.corr_ns = corr_ns;
	return m;
}

TEST_F(dev, correction_rejects)
{
	__s64 max = self->info.max_rate_ppt;
	struct lclk_set_model m;

	m = correction(0, 1, 1);
	m.modes = LCLK_SET_CORRECTION;		/* without its free rate */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, 0, 1000);		/* no rate */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, 1, 0);		/* no length */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, 1, -1);
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, 1, LCLK_MAX_CORR_NS + 1);
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(max, 1, 1000);		/* past the limit, either side */
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(-max, -1, 1000);
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, LLONG_MIN, 1000);
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	m = correction(0, LLONG_MAX, 1000);
	EXPECT_TRUE(set_model_refused(self->fd, &m, -EINVAL));
	/* The limits themselves are taken: the whole range, and its length. */
	m = correction(max, -2 * max, LCLK_MAX_CORR_NS);
	EXPECT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(-max, lclk_model_of(self->fd).rate_ppt);
}

/* The module's timer ends it: the rate is the free one again, by itself. */
TEST_F(dev, correction_ends_at_its_end)
{
	struct lclk_set_model m = correction(1000000, 100000000, 50000000);
	struct lclk_stats s0 = lclk_stats_of(self->fd), s1;
	int i;

	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(101000000, lclk_model_of(self->fd).rate_ppt);
	/* 50 ms, and time for a slow (TCG) guest to run the timer */
	for (i = 0; i < 200 && lclk_model_of(self->fd).rate_ppt != 1000000; i++)
		usleep(10000);
	EXPECT_EQ(1000000, lclk_model_of(self->fd).rate_ppt);
	TH_LOG("ended within %d ms", 10 * i);
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.updates + 2, s1.updates);	/* its start and its end */
	EXPECT_EQ(s0.rejected, s1.rejected);
}

/*
 * It ends at once when the file that set it is released (its setter died),
 * not when another file is.
 */
TEST_F(dev, correction_ends_with_its_file)
{
	struct lclk_set_model m = correction(-2000000, -300000000, 3600LL * 1000000000);
	int setter = open(LCLK_DEV0, O_RDONLY), other = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, setter);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, lclk_ioc(setter, LCLK_IOC_SET_MODEL, &m));
	close(other);
	EXPECT_EQ(-302000000, lclk_model_of(self->fd).rate_ppt);
	close(setter);
	EXPECT_EQ(-2000000, lclk_model_of(self->fd).rate_ppt);
}

/* A rate set without a correction replaces it, through any file. */
TEST_F(dev, correction_replaced_by_a_rate)
{
	struct lclk_set_model m = correction(0, 300000000, 3600LL * 1000000000);
	int setter = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, setter);
	ASSERT_EQ(0, lclk_ioc(setter, LCLK_IOC_SET_MODEL, &m));
	m = rate_only(5000);
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(5000, lclk_model_of(self->fd).rate_ppt);
	close(setter);
	EXPECT_EQ(5000, lclk_model_of(self->fd).rate_ppt);
}

/* ---- STEP ----------------------------------------------------------------- */

TEST_F(dev, step)
{
	struct lclk_step st;
	struct lclk_stats s0, s1;
	struct lclk_time a, b;

	memset(&st, 0, sizeof(st));
	st.delta_ns = 3 * NSEC;
	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_get_time(self->fd, &a));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	ASSERT_EQ(0, lclk_get_time(self->fd, &b));
	s1 = lclk_stats_of(self->fd);
	/* rate 0: logical - base moves by exactly delta */
	EXPECT_EQ(st.delta_ns, (b.logical_ns - b.base_ns) -
			       (a.logical_ns - a.base_ns));
	EXPECT_EQ(s0.updates + 1, s1.updates);
	EXPECT_EQ(s0.steps + 1, s1.steps);
	EXPECT_EQ(s0.backward_steps, s1.backward_steps);

	st.delta_ns = -NSEC;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -ERANGE));
	st.flags = LCLK_ALLOW_BACKWARD;
	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_get_time(self->fd, &a));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	ASSERT_EQ(0, lclk_get_time(self->fd, &b));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(st.delta_ns, (b.logical_ns - b.base_ns) -
			       (a.logical_ns - a.base_ns));
	EXPECT_EQ(s0.steps + 1, s1.steps);
	EXPECT_EQ(s0.backward_steps + 1, s1.backward_steps);

	/* A zero step is an update that steps nothing. */
	st.delta_ns = 0;
	st.flags = 0;
	s0 = s1;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.updates + 1, s1.updates);
	EXPECT_EQ(s0.steps, s1.steps);
}

TEST_F(dev, step_rejects)
{
	struct lclk_set_model m;
	struct lclk_step st;
	int i;

	memset(&st, 0, sizeof(st));
	st.delta_ns = 1;
	st.flags = 2;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EINVAL));
	st.flags = 0;
	for (i = 0; i < 5; i++) {
		st.rsv[i] = 1;
		EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EINVAL));
		st.rsv[i] = 0;
	}
	st.delta_ns = LCLK_MAX_OFFSET_NS + 1;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EINVAL));
	st.delta_ns = LLONG_MIN;
	st.flags = LCLK_ALLOW_BACKWARD;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EINVAL));

	/* Steps that would take the offset out of range overflow. */
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.offset_ns = LCLK_MAX_OFFSET_NS - 10;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	st.flags = 0;
	st.delta_ns = LCLK_MAX_OFFSET_NS;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EOVERFLOW));
	st.delta_ns = 20;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EOVERFLOW));
	st.delta_ns = 10;
	EXPECT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_STEP, &st));
	m.offset_ns = -LCLK_MAX_OFFSET_NS;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	st.flags = LCLK_ALLOW_BACKWARD;
	st.delta_ns = -1;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EOVERFLOW));
	st.delta_ns = -LCLK_MAX_OFFSET_NS;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, &st, -EOVERFLOW));

	EXPECT_TRUE(refused(self->fd, LCLK_IOC_STEP, NULL, -EFAULT));
}

/* The arithmetic at its edges: extreme offset and rate, t0 long ago. */
TEST_F(dev, arithmetic_edges)
{
	static const __s64 offsets[] = {
		LCLK_MAX_OFFSET_NS - 1000 * NSEC,
		-LCLK_MAX_OFFSET_NS + 1000 * NSEC, 0,
	};
	struct lclk_set_model m;
	struct lclk_params got;
	struct lclk_time t;
	unsigned int i, r;

	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		for (r = 0; r < 2; r++) {
			memset(&m, 0, sizeof(m));
			m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE;
			m.flags = LCLK_ALLOW_BACKWARD;
			m.t0_ns = 1;	/* as long ago as it gets */
			m.offset_ns = offsets[i];
			m.rate_ppt = r ? self->info.max_rate_ppt :
					 -self->info.max_rate_ppt;
			ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL,
					      &m));
			got = lclk_model_of(self->fd);
			EXPECT_EQ(m.offset_ns +
				  lclk_scale(got.t0_ns - 1,
					     lclk_ppt_to_mult(m.rate_ppt)),
				  got.offset_ns);
			ASSERT_EQ(0, lclk_get_time(self->fd, &t));
			EXPECT_EQ(lclk_logical(t.base_ns, got.t0_ns,
					       got.offset_ns,
					       lclk_ppt_to_mult(got.rate_ppt)),
				  t.logical_ns);
		}
	}

	/* At the very edge, what the rate added since t0 overflows. */
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE;
	m.flags = LCLK_ALLOW_BACKWARD;
	m.t0_ns = 1;
	m.offset_ns = -LCLK_MAX_OFFSET_NS;
	m.rate_ppt = -self->info.max_rate_ppt;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_MODEL, &m, -EOVERFLOW));
	m.offset_ns = LCLK_MAX_OFFSET_NS;
	m.rate_ppt = self->info.max_rate_ppt;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_MODEL, &m, -EOVERFLOW));
}

/* ---- per-CPU offsets ------------------------------------------------------- */

TEST_F(dev, cpu_offset)
{
	struct lclk_cpu_offset co;
	struct lclk_stats s0, s1;
	unsigned int last = self->info.ncpus - 1;

	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, 777, 0));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.updates + 1, s1.updates);
	EXPECT_EQ(s0.steps + 1, s1.steps);

	memset(&co, 0xff, sizeof(co));
	co.cpu = last;
	co.flags = 0;
	memset(co.rsv, 0, sizeof(co.rsv));
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_GET_CPU_OFFSET, &co));
	EXPECT_EQ(last, co.cpu);
	EXPECT_EQ(777, co.offset_ns);
	EXPECT_EQ(0, co.flags);
	EXPECT_TRUE(all_zero(co.rsv, sizeof(co.rsv)));

	/* Lowering it steps that CPU back: only with the flag. */
	memset(&co, 0, sizeof(co));
	co.cpu = last;
	co.offset_ns = 776;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -ERANGE));
	s0 = lclk_stats_of(self->fd);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, -LCLK_MAX_CPU_OFFSET_NS,
				  LCLK_ALLOW_BACKWARD));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.backward_steps + 1, s1.backward_steps);
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, LCLK_MAX_CPU_OFFSET_NS, 0));
	ASSERT_EQ(0, lclk_set_cpu(self->fd, last, 0, LCLK_ALLOW_BACKWARD));
}

TEST_F(dev, cpu_offset_rejects)
{
	struct lclk_cpu_offset co;
	struct lclk_stats s0, s1;
	int i;

	memset(&co, 0, sizeof(co));
	co.cpu = self->info.ncpus;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -EINVAL));
	co.cpu = UINT_MAX;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -EINVAL));
	co.cpu = 0;
	co.offset_ns = LCLK_MAX_CPU_OFFSET_NS + 1;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -EINVAL));
	co.offset_ns = -LCLK_MAX_CPU_OFFSET_NS - 1;
	co.flags = LCLK_ALLOW_BACKWARD;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -EINVAL));
	co.offset_ns = 0;
	co.flags = 4;
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co, -EINVAL));
	co.flags = 0;
	for (i = 0; i < 4; i++) {
		co.rsv[i] = 1;
		EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, &co,
				    -EINVAL));
		co.rsv[i] = 0;
	}
	EXPECT_TRUE(refused(self->fd, LCLK_IOC_SET_CPU_OFFSET, NULL, -EFAULT));

	/* The getter checks its input too, without counting. */
	s0 = lclk_stats_of(self->fd);
	co.cpu = self->info.ncpus;
	EXPECT_EQ(-EINVAL, lclk_ioc(self->fd, LCLK_IOC_GET_CPU_OFFSET, &co));
	co.cpu = 0;
	co.flags = LCLK_ALLOW_BACKWARD;
	EXPECT_EQ(-EINVAL, lclk_ioc(self->fd, LCLK_IOC_GET_CPU_OFFSET, &co));
	co.flags = 0;
	co.rsv[3] = 9;
	EXPECT_EQ(-EINVAL, lclk_ioc(self->fd, LCLK_IOC_GET_CPU_OFFSET, &co));
	EXPECT_EQ(-EFAULT, lclk_ioc(self->fd, LCLK_IOC_GET_CPU_OFFSET, NULL));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.rejected, s1.rejected);
}

/* ---- unknown commands -------------------------------------------------------- */

TEST_F(dev, unknown_commands)
{
	char buf[512];
	unsigned long bad[] = {
		0,
		_IO(LCLK_IOC_MAGIC, 0x00),
		_IOR(LCLK_IOC_MAGIC, 0x09, struct lclk_info),
		_IOWR(LCLK_IOC_MAGIC, 0xff, struct lclk_time),
		/* right number, wrong size or direction */
		_IOR(LCLK_IOC_MAGIC, 0x01, __u64),
		_IOR(LCLK_IOC_MAGIC, 0x01, char[sizeof(struct lclk_info) + 8]),
		_IOW(LCLK_IOC_MAGIC, 0x01, struct lclk_info),
		_IOR(LCLK_IOC_MAGIC, 0x02, struct lclk_time),
		_IOW(LCLK_IOC_MAGIC, 0x04, char[LCLK_SET_MODEL_SIZE_VER0 - 8]),
		_IOWR(LCLK_IOC_MAGIC, 0x04, struct lclk_set_model),
		_IOW(LCLK_IOC_MAGIC, 0x09, struct lclk_disruption),
		_IOWR(LCLK_IOC_MAGIC, 0x05, struct lclk_step),
		_IOR(LCLK_IOC_MAGIC, 0x08, char[sizeof(struct lclk_stats) + 8]),
		/* right number, wrong magic */
		_IOR(0xED, 0x01, struct lclk_info),
		0x5401,		/* TCGETS */
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(buf, 0, sizeof(buf));
		EXPECT_EQ(-ENOTTY, lclk_ioc(self->fd, bad[i], buf))
			TH_LOG("cmd %#lx", bad[i]);
	}
}

/* ---- privileges -------------------------------------------------------------- */

/*
 * In a child without CAP_SYS_TIME (still uid 0): every change fails with
 * EPERM and is counted, every read works.
 */
TEST_F(dev, eperm_without_cap_sys_time)
{
	struct lclk_stats s0 = lclk_stats_of(self->fd), s1;
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct lclk_set_model m;
		struct lclk_cpu_offset co;
		struct lclk_step st;
		struct lclk_time t;
		struct lclk_clock c;
		struct lclk_now now;
		int fd, bad = 0;

		if (lclk_drop_sys_time())
			_exit(10);
		fd = open(LCLK_DEV0, O_RDWR);
		if (fd < 0)
			_exit(11);
		memset(&m, 0, sizeof(m));
		m.modes = LCLK_SET_RATE;
		memset(&st, 0, sizeof(st));
		memset(&co, 0, sizeof(co));
		bad |= lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m) != -EPERM;
		bad |= (lclk_ioc(fd, LCLK_IOC_STEP, &st) != -EPERM) << 1;
		bad |= (lclk_ioc(fd, LCLK_IOC_SET_CPU_OFFSET, &co) != -EPERM) << 2;
		/* also for input that is invalid anyway: no information leak */
		m.modes = 0xffff;
		bad |= (lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m) != -EPERM) << 3;
		m.modes = LCLK_SET_RATE | LCLK_SET_CORRECTION;
		m.corr_ppt = 1000;
		m.corr_ns = 1000000;
		bad |= (lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m) != -EPERM) << 7;
		lclk_info_of(fd);
		lclk_model_of(fd);
		lclk_stats_of(fd);
		bad |= (lclk_get_time(fd, &t) != 0) << 4;
		bad |= (lclk_ioc(fd, LCLK_IOC_GET_CPU_OFFSET, &co) != 0) << 5;
		bad |= (lclk_open(&c, LCLK_DEV0) != 0) << 6;
		if (!(bad & (1 << 6)))
			lclk_now(&c, &now);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	s1 = lclk_stats_of(self->fd);
	EXPECT_EQ(s0.rejected + 5, s1.rejected);
	EXPECT_EQ(s0.updates, s1.updates);
}

/* An unprivileged user may open and read, not change. */
TEST_F(dev, eperm_as_nobody)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct lclk_step st;
		struct lclk_time t;
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(10);
		fd = open(LCLK_DEV0, O_RDONLY);
		if (fd < 0)
			_exit(11);
		if (open(LCLK_DEV0, O_RDWR) >= 0)	/* mode 0644 */
			_exit(12);
		memset(&st, 0, sizeof(st));
		if (lclk_ioc(fd, LCLK_IOC_STEP, &st) != -EPERM)
			_exit(13);
		if (lclk_get_time(fd, &t))
			_exit(14);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The device node is world-readable, root-writable. */
TEST_F(dev, node_mode)
{
	struct stat st;

	ASSERT_EQ(0, stat(LCLK_DEV0, &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0644, st.st_mode & 07777);
}

TEST_HARNESS_MAIN
