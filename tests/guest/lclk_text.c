// SPDX-License-Identifier: GPL-2.0
/*
 * read() of /dev/lclkN: "cat /dev/lclk0" parses as "key: value" lines and
 * one "cpu N offset_ns X" line per CPU, and says what the ioctls say.
 */
#include "lclk_test.h"
#include "kselftest_harness.h"

#define MAX_KEYS 64

struct text {
	char buf[1 << 16];
	char *key[MAX_KEYS];
	char *val[MAX_KEYS];
	int nkeys;
	int ncpu_lines;
	long long cpu_off[4096];
};

/* Split into key: value pairs and cpu lines; 0 if every line parses. */
static int parse(struct text *t)
{
	char *line, *save, *colon;
	unsigned int cpu;
	long long off;

	t->nkeys = 0;
	t->ncpu_lines = 0;
	for (line = strtok_r(t->buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "cpu %u offset_ns %lld", &cpu, &off) == 2) {
			if (cpu >= 4096 || (int)cpu != t->ncpu_lines)
				return -1;
			t->cpu_off[t->ncpu_lines++] = off;
			continue;
		}
		colon = strstr(line, ": ");
		if (!colon || t->nkeys == MAX_KEYS)
			return -1;
		*colon = 0;
		t->key[t->nkeys] = line;
		t->val[t->nkeys++] = colon + 2;
	}
	return 0;
}

static const char *get(struct text *t, const char *key)
{
	int i;

	for (i = 0; i < t->nkeys; i++)
		if (!strcmp(t->key[i], key))
			return t->val[i];
	return NULL;
}

static long long num(struct text *t, const char *key)
{
	const char *v = get(t, key);

	if (!v) {
		fprintf(stderr, "# no key %s\n", key);
		return LLONG_MIN;
	}
	return strtoll(v, NULL, 10);
}

/* Read a whole file descriptor with reads of at most chunk bytes. */
static ssize_t slurp(int fd, struct text *t, size_t chunk)
{
	ssize_t n, len = 0;

	while ((size_t)len < sizeof(t->buf) - 1) {
		size_t want = sizeof(t->buf) - 1 - len;

		n = read(fd, t->buf + len, want < chunk ? want : chunk);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += n;
	}
	t->buf[len] = 0;
	return len;
}

static const char *status_name(__u32 s)
{
	return s == LCLK_STATUS_SYNCED ? "synced" :
	       s == LCLK_STATUS_HOLDOVER ? "holdover" :
	       s == LCLK_STATUS_DISRUPTED ? "disrupted" : "unsynced";
}

FIXTURE(text) {
	int fd;
	struct lclk_info info;
	struct text t;
};

FIXTURE_SETUP(text)
{
	struct lclk_set_model m;

	self->fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, self->fd);
	self->info = lclk_info_of(self->fd);
	ASSERT_EQ(0, lclk_reset(self->fd));
	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_RATE | LCLK_SET_BOUND;
	m.rate_ppt = -98765432;
	m.bound_ns = 31415;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	ASSERT_EQ(0, lclk_set_cpu(self->fd, 0, 11, 0));
}

FIXTURE_TEARDOWN(text)
{
	lclk_reset(self->fd);
	close(self->fd);
}

/* Every value matches the ioctls; logical time matches the model. */
static void check_text(struct __test_metadata *_metadata, int fd,
		       struct text *t, const struct lclk_info *info)
{
	struct lclk_params m = lclk_model_of(fd);
	struct lclk_stats s = lclk_stats_of(fd);
	__s64 base, logical;
	const char *v;
	int i;

	ASSERT_EQ(0, parse(t));
	v = get(t, "device");
	ASSERT_NE(NULL, v);
	EXPECT_STREQ("lclk0", v);
	v = get(t, "status");
	ASSERT_NE(NULL, v);
	EXPECT_STREQ(status_name(m.status), v);
	v = get(t, "timescale");
	ASSERT_NE(NULL, v);
	EXPECT_STREQ(m.model_flags & LCLK_MODEL_TAI ? "tai" : "utc", v);
	ASSERT_NE(NULL, get(t, "time"));
	EXPECT_EQ(LCLK_ABI_VERSION, num(t, "abi_version"));
	EXPECT_EQ(m.t0_ns, num(t, "t0_ns"));
	EXPECT_EQ(m.offset_ns, num(t, "offset_ns"));
	EXPECT_EQ(m.rate_ppt, num(t, "rate_ppt"));
	EXPECT_EQ(m.bound0_ns, num(t, "bound0_ns"));
	EXPECT_EQ(m.max_drift_ppb, num(t, "max_drift_ppb"));
	EXPECT_EQ(m.last_update_ns, num(t, "last_update_ns"));
	EXPECT_EQ(m.holdover_ns, num(t, "holdover_ns"));
	EXPECT_EQ(info->max_rate_ppt, num(t, "max_rate_ppt"));
	EXPECT_EQ(info->phc_index, num(t, "phc_index"));
	v = get(t, "vmclock");
	ASSERT_NE(NULL, v);
	if (!(info->caps & LCLK_CAP_VMCLOCK))
		EXPECT_STREQ("none", v);
	EXPECT_EQ(info->ncpus, num(t, "ncpus"));
	EXPECT_EQ(s.updates, num(t, "updates"));
	EXPECT_EQ(s.steps, num(t, "steps"));
	EXPECT_EQ(s.backward_steps, num(t, "backward_steps"));
	EXPECT_EQ(s.rejected, num(t, "rejected"));
	EXPECT_EQ(s.phc_adjustments, num(t, "phc_adjustments"));

	/* logical_ns and bound_ns are the model's at base_ns, exactly. */
	base = num(t, "base_ns");
	logical = num(t, "logical_ns");
	EXPECT_EQ(lclk_logical(base, m.t0_ns, m.offset_ns,
			       lclk_ppt_to_mult(m.rate_ppt)), logical);
	EXPECT_EQ(lclk_bound(base, m.status == LCLK_STATUS_UNSYNCED ?
			     LCLK_STATUS_UNSYNCED : LCLK_STATUS_SYNCED,
			     m.bound0_ns, m.last_update_ns,
			     lclk_ppb_to_mult(m.max_drift_ppb)),
		  num(t, "bound_ns"));
	EXPECT_EQ(base - m.last_update_ns, num(t, "since_update_ns"));

	/* One line per possible CPU, in order, with its offset. */
	EXPECT_LE(sysconf(_SC_NPROCESSORS_CONF), t->ncpu_lines);
	EXPECT_GE(info->ncpus, t->ncpu_lines);
	for (i = 0; i < t->ncpu_lines; i++) {
		struct lclk_cpu_offset co;

		memset(&co, 0, sizeof(co));
		co.cpu = i;
		ASSERT_EQ(0, lclk_ioc(fd, LCLK_IOC_GET_CPU_OFFSET, &co));
		EXPECT_EQ(co.offset_ns, t->cpu_off[i]);
	}
}

TEST_F(text, read_matches_ioctls)
{
	int fd = open(LCLK_DEV0, O_RDONLY);
	__s64 before = lclk_monotonic_ns();

	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, sizeof(self->t.buf)));
	close(fd);
	check_text(_metadata, self->fd, &self->t, &self->info);
	EXPECT_LE(before, num(&self->t, "base_ns"));
	EXPECT_EQ(11, self->t.cpu_off[0]);
}

/* Byte by byte, the reads still come from one snapshot. */
TEST_F(text, byte_reads_one_snapshot)
{
	int fd = open(LCLK_DEV0, O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, 1));
	close(fd);
	check_text(_metadata, self->fd, &self->t, &self->info);
}

/* Seeking back to 0 takes a new snapshot; EOF stays EOF. */
TEST_F(text, reread_after_seek)
{
	int fd = open(LCLK_DEV0, O_RDONLY);
	char c;
	__s64 first;

	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, 100));
	ASSERT_EQ(0, parse(&self->t));
	first = num(&self->t, "base_ns");
	EXPECT_EQ(0, read(fd, &c, 1));
	usleep(1000);
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	ASSERT_LT(0, slurp(fd, &self->t, 4096));
	close(fd);
	check_text(_metadata, self->fd, &self->t, &self->info);
	EXPECT_LT(first, num(&self->t, "base_ns"));
}

/* The states read as words. */
TEST_F(text, status_words)
{
	struct lclk_set_model m;
	int fd;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_UNSYNC | LCLK_SET_FLAGS;
	m.model_flags = LCLK_MODEL_TAI;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, 4096));
	close(fd);
	check_text(_metadata, self->fd, &self->t, &self->info);
	EXPECT_STREQ("unsynced", get(&self->t, "status"));
	EXPECT_EQ(LCLK_BOUND_UNKNOWN, num(&self->t, "bound_ns"));
	EXPECT_STREQ("tai", get(&self->t, "timescale"));
	EXPECT_NE(NULL, strstr(get(&self->t, "time"), "TAI"));

	m.modes = LCLK_SET_BOUND | LCLK_SET_HOLDOVER;
	m.bound_ns = 1;
	m.holdover_ns = 1;
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	usleep(1000);
	fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, 4096));
	close(fd);
	EXPECT_EQ(0, parse(&self->t));
	EXPECT_STREQ("holdover", get(&self->t, "status"));
}

/* The calendar date is the logical time's. */
TEST_F(text, date)
{
	struct lclk_set_model m;
	int fd;

	memset(&m, 0, sizeof(m));
	m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE;
	m.flags = LCLK_ALLOW_BACKWARD;
	/* 2030-01-02T03:04:05.000000006 UTC at now */
	m.offset_ns = 1893553445LL * NSEC + 6 - lclk_monotonic_ns();
	ASSERT_EQ(0, lclk_ioc(self->fd, LCLK_IOC_SET_MODEL, &m));
	fd = open(LCLK_DEV0, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, slurp(fd, &self->t, 4096));
	close(fd);
	ASSERT_EQ(0, parse(&self->t));
	/* within the next second of it, UTC */
	EXPECT_EQ(0, strncmp(get(&self->t, "time"), "2030-01-02T03:04:0", 18));
	EXPECT_NE(NULL, strstr(get(&self->t, "time"), " UTC"));
}

/* The literal "cat /dev/lclk0" of the issue. */
TEST_F(text, cat)
{
	FILE *p = popen("cat " LCLK_DEV0, "r");
	size_t n;

	ASSERT_NE(NULL, p);
	n = fread(self->t.buf, 1, sizeof(self->t.buf) - 1, p);
	self->t.buf[n] = 0;
	EXPECT_EQ(0, pclose(p));
	ASSERT_LT(0, n);
	check_text(_metadata, self->fd, &self->t, &self->info);
}

TEST_HARNESS_MAIN
