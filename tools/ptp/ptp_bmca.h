/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Best master clock choice for a slave-only ordinary clock (IEEE 1588-2019
 * 9.3): foreign-master records fed by Announce messages, their
 * qualification (9.3.2.5: FOREIGN_MASTER_THRESHOLD announces within
 * FOREIGN_MASTER_TIME_WINDOW announce intervals), their expiry after
 * announceReceiptTimeout intervals of silence, and the dataset comparison
 * (9.3.4) among the qualified ones. A master that stops is dropped when its
 * record expires, so the next best takes over.
 */
#ifndef LCLK_PTP_BMCA_H
#define LCLK_PTP_BMCA_H

#include <stdint.h>

#include "ptp_msg.h"

#define PTP_FOREIGN_MASTER_THRESHOLD	2
#define PTP_FOREIGN_MASTER_WINDOW	4	/* announce intervals */
#define PTP_ANNOUNCE_RECEIPT_TIMEOUT	3	/* announce intervals */
#define PTP_MAX_FOREIGN			8
#define PTP_MAX_ALLOW			8

struct ptp_foreign {
	struct ptp_port_id sender;
	struct ptp_announce ann;	/* the latest */
	uint16_t flags;			/* its header flags (timescale, UTC) */
	uint16_t last_seq;
	int8_t log_interval;		/* logMessageInterval of its announces */
	/* Receive times (monotonic ns) of the last THRESHOLD announces. */
	int64_t rx[PTP_FOREIGN_MASTER_THRESHOLD];
	unsigned int nrx;
};

struct ptp_bmca {
	uint8_t own_id[PTP_CLOCK_ID_LEN];
	struct ptp_foreign fm[PTP_MAX_FOREIGN];
	unsigned int n;
	/* Acceptable masters' clock identities; none listed: any. */
	uint8_t allow[PTP_MAX_ALLOW][PTP_CLOCK_ID_LEN];
	unsigned int nallow;
};

void ptp_bmca_init(struct ptp_bmca *b, const uint8_t *own_clock_id);

/*
 * Consider only Announces sent by this clock identity, and others listed
 * (IEEE 1588-2019 17.5, acceptable master table, by clock identity). The
 * only defence against a sender that claims a better clock than the real
 * master's. Returns 0, or -ENOSPC beyond PTP_MAX_ALLOW.
 */
int ptp_bmca_allow(struct ptp_bmca *b, const uint8_t *clock_id);

/*
 * Record an Announce (already decoded and checked for domain) received at
 * monotonic time now. Returns 0, or -EINVAL with a reason for an announce
 * that must not be considered: our own, from a sender not allowed,
 * stepsRemoved >= 255, a repeated or older sequence id, or no room for
 * another foreign master. A full table makes room for a sender better
 * (ptp_dataset_cmp) than its worst record by dropping that one, so that
 * senders announcing worse clocks cannot keep a better master out.
 */
int ptp_bmca_announce(struct ptp_bmca *b, const struct ptp_msg *m, int64_t now,
		      const char **reason);

/* Drop expired records, then return the best qualified one, or NULL. */
const struct ptp_foreign *ptp_bmca_best(struct ptp_bmca *b, int64_t now);

/* Announce interval of a record in ns (2^logMessageInterval s, clamped). */
int64_t ptp_announce_interval_ns(int8_t log_interval);

/*
 * Dataset comparison of two announces (9.3.4, figures 34-35, for a
 * receiver with a single port): < 0 if a is better, > 0 if b is, 0 if the
 * same master through the same port.
 */
int ptp_dataset_cmp(const struct ptp_foreign *a, const struct ptp_foreign *b);

#endif /* LCLK_PTP_BMCA_H */
