// SPDX-License-Identifier: GPL-2.0
/* Slave-only ordinary clock: BMCA, Sync/Follow_Up, E2E delay. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock_offset.h"
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
/*
 * logMinDelayReqInterval values a Delay_Resp may set, 1/1024 s to 48 days,
 * as ptp4l takes them; others, and the 0x7f of a unicast Delay_Resp, leave
 * the interval as it was.
 */
#define DREQ_LOG_MIN		(-10)
#define DREQ_LOG_MAX		22
#define NS_PER_SEC		1000000000LL

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
			    : NS_PER_SEC;
}

int64_t ptp_slave_delay_req_interval(const struct ptp_slave *s)
{
	int8_t l = s->dreq_log_interval;

	return l >= 0 ? NS_PER_SEC << l : NS_PER_SEC >> -l;
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

/* A new master: nothing measured or learnt from the last one applies. */
static void forget_exchange(struct ptp_slave *s)
{
	s->have_sync = s->sync_complete = s->fup_pending = false;
	s->dreq_due = s->dreq_pending = false;
	s->next_pair_at = 0;
	s->dreq_log_interval = 0;
	s->have_exchange = false;
	s->ndelays = s->delay_pos = 0;
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
	r = ptp_net_send_event(&s->net, buf, (size_t)len, &s->t3, &s->t3_err, &s->t3_rt,
			       &s->t3_rt_err);
	if (r) {
		if (s->verbose >= 1)
			fprintf(stderr, "%s: Delay_Req not sent: %s\n", s->name, strerror(-r));
		return;
	}
	s->dreq_pending = true;
	s->t1_at_dreq = s->pair_t1;
	s->t2_at_dreq = s->pair_t2;
	s->t2_err_at_dreq = s->pair_t2_err;
	s->t2_rt_at_dreq = s->pair_t2_rt;
	s->t2_rt_err_at_dreq = s->pair_t2_rt_err;
}

/* Uniform in [0, 1). */
static double uniform(struct ptp_slave *s)
{
	return (double)rand_r(&s->seed) / ((double)RAND_MAX + 1);
}

/*
 * The earliest Sync the next Delay_Req may pair with, after one paired
 * with the Sync received at t2: G Sync intervals later (see ptp_slave.h),
 * less half an interval for the Syncs' jitter.
 */
static void draw_next_pair(struct ptp_slave *s, int64_t t2)
{
	int64_t sync = ptp_slave_sync_interval(s);
	int64_t ratio = ptp_slave_delay_req_interval(s) / sync;
	int64_t g = 1;

	if (ratio > 1)
		g = ratio / 2 + (int64_t)(uniform(s) * (double)(ratio + 1));
	s->next_pair_at = t2 + g * sync - sync / 2;
}

/*
 * Pair the Sync just completed with a Delay_Req, due at a random time
 * within min(Sync interval, DELAY_REQ_MAX_WAIT_NS).
 */
static void schedule_delay_req(struct ptp_slave *s, int64_t now)
{
	int64_t wait = ptp_slave_sync_interval(s);

	draw_next_pair(s, s->t2);
	if (wait > DELAY_REQ_MAX_WAIT_NS)
		wait = DELAY_REQ_MAX_WAIT_NS;
	s->pair_t1 = s->t1;
	s->pair_t2 = s->t2;
	s->pair_t2_err = s->t2_err;
	s->pair_t2_rt = s->t2_rt;
	s->pair_t2_rt_err = s->t2_rt_err;
	s->dreq_due = true;
	s->dreq_at = now + (int64_t)(uniform(s) * (double)wait);
}

static int cmp_s64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Median of the last exchanges' mean path delays. */
static int64_t filtered_delay(const struct ptp_slave *s)
{
	int64_t d[PTP_DELAY_FILTER];
	unsigned int n = s->ndelays;

	memcpy(d, s->delays, n * sizeof(d[0]));
	qsort(d, n, sizeof(d[0]), cmp_s64);
	return n % 2 ? d[n / 2] : d[n / 2 - 1] + (d[n / 2] - d[n / 2 - 1]) / 2;
}

/* The last Sync with the last exchange's path delay and upper limit. */
static void sync_sample(const struct ptp_slave *s, struct ptp_sample *out)
{
	out->lo_ns = s->t1 - s->t2;
	out->lo_at = s->t2;
	out->lo_err = s->t2_err;
	out->lo_rt = s->t2_rt;
	out->lo_rt_err = s->t2_rt_err;
	out->hi_ns = s->hi_ns;
	out->hi_at = s->hi_at;
	out->hi_err = s->hi_err;
	out->hi_rt = s->hi_rt;
	out->hi_rt_err = s->hi_rt_err;
	out->delay_ns = filtered_delay(s);
	out->own_delay = false;
	out->offset_ns = out->lo_ns + out->delay_ns;
	out->base_ns = s->t2;
	out->master_gen = s->master_gen;
}

/* Returns true with a sample in *out. */
static bool sync_done(struct ptp_slave *s, struct ptp_sample *out)
{
	int64_t now = monotonic_ns();

	s->sync_complete = true;
	s->fup_pending = false;
	/*
	 * A Sync that waited in the socket queue is history, neither a
	 * sample nor paired with a Delay_Req: the two clocks' rates differ,
	 * and the pair must be close in time for the round trip to cancel
	 * the offset.
	 */
	if (now - s->t2 > SYNC_FRESH_NS)
		return false;
	if (!out)
		return false;	/* idle: followed, but no Delay_Req goes out */
	if (!s->dreq_due && s->t2 >= s->next_pair_at &&
	    (!s->dreq_pending || now - s->t3 > DELAY_RESP_TIMEOUT_NS)) {
		schedule_delay_req(s, now);
		return false;	/* its sample comes with the Delay_Resp */
	}
	if (!s->have_exchange)
		return false;
	sync_sample(s, out);
	return true;
}

/* Sequence ids are 16-bit and wrap: a is after b if 1..32767 ahead. */
static bool seq_after(uint16_t a, uint16_t b)
{
	uint16_t d = (uint16_t)(a - b);

	return d && d < 0x8000;
}

static bool on_sync(struct ptp_slave *s, const struct ptp_msg *m, const struct ptp_rx *rx,
		    struct ptp_sample *out)
{
	if (!rx->have_ts) {
		reject(s, m, true, "Sync without a receive timestamp");
		return false;
	}
	if (s->have_sync && !seq_after(m->h.seq, s->sync_seq)) {
		reject(s, m, true, "unexpected sequence id (not after the last Sync)");
		return false;
	}
	s->have_sync = true;
	s->sync_complete = false;
	s->sync_seq = m->h.seq;
	s->sync_log_interval = m->h.log_interval;
	s->t2 = rx->ts_mono;
	s->t2_err = rx->ts_err;
	s->t2_rt = rx->ts_rt;
	s->t2_rt_err = rx->ts_rt_err;
	s->t1 = ptp_correction_ns(m->h.correction);
	if (m->h.flags & PTP_FLAG_TWO_STEP) {
		s->fup_pending = true;
		return false;
	}
	s->t1 += ptp_ts_ns(&m->origin);
	return sync_done(s, out);
}

static bool on_follow_up(struct ptp_slave *s, const struct ptp_msg *m, struct ptp_sample *out)
{
	if (!s->fup_pending) {
		reject(s, m, true, "Follow_Up without a two-step Sync");
		return false;
	}
	if (m->h.seq != s->sync_seq) {
		reject(s, m, true, "Follow_Up sequence id does not match the Sync");
		return false;
	}
	s->t1 += ptp_ts_ns(&m->origin) + ptp_correction_ns(m->h.correction);
	return sync_done(s, out);
}

/*
 * A Delay_Resp's logMessageInterval is the master's logMinDelayReqInterval.
 * A new one applies from the Delay_Req just answered on, which was sent
 * before it was known.
 */
static void learn_delay_req_interval(struct ptp_slave *s, const struct ptp_msg *m)
{
	int8_t l = m->h.log_interval;

	if (l == s->dreq_log_interval || l < DREQ_LOG_MIN || l > DREQ_LOG_MAX)
		return;
	s->dreq_log_interval = l;
	draw_next_pair(s, s->t2_at_dreq);
	if (s->verbose >= 1)
		fprintf(stderr, "%s: minimum Delay_Req interval 2^%d s\n", s->name, l);
}

static void record_exchange(struct ptp_slave *s, int64_t hi, int64_t delay)
{
	s->have_exchange = true;
	s->hi_ns = hi;
	s->hi_at = s->t3;
	s->hi_err = s->t3_err;
	s->hi_rt = s->t3_rt;
	s->hi_rt_err = s->t3_rt_err;
	s->delays[s->delay_pos] = delay;
	s->delay_pos = (s->delay_pos + 1) % PTP_DELAY_FILTER;
	if (s->ndelays < PTP_DELAY_FILTER)
		s->ndelays++;
}

/* Returns true when the exchange completed into *out. */
static bool on_delay_resp(struct ptp_slave *s, const struct ptp_msg *m,
			  struct ptp_sample *out)
{
	int64_t t4, lo, hi;

	if (!ptp_port_id_eq(&m->delay_resp.requester, &s->self))
		return false;	/* another slave's */
	if (!s->dreq_pending || m->h.seq != s->dreq_seq) {
		reject(s, m, true, "Delay_Resp with an unexpected sequence id");
		return false;
	}
	s->dreq_pending = false;
	learn_delay_req_interval(s, m);
	t4 = ptp_ts_ns(&m->delay_resp.receive) - ptp_correction_ns(m->h.correction);
	lo = s->t1_at_dreq - s->t2_at_dreq;	/* master - slave - forward delay */
	hi = t4 - s->t3;			/* master - slave + backward delay */
	if (hi < lo) {
		reject(s, m, true, "negative mean path delay: timestamps are inconsistent");
		return false;
	}
	record_exchange(s, hi, (hi - lo) / 2);
	if (!out)
		return false;	/* idle: the last measurement's, late */
	out->lo_ns = lo;
	out->lo_at = s->t2_at_dreq;
	out->lo_err = s->t2_err_at_dreq;
	out->lo_rt = s->t2_rt_at_dreq;
	out->lo_rt_err = s->t2_rt_err_at_dreq;
	out->hi_ns = hi;
	out->hi_at = s->t3;
	out->hi_err = s->t3_err;
	out->hi_rt = s->t3_rt;
	out->hi_rt_err = s->t3_rt_err;
	out->delay_ns = (hi - lo) / 2;
	out->own_delay = true;
	out->offset_ns = lo + out->delay_ns;
	out->base_ns = s->t2_at_dreq + (s->t3 - s->t2_at_dreq) / 2;
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
		return on_sync(s, m, rx, out);
	if (m->h.type == PTP_FOLLOW_UP)
		return on_follow_up(s, m, out);
	return on_delay_resp(s, m, out);
}

/* Measuring into out, or idle (out NULL: no Delay_Req goes out). */
static int run(struct ptp_slave *s, int64_t deadline, struct ptp_sample *out)
{
	uint8_t buf[PTP_MAX_MSG_LEN + 64];

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
			/* Not called in time (the burst had ended): too late to pair. */
			if (now - s->dreq_at <= SYNC_FRESH_NS)
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
