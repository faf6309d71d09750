// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon's observability: the report as JSON and as a table through
 * the control socket, and as Prometheus text through the HTTP endpoint,
 * over real sockets; and the HTTP request parser.
 */
#include <arpa/inet.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "daemon/daemon_clients.h"
#include "daemon/daemon_ctl.h"
#include "daemon/metrics_http.h"
#include "lclk_model.h"

static const struct daemon_report *the_report;

static const struct daemon_report *report_of(void *arg)
{
	(void)arg;
	return the_report;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The daemon's loop, its clients only: serve listen_fd's until `clients`
 * have come and gone, or for `secs` seconds. Returns how many came.
 */
static int serve(int listen_fd, enum client_kind kind, int clients, double secs)
{
	int64_t end = now_ns() + (int64_t)(secs * 1e9);
	struct clients cl;
	int accepted = 0;

	clients_init(&cl, report_of, NULL);
	while (now_ns() < end && (accepted < clients || clients_next_deadline(&cl) != INT64_MAX)) {
		struct pollfd p[1 + CLIENTS_MAX] = {
			{ .fd = clients_room(&cl) ? listen_fd : -1, .events = POLLIN },
		};
		unsigned int n = clients_pollfds(&cl, p + 1);

		poll(p, n + 1, 10);
		clients_run(&cl, p + 1, n, now_ns());
		if (p[0].revents & POLLIN)
			accepted += clients_accept(&cl, listen_fd, kind, now_ns());
	}
	clients_close_all(&cl);
	return accepted;
}

static bool has(const char *text, const char *part)
{
	return strstr(text, part) != NULL;
}

static void sample_report(struct daemon_report *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->device, sizeof(r->device), "/dev/lclk0");
	r->status = LCLK_STATUS_SYNCED;
	r->now_ns = 100000000000LL;
	r->offset_ns = -1234;
	r->rate_ppt = 2500000;
	r->bound_ns = 56000;
	r->poll_ns = 16000000000LL;
	r->updates = 10;
	r->steps = 1;
	r->rejected = 3;
	r->disruptions = 2;
	r->selected = 0;
	r->nsources = 2;
	snprintf(r->sources[0].url, sizeof(r->sources[0].url), "ptp://veth0");
	r->sources[0].class = CLASS_PTP;
	r->sources[0].state = SRC_SELECTED;
	r->sources[0].reach = 0377;
	r->sources[0].measured = true;
	r->sources[0].offset_ns = -1234;
	r->sources[0].delay_ns = 2800;
	r->sources[0].bound_ns = 3000;
	r->sources[0].base_ns = 99000000000LL;
	r->sources[0].stratum = 1;
	snprintf(r->sources[1].url, sizeof(r->sources[1].url), "ntp://\"odd\"host");
	r->sources[1].class = CLASS_NTP;
	r->sources[1].state = SRC_UNREACHABLE;
	r->sources[1].reach = 0376;
	snprintf(r->sources[1].error, sizeof(r->sources[1].error), "timeout");
}

static char *render(void (*fn)(const struct daemon_report *, FILE *), const struct daemon_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fn(r, f);
	fclose(f);
	return buf;
}

TEST(metrics_text)
{
	struct daemon_report r;
	char *t;

	sample_report(&r);
	t = render(metrics_render, &r);
	EXPECT_TRUE(has(t, "# TYPE lclk_offset_seconds gauge\n"));
	EXPECT_TRUE(has(t, "lclk_offset_seconds{device=\"/dev/lclk0\"} -1.234e-06\n"));
	EXPECT_TRUE(has(t, "lclk_rate_ratio{device=\"/dev/lclk0\"} 2.5e-06\n"));
	EXPECT_TRUE(has(t, "lclk_bound_seconds{device=\"/dev/lclk0\"} 5.6e-05\n"));
	EXPECT_TRUE(has(t, "lclk_status{device=\"/dev/lclk0\",status=\"synced\"} 1\n"));
	EXPECT_TRUE(has(t, "lclk_status{device=\"/dev/lclk0\",status=\"holdover\"} 0\n"));
	EXPECT_TRUE(has(t, "lclk_status{device=\"/dev/lclk0\",status=\"disrupted\"} 0\n"));
	EXPECT_TRUE(has(t, "# TYPE lclk_steps_total counter\nlclk_steps_total{device=\"/dev/lclk0\"} 1\n"));
	EXPECT_TRUE(has(t, "lclk_rejected_replies_total{device=\"/dev/lclk0\"} 3\n"));
	EXPECT_TRUE(has(t, "# TYPE lclk_disruptions_total counter\nlclk_disruptions_total{device=\"/dev/lclk0\"} 2\n"));
	EXPECT_TRUE(has(t, "lclk_source_reach{source=\"ptp://veth0\",class=\"ptp\"} 255\n"));
	EXPECT_TRUE(has(t, "lclk_source_state{source=\"ptp://veth0\",class=\"ptp\",state=\"selected\"} 1\n"));
	EXPECT_TRUE(has(t, "lclk_source_delay_seconds{source=\"ptp://veth0\",class=\"ptp\"} 2.8e-06\n"));
	/* Label values are escaped; an unmeasured source has no offset sample. */
	EXPECT_TRUE(has(t, "lclk_source_state{source=\"ntp://\\\"odd\\\"host\",class=\"ntp\",state=\"unreachable\"} 1\n"));
	EXPECT_FALSE(has(t, "lclk_source_offset_seconds{source=\"ntp://"));
	free(t);

	r.status = LCLK_STATUS_UNSYNCED;
	r.bound_ns = LCLK_BOUND_UNKNOWN;
	t = render(metrics_render, &r);
	EXPECT_TRUE(has(t, "lclk_bound_seconds{device=\"/dev/lclk0\"} +Inf\n"));
	free(t);
}

TEST(control_renderings)
{
	struct daemon_report r;
	char *t;

	sample_report(&r);
	t = render(ctl_report_json, &r);
	EXPECT_EQ('{', t[0]);
	EXPECT_TRUE(has(t, "\"status\":\"synced\""));
	EXPECT_TRUE(has(t, "\"selected\":\"ptp://veth0\""));
	EXPECT_TRUE(has(t, "\"rejected\":3,\"disruptions\":2,"));
	EXPECT_TRUE(has(t, "{\"url\":\"ptp://veth0\",\"class\":\"ptp\",\"prefer\":false,\"state\":\"selected\",\"reach\":255,\"offset_ns\":-1234,\"delay_ns\":2800,\"bound_ns\":3000,\"age_ns\":1000000000"));
	EXPECT_TRUE(has(t, "\"url\":\"ntp://\\\"odd\\\"host\""));
	EXPECT_TRUE(has(t, "\"error\":\"timeout\""));
	free(t);
	t = render(ctl_report_text, &r);
	EXPECT_TRUE(has(t, "* ptp://veth0"));
	EXPECT_TRUE(has(t, " 377 "));
	EXPECT_TRUE(has(t, "? ntp://\"odd\"host"));
	EXPECT_TRUE(has(t, "(timeout)"));
	EXPECT_TRUE(has(t, "3 rejected replies, 2 VM restores or migrations\n"));
	free(t);
}

TEST(control_socket_round_trip)
{
	char path[] = "/tmp/lclk-ctl-test-XXXXXX", sock[64], err[256], *answer = NULL;
	struct daemon_report r;
	pid_t pid;
	int fd, status;

	sample_report(&r);
	ASSERT_NE(NULL, mkdtemp(path));
	snprintf(sock, sizeof(sock), "%s/s", path);
	fd = ctl_listen(sock, err, sizeof(err));
	ASSERT_GE(fd, 0) TH_LOG("%s", err);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* Three clients, one answer each; never outlive the test. */
		the_report = &r;
		_exit(serve(fd, CLIENT_CONTROL, 3, 10) == 3 ? 0 : 1);
	}
	EXPECT_EQ(0, ctl_query(sock, "sources json", &answer));
	EXPECT_TRUE(answer && has(answer, "\"device\":\"/dev/lclk0\""));
	free(answer);
	EXPECT_EQ(0, ctl_query(sock, "stratum", &answer));
	EXPECT_STREQ("/dev/lclk0 2\n", answer ? answer : "");
	free(answer);
	EXPECT_EQ(0, ctl_query(sock, "bogus", &answer));
	EXPECT_TRUE(answer && has(answer, "error: unknown request 'bogus'"));
	free(answer);
	waitpid(pid, &status, 0);
	ctl_close(fd, sock);
	EXPECT_EQ(-ENOENT, ctl_query(sock, "sources json", &answer));
	rmdir(path);
}

TEST(stratum_to_serve)
{
	struct daemon_report r;

	sample_report(&r);
	EXPECT_EQ(2, ctl_report_stratum(&r));
	r.sources[0].stratum = 15;
	EXPECT_EQ(16, ctl_report_stratum(&r));	/* too far down: unsynchronised */
	r.sources[0].stratum = 255;
	EXPECT_EQ(16, ctl_report_stratum(&r));
	r.selected = -1;	/* holdover or not yet synchronised */
	EXPECT_EQ(0, ctl_report_stratum(&r));
	r.selected = 7;		/* beyond nsources: never read */
	EXPECT_EQ(0, ctl_report_stratum(&r));
}

static char *http(int listen_fd, const struct daemon_report *r, const char *request)
{
	struct sockaddr_storage a;
	socklen_t alen = sizeof(a);
	char *buf = calloc(1, 1 << 16);
	size_t len = 0;
	ssize_t n;
	int c;

	getsockname(listen_fd, (struct sockaddr *)&a, &alen);
	c = socket(a.ss_family, SOCK_STREAM, 0);
	if (connect(c, (struct sockaddr *)&a, alen) || write(c, request, strlen(request)) < 0)
		return buf;
	the_report = r;
	serve(listen_fd, CLIENT_METRICS, 1, 5);	/* the request is queued: served at once */
	while ((n = read(c, buf + len, (1 << 16) - 1 - len)) > 0)
		len += n;
	close(c);
	return buf;
}

TEST(metrics_endpoint)
{
	struct daemon_report r;
	char err[256], *t;
	int fd;

	sample_report(&r);
	fd = metrics_listen("127.0.0.1:0", err, sizeof(err));
	ASSERT_GE(fd, 0) TH_LOG("%s", err);
	t = http(fd, &r, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	EXPECT_EQ(0, strncmp(t, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4", 55));
	EXPECT_TRUE(has(t, "\r\n\r\n# HELP lclk_offset_seconds"));
	free(t);
	t = http(fd, &r, "GET /other HTTP/1.0\r\n\r\n");
	EXPECT_EQ(0, strncmp(t, "HTTP/1.0 404 Not Found", 22));
	free(t);
	t = http(fd, &r, "POST /metrics HTTP/1.0\r\n\r\n");
	EXPECT_EQ(0, strncmp(t, "HTTP/1.0 405", 12));
	free(t);
	t = http(fd, &r, "hello\r\n\r\n");
	EXPECT_EQ(0, strncmp(t, "HTTP/1.0 400", 12));
	free(t);
	close(fd);
	EXPECT_LT(metrics_listen("localhost:80", err, sizeof(err)), 0);	/* numeric only */
	EXPECT_LT(metrics_listen("127.0.0.1", err, sizeof(err)), 0);
}

/*
 * A slowloris client (a byte now and then, never a whole request) holds
 * one slot until its deadline, no longer, and never the loop: each pass
 * returns at once, and a client behind it is answered meanwhile.
 */
TEST(slow_client_never_holds_the_loop)
{
	static const char request[] = "GET /metrics HTTP/1.0\r\n\r\n";
	struct pollfd sp = { .events = POLLIN };
	struct sockaddr_storage a;
	socklen_t alen = sizeof(a);
	struct daemon_report r;
	char err[256], buf[4096];
	int64_t start, longest = 0, t;
	int fd, slow, quick = -1;
	struct clients cl;
	size_t got = 0;

	sample_report(&r);
	the_report = &r;
	fd = metrics_listen("127.0.0.1:0", err, sizeof(err));
	ASSERT_GE(fd, 0) TH_LOG("%s", err);
	getsockname(fd, (struct sockaddr *)&a, &alen);
	slow = socket(a.ss_family, SOCK_STREAM, 0);
	ASSERT_EQ(0, connect(slow, (struct sockaddr *)&a, alen));
	clients_init(&cl, report_of, NULL);
	start = now_ns();
	while ((t = now_ns()) < start + CLIENT_DEADLINE_NS + 500000000LL) {
		struct pollfd p[1 + CLIENTS_MAX] = {
			{ .fd = clients_room(&cl) ? fd : -1, .events = POLLIN },
		};
		unsigned int k = clients_pollfds(&cl, p + 1);
		int64_t pass;
		ssize_t m;

		/* A byte every 20 ms; the well-behaved client comes after 100 ms. */
		send(slow, "G", 1, MSG_NOSIGNAL);
		if (quick < 0 && t > start + 100000000LL) {
			quick = socket(a.ss_family, SOCK_STREAM, 0);
			ASSERT_EQ(0, connect(quick, (struct sockaddr *)&a, alen));
			ASSERT_EQ(sizeof(request) - 1, write(quick, request, sizeof(request) - 1));
			fcntl(quick, F_SETFL, O_NONBLOCK);
		}
		poll(p, k + 1, 20);
		pass = now_ns();
		clients_run(&cl, p + 1, k, pass);
		if (p[0].revents & POLLIN)
			clients_accept(&cl, fd, CLIENT_METRICS, pass);
		if (now_ns() - pass > longest)
			longest = now_ns() - pass;
		if (quick >= 0 && (m = read(quick, buf + got, sizeof(buf) - 1 - got)) > 0)
			got += m;
		usleep(20000);
	}
	buf[got] = '\0';
	EXPECT_LT(longest, 10000000) TH_LOG("one pass of the loop took %lld us",
					   (long long)(longest / 1000));
	EXPECT_EQ(0, strncmp(buf, "HTTP/1.0 200 OK", 15))
		TH_LOG("the client behind the slow one got '%.40s'", buf);
	/* Past its deadline the slow client was dropped: it reads EOF (or a reset). */
	sp.fd = slow;
	EXPECT_EQ(1, poll(&sp, 1, 100));
	EXPECT_TRUE(recv(slow, buf, sizeof(buf), MSG_DONTWAIT) <= 0);
	EXPECT_EQ(INT64_MAX, clients_next_deadline(&cl)) TH_LOG("a client is still open");
	clients_close_all(&cl);
	close(slow);
	close(quick);
	close(fd);
}

TEST(http_request_parser)
{
	char m[16], p[64];

	EXPECT_EQ(HTTP_OK, http_parse_request("GET /metrics HTTP/1.1\r\nA: b\r\n\r\n", 31, m, sizeof(m), p, sizeof(p)));
	EXPECT_STREQ("GET", m);
	EXPECT_STREQ("/metrics", p);
	EXPECT_EQ(HTTP_INCOMPLETE, http_parse_request("GET /metrics HTTP/1.1\r\n", 23, m, sizeof(m), p, sizeof(p)));
	EXPECT_EQ(HTTP_OK, http_parse_request("GET / HTTP/1.0\n\n", 16, m, sizeof(m), p, sizeof(p)));
	EXPECT_EQ(HTTP_BAD, http_parse_request("GET /metrics\r\n\r\n", 16, m, sizeof(m), p, sizeof(p)));
	EXPECT_EQ(HTTP_BAD, http_parse_request(" / HTTP/1.0\r\n\r\n", 15, m, sizeof(m), p, sizeof(p)));
	EXPECT_EQ(HTTP_BAD, http_parse_request("GET  HTTP/1.0\r\n\r\n", 17, m, sizeof(m), p, sizeof(p)));
}

TEST_HARNESS_MAIN
