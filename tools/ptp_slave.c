// SPDX-License-Identifier: GPL-2.0
/* Slave-only ordinary clock: BMCA, Sync/Follow_Up, E2E delay. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock_offset.h"
#include "ptp_msg.h"
#include "ptp_slave.h"

/* How often the port looks at its foreign masters while nothing comes. */
#define BMCA_TICK_NS		250000000LL
/* A Delay_Resp later than this is not coming: send a new Delay_Req. */
#define DELAY_RESP_TIMEOUT_NS	2000000000LL
/* A Sync received longer ago than this is history, not an exchange. */
#define SYNC_FRESH_NS		50000000LL
/*
 * Longest random wait from a Sync to its Delay_Req: the pair's offset is
 * widened by the drift the clocks may have over it (half of it, see
 * ptp_sample.base_ns).
 */
#define DELAY_REQ_MAX_WAIT_NS	125000000LL

int ptp_slave_open(struct ptp_slave *s, const char *ifname, enum ptp_net_transport t,
		   const char *ts, uint8_t domain, char *err, size_t errlen)
{
	int r;

	memset(s, 0, sizeof(*s));
	r = ptp_net_open(&s->net, ifname, t, ts, err, errlen);
	if (r)
		return r;
	ptp_net_clock_id(&s->net, s->self.clock_id);
	s->self.port = 1;
	s->domain = domain;
	s->seed = (unsigned int)monotonic_ns();
	ptp_bmca_init(&s->bmca, s->self.clock_id);
	return 0;
}

void ptp_slave_close(struct ptp_slave *s)
{
	ptp_net_close(&s->net);
}

int64_t ptp_slave_sync_interval(const struct ptp_slave *s)
{
	return s->have_sync ? ptp_announce_interval_ns(s->sync_log_interval)
			    : 1000000000LL;
}

static void reject(struct ptp_slave *s, const struct ptp_msg *m, bool decoded,
		   const char *reason)
{
	char id[40];

	s->rejected++;
	if (s->verbose < 1)
		return;
	if (!decoded) {
		fprintf(stderr, "%s: rejected a message: %s\n", s->name, reason);
		return;
	}
	ptp_port_id_str(&m->h.source, id, sizeof(id));
	fprintf(stderr, "%s: rejected %s seq %u from %s: %s\n", s->name,
		ptp_msg_type_name(m->h.type), m->h.seq, id, reason);
}

static void forget_exchange(struct ptp_slave *s)
{
	s->have_sync = s->sync_complete = s->fup_pending = false;
	s->dreq_due = s->dreq_pending = false;
}

/* Follow the best master; a change discards the exchange in progress. */
static void update_master(struct ptp_slave *s, int64_t now)
{
	const struct ptp_foreign *best = ptp_bmca_best(&s->bmca, now);
	char id[40];

	if (best && s->have_master && ptp_port_id_eq(&best->sender, &s->master.sender)) {
		s->master = *best;
		return;
	}
	if (!best && !s->have_master)
		return;
	s->have_master = best != NULL;
	if (best)
		s->master = *best;
	s->master_gen++;
	forget_exchange(s);
	if (s->verbose >= 1) {
		if (best)
			ptp_port_id_str(&best->sender, id, sizeof(id));
		fprintf(stderr, "%s: %s%s\n", s->name, best ? "new master " : "no master",
			best ? id : "");
	}
}

static bool from_master(const struct ptp_slave *s, const struct ptp_msg *m)
{
	return s->have_master && ptp_port_id_eq(&m->h.source, &s->master.sender);
}

static void send_delay_req(struct ptp_slave *s)
{
	uint8_t buf[PTP_MAX_MSG_LEN];
	struct ptp_msg m;
	int len, r;

	memset(&m, 0, sizeof(m));
	m.h.type = PTP_DELAY_REQ;
	m.h.domain = s->domain;
	m.h.source = s->self;
	m.h.seq = ++s->dreq_seq;
	m.h.control = 1;
	m.h.log_interval = 0x7f;
	len = ptp_msg_encode(&m, buf, sizeof(buf));
	r = ptp_net_send_event(&s->net, buf, (size_t)len, &s->t3, &s->t3_err);
	if (r) {
		if (s->verbose >= 1)
			fprintf(stderr, "%s: Delay_Req not sent: %s\n", s->name, strerror(-r));
		return;
	}
	s->dreq_pending = true;
	s->t1_at_dreq = s->pair_t1;
	s->t2_at_dreq = s->pair_t2;
	s->t2_err_at_dreq = s->pair_t2_err;
}

/* Uniform in [0, min(Sync interval, DELAY_REQ_MAX_WAIT_NS)). */
static int64_t delay_req_wait(struct ptp_slave *s)
{
	int64_t max = ptp_slave_sync_interval(s);

	if (max > DELAY_REQ_MAX_WAIT_NS)
		max = DELAY_REQ_MAX_WAIT_NS;
	return (int64_t)((double)rand_r(&s->seed) / ((double)RAND_MAX + 1) * (double)max);
}

static void sync_done(struct ptp_slave *s)
{
	int64_t now = monotonic_ns();

	s->sync_complete = true;
	s->fup_pending = false;
	/*
	 * A Sync that waited in the socket queue is not paired with a
	 * Delay_Req: the two clocks' rates differ, and the pair must be
	 * close in time for the round trip to cancel the offset.
	 */
	if (now - s->t2 > SYNC_FRESH_NS)
		return;
	s->pair_t1 = s->t1;
	s->pair_t2 = s->t2;
	s->pair_t2_err = s->t2_err;
	if (s->measuring && !s->dreq_due &&
	    (!s->dreq_pending || now - s->t3 > DELAY_RESP_TIMEOUT_NS)) {
		s->dreq_due = true;
		s->dreq_at = now + delay_req_wait(s);
	}
}

/* Sequence ids are 16-bit and wrap: a is after b if 1..32767 ahead. */
static bool seq_after(uint16_t a, uint16_t b)
{
	uint16_t d = (uint16_t)(a - b);

	return d && d < 0x8000;
}

static void on_sync(struct ptp_slave *s, const struct ptp_msg *m, const struct ptp_rx *rx)
{
	if (!rx->have_ts) {
		reject(s, m, true, "Sync without a receive timestamp");
		return;
	}
	if (s->have_sync && !seq_after(m->h.seq, s->sync_seq)) {
		reject(s, m, true, "unexpected sequence id (not after the last Sync)");
		return;
	}
	s->have_sync = true;
	s->sync_complete = false;
	s->sync_seq = m->h.seq;
	s->sync_log_interval = m->h.log_interval;
	s->t2 = rx->ts_mono;
	s->t2_err = rx->ts_err;
	s->t1 = ptp_correction_ns(m->h.correction);
	if (m->h.flags & PTP_FLAG_TWO_STEP) {
		s->fup_pending = true;
		return;
	}
	s->t1 += ptp_ts_ns(&m->origin);
	sync_done(s);
}

static void on_follow_up(struct ptp_slave *s, const struct ptp_msg *m)
{
	if (!s->fup_pending) {
		reject(s, m, true, "Follow_Up without a two-step Sync");
		return;
	}
	if (m->h.seq != s->sync_seq) {
		reject(s, m, true, "Follow_Up sequence id does not match the Sync");
		return;
	}
	s->t1 += ptp_ts_ns(&m->origin) + ptp_correction_ns(m->h.correction);
	sync_done(s);
}

/* Returns true when the exchange completed into *out. */
static bool on_delay_resp(struct ptp_slave *s, const struct ptp_msg *m,
			  struct ptp_sample *out)
{
	int64_t t4, ms, sm, mpd;

	if (!ptp_port_id_eq(&m->delay_resp.requester, &s->self))
		return false;	/* another slave's */
	if (!s->dreq_pending || m->h.seq != s->dreq_seq) {
		reject(s, m, true, "Delay_Resp with an unexpected sequence id");
		return false;
	}
	s->dreq_pending = false;
	if (!out)
		return false;	/* idle: the last measurement's, late */
	t4 = ptp_ts_ns(&m->delay_resp.receive) - ptp_correction_ns(m->h.correction);
	ms = s->t2_at_dreq - s->t1_at_dreq;	/* slave - master + forward delay */
	sm = t4 - s->t3;			/* master - slave + backward delay */
	mpd = (ms + sm) / 2;
	if (mpd < 0) {
		reject(s, m, true, "negative mean path delay: timestamps are inconsistent");
		return false;
	}
	out->delay_ns = mpd;
	out->offset_ns = (sm - ms) / 2;
	out->span_ns = s->t3 - s->t2_at_dreq;
	out->base_ns = s->t2_at_dreq + out->span_ns / 2;
	out->ts_err_ns = s->t2_err_at_dreq + s->t3_err;
	out->master_gen = s->master_gen;
	return true;
}

/* Context checks, then dispatch. Returns true with a completed sample. */
static bool handle(struct ptp_slave *s, const struct ptp_msg *m, const struct ptp_rx *rx,
		   int64_t now, struct ptp_sample *out)
{
	const char *reason;

	if (m->h.domain != s->domain) {
		reject(s, m, true, "wrong domain");
		return false;
	}
	if (m->h.sdo_id) {
		reject(s, m, true, "sdoId of another profile");
		return false;
	}
	switch (m->h.type) {
	case PTP_ANNOUNCE:
		if (ptp_bmca_announce(&s->bmca, m, now, &reason))
			reject(s, m, true, reason);
		update_master(s, now);
		return false;
	case PTP_SYNC:
	case PTP_FOLLOW_UP:
	case PTP_DELAY_RESP:
		if (!from_master(s, m))
			return false;	/* not the master we follow */
		break;
	default:
		return false;		/* other slaves' Delay_Req, management */
	}
	if (m->h.type == PTP_SYNC)
		on_sync(s, m, rx);
	else if (m->h.type == PTP_FOLLOW_UP)
		on_follow_up(s, m);
	else
		return on_delay_resp(s, m, out);
	return false;
}

/* Measuring into out, or idle (out NULL: no Delay_Req goes out). */
static int run(struct ptp_slave *s, int64_t deadline, struct ptp_sample *out)
{
	uint8_t buf[PTP_MAX_MSG_LEN + 64];

	s->measuring = out != NULL;
	if (!out)
		s->dreq_due = false;
	for (;;) {
		int64_t now = monotonic_ns(), until = now + BMCA_TICK_NS;
		struct ptp_rx rx;
		struct ptp_msg m;
		const char *reason;
		int r;

		update_master(s, now);
		if (s->dreq_due && now >= s->dreq_at) {
			s->dreq_due = false;
			send_delay_req(s);
		}
		if (now >= deadline)
			return -ETIMEDOUT;
		if (s->dreq_due && s->dreq_at < until)
			until = s->dreq_at;
		r = ptp_net_recv(&s->net, buf, sizeof(buf), until < deadline ? until : deadline, &rx);
		if (r == -ETIMEDOUT)
			continue;
		if (r)
			return r;
		r = ptp_msg_decode(buf, rx.len, &m, &reason);
		if (r) {
			reject(s, &m, r != -EBADMSG && r != -EPROTONOSUPPORT, reason);
			continue;
		}
		if (handle(s, &m, &rx, monotonic_ns(), out))
			return 0;
	}
}

int ptp_slave_run(struct ptp_slave *s, int64_t deadline, struct ptp_sample *out)
{
	return run(s, deadline, out);
}

int ptp_slave_idle(struct ptp_slave *s, int64_t deadline)
{
	return run(s, deadline, NULL);
}
