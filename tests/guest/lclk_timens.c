// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces (CONFIG_TIME_NS): a process whose CLOCK_MONOTONIC is
 * shifted (unshare --time --monotonic) cannot use the page, which is
 * anchored to the host's CLOCK_MONOTONIC; the mapping is refused, the
 * ioctls answer in the caller's CLOCK_MONOTONIC, and include/lclk.h falls
 * back to them, so that every reader agrees on logical time.
 */
#include "lclk_test.h"
#include "kselftest_harness.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define SHIFT_S		100000

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* Check, in a child whose CLOCK_MONOTONIC runs SHIFT_S ahead; 0 if all is well. */
static int check_in_namespace(void)
{
	struct lclk_time t;
	struct lclk_params m;
	struct lclk_clock c;
	struct lclk_now now;
	__s64 mono0, mono1;
	int fd, bad = 0;
	void *map;

	fd = open(LCLK_DEV0, O_RDONLY);
	if (fd < 0)
		return 100;
	map = mmap(NULL, lclk_info_of(fd).mmap_size, PROT_READ, MAP_SHARED, fd, 0);
	if (map != MAP_FAILED || errno != EOPNOTSUPP)
		bad |= 1;		/* the host-anchored page is mapped */

	mono0 = lclk_monotonic_ns();
	if (lclk_get_time(fd, &t))
		return 101;
	mono1 = lclk_monotonic_ns();
	if (t.base_ns < mono0 || t.base_ns > mono1)
		bad |= 2;		/* base_ns is not our CLOCK_MONOTONIC */

	m = lclk_model_of(fd);
	if (m.last_update_ns > mono1 || m.last_update_ns < mono1 - 600 * NSEC)
		bad |= 4;		/* last update not in our time */

	if (lclk_open(&c, LCLK_DEV0))
		return 102;
	if (lclk_now(&c, &now))
		return 103;
	if (llabs(now.time_ns - t.logical_ns) > 60 * NSEC)
		bad |= 8;		/* lclk_now() disagrees with GET_TIME */
	if (now.base_ns < mono0)
		bad |= 16;
	lclk_close(&c);
	close(fd);
	return bad;
}

TEST(shifted_monotonic)
{
	char offsets[64];
	int status, err;
	pid_t pid;

	int fd = open(LCLK_DEV0, O_RDONLY);

	/* synced, so that last_update_ns is a time to translate */
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, lclk_reset(fd));
	close(fd);
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "unshare(CLONE_NEWTIME): %s", strerror(errno));
	snprintf(offsets, sizeof(offsets), "monotonic %d 0", SHIFT_S);
	err = write_file("/proc/self/timens_offsets", offsets);
	ASSERT_EQ(0, err);

	pid = fork();		/* the child is the first in the namespace */
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(check_in_namespace());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) {
		TH_LOG("bits: 1 mapped, 2 base_ns, 4 last_update_ns, 8 lclk_now vs GET_TIME, 16 lclk_now base");
	}
}

/* Without a shift the page is the caller's: mapping works as always. */
TEST(initial_namespace_maps)
{
	struct lclk_clock c;

	ASSERT_EQ(0, lclk_open(&c, LCLK_DEV0));
	EXPECT_NE(NULL, c.page);
	lclk_close(&c);
}

TEST_HARNESS_MAIN
