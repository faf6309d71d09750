/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A slave-only IEEE 1588-2019 ordinary clock with one port: it follows the
 * best master (ptp_bmca), pairs Sync with Follow_Up (two-step) or takes
 * the Sync's own timestamp (one-step), and runs the end-to-end delay
 * request-response mechanism. Each fresh Sync gives a sample of the
 * master's time against CLOCK_MONOTONIC. It never adjusts any clock.
 *
 * Delay_Reqs respect the master's minimum interval T, 2^logMinDelayReqInterval
 * s, which its Delay_Resps carry (IEEE 1588-2019 7.7.2.4, 9.5.11.2; 1 s,
 * the default profile's, until one came). Each pairs with a Sync, and the
 * next one's Sync comes G Sync intervals S later: G is 1 when T <= S, else
 * uniform in T/S/2..3T/S/2 (both intervals are powers of 2). Their mean
 * interval is then T, as 9.5.11.2 asks, and random; ptp4l draws it from
 * (0, 2T), but a spread of T/2 either side leaves fewer measurements
 * without a Delay_Req of their own (none, for polls 3T/2 or more apart).
 * A lost Sync only lengthens the gap. The first Delay_Req to a new master
 * pairs with its first Sync.
 *
 * A Delay_Req goes out at a random time within a Sync interval after its
 * Sync (at most DELAY_REQ_MAX_WAIT_NS), not as a reaction to the Sync or
 * Follow_Up. With software timestamps the time from a send stamp to the
 * peer's receive stamp depends on how long the sender had been idle:
 * measured over veth in a VM, about 0.5 us right after handling a packet
 * and about 2 us after tens of ms idle, the state the master's Sync timer
 * fires in. A Delay_Req sent at once would make that difference an
 * asymmetry of the path, an offset error no filter can see.
 *
 * Every fresh Sync gives a sample. One followed by its own Delay_Req gives
 * that exchange's offset and mean path delay. The others, as in ptp4l,
 * take the median path delay of the last exchanges: their offset is the
 * Sync's t1 - t2 plus that delay, and what bounds it is the Sync itself
 * (its path took no negative time) and the last Delay_Req (so did its).
 *
 * Every message is checked in context before use: domain, the default
 * profile's sdoId, the selected master as sender, sequence ids of Sync,
 * Follow_Up and Delay_Resp, Follow_Up only after a two-step Sync. A
 * rejected message is counted and, with verbose, explained on stderr.
 */
#ifndef LCLK_PTP_SLAVE_H
#define LCLK_PTP_SLAVE_H

#include <stdbool.h>
#include <stdint.h>

#include "ptp_bmca.h"
#include "ptp_net.h"

/*
 * What one Sync says of the master's time against CLOCK_MONOTONIC. Since
 * no path takes negative time, master - CLOCK_MONOTONIC was at least lo_ns
 * at lo_at (the Sync's t1 - t2) and at most hi_ns at hi_at (a Delay_Req's
 * t4 - t3), each up to its timestamps' conversion error off.
 */
struct ptp_sample {
	int64_t offset_ns;	/* estimate of master - CLOCK_MONOTONIC at base_ns */
	/*
	 * For an exchange, midway between the Sync's receipt and the
	 * Delay_Req's send: the instant a constant frequency difference
	 * between the clocks cancels out of offset_ns at. Else the receipt.
	 */
	int64_t base_ns;
	int64_t delay_ns;	/* mean path delay offset_ns assumes */
	bool own_delay;		/* delay_ns is this Sync's own exchange's */
	int64_t lo_ns, lo_at, lo_err;
	int64_t hi_ns, hi_at, hi_err;
	/*
	 * CLOCK_REALTIME at lo_at and hi_at, the system clock's readings
	 * (ptp_rx.ts_rt; error -1: not known).
	 */
	int64_t lo_rt, lo_rt_err, hi_rt, hi_rt_err;
	unsigned int master_gen; /* ptp_slave.master_gen it was measured from */
};

/* Mean path delays of the last exchanges, for the Syncs without one. */
#define PTP_DELAY_FILTER	9

struct ptp_slave {
	struct ptp_net net;
	struct ptp_bmca bmca;
	struct ptp_port_id self;
	uint8_t domain;
	int verbose;
	const char *name;		/* for messages: the source URL */

	bool have_master;
	struct ptp_foreign master;	/* a copy: BMCA records move */
	unsigned int master_gen;	/* bumped when the master changes */

	/* The last Sync, and whether it awaits its Follow_Up. */
	bool have_sync, sync_complete, fup_pending;
	uint16_t sync_seq;
	int64_t t1;			/* master time incl. corrections, ns */
	int64_t t2, t2_err;		/* receive time, CLOCK_MONOTONIC */
	int64_t t2_rt, t2_rt_err;	/* and CLOCK_REALTIME */
	int8_t sync_log_interval;

	/* The next Delay_Req, due at a random time after its Sync (pair_). */
	bool dreq_due;
	int64_t dreq_at;
	int64_t pair_t1, pair_t2, pair_t2_err, pair_t2_rt, pair_t2_rt_err;
	/* No Delay_Req pairs with a Sync received before this. */
	int64_t next_pair_at;
	int8_t dreq_log_interval;	/* the master's, from its Delay_Resps */
	unsigned int seed;

	/* The outstanding Delay_Req. */
	bool dreq_pending;
	uint16_t dreq_seq;
	int64_t t1_at_dreq, t2_at_dreq, t2_err_at_dreq, t2_rt_at_dreq, t2_rt_err_at_dreq;
	int64_t t3, t3_err, t3_rt, t3_rt_err;

	/* The last completed exchange: the upper limit for Syncs without one. */
	bool have_exchange;
	int64_t hi_ns, hi_at, hi_err, hi_rt, hi_rt_err;
	int64_t delays[PTP_DELAY_FILTER];	/* a ring, the oldest overwritten */
	unsigned int ndelays, delay_pos;

	unsigned int rejected;
};

int ptp_slave_open(struct ptp_slave *s, const char *ifname, enum ptp_net_transport t,
		   const char *ts, uint8_t domain, char *err, size_t errlen);
void ptp_slave_close(struct ptp_slave *s);

/*
 * Run the port until it has a sample, or the monotonic deadline. Returns 0
 * with *out, -ETIMEDOUT, or -errno of a socket error.
 */
int ptp_slave_run(struct ptp_slave *s, int64_t deadline, struct ptp_sample *out);

/*
 * Keep the port running between measurements, until the monotonic
 * deadline: Announces keep the master qualified, Syncs and Follow_Ups are
 * followed as they come, no Delay_Req is sent. A port left unread instead
 * loses its master to the announce receipt timeout and finds a backlog of
 * stale messages, from two sockets in no common order, at the next
 * measurement. Returns -ETIMEDOUT at the deadline, or -errno of a socket
 * error.
 */
int ptp_slave_idle(struct ptp_slave *s, int64_t deadline);

/* Interval between Syncs of the current master, ns (1 s until known). */
int64_t ptp_slave_sync_interval(const struct ptp_slave *s);

/* The master's minimum interval between Delay_Reqs, ns (1 s until known). */
int64_t ptp_slave_delay_req_interval(const struct ptp_slave *s);

#endif /* LCLK_PTP_SLAVE_H */
