// SPDX-License-Identifier: GPL-2.0
/*
 * The ntp:// source against a scripted server on loopback, in this
 * process: how many requests a burst sends and what a Kiss-o'-Death or an
 * ICMP error does to it, and what its runner thread keeps across a pause
 * (a reload). The system clock is the target (no module).
 */
/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ntp/ntp_packet.h"
#include "sync/source.h"
#include "sync/source_runner.h"

/*
 * What the server answers to its Nth request (the last one repeats).
 * CLOSE: a good reply, then the port is closed until a request has got an
 * ICMP port unreachable (3 s at most).
 */
enum answer { GOOD, RATE, SILENT, CLOSE };

struct server {
	int fd;
	uint32_t addr;			/* host order; 0: 127.0.0.1 */
	unsigned short port;
	const enum answer *script;
	unsigned int nscript;
	unsigned int requests;		/* under lock */
	bool quit;
	pthread_mutex_t lock;
	pthread_t thread;
};

static uint64_t now_ntp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ntp_unix_ns_to_ts(ts.tv_sec * 1000000000LL + ts.tv_nsec);
}

static int bind_port(struct server *s)
{
	struct sockaddr_in a = {
		.sin_family = AF_INET, .sin_port = htons(s->port),
		.sin_addr.s_addr = htonl(s->addr ? s->addr : INADDR_LOOPBACK),
	};
	socklen_t al = sizeof(a);

	s->fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    getsockname(s->fd, (struct sockaddr *)&a, &al))
		return -1;
	s->port = ntohs(a.sin_port);
	return 0;
}

/* UDP datagrams the kernel found no port for (/proc/net/snmp), or -1. */
static long udp_no_ports(void)
{
	char line[512];
	long in, no = -1;
	FILE *f = fopen("/proc/net/snmp", "r");
	int header = 1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Udp: ", 5) && !header-- &&
		    sscanf(line, "Udp: %ld %ld", &in, &no) != 2)
			no = -1;
	fclose(f);
	return no;
}

/*
 * Close the port until a datagram has found it closed (an ICMP port
 * unreachable went back), at most timeout_ns, then open it again; -1 if
 * it cannot. Not for a fixed time: a client slowed down by a loaded
 * machine then sent its next request after the port was open again, and
 * the test counted one request too many.
 */
static int reopen_after_refusal(struct server *s, long timeout_ns)
{
	struct timespec ms = { 0, 1000000 };
	long before = udp_no_ports(), waited;

	close(s->fd);
	for (waited = 0; waited < timeout_ns; waited += ms.tv_nsec) {
		nanosleep(&ms, NULL);
		if (before >= 0 && udp_no_ports() > before)
			break;
	}
	return bind_port(s);
}

static void *serve(void *arg)
{
	struct server *s = arg;

	for (;;) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		uint8_t buf[NTP_MAX_LEN], out[NTP_HEADER_LEN];
		struct ntp_packet rq, p = {
			.version = 4, .mode = NTP_MODE_SERVER, .stratum = 1,
			.precision = -20, .refid = 0x47505300,
		};
		enum answer a;
		ssize_t len;
		bool quit;

		pthread_mutex_lock(&s->lock);
		quit = s->quit;
		pthread_mutex_unlock(&s->lock);
		if (quit)
			return NULL;
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		len = recvfrom(s->fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (len < 0 || ntp_decode(buf, len, &rq) != NTP_OK)
			continue;
		pthread_mutex_lock(&s->lock);
		a = s->script[s->requests < s->nscript ? s->requests : s->nscript - 1];
		s->requests++;
		pthread_mutex_unlock(&s->lock);
		if (a == SILENT)
			continue;
		p.origin_ts = rq.transmit_ts;
		p.receive_ts = now_ntp() & ~1ULL;	/* basic mode only */
		p.transmit_ts = now_ntp();
		if (a == RATE) {
			p.stratum = 0;
			p.refid = 0x52415445;	/* "RATE" */
		}
		ntp_encode(&p, out);
		sendto(s->fd, out, sizeof(out), 0, (struct sockaddr *)&from, fl);
		if (a == CLOSE && reopen_after_refusal(s, 3000000000L))
			return NULL;
	}
}

/* Answer on s->addr (set before, 0: 127.0.0.1), a free port. */
static int server_start(struct server *s, const enum answer *script, unsigned int n)
{
	uint32_t addr = s->addr;

	memset(s, 0, sizeof(*s));
	s->addr = addr;
	s->script = script;
	s->nscript = n;
	pthread_mutex_init(&s->lock, NULL);
	if (bind_port(s))
		return -1;
	return pthread_create(&s->thread, NULL, serve, s) ? -1 : 0;
}

static unsigned int server_requests(struct server *s)
{
	unsigned int n;

	pthread_mutex_lock(&s->lock);
	n = s->requests;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static void server_stop(struct server *s)
{
	pthread_mutex_lock(&s->lock);
	s->quit = true;
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	close(s->fd);
	pthread_mutex_destroy(&s->lock);
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

FIXTURE(ntp)
{
	struct server srv;
	struct target_clock tc;
	struct source src;
	struct source_opts opts;
	char url[64], err[256];
};

FIXTURE_SETUP(ntp)
{
	self->opts = (struct source_opts){
		.samples = 4, .interval_ns = 0, .timeout_ns = 300000000LL,
	};
	ASSERT_EQ(0, target_open(&self->tc, "/dev/lclk-none-such", false));
}

FIXTURE_TEARDOWN(ntp)
{
	source_close(&self->src);
	server_stop(&self->srv);
	target_close(&self->tc);
}

static int open_source(struct __test_metadata *_metadata, FIXTURE_DATA(ntp) *self,
		       const enum answer *script, unsigned int n)
{
	if (server_start(&self->srv, script, n))
		return -1;
	snprintf(self->url, sizeof(self->url), "ntp://127.0.0.1:%u", self->srv.port);
	return source_open(&self->src, self->url, &self->opts, self->err, sizeof(self->err));
}

/*
 * KoD RATE ends the burst at once and lengthens the poll: the next
 * measurement asks nothing. (It used to double the spacing within the
 * burst, without limit or reset: 1 s, 2 s ... 64 s of blocking.)
 */
TEST_F(ntp, kod_rate_ends_the_burst_and_lengthens_the_poll)
{
	static const enum answer script[] = { GOOD, RATE, GOOD };
	struct measurement m;
	double t0;
	int ret;

	ASSERT_EQ(0, open_source(_metadata, self, script, 3));
	t0 = mono_s();
	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_LT(mono_s() - t0, 1.0);
	EXPECT_EQ(2, server_requests(&self->srv));
	/* The sample before the kiss stands. */
	EXPECT_EQ(0, ret) TH_LOG("%s", self->err);
	EXPECT_EQ(1, m.samples);

	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_EQ(-EAGAIN, ret);
	EXPECT_NE(NULL, strstr(self->err, "RATE")) TH_LOG("%s", self->err);
	EXPECT_EQ(2, server_requests(&self->srv));
}

TEST_F(ntp, a_burst_is_the_samples_asked)
{
	static const enum answer script[] = { GOOD };
	struct measurement m;

	ASSERT_EQ(0, open_source(_metadata, self, script, 1));
	ASSERT_EQ(0, self->src.ops->measure(&self->src, &self->tc, &m, self->err,
					    sizeof(self->err))) TH_LOG("%s", self->err);
	EXPECT_EQ(4, server_requests(&self->srv));
}

/*
 * An ICMP error is one lost exchange (chrony ignores them): the samples
 * before and after it make the measurement. It used to end the burst and
 * throw away what it had.
 */
TEST_F(ntp, an_icmp_error_loses_one_exchange_not_the_burst)
{
	static const enum answer script[] = { CLOSE, GOOD };
	struct measurement m;
	int ret;

	self->opts.interval_ns = 200000000LL;
	ASSERT_EQ(0, open_source(_metadata, self, script, 2));
	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_EQ(0, ret) TH_LOG("%s", self->err);
	/* The one in the closed port's time never reached the server. */
	EXPECT_EQ(3, server_requests(&self->srv));
	EXPECT_GE(m.samples, 1);
}

/* A port closed for good still says so. */
TEST_F(ntp, a_closed_port_is_reported)
{
	static const enum answer script[] = { GOOD };
	struct measurement m;
	int ret;

	ASSERT_EQ(0, open_source(_metadata, self, script, 1));
	close(self->srv.fd);
	self->srv.fd = socket(AF_INET, SOCK_DGRAM, 0);
	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_EQ(-ECONNREFUSED, ret);
	EXPECT_NE(NULL, strstr(self->err, "port unreachable")) TH_LOG("%s", self->err);
}

/*
 * The source says when it will take the next poll (next_due), so the
 * daemon schedules it then instead of counting -EAGAIN against it.
 */
TEST_F(ntp, next_due_is_when_the_source_takes_a_poll)
{
	static const enum answer script[] = { GOOD, RATE, GOOD };
	struct measurement m;
	int64_t t0 = (int64_t)(mono_s() * 1e9);

	ASSERT_EQ(0, open_source(_metadata, self, script, 3));
	ASSERT_NE(NULL, self->src.ops->next_due);
	/* A private server, not slowed down: any time. */
	EXPECT_LE(self->src.ops->next_due(&self->src), t0);
	self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	/* KoD RATE: 64 s from the burst's start. */
	EXPECT_GE(self->src.ops->next_due(&self->src), t0 + 63000000000LL);
	EXPECT_LE(self->src.ops->next_due(&self->src), t0 + 66000000000LL);
}

/* One poll of runner r: its result, within 5 s. */
static bool poll_runner(struct source_runner *r, int wake_fd, struct runner_result *res)
{
	struct pollfd p = { .fd = wake_fd, .events = POLLIN };
	char buf[16];

	if (!runner_poll(r) || poll(&p, 1, 5000) != 1)
		return false;
	if (read(wake_fd, buf, sizeof(buf)) < 0)
		return false;
	return runner_collect(r, res);
}

/*
 * A reload pauses every runner and resumes those whose source did not
 * change: the source stays open with what it learnt. A server that sent
 * KoD RATE is not asked again within its 64 s; before, a reload closed
 * every source and the next burst went out at once.
 */
TEST_F(ntp, a_paused_runner_keeps_its_source_state)
{
	static const enum answer script[] = { RATE, GOOD };
	struct runner_result res;
	struct source_runner r;
	int wake[2];

	ASSERT_EQ(0, pipe(wake));
	ASSERT_EQ(0, server_start(&self->srv, script, 2));
	snprintf(self->url, sizeof(self->url), "ntp://127.0.0.1:%u", self->srv.port);
	ASSERT_EQ(0, runner_start(&r, self->url, &self->opts, &self->tc, wake[1]));
	ASSERT_TRUE(poll_runner(&r, wake[0], &res));
	EXPECT_NE(0, res.ret);
	EXPECT_EQ(1, server_requests(&self->srv));
	EXPECT_GT(res.not_before_ns, (int64_t)(mono_s() * 1e9) + 60000000000LL);

	runner_pause(&r);
	ASSERT_EQ(0, runner_resume(&r));
	ASSERT_TRUE(poll_runner(&r, wake[0], &res));
	EXPECT_EQ(-EAGAIN, res.ret) TH_LOG("%s", res.err);
	EXPECT_EQ(1, server_requests(&self->srv));
	runner_stop(&r);
	close(wake[0]);
	close(wake[1]);
}

/* Make /etc/hosts, in this test's own mount namespace, say only line. */
static int hosts_say(const char *path, const char *line)
{
	FILE *f = fopen(path, "r+");

	if (!f)
		return -1;
	if (ftruncate(fileno(f), 0) || fprintf(f, "%s\n", line) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/*
 * A server given by name that stops answering is looked up again, as
 * chrony does, so a server that moved is found at its new address. The
 * name was resolved once, when the source was opened, and never again.
 */
TEST_F(ntp, a_name_is_resolved_again_after_a_failed_burst)
{
	static const enum answer script[] = { GOOD };
	char hosts[] = "/tmp/lclk-hosts.XXXXXX";
	struct measurement m;
	int fd, ret;

	if (geteuid())
		SKIP(return, "needs root for a mount namespace");
	ASSERT_EQ(0, unshare(CLONE_NEWNS));
	ASSERT_EQ(0, mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
	fd = mkstemp(hosts);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, hosts_say(hosts, "127.0.0.2 ntp-moves.test"));
	ASSERT_EQ(0, mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL));

	/* The server is at 127.0.0.3; the name says 127.0.0.2, where nothing listens. */
	self->srv.addr = 0x7f000003;
	ASSERT_EQ(0, server_start(&self->srv, script, 1));
	snprintf(self->url, sizeof(self->url), "ntp://ntp-moves.test:%u", self->srv.port);
	ASSERT_EQ(0, source_open(&self->src, self->url, &self->opts, self->err,
				 sizeof(self->err))) TH_LOG("%s", self->err);
	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_EQ(-ECONNREFUSED, ret) TH_LOG("%s", self->err);

	ASSERT_EQ(0, hosts_say(hosts, "127.0.0.3 ntp-moves.test"));
	ret = self->src.ops->measure(&self->src, &self->tc, &m, self->err, sizeof(self->err));
	EXPECT_EQ(0, ret) TH_LOG("%s", self->err);
	EXPECT_EQ(4, server_requests(&self->srv));
	umount("/etc/hosts");
	unlink(hosts);
}

TEST_HARNESS_MAIN
