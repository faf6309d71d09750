// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace's Perfetto writer: traces of many hosts opened together
 * keep their processes apart, and timestamps say which clock they are in.
 * The files are read back with a minimal protobuf reader.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The harness trips -Wextra (unused parameters, literal ints vs unsigned). */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "perfetto/perfetto.h"
#include "perfetto_check.h"

#define HOSTS	64

/* One field of a message: number, and varint value or bytes. */
struct field {
	unsigned int num;
	uint64_t val;
	const uint8_t *buf;
	size_t len;
};

static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
		shift += 7;
	}
	return false;
}

/* The next field of [*p, end); false at the end or on a malformed one. */
static bool next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
	uint64_t tag, len;

	if (*p >= end || !varint(p, end, &tag))
		return false;
	f->num = tag >> 3;
	f->buf = NULL;
	switch (tag & 7) {
	case 0:
		return varint(p, end, &f->val);
	case 2:
		if (!varint(p, end, &len) || len > (uint64_t)(end - *p))
			return false;
		f->buf = *p;
		f->len = len;
		*p += len;
		return true;
	}
	return false;
}

/* The first field num of a message, or false. */
static bool find(const uint8_t *buf, size_t len, unsigned int num, struct field *out)
{
	const uint8_t *p = buf;

	while (next_field(&p, buf + len, out))
		if (out->num == num)
			return true;
	return false;
}

struct trace_file {
	uint8_t *data;
	size_t len;
};

static void write_trace(struct __test_metadata *_metadata, const char *path,
			const char *host, bool logical)
{
	struct perfetto_slice s = {
		.pid = 1000, .tid = 1000, .thread_name = "python3", .name = "recvfrom",
		.start_ns = 5000000000LL, .end_ns = 5001000000LL,
	};
	struct perfetto_clock clock = { .logical = logical, .now_ns = 4000000000LL };
	struct perfetto *p = perfetto_open(path, host, &clock);

	ASSERT_NE(p, NULL);
	ASSERT_EQ(perfetto_slice(p, &s), 0);
	ASSERT_EQ(perfetto_close(p), 0);
}

static void read_trace(struct __test_metadata *_metadata, const char *path,
		       struct trace_file *t)
{
	FILE *f = fopen(path, "rb");

	ASSERT_NE(f, NULL);
	t->data = malloc(1 << 16);
	ASSERT_NE(t->data, NULL);
	t->len = fread(t->data, 1, 1 << 16, f);
	fclose(f);
}

/*
 * What the trace processor would merge the process of the slice by: its
 * ProcessDescriptor's pid if it has one, else the track's uuid.
 */
static uint64_t process_identity(struct __test_metadata *_metadata,
				 const struct trace_file *t)
{
	const uint8_t *p = t->data;
	struct field pkt, td, f;

	while (next_field(&p, t->data + t->len, &pkt)) {
		if (!find(pkt.buf, pkt.len, 60, &td))
			continue;
		if (find(td.buf, td.len, 3, &f)) {	/* TrackDescriptor.process */
			ASSERT_TRUE(find(f.buf, f.len, 1, &f));
			return f.val;
		}
		if (find(td.buf, td.len, 2, &f) && strstr((const char *)f.buf, "pid 1000") &&
		    find(td.buf, td.len, 1, &f))
			return f.val;
	}
	return 0;
}

TEST(many_hosts_keep_their_processes_apart)
{
	char dir[] = "/tmp/lclk-perfetto.XXXXXX", path[64], host[32];
	uint64_t ids[HOSTS];
	struct trace_file t;
	int i, j;

	ASSERT_NE(mkdtemp(dir), NULL);
	for (i = 0; i < HOSTS; i++) {
		snprintf(path, sizeof(path), "%s/%d", dir, i);
		snprintf(host, sizeof(host), "gpu-node-%02d", i);
		write_trace(_metadata, path, host, true);
		read_trace(_metadata, path, &t);
		ids[i] = process_identity(_metadata, &t);
		free(t.data);
		unlink(path);
		ASSERT_NE(ids[i], 0);
		for (j = 0; j < i && ids[j] != ids[i]; j++)
			;
		EXPECT_EQ(j, i) TH_LOG("%s's pid 1000 is gpu-node-%02d's", host, j);
	}
	rmdir(dir);
}

/*
 * The first packet declares the sequence's clock (TracePacketDefaults'
 * timestamp_clock_id) and relates it to BOOTTIME in a ClockSnapshot; clock
 * ids 64-127 are the sequence's own.
 */
static void check_clock(struct __test_metadata *_metadata, bool logical,
			uint64_t want_id)
{
	char path[] = "/tmp/lclk-perfetto.XXXXXX";
	struct field pkt, defaults, f, clocks;
	bool found_id = false, found_boottime = false;
	const uint8_t *p;
	struct trace_file t;
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	close(fd);
	write_trace(_metadata, path, "gpu-node-00", logical);
	read_trace(_metadata, path, &t);
	unlink(path);
	p = t.data;
	ASSERT_TRUE(next_field(&p, t.data + t.len, &pkt));
	ASSERT_TRUE(find(pkt.buf, pkt.len, 59, &defaults));
	ASSERT_TRUE(find(defaults.buf, defaults.len, 58, &f));
	EXPECT_EQ(f.val, want_id);
	ASSERT_TRUE(find(pkt.buf, pkt.len, 6, &f));	/* clock_snapshot */
	p = f.buf;
	while (next_field(&p, f.buf + f.len, &clocks)) {
		struct field id;

		if (clocks.num != 1 || !find(clocks.buf, clocks.len, 1, &id))
			continue;
		found_id |= id.val == want_id;
		found_boottime |= id.val == 6;
	}
	EXPECT_TRUE(found_id);
	EXPECT_TRUE(found_boottime);
	free(t.data);
}

TEST(logical_time_is_a_declared_clock)
{
	check_clock(_metadata, true, 64);
}

TEST(monotonic_time_is_declared_as_such)
{
	check_clock(_metadata, false, 3);
}

/* What lclkctl trace writes decodes with Perfetto's own schema. */
TEST(both_clocks_decode_with_perfettos_schema)
{
	char dir[] = "/tmp/lclk-perfetto.XXXXXX", paths[2][64], both[130];
	int i;

	ASSERT_NE(mkdtemp(dir), NULL);
	for (i = 0; i < 2; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/%d", dir, i);
		write_trace(_metadata, paths[i], "gpu-node-00", i);
	}
	snprintf(both, sizeof(both), "%s %s", paths[0], paths[1]);
	EXPECT_EQ(perfetto_check(both, NULL), 0);
	for (i = 0; i < 2; i++)
		unlink(paths[i]);
	rmdir(dir);
}

TEST_HARNESS_MAIN
