// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl serve's loop against a daemon whose control socket a local user
 * keeps busy: the daemon's own client handling (daemon_clients.c, 16
 * slots, 2 s each) runs in a thread on a socket of the test's, a hostile
 * user (a process of its own, nobody when the test runs as root) keeps
 * every slot and the listen backlog full, and a client
 * asks serve (on loopback, from a clock page of the test's) ten times a
 * second. Every request must be answered at once, whatever the daemon's
 * socket does; once the hostile user leaves, serve learns the daemon's
 * stratum all the same.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "cmd_serve.h"
#include "daemon/daemon_clients.h"
#include "daemon/daemon_ctl.h"
#include "fake_logical.h"
#include "lclk_model.h"
#include "lib/clock_offset.h"
#include "lib/realtime_track.h"

#define MS		1000000LL
#define HOSTILE_CONNS	48	/* the 16 slots and the backlog of 8, with room */
#define DAEMON_STRATUM	3	/* of its selected source: serve announces 4 */

static volatile int stop_daemon, stop_serve;

struct fake_daemon {
	int listen_fd;
	struct clients cl;
	struct daemon_report report;
};

static const struct daemon_report *report_of(void *arg)
{
	return &((struct fake_daemon *)arg)->report;
}

/* The daemon's event loop, as far as its control clients go. */
static void *daemon_thread(void *arg)
{
	struct fake_daemon *d = arg;

	while (!stop_daemon) {
		struct pollfd p[CLIENTS_MAX + 1];
		unsigned int n = clients_pollfds(&d->cl, p);
		bool room = clients_room(&d->cl);
		int64_t now = monotonic_ns(), next = clients_next_deadline(&d->cl);
		int timeout = next == INT64_MAX || next - now > 20 * MS ? 20 :
			      next <= now ? 0 : (int)((next - now) / MS);

		if (room) {
			p[n].fd = d->listen_fd;
			p[n].events = POLLIN;
			p[n].revents = 0;
		}
		poll(p, n + room, timeout);
		now = monotonic_ns();
		if (room && p[n].revents)
			clients_accept(&d->cl, d->listen_fd, CLIENT_CONTROL, now);
		clients_run(&d->cl, p, n, now);
	}
	clients_close_all(&d->cl);
	return NULL;
}

/*
 * A local user holding every slot: connections that never send, made
 * again as soon as the daemon drops them, so the slots and the backlog
 * stay full. A process of its own, as nobody when the test runs as root.
 */
static void hostile_user(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd[HOSTILE_CONNS], i;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	for (i = 0; i < HOSTILE_CONNS; i++)
		fd[i] = -1;
	for (;;) {
		struct pollfd p[HOSTILE_CONNS];

		for (i = 0; i < HOSTILE_CONNS; i++) {
			if (fd[i] >= 0)
				continue;
			fd[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
			if (fd[i] >= 0 && connect(fd[i], (struct sockaddr *)&sun, sizeof(sun))) {
				close(fd[i]);
				fd[i] = -1;
			}
		}
		for (i = 0; i < HOSTILE_CONNS; i++) {
			p[i].fd = fd[i];
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		poll(p, HOSTILE_CONNS, 5);
		for (i = 0; i < HOSTILE_CONNS; i++) {
			if (fd[i] >= 0 && p[i].revents) {
				close(fd[i]);
				fd[i] = -1;
			}
		}
	}
	for (i = 0; i < HOSTILE_CONNS; i++)
		if (fd[i] >= 0)
			close(fd[i]);
}

static pid_t start_hostile_user(const char *path)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
		_exit(1);
	hostile_user(path);
	_exit(0);
}

struct server {
	int fd;
	struct target_clock tc;
	struct serve_opts o;
};

static void *serve_thread(void *arg)
{
	struct server *s = arg;

	serve_loop(s->fd, &s->tc, &s->o, 0, &stop_serve);
	return NULL;
}

/*
 * Ask serve at port count times, every interval: the longest wait for a
 * reply (each request's, and any left unanswered counts from its sending
 * to the end), and the stratum of the last reply.
 */
static int64_t ask(int port, int count, int64_t interval, int *answered, int *stratum)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int64_t sent[256], start, worst = 0, end;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), i, next = 0;
	bool got[256] = {};

	*answered = 0;
	start = monotonic_ns();
	end = start + count * interval + 500 * MS;
	while (monotonic_ns() < end && *answered < count) {
		int64_t now = monotonic_ns(), wake = next < count ? start + next * interval : end;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint8_t buf[NTP_HEADER_LEN];

		if (next < count && now >= wake) {
			struct ntp_packet req = { .version = 4, .mode = 3,
						  .transmit_ts = 1000 + next };

			ntp_encode(&req, buf);
			sent[next] = now;
			sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to));
			next++;
			continue;
		}
		if (poll(&p, 1, (int)((wake - now) / MS) + 1) == 1 &&
		    recv(fd, buf, sizeof(buf), 0) == NTP_HEADER_LEN) {
			struct ntp_packet rep;
			uint64_t k;

			now = monotonic_ns();
			if (ntp_decode(buf, sizeof(buf), &rep) != NTP_OK)
				continue;
			k = rep.origin_ts - 1000;
			if (k >= (uint64_t)next || got[k])
				continue;
			got[k] = true;
			(*answered)++;
			*stratum = rep.stratum;
			if (now - sent[k] > worst)
				worst = now - sent[k];
		}
	}
	for (i = 0; i < next; i++)
		if (!got[i] && monotonic_ns() - sent[i] > worst)
			worst = monotonic_ns() - sent[i];
	close(fd);
	return worst;
}

TEST(replies_never_wait_on_a_busy_daemon)
{
	char dir[] = "/tmp/lclk-serve-ctl-XXXXXX", path[96], dev[96], err[256];
	static struct lclk_page page;
	struct fake_daemon *d = calloc(1, sizeof(*d));
	struct server s = { .o = { .rate = 1000, .burst = 1000,
				   .stratum_refresh_ns = 1000 * MS } };
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(addr);
	pthread_t dt, st;
	pid_t hostile;
	int64_t worst;
	int answered, stratum = 0, fd;

	ASSERT_NE(NULL, d);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ctl.sock", dir);
	snprintf(dev, sizeof(dev), "%s/lclk0", dir);
	fd = open(dev, O_CREAT | O_WRONLY, 0600);
	ASSERT_GE(fd, 0);
	close(fd);
	setenv("LCLK_CONTROL", path, 1);

	/* The daemon: its source of stratum 3 selected, on "device" dev. */
	snprintf(d->report.device, sizeof(d->report.device), "%s", dev);
	d->report.nsources = 1;
	d->report.selected = 0;
	d->report.sources[0].stratum = DAEMON_STRATUM;
	d->listen_fd = ctl_listen(path, err, sizeof(err));
	ASSERT_GE(d->listen_fd, 0) TH_LOG("%s", err);
	clients_init(&d->cl, report_of, d);
	ASSERT_EQ(0, pthread_create(&dt, NULL, daemon_thread, d));
	/* The socket is 0666; its directory lets the other user reach it. */
	ASSERT_EQ(0, chmod(dir, 0755));
	hostile = start_hostile_user(path);
	ASSERT_GT(hostile, 0);
	usleep(300 * MS / 1000);	/* every slot taken */

	/* A synchronised clock, a page of the test's. */
	page.magic = LCLK_PAGE_MAGIC;
	page.params.status = LCLK_STATUS_SYNCED;
	page.params.offset_ns = 1700000000LL * 1000 * MS;
	page.params.bound0_ns = 1000;
	page.params.last_update_ns = monotonic_ns();
	page.params.holdover_ns = 3600 * 1000 * MS;
	s.tc.logical = true;
	s.tc.lc.fd = -1;
	s.tc.lc.page = &page;
	s.tc.path = dev;
	ASSERT_EQ(0, ntp_allow_add(&s.o.allow, "127.0.0.0/8"));
	s.fd = socket(AF_INET, SOCK_DGRAM, 0);
	ASSERT_EQ(0, bind(s.fd, (struct sockaddr *)&addr, sizeof(addr)));
	ASSERT_EQ(0, getsockname(s.fd, (struct sockaddr *)&addr, &alen));
	ASSERT_EQ(0, pthread_create(&st, NULL, serve_thread, &s));

	/* 4 s at 10/s: serve asks the daemon each second meanwhile. */
	worst = ask(ntohs(addr.sin_port), 40, 100 * MS, &answered, &stratum);
	EXPECT_EQ(40, answered);
	EXPECT_LE(worst, 100 * MS) TH_LOG("a reply waited %lld ms on the daemon's socket",
					  (long long)(worst / MS));
	TH_LOG("slots held: %d of 40 answered, the longest wait %lld ms, stratum %d", answered,
	       (long long)(worst / MS), stratum);

	/* The user leaves: the daemon's stratum comes through, asked the same way. */
	kill(hostile, SIGKILL);
	waitpid(hostile, NULL, 0);
	worst = ask(ntohs(addr.sin_port), 30, 100 * MS, &answered, &stratum);
	EXPECT_EQ(30, answered);
	EXPECT_LE(worst, 100 * MS);
	EXPECT_EQ(DAEMON_STRATUM + 1, stratum);
	TH_LOG("daemon free: %d of 30 answered, the longest wait %lld ms, stratum %d",
	       answered, (long long)(worst / MS), stratum);

	stop_serve = 1;
	sendto(s.fd, "", 0, 0, (struct sockaddr *)&addr, sizeof(addr));	/* wakes it */
	pthread_join(st, NULL);
	close(s.fd);
	stop_daemon = 1;
	pthread_join(dt, NULL);
	ctl_close(d->listen_fd, path);
	unlink(dev);
	rmdir(dir);
	free(d);
}

/*
 * A transmit stamp converted with the REALTIME - MONOTONIC difference in
 * force when the kernel took it: REALTIME is stepped (in the track the
 * test feeds, never the real clock) between the reply's departure and the
 * read of its stamp from the error queue, and the interleaved t3 handed out
 * next is the departure exactly. A logical clock of the test's: the
 * logical time of CLOCK_MONOTONIC m is m + LOGICAL.
 */
#define REALTIME_OFF	(1700000000LL * 1000 * MS)	/* REALTIME - MONOTONIC */
#define LOGICAL		FAKE_LOGICAL

/*
 * The transmit time the interleaved reply to the next request hands out,
 * after a reply received at monotonic 1000 ms left at 1005 ms, its stamp
 * read at 1010 ms; REALTIME stepped by step_ns between 1005 and 1010 ms
 * (0: no step). 0 if none is handed out.
 */
static uint64_t t3_after_step(int64_t step_ns)
{
	static struct lclk_page page;
	struct ntp_xleave *xl = calloc(1, sizeof(*xl));
	struct ntp_server_clock c = { .status = LCLK_STATUS_SYNCED, .bound_ns = 1000,
				      .stratum = 2, .precision = -20,
				      .receive_ns = LOGICAL + 1000 * MS,
				      .transmit_ns = LOGICAL + 1001 * MS };
	struct ntp_packet req = { .version = 4, .mode = NTP_MODE_CLIENT, .transmit_ts = 7 };
	struct ntp_packet first, q, rep;
	struct target_clock tc;
	struct realtime_track t;
	uint8_t frame[42 + NTP_HEADER_LEN] = {};	/* Ethernet, IPv4, UDP, NTP */
	uint64_t t3 = 0;

	if (!xl)
		return 0;
	fake_logical(&tc, &page);
	ntp_server_reply(&req, &c, &first);
	ntp_encode(&first, frame + 42);
	/* The loop measured the difference before the reply left... */
	realtime_track_init(&t, REALTIME_OFF, 50, 999 * MS);
	/* ...and again, past the step, when the error queue woke it. */
	realtime_track_update(&t, REALTIME_OFF + step_ns, 50, 1010 * MS);
	serve_tx_stamp(xl, &tc, &t, frame, sizeof(frame), REALTIME_OFF + 1005 * MS, 1010 * MS);

	q = (struct ntp_packet){ .version = 4, .mode = NTP_MODE_CLIENT,
				 .origin_ts = first.receive_ts,
				 .receive_ts = 0xaaaa5555aaaa5555ULL, .transmit_ts = 42 };
	c.receive_ns = LOGICAL + 2000 * MS;
	c.transmit_ns = LOGICAL + 2001 * MS;
	ntp_server_reply(&q, &c, &rep);
	if (ntp_xleave_reply(xl, &q, &rep))
		t3 = rep.transmit_ts;
	free(xl);
	return t3;
}

TEST(tx_stamp_converted_as_of_its_taking)
{
	uint64_t want = ntp_unix_ns_to_ts(LOGICAL + 1005 * MS);
	int64_t steps[] = { 0, -1000 * MS, 1000 * MS, -3600000 * MS };
	unsigned int i;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		uint64_t t3 = t3_after_step(steps[i]);

		EXPECT_EQ(want, t3)
			TH_LOG("REALTIME stepped %+lld ms before the stamp was read: t3 %s by %lld ns",
			       (long long)(steps[i] / MS), t3 ? "off" : "lost",
			       t3 ? (long long)(ntp_ts_to_unix_ns(t3, LOGICAL) - (LOGICAL + 1005 * MS)) : 0LL);
	}
}

TEST_HARNESS_MAIN
