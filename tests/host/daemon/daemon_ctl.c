// SPDX-License-Identifier: GPL-2.0
/*
 * Taking the control socket's path (ctl_listen): a live daemon there is
 * never displaced, a stale socket is, anything else at the path is left
 * alone, and the socket's mode is set without following a path someone
 * could swap for a symlink between bind() and the mode change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "daemon/daemon_ctl.h"

/*
 * The attacker of the symlink test: right after the socket is bound, its
 * path is replaced by a symlink to swap_target. This bind() takes the
 * place of libc's for the whole program, ctl_listen()'s included.
 */
static const char *swap_path, *swap_target;

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	int ret = syscall(SYS_bind, fd, addr, len);

	if (!ret && swap_path) {
		char moved[256];

		snprintf(moved, sizeof(moved), "%s.moved", swap_path);
		if (rename(swap_path, moved) || symlink(swap_target, swap_path))
			abort();
	}
	return ret;
}

static bool answers(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	bool ok;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	ok = fd >= 0 && !connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (fd >= 0)
		close(fd);
	return ok;
}

FIXTURE(ctl) {
	char dir[64], path[96], err[256];
};

FIXTURE_SETUP(ctl)
{
	snprintf(self->dir, sizeof(self->dir), "/tmp/lclk-ctl-listen-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->path, sizeof(self->path), "%s/ctl.sock", self->dir);
}

FIXTURE_TEARDOWN(ctl)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", self->dir);
	if (system(cmd))
		TH_LOG("cannot remove %s", self->dir);
}

/* A second daemon refuses the path of a live one, which keeps answering. */
TEST_F(ctl, live_daemon_kept)
{
	int first, second;

	first = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(first, 0) TH_LOG("%s", self->err);
	second = ctl_listen(self->path, self->err, sizeof(self->err));
	EXPECT_EQ(-EADDRINUSE, second) TH_LOG("second listen: %d (%s)", second, self->err);
	if (second >= 0)
		close(second);
	EXPECT_TRUE(answers(self->path)) TH_LOG("the first daemon's socket was taken over");
	ctl_close(first, self->path);
}

/* A socket left by a daemon that died (no unlink) is replaced. */
TEST_F(ctl, stale_socket_replaced)
{
	int first, fd;

	first = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(first, 0);
	close(first);
	EXPECT_FALSE(answers(self->path));
	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(fd, 0) TH_LOG("%s", self->err);
	EXPECT_TRUE(answers(self->path));
	ctl_close(fd, self->path);
}

/* A file that is no socket is not ours to remove. */
TEST_F(ctl, other_file_kept)
{
	struct stat st;
	int fd;

	fd = open(self->path, O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	EXPECT_LT(fd, 0);
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(0, lstat(self->path, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
}

/* World-connectable (0666) whatever the umask. */
TEST_F(ctl, mode_0666)
{
	mode_t old = umask(077);
	struct stat st;
	int fd;

	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	umask(old);
	ASSERT_GE(fd, 0) TH_LOG("%s", self->err);
	ASSERT_EQ(0, lstat(self->path, &st));
	EXPECT_TRUE(S_ISSOCK(st.st_mode));
	EXPECT_EQ(0666, st.st_mode & 07777);
	ctl_close(fd, self->path);
}

/* The path swapped for a symlink right after bind(): its target keeps its mode. */
TEST_F(ctl, mode_not_through_symlink)
{
	char target[128];
	struct stat st;
	int fd;

	snprintf(target, sizeof(target), "%s/secret", self->dir);
	fd = open(target, O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	swap_path = self->path;
	swap_target = target;
	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	swap_path = NULL;
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(0, stat(target, &st));
	EXPECT_EQ(0600, st.st_mode & 07777) TH_LOG("the symlink's target became %o",
						   st.st_mode & 07777);
}

/*
 * The non-blocking query ("lclkctl serve"'s): a full backlog fails at once,
 * a daemon that never answers is given up at the deadline, an answer is
 * read whole as it comes.
 */
#define MS	1000000LL

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

TEST_F(ctl, async_full_backlog_fails_at_once)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl_async q;
	int fd, held[64], n = 0, ret;
	int64_t t0;

	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(fd, 0) TH_LOG("%s", self->err);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", self->path);
	/* Never accepted: the backlog fills. */
	while (n < 64) {
		held[n] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ASSERT_GE(held[n], 0);
		if (connect(held[n], (struct sockaddr *)&sun, sizeof(sun))) {
			close(held[n]);
			break;
		}
		n++;
	}
	ASSERT_LT(n, 64);
	ctl_async_init(&q);
	t0 = mono_ns();
	ret = ctl_async_start(&q, self->path, "stratum", t0, 5000 * MS);
	EXPECT_EQ(-EAGAIN, ret);
	EXPECT_FALSE(ctl_async_busy(&q));
	EXPECT_LT(mono_ns() - t0, 50 * MS);
	while (n--)
		close(held[n]);
	ctl_close(fd, self->path);
}

TEST_F(ctl, async_silent_daemon_times_out)
{
	struct ctl_async q;
	int fd;

	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(fd, 0) TH_LOG("%s", self->err);
	ctl_async_init(&q);
	ASSERT_EQ(0, ctl_async_start(&q, self->path, "stratum", 1000 * MS, 5000 * MS));
	EXPECT_TRUE(ctl_async_busy(&q));
	EXPECT_EQ(0, ctl_async_run(&q, 0, 5999 * MS));
	EXPECT_EQ(0, ctl_async_run(&q, POLLIN, 5999 * MS));	/* nothing there: no wait */
	EXPECT_EQ(-ETIMEDOUT, ctl_async_run(&q, 0, 6000 * MS));
	EXPECT_FALSE(ctl_async_busy(&q));
	ctl_close(fd, self->path);
}

TEST_F(ctl, async_answer_read_as_it_comes)
{
	struct ctl_async q;
	char req[64] = {};
	int fd, c;

	fd = ctl_listen(self->path, self->err, sizeof(self->err));
	ASSERT_GE(fd, 0) TH_LOG("%s", self->err);
	ctl_async_init(&q);
	ASSERT_EQ(0, ctl_async_start(&q, self->path, "stratum", 0, 5000 * MS));
	c = accept(fd, NULL, NULL);
	ASSERT_GE(c, 0);
	ASSERT_EQ(8, read(c, req, sizeof(req) - 1));
	EXPECT_STREQ("stratum\n", req);
	ASSERT_EQ(11, write(c, "/dev/lclk0 ", 11));
	EXPECT_EQ(0, ctl_async_run(&q, POLLIN, 1));	/* a part: more to come */
	ASSERT_EQ(2, write(c, "4\n", 2));
	close(c);
	EXPECT_EQ(1, ctl_async_run(&q, POLLIN, 2));
	EXPECT_STREQ("/dev/lclk0 4\n", q.answer);
	EXPECT_FALSE(ctl_async_busy(&q));
	ctl_close(fd, self->path);
}

TEST_HARNESS_MAIN
