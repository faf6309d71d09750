// SPDX-License-Identifier: GPL-2.0
/*
 * The transmit timestamp of a request is random, as chrony sends it: the
 * server echoes it as the origin timestamp, so a reply that does not carry
 * it was not an answer to us (an off-path attacker cannot guess 64 bits),
 * and our clock is not disclosed. The real send time stays here.
 *
 * Interleaved mode: a server's transmit timestamp is read before its reply
 * goes down its network stack, so in basic mode the reply's leg looks
 * longer than it is and the offset comes out low by half that send path
 * (a few microseconds even on a veth link). chronyd also keeps the kernel's
 * timestamp of when each reply really left and hands it over when the next
 * request names the exchange (struct ntp_request): that exchange then has
 * kernel timestamps at all four points. Its receive timestamps carry the
 * lowest bit set to say it can; other servers are asked in basic mode.
 *
 * Timestamps: the kernel's software timestamps (SO_TIMESTAMPING) are taken
 * when the packet leaves and arrives, without the scheduling delay of this
 * process, which makes the measured delay shorter and the offset less
 * noisy. They are CLOCK_REALTIME, so each is converted to CLOCK_MONOTONIC
 * with the REALTIME - MONOTONIC difference in force when it was taken,
 * tracked over the exchange across steps of REALTIME (realtime_track.h),
 * and then to the target clock by its model; the pairing error is
 * accounted for, and a stamp the track cannot place is not used. Without
 * kernel timestamps the target clock is read just before sendto() and just
 * after recvmsg(), which only widens the round trip.
 */
#include <errno.h>
#include <time.h>		/* before linux/errqueue.h, which needs timespec */
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/clock_offset.h"
#include "lib/net_tstamp.h"
#include "lib/timeout.h"
#include "ntp_client.h"
#include "ntp_sample.h"

static void addr_str(const struct sockaddr_storage *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN + 2] = "?", port[8] = "?";

	getnameinfo((const struct sockaddr *)a, sizeof(*a), host, sizeof(host),
		    port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, a->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static bool same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) &&
		       (!IN6_IS_ADDR_LINKLOCAL(&x->sin6_addr) ||
			x->sin6_scope_id == y->sin6_scope_id);
	}
	return false;
}

static void enable_timestamps(struct ntp_client *c)
{
	int on = 1;
	unsigned int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;

	/* ICMP errors (port or host unreachable) to the error queue. */
	if (c->addr.ss_family == AF_INET)
		setsockopt(c->fd, IPPROTO_IP, IP_RECVERR, &on, sizeof(on));
	else
		setsockopt(c->fd, IPPROTO_IPV6, IPV6_RECVERR, &on, sizeof(on));

	flags |= SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
		 SOF_TIMESTAMPING_OPT_TSONLY;
	if (!setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags))) {
		c->kernel_rx = c->kernel_tx = true;
		return;
	}
	flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	if (!setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)))
		c->kernel_rx = true;
}

/* 0 if there is a route to ai, else -errno. */
static int routable(const struct addrinfo *ai)
{
	int fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen))
		err = -errno;
	close(fd);
	return err;
}

int ntp_client_open(struct ntp_client *c, const char *host, const char *port,
		    char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res, *ai;
	char a[INET6_ADDRSTRLEN + 8];
	int rc, saved = 0;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "cannot resolve '%s': %s", host, gai_strerror(rc));
		return rc == EAI_SYSTEM ? -errno : -EHOSTUNREACH;
	}
	/*
	 * The first address there is a route to: connect() on a UDP socket
	 * sends nothing but fails without one (an AAAA record on an
	 * IPv4-only host). The socket we keep stays unconnected, so replies
	 * from elsewhere reach us to be reported rather than dropped.
	 */
	for (ai = res; ai; ai = ai->ai_next) {
		c->fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			saved = errno;
			continue;
		}
		saved = -routable(ai);
		if (!saved) {
			memcpy(&c->addr, ai->ai_addr, ai->ai_addrlen);
			c->addrlen = ai->ai_addrlen;
			break;
		}
		close(c->fd);
		c->fd = -1;
	}
	freeaddrinfo(res);
	if (c->fd < 0) {
		snprintf(err, errlen, "%s: no route to any of its addresses: %s", host,
			 strerror(saved));
		return -saved;
	}
	enable_timestamps(c);
	addr_str(&c->addr, a, sizeof(a));
	snprintf(c->name, sizeof(c->name), "%s", a);
	return 0;
}

void ntp_client_close(struct ntp_client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static void reject(struct ntp_client *c, struct ntp_exchange *x,
		   const char *from, enum ntp_verdict v)
{
	x->rejected++;
	fprintf(stderr, "lclkctl: ntp://%s: rejected a packet from %s: %s\n",
		c->name, from, ntp_verdict_str(v));
}

/* Slot of a transmit timestamp we sent, or -1. */
static int sent_slot(const struct ntp_client *c, uint64_t ts)
{
	unsigned int i, n = c->nsent < NTP_CLIENT_HISTORY ? c->nsent : NTP_CLIENT_HISTORY;

	for (i = 0; i < n; i++)
		if (c->sent[i] == ts)
			return i;
	return -1;
}

/*
 * Read one message from the error queue: our transmit timestamp (stored in
 * *tx_rt when its id is want_id) or an ICMP error about the server
 * (returned as -errno). 1 if something was read, 0 if the queue is empty.
 */
static int read_errqueue(struct ntp_client *c, uint32_t want_id, int64_t *tx_rt)
{
	char control[512];
	struct sockaddr_storage from;
	struct iovec iov = { .iov_base = &from, .iov_len = 0 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct scm_timestamping *stamp = NULL;
	struct sock_extended_err *ee = NULL;
	struct cmsghdr *cm;

	if (recvmsg(c->fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
		return 0;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPING)
			stamp = (void *)CMSG_DATA(cm);
		else if ((cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_RECVERR) ||
			 (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_RECVERR))
			ee = (void *)CMSG_DATA(cm);
	}
	if (!ee)
		return 1;
	if (ee->ee_origin == SO_EE_ORIGIN_TIMESTAMPING) {
		if (stamp && ee->ee_data == want_id && ee->ee_info == SCM_TSTAMP_SND)
			*tx_rt = timespec_ns(&stamp->ts[0]);
		return 1;
	}
	if (ee->ee_origin == SO_EE_ORIGIN_ICMP || ee->ee_origin == SO_EE_ORIGIN_ICMP6)
		return -(int)ee->ee_errno;
	return 1;
}

/*
 * Handle one datagram. Returns true when it was the reply to the request
 * carrying xmt (usable or not), false when it was rejected or ignored.
 */
static bool take_datagram(struct ntp_client *c, const uint8_t *buf, ssize_t len,
			  const struct sockaddr_storage *from, const struct ntp_request *rq,
			  struct ntp_exchange *x)
{
	char who[INET6_ADDRSTRLEN + 8];
	struct ntp_packet p;
	enum ntp_verdict v;
	bool interleaved;
	int slot;

	addr_str(from, who, sizeof(who));
	if (!same_addr(from, &c->addr)) {
		reject(c, x, who, NTP_BAD_SOURCE);
		return false;
	}
	v = ntp_decode(buf, (size_t)len, &p);
	if (v == NTP_OK)
		v = ntp_validate_reply(&p, rq, &interleaved);
	if (v == NTP_BOGUS_ORIGIN && (slot = sent_slot(c, p.origin_ts)) >= 0)
		v = c->answered[slot] ? NTP_DUPLICATE : NTP_BOGUS_ORIGIN;
	switch (v) {
	case NTP_TRUNCATED:
	case NTP_OVERSIZED:
	case NTP_BAD_MODE:
	case NTP_BAD_VERSION:
	case NTP_BOGUS_ORIGIN:
	case NTP_DUPLICATE:
		reject(c, x, who, v);
		return false;
	default:
		/* Carries our origin: the server's answer, good or bad. */
		x->reply = p;
		x->verdict = v;
		x->interleaved = interleaved;
		c->answered[sent_slot(c, rq->xmt)] = true;
		if (rq->org)
			c->answered[sent_slot(c, rq->rec)] = true;
		return true;
	}
}

/*
 * Random 64 bits, from the kernel a buffer at a time (as chrony does): a
 * getrandom() per cookie was a good part of a daemon's system time.
 */
static uint64_t random64(struct ntp_client *c)
{
	if (!c->nrandom) {
		if (getrandom(c->random, sizeof(c->random), 0) != sizeof(c->random))
			return (uint64_t)monotonic_ns() * 0x9e3779b97f4a7c15ULL;
		c->nrandom = sizeof(c->random) / sizeof(c->random[0]);
	}
	return c->random[--c->nrandom];
}

/* A fresh random cookie, never 0 (no cookie) nor equal to avoid. */
static uint64_t new_cookie(struct ntp_client *c, uint64_t avoid)
{
	uint64_t v = 0;

	while (!v || v == avoid)
		v = random64(c);
	c->sent[c->nsent % NTP_CLIENT_HISTORY] = v;
	c->answered[c->nsent % NTP_CLIENT_HISTORY] = false;
	c->nsent++;
	return v;
}

void ntp_client_forget(struct ntp_client *c)
{
	c->last.valid = false;
}

/*
 * Complete x, which holds this exchange's timestamps and a usable reply,
 * and remember the exchange for the next request.
 */
static void complete(struct ntp_client *c, struct ntp_exchange *x)
{
	struct ntp_answered now = {
		.valid = true, .server_rx = x->reply.receive_ts, .ours = x->ours,
	};
	uint64_t rx = x->reply.receive_ts;

	if (x->interleaved) {
		x->ours = c->last.ours;
		rx = c->last.server_rx;
	}
	c->last = now;
	ntp_exchange_compute(x, rx);
}

static int exchange(struct ntp_client *c, const struct target_clock *tc,
		    int64_t timeout_ns, struct ntp_exchange *x)
{
	uint8_t req[NTP_HEADER_LEN], buf[NTP_MAX_LEN + 4];
	int64_t deadline, tx_rt = 0, rx_rt = 0;
	struct ntp_request rq = { .xmt = new_cookie(c, 0) };
	uint32_t id = c->tx_id;
	struct realtime_track track;
	struct lclk_now now;
	bool got = false;
	int err;

	/* Stale transmit timestamps and ICMP errors of earlier requests. */
	while (read_errqueue(c, UINT32_MAX, &tx_rt))
		;
	tx_rt = 0;
	if (c->last.valid && (c->last.server_rx & 1)) {
		rq.org = c->last.server_rx;
		rq.rec = new_cookie(c, rq.xmt);
	}
	ntp_encode_request(&rq, req);

	/* REALTIME - MONOTONIC from before the send: the stamps come after. */
	err = realtime_track_start(&track);
	if (err)
		return err;
	target_now(tc, &now);
	x->ours.t1 = now.time_ns;
	x->ours.base1 = now.base_ns;
	if (sendto(c->fd, req, sizeof(req), 0, (struct sockaddr *)&c->addr, c->addrlen) < 0)
		return -errno;
	c->tx_id++;
	deadline = monotonic_ns() + timeout_ns;

	while (!got) {
		char control[512];
		struct sockaddr_storage from;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - monotonic_ns();
		ssize_t len;

		if (left <= 0)
			return -ETIMEDOUT;
		/* A REALTIME step while waiting falls in a narrow window. */
		err = realtime_track_measure(&track);
		if (err)
			return err;
		if (poll(&pfd, 1, timeout_ms(left)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd.revents & POLLERR) {
			err = read_errqueue(c, id, &tx_rt);
			if (err < 0)
				return err;
		}
		if (!(pfd.revents & POLLIN))
			continue;
		memset(&from, 0, sizeof(from));
		len = recvmsg(c->fd, &msg, MSG_DONTWAIT);
		target_now(tc, &now);
		if (len < 0)
			continue;
		err = realtime_track_measure(&track);
		if (err)
			return err;
		rx_rt = net_tstamp(&msg, NET_TSTAMP_SOFTWARE);
		if (msg.msg_flags & MSG_TRUNC)
			len = NTP_MAX_LEN + 4;	/* longer than the buffer: oversized */
		got = take_datagram(c, buf, len, &from, &rq, x);
	}

	x->ours.t4 = now.time_ns;
	x->ours.base4 = now.base_ns;
	if (rx_rt) {
		int64_t base, e, t;

		/* Never later than our own reading: that would be a bad conversion. */
		if (!target_from_realtime(tc, &track, rx_rt, x->ours.base1, x->ours.base4, &t,
					  &base, &e) && t <= x->ours.t4) {
			x->ours.t4 = t;
			x->ours.base4 = base;
			x->ours.err_ns += e;
			x->ours.kernel_t4 = true;
		}
	}
	/*
	 * The transmit timestamp is queued long before the reply can arrive;
	 * once it is read, what else is queued waits for the next exchange's
	 * sweep, which saves a system call on every exchange.
	 */
	while (c->kernel_tx && !tx_rt && read_errqueue(c, id, &tx_rt))
		;
	if (tx_rt && !realtime_track_measure(&track)) {
		int64_t base, e, t;

		if (!target_from_realtime(tc, &track, tx_rt, x->ours.base1, monotonic_ns(), &t,
					  &base, &e) && t >= x->ours.t1 && t <= x->ours.t4) {
			x->send_path_ns = t - x->ours.t1;
			x->ours.t1 = t;
			x->ours.base1 = base;
			x->ours.err_ns += e;
			x->ours.kernel_t1 = true;
		}
	}
	if (x->verdict == NTP_OK)
		complete(c, x);
	return 0;
}

int ntp_client_exchange(struct ntp_client *c, const struct target_clock *tc,
			int64_t timeout_ns, struct ntp_exchange *x)
{
	int ret;

	memset(x, 0, sizeof(*x));
	ret = exchange(c, tc, timeout_ns, x);
	/* Nothing usable to ask about next time. */
	if (ret || x->verdict != NTP_OK)
		ntp_client_forget(c);
	return ret;
}
