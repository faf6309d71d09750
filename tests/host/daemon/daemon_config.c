// SPDX-License-Identifier: GPL-2.0
/* lclk.conf parsing: every directive, defaults, and errors with line numbers. */
#include <stdio.h>
#include <string.h>
#include <syslog.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "daemon/daemon_config.h"

static int parse(const char *text, struct daemon_config *c, char *err, size_t len)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -2;
	ret = config_parse(f, "test.conf", c, err, len);
	fclose(f);
	return ret;
}

TEST(full_file)
{
	static const char text[] =
		"# a training host\n"
		"device /dev/lclk1\n"
		"source ptp://eth0\n"
		"source ntp://10.0.0.1:1123 prefer   # the site server\n"
		"source phc:/dev/ptp2\n"
		"\tsource ptp4l:/var/run/ptp4l\n"
		"peer rank0.example:8123\n"
		"\n"
		"preference ntp ptp peer\n"
		"poll 500ms 16s\n"
		"fastpolls 6\n"
		"disturbance 200us\n"
		"samples 8 50ms 2s\n"
		"makestep 1s 3\n"
		"allowbackward yes\n"
		"holdover 10m\n"
		"maxdrift 25ppm\n"
		"maxslew 200ppm\n"
		"servo pi 0.5 0.2\n"
		"metrics [::1]:9100\n"
		"control /tmp/lclk.sock\n"
		"user lclk-test\n"
		"log debug syslog\n";
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(0, parse(text, &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("/dev/lclk1", c.device);
	ASSERT_EQ(5, c.nsources);
	EXPECT_STREQ("ptp://eth0", c.sources[0].url);
	EXPECT_EQ(CLASS_PTP, c.sources[0].class);
	EXPECT_EQ(CLASS_NTP, c.sources[1].class);
	EXPECT_TRUE(c.sources[1].prefer);
	EXPECT_FALSE(c.sources[0].prefer);
	EXPECT_EQ(4, c.sources[1].line);
	EXPECT_EQ(CLASS_PTP, c.sources[2].class);
	EXPECT_EQ(CLASS_PTP, c.sources[3].class);
	EXPECT_STREQ("ntp://rank0.example:8123", c.sources[4].url);
	EXPECT_EQ(CLASS_PEER, c.sources[4].class);
	EXPECT_EQ(0, c.class_rank[CLASS_NTP]);
	EXPECT_EQ(1, c.class_rank[CLASS_PTP]);
	EXPECT_EQ(2, c.class_rank[CLASS_PEER]);
	EXPECT_EQ(500000000, c.minpoll_ns);
	EXPECT_EQ(16000000000LL, c.maxpoll_ns);
	EXPECT_EQ(6, c.fastpolls);
	EXPECT_EQ(200000, c.disturbance_ns);
	EXPECT_EQ(8, c.samples);
	EXPECT_EQ(50000000, c.sample_interval_ns);
	EXPECT_EQ(2000000000, c.timeout_ns);
	EXPECT_EQ(1000000000, c.makestep_ns);
	EXPECT_EQ(3, c.makestep_limit);
	EXPECT_TRUE(c.allow_backward);
	EXPECT_EQ(600000000000LL, c.holdover_ns);
	EXPECT_EQ(25000, c.max_drift_ppb);
	EXPECT_EQ(200000000, c.max_slew_ppt);
	EXPECT_EQ(SERVO_PI, c.servo);
	EXPECT_TRUE(c.pi_kp == 0.5 && c.pi_ki == 0.2);
	EXPECT_STREQ("[::1]:9100", c.metrics);
	EXPECT_STREQ("/tmp/lclk.sock", c.control);
	EXPECT_STREQ("lclk-test", c.user);
	EXPECT_EQ(LOG_DEBUG, c.log_level);
	EXPECT_TRUE(c.log_syslog);
}

TEST(defaults)
{
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(0, parse("source ntp://127.0.0.1\n", &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("/dev/lclk0", c.device);
	EXPECT_EQ(1000000000, c.minpoll_ns);
	EXPECT_EQ(64000000000LL, c.maxpoll_ns);
	EXPECT_EQ(0, c.makestep_limit);
	EXPECT_FALSE(c.allow_backward);
	EXPECT_EQ(0, c.max_drift_ppb);
	EXPECT_EQ(0, c.class_rank[CLASS_PTP]);
	EXPECT_EQ(1, c.class_rank[CLASS_NTP]);
	EXPECT_EQ(2, c.class_rank[CLASS_PEER]);
	EXPECT_STREQ(CONFIG_DEFAULT_METRICS, c.metrics);
	EXPECT_STREQ(CONFIG_DEFAULT_CONTROL, c.control);
	EXPECT_STREQ("lclk", c.user);
	EXPECT_EQ(SERVO_PI, c.servo);
	/* Each source spaces its samples: 2 s to a public NTP server. */
	EXPECT_GT(0, c.sample_interval_ns);
}

/*
 * The shipped file names a public server: it must poll it the way chrony
 * does by default (minpoll 6, maxpoll 10) and leave the spacing of a
 * burst to the source, not 4 requests a second.
 */
TEST(shipped_config_spares_public_servers)
{
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(0, config_load("packaging/lclk.conf", &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(64000000000LL, c.minpoll_ns);
	EXPECT_EQ(1024000000000LL, c.maxpoll_ns);
	EXPECT_GT(0, c.sample_interval_ns);
}

TEST(off_switches)
{
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(0, parse("source ntp://h\nmetrics off\ncontrol off\nservo linreg\nlog warning\n",
			   &c, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_STREQ("", c.metrics);
	EXPECT_STREQ("", c.control);
	EXPECT_EQ(SERVO_LINREG, c.servo);
	EXPECT_EQ(LOG_WARNING, c.log_level);
}

/* The hypervisor's vmclock, by its scheme alone or with a path: a PTP-class source. */
TEST(vmclock_source)
{
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(0, parse("source vmclock:\nsource vmclock:/dev/vmclock1\n", &c, err,
			   sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(2, c.nsources);
	EXPECT_STREQ("vmclock:", c.sources[0].url);
	EXPECT_EQ(CLASS_PTP, c.sources[0].class);
	EXPECT_EQ(CLASS_PTP, c.sources[1].class);
}

/* Each bad line: the error names the file, its line and the problem. */
static const struct {
	const char *text;
	const char *want;
} bad[] = {
	{ "source ntp://h\nbogus 1\n", "test.conf:2: unknown directive 'bogus'" },
	{ "source ntp://h\n\n\npoll 1s\n", "test.conf:4: poll: expected MIN MAX" },
	{ "poll 1 64\nsource ntp://h\n", "test.conf:1: poll: '1' is not a duration" },
	{ "source ntp://h\npoll 10s 1s\n", "test.conf:2: poll: need 10ms <= MIN <= MAX" },
	{ "source http://h\n", "test.conf:1: source: 'http://h' is not ntp://" },
	{ "source ntp://\n", "test.conf:1: source: 'ntp://' is not ntp://" },
	{ "source ntp://h\nsource ntp://h\n", "test.conf:2: source: 'ntp://h' already configured on line 1" },
	{ "source ntp://h fast\n", "test.conf:1: source: unknown option 'fast'" },
	{ "source ntp://h\nmaxdrift 2000ppm\n", "test.conf:2: maxdrift: '2000ppm' is not a rate" },
	{ "source ntp://h\nmaxdrift 50\n", "test.conf:2: maxdrift: '50' is not a rate" },
	{ "source ntp://h\nmaxslew -5ppm\n", "test.conf:2: maxslew: '-5ppm' is not a rate" },
	{ "source ntp://h\nservo pi 0.9 0.3\n", "test.conf:2: servo: pi needs KP > 0, KI >= 0 and KP + KI <= 1" },
	{ "source ntp://h\nservo kalman\n", "test.conf:2: servo: expected" },
	{ "source ntp://h\nmetrics localhost\n", "test.conf:2: metrics: expected ADDR:PORT" },
	{ "source ntp://h\nmetrics 127.0.0.1:99999\n", "test.conf:2: metrics:" },
	{ "source ntp://h\ncontrol relative.sock\n", "test.conf:2: control: expected an absolute" },
	{ "source ntp://h\nuser\n", "test.conf:2: user: expected 1 to 1 values, got 0" },
	{ "source ntp://h\nlog loud\n", "test.conf:2: log: 'loud' is not a level" },
	{ "source ntp://h\npreference ptp ntp ntp\n", "test.conf:2: preference: 'ntp' is not one of" },
	{ "source ntp://h\npreference ptp\n", "test.conf:2: preference: expected the 3 classes" },
	{ "source ntp://h\nsamples 0\n", "test.conf:2: samples: '0' is not an integer in [1, 64]" },
	{ "source ntp://h\nsamples 4 10ms 0s\n", "test.conf:2: samples: the timeout must be positive" },
	{ "source ntp://h\nmakestep 1s\n", "test.conf:2: makestep: expected THRESHOLD LIMIT" },
	{ "source ntp://h\nallowbackward maybe\n", "test.conf:2: allowbackward: expected yes or no" },
	{ "source ntp://h\nholdover\n", "test.conf:2: holdover: expected 1 to 1 values, got 0" },
	{ "source ntp://h\npeer a/b\n", "test.conf:2: peer: 'a/b' is not HOST[:PORT]" },
	{ "source ntp://h\na b c d e f g h i\n", "test.conf:2: too many words" },
	{ "# nothing\n", "test.conf: no 'source' or 'peer' line" },
	{ "", "test.conf: no 'source' or 'peer' line" },
	{ "source ntp://h\nholdover 30s\n", "test.conf: holdover: must exceed the slowest poll (64s)" },
};

TEST(errors_name_the_line)
{
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct daemon_config c;
		char err[256] = "";

		EXPECT_EQ(-1, parse(bad[i].text, &c, err, sizeof(err)))
			TH_LOG("case %zu accepted", i);
		EXPECT_EQ(0, strncmp(err, bad[i].want, strlen(bad[i].want)))
			TH_LOG("case %zu: got '%s', want '%s...'", i, err, bad[i].want);
	}
}

TEST(too_many_sources)
{
	char text[4096] = "", line[64];
	struct daemon_config c;
	char err[256] = "";
	int i;

	for (i = 0; i <= CONFIG_MAX_SOURCES; i++) {
		snprintf(line, sizeof(line), "source ntp://10.0.0.%d\n", i + 1);
		strcat(text, line);
	}
	ASSERT_EQ(-1, parse(text, &c, err, sizeof(err)));
	EXPECT_STREQ("test.conf:17: source: more than 16 sources", err);
}

TEST(missing_file)
{
	struct daemon_config c;
	char err[256] = "";

	ASSERT_EQ(-1, config_load("/nonexistent/lclk.conf", &c, err, sizeof(err)));
	EXPECT_STREQ("/nonexistent/lclk.conf: No such file or directory", err);
}

TEST_HARNESS_MAIN
