// SPDX-License-Identifier: GPL-2.0
/* PTP sockets on the loopback interface, software timestamps. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "lib/clock_offset.h"
#include "ptp/ptp_net.h"

/*
 * CLOCK_REALTIME as this process reads it: the kernel's plus realtime_step,
 * so that a test can step it after the kernel stamped a message, without
 * touching the machine's clock. (The kernel's stamps stay unstepped.)
 */
static int64_t realtime_step;

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	int r = (int)syscall(SYS_clock_gettime, clk, ts);

	if (!r && clk == CLOCK_REALTIME && realtime_step) {
		int64_t ns = timespec_ns(ts) + realtime_step;

		ts->tv_sec = ns / 1000000000LL;
		ts->tv_nsec = ns % 1000000000LL;
	}
	return r;
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return timespec_ns(&ts);
}

FIXTURE(lo)
{
	struct ptp_net n;
};

FIXTURE_SETUP(lo)
{
	char err[128];

	if (geteuid())
		SKIP(return, "binds PTP ports 319 and 320: needs root");
	ASSERT_EQ(0, ptp_net_open(&self->n, "lo", PTP_NET_UDP4, "sw", err, sizeof(err)))
		TH_LOG("%s", err);
}

FIXTURE_TEARDOWN(lo)
{
	ptp_net_close(&self->n);
	realtime_step = 0;
}

/*
 * A Sync-sized datagram to the event port, received after CLOCK_REALTIME
 * was stepped by step ns: its receive stamp on CLOCK_MONOTONIC must be
 * when it arrived, within its error.
 */
static void stamp_across_step(struct __test_metadata *_metadata, struct ptp_net *n,
			      int64_t step)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(319) };
	uint8_t msg[44] = { 0x00, 0x02, 0x00, 44 }, buf[1500];
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int64_t sent, arrived;
	struct ptp_rx rx;
	int i;

	ASSERT_LE(0, fd);
	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	/*
	 * The kernel turns receive stamping on for the first socket that asks
	 * from a work queue: messages until it has run come unstamped.
	 */
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(sizeof(msg), sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&to,
					      sizeof(to)));
		ASSERT_EQ(0, ptp_net_recv(n, buf, sizeof(buf), monotonic_ns() + 1000000000LL,
					  &rx));
		if (rx.have_ts)
			break;
		usleep(10000);
	}
	ASSERT_TRUE(rx.have_ts);
	sent = monotonic_ns();
	ASSERT_EQ(sizeof(msg), sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&to,
				      sizeof(to)));
	arrived = monotonic_ns();	/* loopback delivers within sendto() */
	close(fd);
	usleep(20000);			/* it waits in the queue */
	realtime_step = step;
	ASSERT_EQ(0, ptp_net_recv(n, buf, sizeof(buf), monotonic_ns() + 1000000000LL, &rx));
	EXPECT_EQ(sizeof(msg), rx.len);
	/* The step is far longer than the wait: which side it was on is clear. */
	ASSERT_TRUE(rx.have_ts);
	EXPECT_GE(rx.ts_mono + rx.ts_err, sent)
		TH_LOG("stamp %lld ns before the send", (long long)(sent - rx.ts_mono));
	EXPECT_LE(rx.ts_mono - rx.ts_err, arrived)
		TH_LOG("stamp %lld ns after the arrival", (long long)(rx.ts_mono - arrived));
}

TEST_F(lo, stamp_without_step)
{
	stamp_across_step(_metadata, &self->n, 0);
}

/* A leap second, another daemon's makestep: REALTIME steps both ways. */
TEST_F(lo, stamp_across_forward_step)
{
	stamp_across_step(_metadata, &self->n, 2000000000LL);
}

TEST_F(lo, stamp_across_backward_step)
{
	stamp_across_step(_metadata, &self->n, -2000000000LL);
}

/*
 * The transmit stamp of a Delay_Req, REALTIME stepped since the last look
 * at the socket: it must lie between the call and its return.
 */
static void send_across_step(struct __test_metadata *_metadata, struct ptp_net *n,
			     int64_t step)
{
	uint8_t msg[44] = { 0x01, 0x02, 0x00, 44 };
	int64_t before, after, t3, t3_err, t3_rt, t3_rt_err;
	int r;

	realtime_step = step;
	before = monotonic_ns();
	r = ptp_net_send_event(n, msg, sizeof(msg), &t3, &t3_err, &t3_rt, &t3_rt_err);
	after = monotonic_ns();
	if (r == -ENETUNREACH || r == -ENODEV)
		SKIP(return, "no multicast route on lo");
	ASSERT_EQ(0, r);
	EXPECT_GE(t3 + t3_err, before)
		TH_LOG("stamp %lld ns before the send", (long long)(before - t3));
	EXPECT_LE(t3 - t3_err, after)
		TH_LOG("stamp %lld ns after the return", (long long)(t3 - after));
}

TEST_F(lo, send_without_step)
{
	send_across_step(_metadata, &self->n, 0);
}

TEST_F(lo, send_across_forward_step)
{
	send_across_step(_metadata, &self->n, 2000000000LL);
}

TEST_F(lo, send_across_backward_step)
{
	send_across_step(_metadata, &self->n, -2000000000LL);
}

/*
 * A transmit stamp that came after ptp_net_send_event() stopped waiting
 * stays on the error queue, and poll() reports POLLERR for it whatever
 * it asks for: waiting for a message must not turn into a busy loop.
 */
TEST_F(lo, late_tx_stamp_does_not_spin)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) };
	uint8_t msg[44] = { 0x01, 0x02, 0x00, 44 }, buf[1500];
	int64_t cpu, wall;
	struct ptp_rx rx;

	inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
	/* Sent behind ptp_net's back: its stamp is left on the error queue. */
	ASSERT_EQ(sizeof(msg), sendto(self->n.event_fd, msg, sizeof(msg), 0,
				      (struct sockaddr *)&to, sizeof(to)));
	usleep(10000);
	cpu = thread_cpu_ns();
	wall = monotonic_ns();
	EXPECT_EQ(-ETIMEDOUT, ptp_net_recv(&self->n, buf, sizeof(buf),
					   wall + 300000000LL, &rx));
	wall = monotonic_ns() - wall;
	cpu = thread_cpu_ns() - cpu;
	EXPECT_GE(wall, 300000000LL);
	/* Idle waiting costs microseconds; the spin cost all of the 300 ms. */
	EXPECT_LT(cpu, 30000000LL)
		TH_LOG("%lld ns of CPU in %lld ns", (long long)cpu, (long long)wall);
}

TEST_HARNESS_MAIN
