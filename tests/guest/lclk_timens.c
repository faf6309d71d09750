// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces (CONFIG_TIME_NS): a process whose CLOCK_MONOTONIC is
 * shifted (unshare --time --monotonic) cannot use the page, which is
 * anchored to the host's CLOCK_MONOTONIC; the mapping is refused, the
 * ioctls answer in the caller's CLOCK_MONOTONIC, and include/lclk.h falls
 * back to them, so that every reader agrees on logical time. A page mapped
 * before unshare() and inherited by a child born in the shifted namespace
 * is no use to the child either: its readers must still agree.
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

/* What a forked child measured of its inherited clock, for the parent. */
struct inherited {
	int status;		/* 0, or which step failed */
	int page_flags;		/* the page's flags as the child sees them */
	__s64 now_err_ns;	/* lclk_now() - truth */
	__s64 base_err_ns;	/* lclk_from_base() - truth */
	__s64 bound_ns;		/* GET_TIME's bound */
};

/*
 * In the child: read the clock c, opened and mapped by the parent, both
 * ways, and compare each reading with the truth: GET_TIME, which the
 * kernel answers in the caller's CLOCK_MONOTONIC whatever its namespace.
 * The rate is 0 (lclk_reset()), so logical time at base b is exactly
 * GET_TIME's logical_ns + (b - base_ns).
 */
static struct inherited read_inherited(const struct lclk_clock *c)
{
	struct inherited r = { .page_flags = -1 };
	struct lclk_time t;
	struct lclk_now now, from;

	if (lclk_get_time(c->fd, &t)) {
		r.status = 1;
		return r;
	}
	if (lclk_now(c, &now)) {
		r.status = 2;
		return r;
	}
	lclk_from_base(c, now.base_ns, -1, &from);
	r.now_err_ns = now.time_ns - (t.logical_ns + now.base_ns - t.base_ns);
	r.base_err_ns = from.time_ns - (t.logical_ns + now.base_ns - t.base_ns);
	r.bound_ns = t.bound_ns;
	if (c->page)
		r.page_flags = (int)c->page->flags;
	return r;
}

/* Fork a child that reads c; its findings, or status -1 if it died. */
static struct inherited fork_and_read(const struct lclk_clock *c)
{
	struct inherited r = { .status = -1 };
	int pipefd[2], status;
	pid_t pid;

	if (pipe(pipefd))
		return r;
	pid = fork();
	if (pid == 0) {
		r = read_inherited(c);
		_exit(write(pipefd[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(pipefd[1]);
	if (pid < 0 || read(pipefd[0], &r, sizeof(r)) != sizeof(r))
		r.status = -1;
	close(pipefd[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return r;
}

/*
 * Issue 30, #3: mapped, then unshare(CLONE_NEWTIME) with a shifted
 * CLOCK_MONOTONIC, then fork. The child inherits the mapping of a page
 * anchored to the host's CLOCK_MONOTONIC, but its vDSO reads the shifted
 * one: read off the page, logical time would be off by the whole shift.
 * Each reading must agree with GET_TIME within the bound (and the 2 ns
 * of a reading's rounding).
 */
TEST(inherited_into_shifted_namespace)
{
	struct inherited r;
	struct lclk_clock c;
	char offsets[64];

	ASSERT_EQ(0, lclk_open(&c, LCLK_DEV0));
	ASSERT_NE(NULL, c.page);
	ASSERT_EQ(0, lclk_reset(c.fd));
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "unshare(CLONE_NEWTIME): %s", strerror(errno));
	snprintf(offsets, sizeof(offsets), "monotonic %d 0", SHIFT_S);
	ASSERT_EQ(0, write_file("/proc/self/timens_offsets", offsets));

	r = fork_and_read(&c);
	ASSERT_EQ(0, r.status);
	TH_LOG("child in the shifted namespace: lclk_now %+lld ns, lclk_from_base %+lld ns from GET_TIME, bound %lld ns, page flags %#x",
	       (long long)r.now_err_ns, (long long)r.base_err_ns,
	       (long long)r.bound_ns, r.page_flags);
	EXPECT_GE(r.bound_ns + 2, llabs(r.now_err_ns));
	EXPECT_GE(r.bound_ns + 2, llabs(r.base_err_ns));
	lclk_close(&c);
}

/*
 * Another process reads the child's mapping (a debugger, /proc/PID/mem)
 * before the child touches it: the reader's namespace is not the child's,
 * and what the peek maps is what the child would read. The peek may fail;
 * the child's reading must still agree with GET_TIME.
 */
TEST(peeked_from_another_namespace)
{
	int go[2], done[2], status;
	struct inherited r = { .status = -1 };
	struct lclk_clock c;
	char offsets[64], path[64], byte = 0;
	ssize_t peek;
	pid_t pid;
	int mem;

	ASSERT_EQ(0, lclk_open(&c, LCLK_DEV0));
	ASSERT_EQ(0, lclk_reset(c.fd));
	if (unshare(CLONE_NEWTIME))
		SKIP(return, "unshare(CLONE_NEWTIME): %s", strerror(errno));
	snprintf(offsets, sizeof(offsets), "monotonic %d 0", SHIFT_S);
	ASSERT_EQ(0, write_file("/proc/self/timens_offsets", offsets));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (read(go[0], &byte, 1) != 1)
			_exit(1);
		r = read_inherited(&c);
		_exit(write(done[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(go[0]);
	close(done[1]);
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	mem = open(path, O_RDONLY);
	ASSERT_LE(0, mem);
	peek = pread(mem, &byte, 1, (off_t)(uintptr_t)c.page);
	TH_LOG("peek at the child's page: %zd (%s)", peek,
	       peek < 0 ? strerror(errno) : "read");
	close(mem);
	ASSERT_EQ(1, write(go[1], &byte, 1));
	ASSERT_EQ(sizeof(r), read(done[0], &r, sizeof(r)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, r.status);
	TH_LOG("child after the peek: lclk_now %+lld ns, lclk_from_base %+lld ns from GET_TIME, bound %lld ns, page flags %#x",
	       (long long)r.now_err_ns, (long long)r.base_err_ns,
	       (long long)r.bound_ns, r.page_flags);
	EXPECT_GE(r.bound_ns + 2, llabs(r.now_err_ns));
	EXPECT_GE(r.bound_ns + 2, llabs(r.base_err_ns));
	lclk_close(&c);
}

/*
 * The other side of it: a child forked in the same namespace keeps the
 * page (no system call per reading) and reads it right.
 */
TEST(inherited_in_same_namespace)
{
	struct inherited r;
	struct lclk_clock c;

	ASSERT_EQ(0, lclk_open(&c, LCLK_DEV0));
	ASSERT_NE(NULL, c.page);
	ASSERT_EQ(0, lclk_reset(c.fd));

	r = fork_and_read(&c);
	ASSERT_EQ(0, r.status);
	TH_LOG("child in the same namespace: lclk_now %+lld ns, lclk_from_base %+lld ns from GET_TIME, bound %lld ns, page flags %#x",
	       (long long)r.now_err_ns, (long long)r.base_err_ns,
	       (long long)r.bound_ns, r.page_flags);
	EXPECT_EQ(0, r.page_flags);
	EXPECT_GE(r.bound_ns + 2, llabs(r.now_err_ns));
	EXPECT_GE(r.bound_ns + 2, llabs(r.base_err_ns));
	lclk_close(&c);
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
