// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl trace merge: hosts' traces onto one timeline (trace_merge.c),
 * and what their TCP messages say about their clocks (cluster_match.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/trace_merge.h"
#include "lib/cli.h"
#include "lib/json.h"
#include "lib/prom.h"

static const char usage[] =
"Usage: lclkctl trace merge HOST.pftrace... [-o OUT.pftrace] [OPTIONS]\n"
"\n"
"Put the traces of many hosts (lclkctl trace --trace-out, the Python\n"
"recorder) on one timeline: a process track per input, named after the file\n"
"without .pftrace; each event gains earliest_ns and latest_ns, its window\n"
"from the bound its host recorded; each TCP receive of a message record\n"
"(lclkctl trace --messages) gets an arrow from the send that carried its\n"
"last byte, matched by connection and sequence range.\n"
"\n"
"The matched messages check the clocks: data is not received before it was\n"
"sent, so for hosts A and B with traffic both ways the error of B's clock\n"
"minus A's is in [-min OWD(B->A), +min OWD(A->B)] (one-way delays as the\n"
"two clocks measure them). The report gives that interval, its width (the\n"
"precision the traffic certifies) and midpoint, and the interval the hosts'\n"
"bounds claim, [-(eA + eB), eA + eB] (the widest of its messages). Each\n"
"message is held to its own two ends' bounds: one received before it was\n"
"sent by more than them is a violation, and a pair with a violation is\n"
"flagged LYING (with bounds alike, the two intervals are disjoint); within\n"
"the bounds, inversions (ambiguous, not wrong). A message with an end of\n"
"unknown bound (an unsynced clock) proves nothing either way: counted as of\n"
"unknown bound, never a violation.\n"
"\n"
"Waits: each blocking call of a rank of --min-wait or more (poll, epoll,\n"
"select, recv, read that got data, or a busy-polling run of them; a TCP\n"
"receive; a futex wait woken just after the rank received), counted from\n"
"the rank's own last send (a thread idle before it, such as gloo's I/O\n"
"thread, idled while the rank worked; another thread's epoll or woken\n"
"futex, gloo's I/O thread's and workers', counts only while the rank's main\n"
"thread is blocked in a waiting call too), is attributed to the message that\n"
"ended it, and through a sender that was itself just released, to the rank\n"
"at the root of the chain: per rank, time waiting, time others waited on\n"
"it, share of rounds it came last, each ordering certain (gap beyond both\n"
"bounds) or ambiguous (within); the straggler; and for a stalled job the\n"
"last message each rank sent and received, with its bound. A wait ended by\n"
"a message sent before it began, by more than the bounds, is inconsistent\n"
"(it waited for something else, or a clock is outside its bound); one\n"
"ended by a message sent in its first half, even at the bounds' edge, was\n"
"in transit (the network, the waiter's CPU): both counted, neither a round.\n"
"A message sent after the wait ended did not end it, the sender's clock\n"
"taken as far ahead as the least delay of the traffic to it allows (not as\n"
"its bound says): its receive came after one the tracer lost.\n"
"\n"
"Collectives: given the recorder's traces too (lclk.torch: a slice per\n"
"collective, its process group and sequence number), paired with the\n"
"tracer's process of the same host name and pid, each (group, seq) is a\n"
"round: the waits inside each rank's slice of it (or within --link after\n"
"it) name its straggler, the rank they waited on longest; certain only when\n"
"every wait of the round is rooted at it and proven, and every other rank\n"
"of the collective waited so or began its slice before the straggler's by\n"
"more than both bounds; else ambiguous. A collective nobody waited in has\n"
"no straggler.\n"
"\n"
"Inputs are streamed: memory holds one read buffer per input, the events of\n"
"the last --window and the sends not yet received.\n"
"\n"
"Options:\n"
"  -o, --output FILE     write the merged trace (default: report only)\n"
"      --window DUR      arrows join a send and a receive at most DUR apart\n"
"                        on the merged timeline (default 250ms)\n"
"      --link DUR        a receive ending within DUR of a wait ended it; a\n"
"                        send within DUR of its sender's wait passes the\n"
"                        blame on (default 1ms)\n"
"      --min-wait DUR    shorter blocking calls are not waits (default 1ms)\n"
"      --prom-out FILE   node_exporter textfile: per host pair violations,\n"
"                        LYING flag, certified width, claimed bound\n"
"      --json            the report as one JSON document\n"
"\n"
"Exit status: 0 ok, 1 unreadable or malformed input, output error,\n"
"2 bad command line.\n"
"\n"
"Example:\n"
"  lclkctl trace merge node0.pftrace node1.pftrace node2.pftrace -o job.pftrace\n";

static const struct cli_cmd cmd_trace_merge = {
	.name = "trace merge",
	.usage = usage,
};

/* The rank most rounds were rooted at; -1 without rounds. */
static int straggler(const struct merge_result *r)
{
	const struct cluster_wait *w = r->wait;
	uint32_t i, best = 0;

	if (!cluster_wait_rounds(w))
		return -1;
	for (i = 1; i < cluster_wait_nranks(w); i++)
		if (cluster_wait_rank(w, i)->last > cluster_wait_rank(w, best)->last)
			best = i;
	return best;
}

static void print_window(const char *what, bool seen, int64_t t, int64_t bound)
{
	if (!seen)
		printf(", nothing %s", what);
	else if (bound == CLUSTER_BOUND_UNKNOWN)
		printf(", last %s at %.6f s (bound unknown)", what, t / 1e9);
	else
		printf(", last %s at %.6f s +- %.3f us", what, t / 1e9, bound / 1e3);
}

static void print_waits(const struct merge_result *r)
{
	const struct cluster_wait *w = r->wait;
	uint64_t rounds = cluster_wait_rounds(w);
	int s = straggler(r);
	uint32_t i;

	if (!cluster_wait_nranks(w))
		return;
	printf("waits: %llu rounds, a wait on a rank that sent late\n",
	       (unsigned long long)rounds);
	for (i = 0; i < cluster_wait_nranks(w) && i < r->nranks; i++) {
		const struct rank_wait *rw = cluster_wait_rank(w, i);

		printf("  %s: waited %.3f ms in %llu/%llu blocks (%llu in transit), others waited %.3f ms on it, last in %.1f%% of rounds (%llu certain, %llu ambiguous, %llu inconsistent)",
		       r->rank_names[i], rw->wait_ns / 1e6, (unsigned long long)rw->attributed,
		       (unsigned long long)rw->blocks, (unsigned long long)rw->transit,
		       rw->waited_on_ns / 1e6, rounds ? 100.0 * rw->last / rounds : 0.0,
		       (unsigned long long)rw->certain, (unsigned long long)rw->ambiguous,
		       (unsigned long long)rw->inconsistent);
		print_window("sent", rw->sent, rw->last_send_ns, rw->last_send_bound_ns);
		print_window("received", rw->received, rw->last_recv_ns, rw->last_recv_bound_ns);
		printf("\n");
	}
	if (s >= 0)
		printf("straggler: %s\n", r->rank_names[s]);
}

static const char *rank_name(const struct merge_result *r, int64_t rank)
{
	return rank >= 0 && rank < r->nranks ? r->rank_names[rank] : "?";
}

/* The rank straggler of most rounds with a wait; -1 without one. */
static int64_t collective_straggler(const struct merge_result *r)
{
	const struct cluster_round *cr = r->rounds;
	uint64_t best_n = 0;
	int64_t best = -1;
	uint32_t i;

	for (i = 0; i < r->nranks; i++) {
		uint64_t n = cluster_round_straggler_of(cr, i, ROUND_CERTAIN) +
			     cluster_round_straggler_of(cr, i, ROUND_AMBIGUOUS);

		if (n > best_n) {
			best_n = n;
			best = i;
		}
	}
	return best;
}

static void print_rounds(const struct merge_result *r)
{
	const struct cluster_round *cr = r->rounds;
	size_t n = cluster_round_count(cr), k;
	uint64_t certain = cluster_round_total(cr, ROUND_CERTAIN);
	uint64_t ambiguous = cluster_round_total(cr, ROUND_AMBIGUOUS);
	int64_t s = collective_straggler(r);
	uint32_t i;

	if (!n)
		return;
	printf("collectives: %zu rounds by (group, seq), %llu with a wait: straggler certain in %llu, ambiguous in %llu\n",
	       n, (unsigned long long)(certain + ambiguous), (unsigned long long)certain,
	       (unsigned long long)ambiguous);
	for (i = 0; i < r->nranks; i++) {
		uint64_t c = cluster_round_straggler_of(cr, i, ROUND_CERTAIN);
		uint64_t a = cluster_round_straggler_of(cr, i, ROUND_AMBIGUOUS);

		if (c + a)
			printf("  %s: straggler of %llu (%llu certain, %llu ambiguous)\n",
			       r->rank_names[i], (unsigned long long)(c + a),
			       (unsigned long long)c, (unsigned long long)a);
	}
	if (cluster_round_unpaired(cr))
		printf("  %llu recorder processes with no traced process of the same host and pid: their waits are in no round\n",
		       (unsigned long long)cluster_round_unpaired(cr));
	if (cluster_round_late(cr) || cluster_round_unplaced(cr))
		printf("  %llu slices of a round already closed, %llu waits in no collective\n",
		       (unsigned long long)cluster_round_late(cr),
		       (unsigned long long)cluster_round_unplaced(cr));
	for (k = 0; k < n; k++) {
		const struct round_result *rr = cluster_round_get(cr, k);

		printf("  %s #%llu %s (%u ranks): ", cluster_round_group(cr, rr->group),
		       (unsigned long long)rr->seq, cluster_round_group(cr, rr->op), rr->nranks);
		if (rr->verdict == ROUND_NO_WAIT)
			printf("no wait\n");
		else
			printf("straggler %s, %s; %u waits, %.3f ms\n", rank_name(r, rr->straggler),
			       round_verdict_name(rr->verdict), rr->waits, rr->waited_ns / 1e6);
	}
	if (s >= 0)
		printf("collective straggler: %s\n", r->rank_names[s]);
}

/* A bound, or null when it is unknown (an unsynced clock). */
static void json_bound(struct json *j, const char *key, int64_t bound)
{
	if (bound == CLUSTER_BOUND_UNKNOWN)
		json_null(j, key);
	else
		json_int(j, key, bound);
}

static void json_ranks(struct json *j, const struct merge_result *r)
{
	const struct cluster_wait *w = r->wait;
	uint64_t rounds = cluster_wait_rounds(w);
	int s = straggler(r);
	uint32_t i;

	json_uint(j, "rounds", rounds);
	if (s >= 0)
		json_str(j, "straggler", r->rank_names[s]);
	else
		json_null(j, "straggler");
	json_arr_begin(j, "ranks");
	for (i = 0; i < cluster_wait_nranks(w) && i < r->nranks; i++) {
		const struct rank_wait *rw = cluster_wait_rank(w, i);

		json_obj_begin(j, NULL);
		json_str(j, "name", r->rank_names[i]);
		json_uint(j, "blocks", rw->blocks);
		json_uint(j, "attributed", rw->attributed);
		json_int(j, "wait_ns", rw->wait_ns);
		json_int(j, "waited_on_ns", rw->waited_on_ns);
		json_uint(j, "last", rw->last);
		json_double(j, "last_share", rounds ? (double)rw->last / rounds : 0.0);
		json_uint(j, "certain", rw->certain);
		json_uint(j, "ambiguous", rw->ambiguous);
		json_uint(j, "inconsistent", rw->inconsistent);
		json_uint(j, "transit", rw->transit);
		if (rw->sent) {
			json_int(j, "last_send_ns", rw->last_send_ns);
			json_bound(j, "last_send_bound_ns", rw->last_send_bound_ns);
		}
		if (rw->received) {
			json_int(j, "last_recv_ns", rw->last_recv_ns);
			json_bound(j, "last_recv_bound_ns", rw->last_recv_bound_ns);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void print_text(const struct merge_result *r)
{
	const struct cluster_counts *c = cluster_counts(r->match);
	struct cluster_clock_check ck;
	unsigned int a, b;

	printf("%llu events from %u hosts over %.6f s, %llu arrows\n",
	       (unsigned long long)r->events, r->ninputs,
	       r->events ? (r->last_ns - r->first_ns) / 1e9 : 0.0,
	       (unsigned long long)r->flows);
	for (a = 0; a < r->ninputs; a++) {
		const struct merge_input_stats *s = &r->inputs[a];

		printf("  %-16s %10llu events", s->name, (unsigned long long)s->events);
		if (s->max_bound_ns != CLUSTER_BOUND_UNKNOWN)
			printf(", bound up to %.3f us", s->max_bound_ns / 1e3);
		else
			printf(", bound unknown");
		if (!s->logical)
			printf(", CLOCK_MONOTONIC (not logical time: not comparable)");
		if (s->late)
			printf(", %llu out of order", (unsigned long long)s->late);
		printf("\n");
	}
	printf("messages: %llu sends, %llu receives, %llu matched, %llu receives unmatched\n",
	       (unsigned long long)c->sends, (unsigned long long)c->recvs,
	       (unsigned long long)c->matched, (unsigned long long)c->unmatched_recvs);
	for (a = 0; a < r->ninputs; a++)
		for (b = a + 1; b < r->ninputs; b++) {
			const struct cluster_pair *ab = cluster_pair(r->match, a, b);
			const struct cluster_pair *ba = cluster_pair(r->match, b, a);

			char claim[48] = "bounds unknown", unknown[48] = "";

			if (!cluster_check_pair(r->match, a, b, &ck))
				continue;
			if (ck.claim_ns != CLUSTER_BOUND_UNKNOWN)
				snprintf(claim, sizeof(claim), "bounds claim +-%.3f us", ck.claim_ns / 1e3);
			if (ck.unknown)
				snprintf(unknown, sizeof(unknown), ", %llu of unknown bound",
					 (unsigned long long)ck.unknown);
			printf("  %s-%s: offset(%s)-offset(%s) in [%+.3f, %+.3f] us, width %.3f us, midpoint %+.3f us; %s; %llu violations, %llu inversions%s%s\n",
			       r->inputs[a].name, r->inputs[b].name,
			       r->inputs[b].name, r->inputs[a].name,
			       ck.lo_ns / 1e3, ck.hi_ns / 1e3, (ck.hi_ns - ck.lo_ns) / 1e3,
			       (ck.lo_ns + ck.hi_ns) / 2e3, claim,
			       (unsigned long long)ck.violations,
			       (unsigned long long)(ab->inversions + ba->inversions), unknown,
			       ck.lying ? "  LYING" : "");
		}
	print_waits(r);
	print_rounds(r);
}

static void json_pair_dir(struct json *j, const char *key, const struct cluster_pair *p)
{
	json_obj_begin(j, key);
	json_uint(j, "matched", p->matched);
	if (p->matched)
		json_int(j, "min_owd_ns", p->min_owd_ns);
	json_uint(j, "violations", p->violations);
	json_uint(j, "ambiguous", p->ambiguous);
	json_uint(j, "inversions", p->inversions);
	json_uint(j, "unknown", p->unknown);
	json_obj_end(j);
}

static void json_rounds(struct json *j, const struct merge_result *r)
{
	const struct cluster_round *cr = r->rounds;
	size_t n = cluster_round_count(cr), k;
	int64_t s = collective_straggler(r);
	uint32_t i;

	json_obj_begin(j, "collectives");
	json_uint(j, "rounds", n);
	json_uint(j, "certain", cluster_round_total(cr, ROUND_CERTAIN));
	json_uint(j, "ambiguous", cluster_round_total(cr, ROUND_AMBIGUOUS));
	json_uint(j, "no_wait", cluster_round_total(cr, ROUND_NO_WAIT));
	json_uint(j, "unpaired", cluster_round_unpaired(cr));
	json_uint(j, "late_slices", cluster_round_late(cr));
	json_uint(j, "unplaced_waits", cluster_round_unplaced(cr));
	if (s >= 0)
		json_str(j, "straggler", r->rank_names[s]);
	else
		json_null(j, "straggler");
	json_arr_begin(j, "ranks");
	for (i = 0; i < r->nranks; i++) {
		uint64_t c = cluster_round_straggler_of(cr, i, ROUND_CERTAIN);
		uint64_t a = cluster_round_straggler_of(cr, i, ROUND_AMBIGUOUS);

		if (!(c + a))
			continue;
		json_obj_begin(j, NULL);
		json_str(j, "name", r->rank_names[i]);
		json_uint(j, "certain", c);
		json_uint(j, "ambiguous", a);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "by_round");
	for (k = 0; k < n; k++) {
		const struct round_result *rr = cluster_round_get(cr, k);

		json_obj_begin(j, NULL);
		json_str(j, "group", cluster_round_group(cr, rr->group));
		json_uint(j, "seq", rr->seq);
		json_str(j, "op", cluster_round_group(cr, rr->op));
		json_uint(j, "ranks", rr->nranks);
		json_uint(j, "waits", rr->waits);
		json_int(j, "waited_ns", rr->waited_ns);
		json_int(j, "begin_ns", rr->begin_ns);
		json_int(j, "end_ns", rr->end_ns);
		if (rr->straggler >= 0)
			json_str(j, "straggler", rank_name(r, rr->straggler));
		else
			json_null(j, "straggler");
		json_str(j, "verdict", round_verdict_name(rr->verdict));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void print_json(const struct merge_result *r)
{
	const struct cluster_counts *c = cluster_counts(r->match);
	struct cluster_clock_check ck;
	struct json j;
	unsigned int a, b, lying = 0;
	uint64_t violations = 0;

	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_uint(&j, "events", r->events);
	json_uint(&j, "flows", r->flows);
	json_int(&j, "first_ns", r->first_ns);
	json_int(&j, "last_ns", r->last_ns);
	json_arr_begin(&j, "hosts");
	for (a = 0; a < r->ninputs; a++) {
		const struct merge_input_stats *s = &r->inputs[a];

		json_obj_begin(&j, NULL);
		json_str(&j, "name", s->name);
		json_uint(&j, "events", s->events);
		json_uint(&j, "late", s->late);
		json_bool(&j, "logical", s->logical);
		json_bound(&j, "max_bound_ns", s->max_bound_ns);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_begin(&j, "messages");
	json_uint(&j, "sends", c->sends);
	json_uint(&j, "recvs", c->recvs);
	json_uint(&j, "matched", c->matched);
	json_uint(&j, "unmatched_recvs", c->unmatched_recvs);
	json_obj_end(&j);
	json_arr_begin(&j, "pairs");
	for (a = 0; a < r->ninputs; a++)
		for (b = a + 1; b < r->ninputs; b++) {
			const struct cluster_pair *ab = cluster_pair(r->match, a, b);
			const struct cluster_pair *ba = cluster_pair(r->match, b, a);
			bool both = cluster_check_pair(r->match, a, b, &ck);

			if (!ab->matched && !ba->matched)
				continue;
			json_obj_begin(&j, NULL);
			json_str(&j, "a", r->inputs[a].name);
			json_str(&j, "b", r->inputs[b].name);
			json_pair_dir(&j, "a_to_b", ab);
			json_pair_dir(&j, "b_to_a", ba);
			if (both) {
				/* theta_b - theta_a, the clock errors' difference */
				json_int(&j, "offset_lo_ns", ck.lo_ns);
				json_int(&j, "offset_hi_ns", ck.hi_ns);
				json_int(&j, "width_ns", ck.hi_ns - ck.lo_ns);
				json_int(&j, "midpoint_ns", (ck.lo_ns + ck.hi_ns) / 2);
				json_bound(&j, "claimed_bound_ns", ck.claim_ns);
				json_bool(&j, "lying", ck.lying);
				lying += ck.lying;
			}
			json_obj_end(&j);
		}
	json_arr_end(&j);
	/* All ordered pairs, a host with itself too: its clock against itself. */
	violations = 0;
	for (a = 0; a < r->ninputs; a++)
		for (b = 0; b < r->ninputs; b++)
			violations += cluster_pair(r->match, a, b)->violations;
	json_uint(&j, "lying_pairs", lying);
	json_ranks(&j, r);
	json_rounds(&j, r);
	json_uint(&j, "violations", violations);
	json_obj_end(&j);
	json_end(&j);
}

static void prom_rounds(struct prom *pr, const struct merge_result *r)
{
	static const enum round_verdict verdicts[] = { ROUND_CERTAIN, ROUND_AMBIGUOUS };
	unsigned int v;
	uint32_t i;

	for (i = 0; i < r->nranks; i++)
		for (v = 0; v < 2; v++) {
			uint64_t n = cluster_round_straggler_of(r->rounds, i, verdicts[v]);
			char labels[512] = "";

			if (!n)
				continue;
			prom_label(labels, sizeof(labels), "rank", r->rank_names[i]);
			prom_label(labels, sizeof(labels), "verdict",
				   round_verdict_name(verdicts[v]));
			prom_sample(pr, "lclk_cluster_collective_straggler_rounds_total", labels,
				    n);
		}
}

static int write_prom(const char *path, const struct merge_result *r)
{
	struct cluster_clock_check ck;
	unsigned int a, b;
	struct prom pr;
	int err = prom_begin(&pr, path);

	if (err)
		return err;
	prom_family(&pr, "lclk_cluster_pair_violations_total", "counter",
		    "Messages received before they were sent by more than both hosts' bounds.");
	prom_family(&pr, "lclk_cluster_pair_lying", "gauge",
		    "1 when a message of the pair was received before it was sent by more than its ends' bounds.");
	prom_family(&pr, "lclk_cluster_pair_unknown_bound_total", "counter",
		    "Messages with an end of unknown bound (an unsynced clock): never violations.");
	prom_family(&pr, "lclk_cluster_pair_certified_width_ns", "gauge",
		    "Width of the interval the pair's traffic allows for its clocks' relative error.");
	prom_family(&pr, "lclk_cluster_pair_claimed_bound_ns", "gauge",
		    "Widest sum of the pair's published bounds over its messages of known bound.");
	for (a = 0; a < r->ninputs; a++)
		for (b = a + 1; b < r->ninputs; b++) {
			char labels[512] = "";

			if (!cluster_check_pair(r->match, a, b, &ck))
				continue;
			prom_label(labels, sizeof(labels), "a", r->inputs[a].name);
			prom_label(labels, sizeof(labels), "b", r->inputs[b].name);
			prom_sample(&pr, "lclk_cluster_pair_violations_total", labels, ck.violations);
			prom_sample(&pr, "lclk_cluster_pair_lying", labels, ck.lying);
			prom_sample(&pr, "lclk_cluster_pair_unknown_bound_total", labels, ck.unknown);
			prom_sample(&pr, "lclk_cluster_pair_certified_width_ns", labels,
				    ck.hi_ns - ck.lo_ns);
			if (ck.claim_ns != CLUSTER_BOUND_UNKNOWN)
				prom_sample(&pr, "lclk_cluster_pair_claimed_bound_ns", labels,
					    ck.claim_ns);
		}
	/* After the pairs' samples: a family's samples together, under its own header. */
	prom_family(&pr, "lclk_cluster_collective_straggler_rounds_total", "counter",
		    "Collectives (group, seq) whose waits named the rank their straggler, by verdict.");
	prom_rounds(&pr, r);
	return prom_commit(&pr);
}

int cmd_trace_merge_run(int argc, char **argv, struct cli_global *g)
{
	enum { O_WINDOW = 0x100, O_PROM_OUT, O_LINK, O_MIN_WAIT };
	static const struct option opts[] = {
		{ "output",	required_argument, NULL, 'o' },
		{ "window",	required_argument, NULL, O_WINDOW },
		{ "link",	required_argument, NULL, O_LINK },
		{ "min-wait",	required_argument, NULL, O_MIN_WAIT },
		{ "prom-out",	required_argument, NULL, O_PROM_OUT },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct merge_opts o = { .window_ns = 0 };
	const char *out = NULL, *prom_out = NULL, *err_path;
	struct merge_result res;
	long long v;
	int opt, code = -1, err;

	/*
	 * 0, not 1: glibc then starts afresh, permuting, so that options may
	 * follow the inputs ("merge *.pftrace -o all.pftrace"); lclkctl's own
	 * parse left it stopping at the first argument that is not an option.
	 */
	optind = 0;
	while ((opt = cli_getopt(argc, argv, "o:" CLI_COMMON_SHORTOPTS, opts,
				 &cmd_trace_merge, g, &code)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case O_WINDOW:
		case O_LINK:
		case O_MIN_WAIT:
			if (!cli_parse_duration_ns(&cmd_trace_merge, cli_opt_name(opts, opt), optarg, &v))
				return EXIT_USAGE;
			if (v <= 0)
				return cli_usage_error(&cmd_trace_merge, "%s: '%s' is too short",
						       cli_opt_name(opts, opt), optarg);
			if (opt == O_WINDOW)
				o.window_ns = v;
			else if (opt == O_LINK)
				o.link_ns = v;
			else
				o.block_ns = v;
			break;
		case O_PROM_OUT:
			prom_out = optarg;
			break;
		}
	}
	if (code >= 0)
		return code;
	if (optind >= argc)
		return cli_usage_error(&cmd_trace_merge, "no input traces");
	err = trace_merge((const char *const *)argv + optind, argc - optind, out, &o,
			  &res, &err_path);
	if (err) {
		fprintf(stderr, "lclkctl trace merge: %s: %s\n", err_path ? err_path : "merging",
			err == -EBADMSG ? "not a Perfetto trace, or truncated" : strerror(-err));
		merge_result_free(&res);
		return EXIT_FAIL;
	}
	if (g->json)
		print_json(&res);
	else
		print_text(&res);
	if (prom_out) {
		err = write_prom(prom_out, &res);
		if (err) {
			fprintf(stderr, "lclkctl trace merge: %s: %s\n", prom_out, strerror(-err));
			code = EXIT_FAIL;
		}
	}
	merge_result_free(&res);
	return code < 0 ? EXIT_OK : code;
}
