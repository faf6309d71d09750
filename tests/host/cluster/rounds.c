// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace merge's rounds by collective, on a synthetic job whose
 * truth is known: four hosts, each a tracer's file (nodeN.pftrace: TCP
 * message records of a two-step ring allreduce) and a recorder's file
 * (rankN.pftrace: the collective's slice, group "default", seq 7, 8, ...,
 * as lclk.torch writes it, same host name and pid). Each collective has a
 * late rank chosen here, or none; the bounds are chosen so that some
 * orderings are proven and others lie inside them. The merge must name
 * each collective's straggler, certain exactly where the bounds prove it.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"
#include "perfetto/perfetto.h"
#include "cluster/cluster_round.h"
#include "cluster/trace_merge.h"
#include "lib/cli.h"

#define US	1000LL
#define MS	1000000LL
#define T0	(1000 * MS)
#define RANKS	4
#define OWD	(50 * US)
#define PID	100
#define SEQ0	7		/* torch's numbers start where rank 0 drew them */

/* What each collective is, and so what the merge must say of it. */
enum kind {
	/* the late rank 5 ms late, 10 us bounds: certain */
	LATE_PROVEN,
	/* 5 ms late, but its clock claims 6 ms: ambiguous */
	LATE_LOOSE,
	/*
	 * 5 ms late, waits proven, but the rank before it in the ring
	 * arrived 5 us before it, inside the bounds, and never waited: who
	 * came last is not proven
	 */
	LATE_CLOSE,
	/* nobody late: no wait, no straggler */
	ON_TIME,
	/*
	 * 5 ms late, the tracer's clock claiming 6 ms, the recorder's 10 us:
	 * the slices alone would order the ranks, but the waits are not
	 * proven: ambiguous (the verdict asks both, and errs towards
	 * ambiguous)
	 */
	LATE_WIRE,
	/*
	 * as LATE_PROVEN, but each slice ends 20 us before its rank's last
	 * receive (an async collective's completion callback ran before the
	 * waiting thread woke): its waits still count, certain
	 */
	LATE_EARLY_END,
};

static const struct {
	enum kind kind;
	int late;
} truth[] = {
	{ LATE_PROVEN, 3 }, { LATE_PROVEN, 1 }, { LATE_LOOSE, 3 }, { ON_TIME, -1 },
	{ LATE_PROVEN, 0 }, { LATE_CLOSE, 2 }, { LATE_LOOSE, 1 }, { LATE_PROVEN, 2 },
	{ LATE_CLOSE, 3 }, { LATE_PROVEN, 3 }, { ON_TIME, -1 }, { LATE_PROVEN, 1 },
	{ LATE_WIRE, 0 }, { LATE_WIRE, 3 }, { LATE_EARLY_END, 3 },
};

#define NCOLL	((int)ARRAY_SIZE(truth))

struct job {
	char dir[64];
	bool one_file;		/* the recorder's slices in the tracer's file */
	struct perfetto *tracer[RANKS], *recorder[RANKS];
	char paths[2 * RANKS][96];
	uint32_t seq_out[RANKS], seq_in[RANKS];
	struct merge_result res;
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static void addr_of(int i, char *buf, size_t n)
{
	snprintf(buf, n, "10.0.0.%d:%d", i + 1, 5000 + i);
}

/* A message record [begin, end] of rank i to or from peer, with its bound. */
static void msg(struct __test_metadata *_metadata, struct job *j, int i, bool send,
		int peer, int64_t begin, int64_t end, uint32_t seq, int64_t bound)
{
	char me[32], them[32];
	struct perfetto_arg args[] = {
		{ .name = "src", .str = send ? me : them },
		{ .name = "dst", .str = send ? them : me },
		{ .name = "seq", .val = seq },
		{ .name = "len", .val = 100 },
		{ .name = "bound_begin_ns", .val = bound },
		{ .name = "bound_end_ns", .val = bound },
	};
	struct perfetto_slice s = {
		.pid = PID, .tid = PID + 1, .thread_name = "rank",
		.category = MSG_CATEGORY, .name = send ? MSG_SEND : MSG_RECV,
		.start_ns = begin, .end_ns = end, .args = args, .nargs = 6,
	};

	addr_of(i, me, sizeof(me));
	addr_of(peer, them, sizeof(them));
	ASSERT_EQ(perfetto_slice(j->tracer[i], &s), 0);
}

/* The recorder's slice of collective seq on rank i, as lclk.torch writes it. */
static void collective(struct __test_metadata *_metadata, struct job *j, int i,
		       int64_t seq, int64_t begin, int64_t end, int64_t bound)
{
	struct perfetto_arg args[] = {
		{ .name = "rank", .val = i },
		{ .name = "group", .str = "default" },
		{ .name = "seq", .val = seq },
		{ .name = "seq_by", .str = "process_group" },
		{ .name = "bound_begin_ns", .val = bound },
		{ .name = "bound_end_ns", .val = bound },
	};
	struct perfetto_slice s = {
		.pid = PID, .tid = PID, .thread_name = "python3",
		.category = "lclk.collective", .name = "allreduce",
		.start_ns = begin, .end_ns = end, .args = args, .nargs = 6,
	};

	ASSERT_EQ(perfetto_slice(j->recorder[i], &s), 0);
}

/*
 * Collective c: each rank sends its first chunk on arrival and waits for
 * its predecessor's, forwards it and waits for the second. The first rank
 * after the late one waits on it; the next one on the first's forward (a
 * chain, rooted at the late rank). All clocks are exact; only the bounds
 * they claim differ.
 */
static void one_collective(struct __test_metadata *_metadata, struct job *j, int c)
{
	int64_t t = T0 + c * 20 * MS, arrive[RANKS], got1[RANKS], sent2[RANKS];
	int late = truth[c].late, i;

	for (i = 0; i < RANKS; i++) {
		arrive[i] = t + i * 10 * US;
		if (i == late)
			arrive[i] += 5 * MS;
	}
	if (truth[c].kind == LATE_CLOSE)
		arrive[(late + RANKS - 1) % RANKS] = arrive[late] - 5 * US;
	for (i = 0; i < RANKS; i++) {
		int p = (i + RANKS - 1) % RANKS;

		got1[i] = max64(arrive[i] + 5 * US, arrive[p] + OWD);
		sent2[i] = got1[i] + 5 * US;
	}
	for (i = 0; i < RANKS; i++) {
		int p = (i + RANKS - 1) % RANKS, n = (i + 1) % RANKS;
		int64_t got2 = max64(got1[i] + 10 * US, sent2[p] + OWD);
		int64_t bound = truth[c].kind == LATE_LOOSE && i == late ? 6 * MS : 10 * US;
		int64_t wire = truth[c].kind == LATE_WIRE && i == late ? 6 * MS : bound;

		msg(_metadata, j, i, true, n, arrive[i], arrive[i] + 2 * US, j->seq_out[i], wire);
		msg(_metadata, j, i, false, p, arrive[i] + 3 * US, got1[i], j->seq_in[i], wire);
		msg(_metadata, j, i, true, n, sent2[i], sent2[i] + 2 * US, j->seq_out[i] + 100,
		    wire);
		msg(_metadata, j, i, false, p, got1[i] + 8 * US, got2, j->seq_in[i] + 100, wire);
		j->seq_out[i] += 200;
		j->seq_in[i] += 200;
		collective(_metadata, j, i, SEQ0 + c, arrive[i] - 2 * US,
			   truth[c].kind == LATE_EARLY_END ? max64(arrive[i], got2 - 20 * US) :
			   got2 + 5 * US, bound);
	}
}

static void write_job(struct __test_metadata *_metadata, struct job *j)
{
	struct perfetto_clock clock = { .logical = true, .now_ns = T0 };
	char host[16];
	int i, c;

	strcpy(j->dir, "/tmp/lclk-rounds.XXXXXX");
	ASSERT_NE(mkdtemp(j->dir), NULL);
	for (i = 0; i < RANKS; i++) {
		snprintf(host, sizeof(host), "node%d", i);
		snprintf(j->paths[i], sizeof(j->paths[i]), "%s/node%d.pftrace", j->dir, i);
		snprintf(j->paths[RANKS + i], sizeof(j->paths[i]), "%s/rank%d.pftrace", j->dir, i);
		/* the same host name in both: the same process, pid PID */
		j->tracer[i] = perfetto_open(j->paths[i], host, &clock);
		j->recorder[i] = j->one_file ? j->tracer[i] :
			perfetto_open(j->paths[RANKS + i], host, &clock);
		ASSERT_NE(j->tracer[i], NULL);
		ASSERT_NE(j->recorder[i], NULL);
		j->seq_out[i] = 0xfffff000;
		j->seq_in[i] = 0xfffff000;
	}
	for (c = 0; c < NCOLL; c++)
		one_collective(_metadata, j, c);
	for (i = 0; i < RANKS; i++) {
		ASSERT_EQ(perfetto_close(j->tracer[i]), 0);
		if (!j->one_file)
			ASSERT_EQ(perfetto_close(j->recorder[i]), 0);
	}
}

static void run_job(struct __test_metadata *_metadata, struct job *j, bool one_file)
{
	const char *paths[2 * RANKS], *err_path;
	struct merge_opts o = { .window_ns = 0 };
	int i, n = one_file ? RANKS : 2 * RANKS;

	memset(j, 0, sizeof(*j));
	j->one_file = one_file;
	write_job(_metadata, j);
	/* recorders' files first: the pairing does not depend on the order */
	for (i = 0; i < n; i++)
		paths[i] = j->paths[one_file ? i : (i + RANKS) % (2 * RANKS)];
	ASSERT_EQ(trace_merge(paths, n, NULL, &o, &j->res, &err_path), 0);
}

static void job_cleanup(struct job *j)
{
	int i;

	for (i = 0; i < 2 * RANKS; i++)
		if (j->paths[i][0])
			unlink(j->paths[i]);
	rmdir(j->dir);
	merge_result_free(&j->res);
}

/* The rank of the tracer's process on node N. */
static int64_t tracer_rank(const struct job *j, int node)
{
	char prefix[16];
	uint32_t i;

	if (node < 0)
		return -1;
	snprintf(prefix, sizeof(prefix), "node%d ", node);
	for (i = 0; i < j->res.nranks; i++)
		if (!strncmp(j->res.rank_names[i], prefix, strlen(prefix)))
			return i;
	return -2;
}

static const char *kind_name(enum kind k)
{
	static const char *const names[] = {
		"proven", "loose", "close", "on time", "wire", "early end",
	};

	return names[k];
}

static void check_each_collective(struct __test_metadata *_metadata, bool one_file)
{
	const struct cluster_round *cr;
	struct job j;
	int c;

	run_job(_metadata, &j, one_file);
	cr = j.res.rounds;
	ASSERT_NE(cr, NULL);
	ASSERT_EQ(cluster_round_count(cr), NCOLL);
	for (c = 0; c < NCOLL; c++) {
		const struct round_result *r = cluster_round_get(cr, c);
		enum round_verdict want = truth[c].kind == LATE_PROVEN ||
					  truth[c].kind == LATE_EARLY_END ? ROUND_CERTAIN :
					  truth[c].kind == ON_TIME ? ROUND_NO_WAIT :
					  ROUND_AMBIGUOUS;

		EXPECT_STREQ(cluster_round_group(cr, r->group), "default");
		EXPECT_STREQ(cluster_round_group(cr, r->op), "allreduce");
		EXPECT_EQ(r->seq, SEQ0 + c);
		EXPECT_EQ(r->nranks, RANKS) TH_LOG("collective %d", c);
		EXPECT_EQ(r->straggler, tracer_rank(&j, truth[c].late))
			TH_LOG("collective %d (%s): straggler %lld", c, kind_name(truth[c].kind),
			       (long long)r->straggler);
		EXPECT_EQ(r->verdict, want)
			TH_LOG("collective %d (%s): verdict %s", c, kind_name(truth[c].kind),
			       round_verdict_name(r->verdict));
		/* late by 5 ms: two ranks waited on it, near 5 ms each */
		if (truth[c].late >= 0) {
			EXPECT_EQ(r->waits, 2);
			EXPECT_GT(r->waited_ns, 2 * 4 * MS);
		} else {
			EXPECT_EQ(r->waits, 0);
		}
	}
	EXPECT_EQ(cluster_round_unpaired(cr), 0);
	job_cleanup(&j);
}

TEST(each_collective_names_its_late_rank_certain_only_where_the_bounds_prove_it)
{
	check_each_collective(_metadata, false);
}

/* Both in one file (cat host0.pftrace rank0.pftrace): the same rounds. */
TEST(the_recorders_slices_in_the_tracers_file_make_the_same_rounds)
{
	check_each_collective(_metadata, true);
}

TEST(the_per_rank_tally_counts_each_collective_once)
{
	const struct cluster_round *cr;
	struct job j;
	int64_t rank3;
	uint64_t certain = 0, ambiguous = 0;
	int c;

	run_job(_metadata, &j, false);
	cr = j.res.rounds;
	rank3 = tracer_rank(&j, 3);
	ASSERT_GE(rank3, 0);
	for (c = 0; c < NCOLL; c++)
		if (truth[c].late == 3) {
			certain += truth[c].kind == LATE_PROVEN || truth[c].kind == LATE_EARLY_END;
			ambiguous += truth[c].kind != LATE_PROVEN && truth[c].kind != LATE_EARLY_END;
		}
	EXPECT_EQ(cluster_round_straggler_of(cr, rank3, ROUND_CERTAIN), certain);
	EXPECT_EQ(cluster_round_straggler_of(cr, rank3, ROUND_AMBIGUOUS), ambiguous);
	EXPECT_EQ(cluster_round_total(cr, ROUND_NO_WAIT), 2);
	EXPECT_EQ(cluster_round_unpaired(cr), 0);
	/* the per-TCP-pair view is still there: every chunk matched */
	EXPECT_EQ(cluster_counts(j.res.match)->matched, 2 * RANKS * NCOLL);
	job_cleanup(&j);
}

/* lclkctl [--json] trace merge of the job's files: its report in buf. */
static void report(struct __test_metadata *_metadata, struct job *j, bool json,
		   char *buf, size_t len)
{
	struct cli_global g = { .json = json };
	char *argv[2 * RANKS + 2] = { "merge" }, path[sizeof(j->dir) + 16];
	FILE *fp;
	size_t n;
	int saved, i;

	for (i = 0; i < 2 * RANKS; i++)
		argv[i + 1] = j->paths[i];
	snprintf(path, sizeof(path), "%s/report", j->dir);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	ASSERT_NE(freopen(path, "w", stdout), NULL);
	EXPECT_EQ(cmd_trace_merge_run(2 * RANKS + 1, argv, &g), 0);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	fp = fopen(path, "r");
	ASSERT_NE(fp, NULL);
	n = fread(buf, 1, len - 1, fp);
	buf[n] = 0;
	fclose(fp);
	unlink(path);
}

TEST(the_report_names_each_collectives_straggler_in_text_and_json)
{
	static char text[16384], json[65536];
	struct job j;

	memset(&j, 0, sizeof(j));
	write_job(_metadata, &j);
	report(_metadata, &j, false, text, sizeof(text));
	report(_metadata, &j, true, json, sizeof(json));
	/*
	 * 15 collectives: 7 proven (one ending early), 6 not (2 loose, 2
	 * close, 2 wire), 2 on time
	 */
	EXPECT_NE(strstr(text, "collectives: 15 rounds by (group, seq), 13 with a wait: "
			       "straggler certain in 7, ambiguous in 6\n"), NULL)
		TH_LOG("%s", text);
	EXPECT_NE(strstr(text, "  default #7 allreduce (4 ranks): straggler node3 "), NULL);
	EXPECT_NE(strstr(text, "  default #10 allreduce (4 ranks): no wait\n"), NULL);
	EXPECT_NE(strstr(text, "  default #9 allreduce (4 ranks): straggler node3 "), NULL);
	EXPECT_NE(strstr(text, "collective straggler: node3 "), NULL);
	if (getenv("LCLK_SHOW_REPORT"))
		fprintf(stderr, "%s", text);
	/* the message and per-rank views stay */
	EXPECT_NE(strstr(text, "messages: 120 sends, 120 receives, 120 matched"), NULL);
	EXPECT_NE(strstr(text, "waits: 26 rounds, a wait on a rank that sent late\n"), NULL);
	EXPECT_NE(strstr(json, "\"collectives\":{\"rounds\":15,\"certain\":7,"
			       "\"ambiguous\":6,\"no_wait\":2,\"unpaired\":0,"), NULL)
		TH_LOG("%s", json);
	EXPECT_NE(strstr(json, "{\"group\":\"default\",\"seq\":9,\"op\":\"allreduce\","
			       "\"ranks\":4,\"waits\":2,"), NULL);
	EXPECT_NE(strstr(json, "\"straggler\":null,\"verdict\":\"no wait\"}"), NULL);
	job_cleanup(&j);
}

/*
 * Thousands of process groups, each with collectives open at once (the
 * tables of names and open rounds grow and are rebuilt as rounds close):
 * every round keeps its own ranks and waits. Rank g's waits are rooted at
 * rank g + 1, proven; rank g + 1 begins 10 ms after, bounds 1 us.
 */
TEST(thousands_of_groups_open_at_once_keep_their_rounds_apart)
{
	struct cluster_round *cr = cluster_round_new(MS, MS);
	const int groups = 3000, seqs = 3;
	char name[16];
	uint32_t op;
	int g, k;
	size_t i;

	ASSERT_NE(cr, NULL);
	op = cluster_round_intern(cr, (const uint8_t *)"allreduce", 9);
	ASSERT_EQ(op, 0);
	for (k = 0; k < seqs; k++)
		for (g = 0; g < groups; g++) {
			int64_t t = T0 + k * 100 * MS + g * US;
			uint32_t grp;
			struct settled_wait w = {
				.waiter = 2 * g, .root = 2 * g + 1, .begin = t, .end = t + 10 * MS,
				.proven = true,
			};

			snprintf(name, sizeof(name), "tp%d", g);
			grp = cluster_round_intern(cr, (const uint8_t *)name, strlen(name));
			op = cluster_round_intern(cr, (const uint8_t *)"allreduce", 9);
			ASSERT_EQ(grp, (uint32_t)g + 1);	/* after the op's */
			ASSERT_EQ(cluster_round_intern(cr, (const uint8_t *)"allreduce", 9), op);
			ASSERT_EQ(cluster_round_slice(cr, 2 * g, grp, op, k, t, t + 11 * MS,
						      US, US), 0);
			ASSERT_EQ(cluster_round_slice(cr, 2 * g + 1, grp, op, k, t + 10 * MS,
						      t + 11 * MS, US, US), 0);
			ASSERT_EQ(cluster_round_wait(cr, &w), 0);
			/* the first half of the groups' rounds of k close here */
			if (g == groups / 2 && k > 0)
				ASSERT_EQ(cluster_round_settle(cr, T0 + (k - 1) * 100 * MS +
							       groups / 2 * US + 14 * MS), 0);
		}
	ASSERT_EQ(cluster_round_settle(cr, INT64_MAX), 0);
	ASSERT_EQ(cluster_round_count(cr), (size_t)groups * seqs);
	EXPECT_EQ(cluster_round_total(cr, ROUND_CERTAIN), (uint64_t)groups * seqs);
	for (i = 0; i < cluster_round_count(cr); i++) {
		const struct round_result *r = cluster_round_get(cr, i);

		EXPECT_EQ(r->nranks, 2);
		EXPECT_EQ(r->waits, 1);
		EXPECT_EQ(r->straggler, 2 * (r->group - 1) + 1);
		snprintf(name, sizeof(name), "tp%u", r->group - 1);
		EXPECT_STREQ(cluster_round_group(cr, r->group), name);
	}
	EXPECT_EQ(cluster_round_unplaced(cr), 0);
	cluster_round_free(cr);
}

TEST_HARNESS_MAIN
