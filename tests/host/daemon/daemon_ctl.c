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

TEST_HARNESS_MAIN
