// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading: rmmod is refused while a descriptor or a mapping
 * of /dev/lclkN exists, is safe while /dev/ptpN is held open, and 100 load
 * and unload cycles with descriptors opened, mapped and closed in between
 * leave the kernel clean. Module parameters are checked at load.
 *
 * Every test leaves the module loaded as tests/guest/run.sh loaded it
 * (LCLK_MODULE, LCLK_MODULE_ARGS).
 */
#include "lclk_test.h"
#include "kselftest_harness.h"

static const char *module_path(void)
{
	const char *m = getenv("LCLK_MODULE");

	return m && *m ? m : "kmod/lclk.ko";
}

static const char *module_args(void)
{
	const char *a = getenv("LCLK_MODULE_ARGS");

	return a ? a : "instances=2";
}

static int load(const char *args)
{
	int fd = open(module_path(), O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, args, 0))
		err = -errno;
	close(fd);
	return err;
}

/* As rmmod does: fail rather than wait while the module is in use. */
static int unload(void)
{
	return syscall(SYS_delete_module, "lclk", O_NONBLOCK) ? -errno : 0;
}

static int loaded(void)
{
	return access("/sys/module/lclk", F_OK) == 0;
}

FIXTURE(mod) {
	int unused;
};

FIXTURE_SETUP(mod)
{
	if (!strcmp(module_path(), "none"))
		SKIP(return, "LCLK_MODULE=none");
	ASSERT_TRUE(loaded());
}

FIXTURE_TEARDOWN(mod)
{
	if (!loaded() && load(module_args()))
		fprintf(stderr, "# could not reload %s %s\n", module_path(),
			module_args());
}

TEST_F(mod, busy_while_open)
{
	struct lclk_time t;
	int fd = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EWOULDBLOCK, unload());
	EXPECT_EQ(0, lclk_get_time(fd, &t));
	close(fd);
}

/* A mapping keeps the file, and so the module, after close(). */
TEST_F(mod, busy_while_mapped)
{
	struct lclk_info info;
	const struct lclk_page *p;
	__u32 seq;
	int fd = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, fd);
	info = lclk_info_of(fd);
	p = mmap(NULL, info.mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	close(fd);
	EXPECT_EQ(-EWOULDBLOCK, unload());
	seq = p->seq;
	EXPECT_EQ(LCLK_PAGE_MAGIC, p->magic);
	EXPECT_EQ(0, seq & 1);
	munmap((void *)p, info.mmap_size);
	EXPECT_EQ(0, unload());
	EXPECT_FALSE(loaded());
	EXPECT_NE(0, access(LCLK_DEV0, F_OK));	/* the node went too */
	ASSERT_EQ(0, load(module_args()));
}

/*
 * /dev/ptpN does not pin the module: the PTP core turns the open clock into
 * a zombie on unload, and calls on it fail without reaching the module.
 */
TEST_F(mod, ptp_open_across_unload)
{
	char path[32];
	struct timespec ts;
	int phc = lclk_phc_of(0), fd;

	ASSERT_LE(0, phc);
	snprintf(path, sizeof(path), "/dev/ptp%d", phc);
	fd = open(path, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, clock_gettime(LCLK_FD_TO_CLOCKID(fd), &ts));
	ASSERT_EQ(0, unload());
	EXPECT_EQ(-1, clock_gettime(LCLK_FD_TO_CLOCKID(fd), &ts));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(-1, clock_settime(LCLK_FD_TO_CLOCKID(fd), &ts));
	close(fd);
	ASSERT_EQ(0, load(module_args()));
}

/* One cycle's worth of use: open, map, read, write, PHC, close. */
static int exercise(int instance)
{
	struct lclk_set_model m;
	struct lclk_clock c = { .fd = -1 };
	struct lclk_now now;
	struct lclk_time t;
	struct timespec ts;
	char path[32], buf[4096];
	int fd, phc;

	snprintf(path, sizeof(path), "/dev/lclk%d", instance);
	if (lclk_open(&c, path))
		return 1;
	lclk_now(&c, &now);
	if (lclk_get_time(c.fd, &t))
		return 2;
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE | LCLK_SET_BOUND;
	m.rate_ppt = 1000;
	m.bound_ns = 1;
	if (lclk_ioc(c.fd, LCLK_IOC_SET_MODEL, &m))
		return 3;
	if (lclk_set_cpu(c.fd, 0, 1, 0))
		return 4;
	if (read(c.fd, buf, sizeof(buf)) <= 0)
		return 5;
	lclk_close(&c);

	snprintf(path, sizeof(path), "/dev/ptp%d", lclk_phc_of(instance));
	fd = open(path, O_RDWR);
	if (fd < 0)
		return 6;
	phc = clock_gettime(LCLK_FD_TO_CLOCKID(fd), &ts);
	close(fd);
	return phc ? 7 : 0;
}

TEST_F_TIMEOUT(mod, load_unload_100, 300)
{
	const struct lclk_page *p;
	size_t size;
	int i, fd;

	ASSERT_EQ(0, unload());
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, load("instances=2")) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, exercise(0)) TH_LOG("cycle %d", i);
		ASSERT_EQ(0, exercise(1)) TH_LOG("cycle %d", i);
		if (i % 10 == 0) {
			/* busy: refused, then free once unmapped */
			fd = open(LCLK_DEV1, O_RDONLY);
			ASSERT_LE(0, fd);
			size = lclk_info_of(fd).mmap_size;
			p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
			ASSERT_NE(MAP_FAILED, p);
			ASSERT_EQ(-EWOULDBLOCK, unload());
			close(fd);
			ASSERT_EQ(-EWOULDBLOCK, unload());
			munmap((void *)p, size);
		}
		ASSERT_EQ(0, unload()) TH_LOG("cycle %d", i);
		ASSERT_FALSE(loaded());
	}
	ASSERT_EQ(0, load(module_args()));
}

TEST_F(mod, bad_params)
{
	static const char * const bad[] = {
		"instances=0", "instances=65", "instances=-1", "instances=x",
		"max_rate_ppb=1000001", "max_drift_ppb=1000001",
		"holdover_s=-1",
	};
	unsigned int i;

	ASSERT_EQ(0, unload());
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_NE(0, load(bad[i])) TH_LOG("%s loaded", bad[i]);
		if (loaded())
			ASSERT_EQ(0, unload());
	}
	ASSERT_EQ(0, load(module_args()));
}

/* Parameters reach the instances, their limits and their PTP clocks. */
TEST_F(mod, params_apply)
{
	struct lclk_set_model m;
	struct lclk_info info;
	struct lclk_params model;
	char path[96], val[32] = "";
	FILE *f;
	int fd;

	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load("instances=3 max_rate_ppb=1000 max_drift_ppb=7 holdover_s=5"));
	fd = open("/dev/lclk2", O_RDONLY);
	ASSERT_LE(0, fd);
	info = lclk_info_of(fd);
	EXPECT_EQ(2, info.index);
	EXPECT_EQ(1000000, info.max_rate_ppt);
	EXPECT_EQ(7, info.max_drift_ppb);
	model = lclk_model_of(fd);
	EXPECT_EQ(5 * NSEC, model.holdover_ns);
	EXPECT_EQ(7, model.max_drift_ppb);
	EXPECT_EQ(LCLK_STATUS_UNSYNCED, model.status);

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE;
	m.rate_ppt = 1000001;
	EXPECT_EQ(-EINVAL, lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m));
	m.rate_ppt = -1000000;
	EXPECT_EQ(0, lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m));
	close(fd);

	snprintf(path, sizeof(path), "/sys/class/ptp/ptp%d/max_adjustment",
		 info.phc_index);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%31s", val));
	fclose(f);
	EXPECT_STREQ("1000", val);	/* ppb, as max_rate_ppb */

	f = fopen("/sys/module/lclk/parameters/holdover_s", "r");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, fscanf(f, "%31s", val));
	fclose(f);
	EXPECT_STREQ("5", val);

	ASSERT_EQ(0, unload());
	ASSERT_EQ(0, load(module_args()));
}

TEST_HARNESS_MAIN
