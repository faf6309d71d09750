/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A slave-only IEEE 1588-2019 ordinary clock with one port: it follows the
 * best master (ptp_bmca), pairs Sync with Follow_Up (two-step) or takes
 * the Sync's own timestamp (one-step), and runs the end-to-end delay
 * request-response mechanism. Each completed exchange gives a sample of
 * the master's time against CLOCK_MONOTONIC. It never adjusts any clock.
 *
 * A Delay_Req goes out at a random time within a Sync interval after a
 * Sync (IEEE 1588-2019 9.5.11.2 randomises Delay_Req timing), paired with
 * the last complete Sync, not as a reaction to the Follow_Up. With
 * software timestamps the time from a send stamp to the peer's receive
 * stamp depends on how long the sender had been idle: measured over veth
 * in a VM, about 0.5 us right after handling a packet and about 2 us
 * after tens of ms idle, the state the master's Sync timer fires in. A
 * Delay_Req sent at once would make that difference an asymmetry of the
 * path, an offset error no filter can see.
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

struct ptp_sample {
	int64_t offset_ns;	/* master - CLOCK_MONOTONIC at base_ns */
	int64_t delay_ns;	/* mean path delay of this exchange */
	/*
	 * Midway between the Sync's receipt and the Delay_Req's send, on
	 * CLOCK_MONOTONIC: the instant a constant frequency difference
	 * between the clocks cancels out of offset_ns at.
	 */
	int64_t base_ns;
	int64_t span_ns;	/* Sync receipt to Delay_Req send */
	int64_t ts_err_ns;	/* error of the local timestamps' conversion */
	unsigned int master_gen; /* ptp_slave.master_gen it was measured from */
};

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
	int8_t sync_log_interval;

	/* The last complete, fresh Sync: the next Delay_Req's pair. */
	int64_t pair_t1, pair_t2, pair_t2_err;

	/* The next Delay_Req, due at a random time after a Sync. */
	bool dreq_due;
	int64_t dreq_at;
	unsigned int seed;

	/* The outstanding Delay_Req. */
	bool dreq_pending;
	uint16_t dreq_seq;
	int64_t t1_at_dreq, t2_at_dreq, t2_err_at_dreq;
	int64_t t3, t3_err;

	unsigned int rejected;
	bool measuring;			/* in ptp_slave_run, not ptp_slave_idle */
};

int ptp_slave_open(struct ptp_slave *s, const char *ifname, enum ptp_net_transport t,
		   const char *ts, uint8_t domain, char *err, size_t errlen);
void ptp_slave_close(struct ptp_slave *s);

/*
 * Run the port until one exchange completes, or the monotonic deadline.
 * Returns 0 with *out, -ETIMEDOUT, or -errno of a socket error.
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

#endif /* LCLK_PTP_SLAVE_H */
