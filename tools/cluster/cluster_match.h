/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Matching TCP sends to receives across hosts, and what the matches say
 * about the hosts' clocks.
 *
 * Both ends of a connection number its bytes alike: the sender's
 * write_seq at a send and the receiver's copied_seq at a copy. A receive
 * of bytes [seq, seq + len) is matched to the send that carried its last
 * byte: the latest send it depends on. Data cannot be received before it
 * was sent, so every match bounds the receiver's clock error minus the
 * sender's from above by the measured one-way delay (receive exit minus
 * send entry); traffic both ways bounds it from both sides:
 *
 *	theta_B - theta_A in [-min OWD(B->A), +min OWD(A->B)]
 *
 * which the hosts' published bounds claim is inside [-(eA + eB), eA + eB].
 * Disjoint intervals mean one of the two clocks is outside its bound.
 */
#ifndef LCLK_CLUSTER_MATCH_H
#define LCLK_CLUSTER_MATCH_H

#include <stdbool.h>
#include <stdint.h>

#define CLUSTER_BOUND_UNKNOWN	INT64_MAX

/* A bound that bounds: known, and not negative (which no clock claims). */
static inline bool cluster_bound_known(int64_t b)
{
	return b >= 0 && b != CLUSTER_BOUND_UNKNOWN;
}

/*
 * eA + eB, or CLUSTER_BOUND_UNKNOWN when either is unknown (or negative:
 * no bound) or the sum would not fit: saturating, never wrapping into a
 * small bound.
 */
static inline int64_t cluster_bound_sum(int64_t a, int64_t b)
{
	if (!cluster_bound_known(a) || !cluster_bound_known(b) ||
	    a > CLUSTER_BOUND_UNKNOWN - 1 - b)
		return CLUSTER_BOUND_UNKNOWN;
	return a + b;
}

/* One end of a message. */
struct msg_end {
	uint32_t host;		/* the merge's input index */
	uint32_t rank;		/* the merge's process (host and pid) index */
	int64_t t_ns;		/* send: at entry; receive: at exit */
	int64_t bound_ns;	/* of the clock at t_ns */
	uint32_t seq, len;	/* TCP sequence range [seq, seq + len) */
	uint64_t id;		/* the merge's event id */
};

/* What the matches on one ordered host pair (sender -> receiver) show. */
struct cluster_pair {
	uint64_t matched;
	int64_t min_owd_ns;	/* min(receive - send) */
	int64_t max_bound_ns;	/* largest eA + eB over the matches whose bounds
				 * are known, CLUSTER_BOUND_UNKNOWN if none */
	uint64_t ambiguous;	/* orderings within the bounds: |OWD| <= eA + eB,
				 * or of unknown bound */
	uint64_t inversions;	/* received before sent, within the bounds */
	uint64_t violations;	/* received before sent by more than the bounds
				 * of that message's two ends */
	uint64_t unknown;	/* matches with an end's bound unknown: no
				 * violation, whatever their order */
};

struct cluster_counts {
	uint64_t sends, recvs, matched;
	uint64_t unmatched_recvs;	/* no send carried their last byte in time */
};

/* A match, as it is made. */
typedef void (*cluster_match_fn)(void *ctx, const struct msg_end *send,
				 const struct msg_end *recv);

struct cluster_match;

/*
 * Ends of a message further apart than horizon_ns in time of arrival (the
 * order the merge hands them over) are not matched.
 */
struct cluster_match *cluster_match_new(unsigned int nhosts, int64_t horizon_ns,
					cluster_match_fn fn, void *ctx);
void cluster_match_free(struct cluster_match *m);

/*
 * conn names the connection and direction of the bytes: the same on the
 * sender and the receiver. Returns 0 or -ENOMEM.
 */
int cluster_send(struct cluster_match *m, uint64_t conn, const struct msg_end *s);
int cluster_recv(struct cluster_match *m, uint64_t conn, const struct msg_end *r);

/* Drop what waited longer than the horizon before now_ns. */
void cluster_expire(struct cluster_match *m, int64_t now_ns);

const struct cluster_pair *cluster_pair(const struct cluster_match *m,
					unsigned int from, unsigned int to);
const struct cluster_counts *cluster_counts(const struct cluster_match *m);

/*
 * The passive clock check of hosts a and b: theta_b - theta_a is in
 * [lo, hi] (traffic both ways needed: false without), the bounds claim
 * [-claim, claim] (the widest of the messages whose bounds are known).
 * Lying when a message contradicts its own ends' bounds: received before
 * it was sent by more than them (a violation). With bounds alike that is
 * the two intervals being disjoint; with bounds that vary, each message is
 * held to its own, and one of unknown bound (an unsynced clock) proves
 * nothing either way and does not loosen the others' check.
 */
struct cluster_clock_check {
	int64_t lo_ns, hi_ns;
	int64_t claim_ns;
	bool lying;
	uint64_t violations;	/* both directions */
	uint64_t unknown;	/* matches of unknown bound, both directions */
};
bool cluster_check_pair(const struct cluster_match *m, unsigned int a,
			unsigned int b, struct cluster_clock_check *c);

#endif /* LCLK_CLUSTER_MATCH_H */
