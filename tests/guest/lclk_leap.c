// SPDX-License-Identifier: GPL-2.0
/*
 * A leap second (LCLK_SET_LEAP), stepped by the module as the kernel
 * steps CLOCK_REALTIME. The truth is a line of CLOCK_MONOTONIC_RAW (no
 * NTP in the guest: logical time runs as raw does), which steps as UTC
 * does where it reaches the leap's instant: back 1 s for an insertion,
 * forward for a deletion. Every reading of the page and of GET_TIME
 * across the instant must be within its bound of that truth while the
 * status vouches for it, and logical time must have stepped after it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>

#include "lclk_truth.h"
#include "kselftest_harness.h"

FIXTURE(leap) {
	struct lclk_clock c;
	struct lclk_truth t;	/* the line, never stepped */
};

static int set_leap(int fd, __u32 leap, __s64 at, __s32 tai)
{
	struct lclk_set_model m;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_LEAP;
	m.leap = leap;
	m.leap_ns = at;
	m.tai_offset_s = tai;
	return lclk_ioc(fd, LCLK_IOC_SET_MODEL, &m);
}

FIXTURE_SETUP(leap)
{
	struct lclk_set_model m;

	ASSERT_EQ(0, lclk_open(&self->c, LCLK_DEV0));
	ASSERT_EQ(0, lclk_reset(self->c.fd));
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_NONE, 0, 0));
	lclk_truth_line(&self->c, &self->t);
	/* The bound starts at 100 us: room for the line's error, no more. */
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_BOUND;
	m.bound_ns = 100000;
	ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
}

FIXTURE_TEARDOWN(leap)
{
	set_leap(self->c.fd, LCLK_LEAP_NONE, 0, 0);
	lclk_close(&self->c);
}

/* Where logical time is against the line now, to within line_err + 1 us. */
static __s64 off_line(FIXTURE_DATA(leap) *self)
{
	struct lclk_now n;
	__s64 r1, r2;

	r1 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
	lclk_now(&self->c, &n);
	r2 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
	return n.time_ns - (r1 + (r2 - r1) / 2 + self->t.line);
}

static int text_has(int fd, const char *what)
{
	static char buf[65536];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n < 0)
		return 0;
	buf[n] = 0;
	return strstr(buf, what) != NULL;
}

static void leap_across(struct __test_metadata *_metadata,
			FIXTURE_DATA(leap) *self, __u32 leap, __s64 step,
			int tai_after)
{
	struct lclk_stats before = lclk_stats_of(self->c.fd), after;
	struct lclk_truth t = self->t;
	struct lclk_truth_check s;
	struct lclk_params p;
	struct lclk_now n;
	__s64 at, off;

	lclk_truth_start(&s);
	lclk_now(&self->c, &n);
	at = n.time_ns + 3 * NSEC;
	t.at = at;
	t.step = step;
	ASSERT_EQ(0, set_leap(self->c.fd, leap, at, 37));
	p = lclk_model_of(self->c.fd);
	EXPECT_EQ(leap, p.leap);
	EXPECT_EQ(37, p.tai_offset_s);
	EXPECT_EQ(leap, self->c.page->params.leap);
	EXPECT_EQ(37, self->c.page->params.tai_offset_s);
	EXPECT_TRUE(text_has(self->c.fd, leap == LCLK_LEAP_INSERT ?
			     "leap: insert\n" : "leap: delete\n"));
	EXPECT_TRUE(text_has(self->c.fd, "tai_offset_s: 37\n"));

	lclk_truth_read_for(&self->c, 4500, &t, &s);
	off = off_line(self);
	after = lclk_stats_of(self->c.fd);
	p = lclk_model_of(self->c.fd);
	TH_LOG("%s: %ld readings, %ld vouched, %ld straddling, %ld violations, worst error - bound %lld ns, largest bound %lld ns; logical - line after %lld ns, steps +%llu, backward +%llu",
	       leap == LCLK_LEAP_INSERT ? "insert" : "delete", s.readings,
	       s.vouched, s.straddling, s.violations, (long long)s.worst,
	       (long long)s.max_bound, (long long)off,
	       (unsigned long long)(after.steps - before.steps),
	       (unsigned long long)(after.backward_steps - before.backward_steps));
	EXPECT_EQ(0, s.violations);
	EXPECT_LT(s.readings / 2, s.vouched);
	/* The 1 s was in the bound around the instant. */
	EXPECT_LT(NSEC, s.max_bound);
	/* It stepped: logical time is on the stepped line. */
	EXPECT_GT(1000000, llabs(off - step));
	EXPECT_EQ(1, after.steps - before.steps);
	EXPECT_EQ(step < 0, after.backward_steps - before.backward_steps);
	EXPECT_EQ(LCLK_LEAP_NONE, p.leap);
	EXPECT_EQ(tai_after, p.tai_offset_s);
	/* and the 1 s is out of the bound again */
	lclk_now(&self->c, &n);
	EXPECT_GT(NSEC / 2, n.bound_ns);
	EXPECT_TRUE(text_has(self->c.fd, "leap: none\n"));
}

TEST_F(leap, insert_steps_back)
{
	leap_across(_metadata, self, LCLK_LEAP_INSERT, -NSEC, 38);
}

TEST_F(leap, delete_steps_forward)
{
	leap_across(_metadata, self, LCLK_LEAP_DELETE, NSEC, 36);
}

/* A cancelled leap does not step, and takes its 1 s back. */
TEST_F(leap, cancelled)
{
	struct lclk_stats before = lclk_stats_of(self->c.fd), after;
	struct lclk_truth_check s;
	struct lclk_now n;
	__s64 at;

	lclk_truth_start(&s);
	lclk_now(&self->c, &n);
	at = n.time_ns + 1500000000LL;
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_INSERT, at, 37));
	usleep(800000);		/* near: the bound has its 1 s */
	lclk_now(&self->c, &n);
	EXPECT_LT(NSEC, n.bound_ns);
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_NONE, 0, 37));
	lclk_now(&self->c, &n);
	EXPECT_GT(NSEC / 2, n.bound_ns);
	lclk_truth_read_for(&self->c, 1500, &self->t, &s);
	after = lclk_stats_of(self->c.fd);
	EXPECT_EQ(0, s.violations);
	EXPECT_GT(1000000, llabs(off_line(self)));
	EXPECT_EQ(before.steps, after.steps);
}

TEST_F(leap, refused)
{
	struct lclk_set_model m;
	struct lclk_now n;

	lclk_now(&self->c, &n);
	/* not ahead */
	EXPECT_EQ(-EINVAL, set_leap(self->c.fd, LCLK_LEAP_INSERT, n.time_ns, 37));
	/* no such leap, a negative offset, an instant for no leap */
	EXPECT_EQ(-EINVAL, set_leap(self->c.fd, 3, n.time_ns + NSEC, 37));
	EXPECT_EQ(-EINVAL, set_leap(self->c.fd, LCLK_LEAP_INSERT,
				    n.time_ns + NSEC, -1));
	EXPECT_EQ(-EINVAL, set_leap(self->c.fd, LCLK_LEAP_NONE,
				    n.time_ns + NSEC, 37));
	/* a TAI clock has no leap seconds */
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_FLAGS;
	m.model_flags = LCLK_MODEL_TAI;
	ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(-EINVAL, set_leap(self->c.fd, LCLK_LEAP_INSERT,
				    n.time_ns + 10 * NSEC, 37));
	m.model_flags = 0;
	ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(LCLK_LEAP_NONE, lclk_model_of(self->c.fd).leap);
}

/* The leap indicator of lclkctl serve's reply to one request, or -1. */
static int ntp_li(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 1 };
	unsigned char buf[48];
	int fd, i, li = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (i = 0; i < 20 && li < 0; i++) {	/* until serve is up */
		memset(buf, 0, sizeof(buf));
		buf[0] = 4 << 3 | 3;		/* version 4, client */
		buf[47] = (unsigned char)i;	/* a transmit time */
		sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&a, sizeof(a));
		if (recv(fd, buf, sizeof(buf), 0) == sizeof(buf))
			li = buf[0] >> 6;
		else
			usleep(100000);
	}
	close(fd);
	return li;
}

/* Whether `build/lclkctl args` prints what. */
static int lclkctl_says(const char *args, const char *what)
{
	static char out[65536];
	char cmd[256];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "build/lclkctl %s", args);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = 0;
	pclose(f);
	if (!strstr(out, what))
		fprintf(stderr, "# lclkctl %s said:\n%s", args, out);
	return strstr(out, what) != NULL;
}

/* lclkctl serve passes the pending leap on as NTP's; status shows it. */
TEST_F(leap, serve_and_status)
{
	const int port = 12399;
	struct lclk_set_model m;
	struct lclk_now n;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		execl("build/lclkctl", "lclkctl", "serve", "-a", "127.0.0.1",
		      "-p", "12399", "-u", "root", (char *)NULL);
		_exit(127);
	}
	EXPECT_EQ(0, ntp_li(port));
	EXPECT_TRUE(lclkctl_says("status", "leap second:  none pending, TAI - UTC unknown"));
	lclk_now(&self->c, &n);
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_INSERT, n.time_ns + 60 * NSEC, 37));
	EXPECT_EQ(1, ntp_li(port));
	EXPECT_TRUE(lclkctl_says("status", "leap second:  insert pending, TAI - UTC 37 s"));
	EXPECT_TRUE(lclkctl_says("status --json", "\"leap\":\"insert\",\"tai_offset_s\":37"));
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_DELETE, n.time_ns + 60 * NSEC, 37));
	EXPECT_EQ(2, ntp_li(port));
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_NONE, 0, 37));
	EXPECT_EQ(0, ntp_li(port));
	EXPECT_TRUE(lclkctl_says("status --json", "\"leap\":\"none\",\"tai_offset_s\":37"));
	/* unsynchronised: 3, whatever is pending */
	ASSERT_EQ(0, set_leap(self->c.fd, LCLK_LEAP_INSERT, n.time_ns + 60 * NSEC, 37));
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_UNSYNC;
	ASSERT_EQ(0, lclk_ioc(self->c.fd, LCLK_IOC_SET_MODEL, &m));
	EXPECT_EQ(3, ntp_li(port));
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

TEST_HARNESS_MAIN
