// SPDX-License-Identifier: GPL-2.0
/* PTP sockets with SO_TIMESTAMPING, UDP/IPv4 or raw Ethernet. */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock_offset.h"
#include "lib/net_tstamp.h"
#include "lib/timeout.h"
#include "ptp_msg.h"
#include "ptp_net.h"

#define PTP_EVENT_PORT		319
#define PTP_GENERAL_PORT	320
#define PTP_MCAST_IP		"224.0.1.129"
static const uint8_t ptp_mcast_mac[ETH_ALEN] = { 0x01, 0x1b, 0x19, 0x00, 0x00, 0x00 };
/* A transmit stamp comes at once in software, within a few ms from a NIC. */
#define TX_TS_TIMEOUT_MS	100
/*
 * A socket queues messages in order, but their receive stamps, taken on
 * whichever CPU handled each packet, may be a little out of it: how much
 * earlier than the last one's a stamp may be.
 */
#define RX_TS_REORDER_NS	1000000LL

#define SW_TS_FLAGS (SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | \
		     SOF_TIMESTAMPING_SOFTWARE)
#define HW_TS_FLAGS (SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE | \
		     SOF_TIMESTAMPING_RAW_HARDWARE)

static int fail(char *err, size_t errlen, const char *what, const char *ifname)
{
	int e = errno;

	snprintf(err, errlen, "%s: %s: %s", ifname, what, strerror(e));
	return -e;
}

/*
 * Let the NIC stamp PTP event messages. An interface already stamping
 * them (ptp4l set it up) is left as it is.
 */
static int enable_hw_stamping(int fd, const char *ifname)
{
	struct hwtstamp_config cfg = { 0 };
	struct ifreq ifr = { 0 };

	strcpy(ifr.ifr_name, ifname);
	ifr.ifr_data = (void *)&cfg;
	if (!ioctl(fd, SIOCGHWTSTAMP, &ifr) && cfg.tx_type == HWTSTAMP_TX_ON &&
	    (cfg.rx_filter == HWTSTAMP_FILTER_ALL ||
	     cfg.rx_filter == HWTSTAMP_FILTER_PTP_V2_EVENT))
		return 0;
	memset(&cfg, 0, sizeof(cfg));
	cfg.tx_type = HWTSTAMP_TX_ON;
	cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	return ioctl(fd, SIOCSHWTSTAMP, &ifr) ? -errno : 0;
}

static int choose_stamping(struct ptp_net *n, const char *ts, char *err, size_t errlen)
{
	unsigned int caps = 0;
	int index = -1, r;

	r = phc_iface_info(n->ifname, &index, &caps);
	if (r && strcmp(ts, "sw")) {
		snprintf(err, errlen, "%s: no timestamping info: %s", n->ifname, strerror(-r));
		return r;
	}
	n->hw = strcmp(ts, "sw") && index >= 0 && (caps & HW_TS_FLAGS) == HW_TS_FLAGS;
	if (!strcmp(ts, "hw") && !n->hw) {
		snprintf(err, errlen, "%s has no hardware timestamping", n->ifname);
		return -EOPNOTSUPP;
	}
	if (!n->hw && !r && (caps & SW_TS_FLAGS) != SW_TS_FLAGS) {
		snprintf(err, errlen, "%s has no software timestamping", n->ifname);
		return -EOPNOTSUPP;
	}
	if (n->hw) {
		char dev[32];

		snprintf(dev, sizeof(dev), "/dev/ptp%d", index);
		r = phc_open(&n->phc, dev, err, errlen);
		if (r)
			return r;
		r = enable_hw_stamping(n->event_fd, n->ifname);
		if (r) {
			snprintf(err, errlen, "%s: SIOCSHWTSTAMP: %s", n->ifname, strerror(-r));
			return r;
		}
	}
	return 0;
}

static int set_stamping(struct ptp_net *n, char *err, size_t errlen)
{
	int flags = n->hw ? HW_TS_FLAGS : SW_TS_FLAGS;

	if (setsockopt(n->event_fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)))
		return fail(err, errlen, "SO_TIMESTAMPING", n->ifname);
	return 0;
}

static int udp_socket(struct ptp_net *n, int port, char *err, size_t errlen)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct ip_mreqn mreq = { .imr_ifindex = n->ifindex };
	int fd, on = 1, off = 0, ttl = 1;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, "socket", n->ifname);
	inet_pton(AF_INET, PTP_MCAST_IP, &mreq.imr_multiaddr);
	/* ptp4l on the same interface binds the same ports. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, n->ifname, strlen(n->ifname)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) ||
	    setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &mreq, sizeof(mreq)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &off, sizeof(off)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl))) {
		int r = fail(err, errlen, "UDP socket setup", n->ifname);

		close(fd);
		return r;
	}
	return fd;
}

static int l2_socket(struct ptp_net *n, char *err, size_t errlen)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_1588),
		.sll_ifindex = n->ifindex,
	};
	struct packet_mreq mreq = {
		.mr_ifindex = n->ifindex,
		.mr_type = PACKET_MR_MULTICAST,
		.mr_alen = ETH_ALEN,
	};
	int fd;

	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_1588));
	if (fd < 0)
		return fail(err, errlen, "packet socket", n->ifname);
	memcpy(mreq.mr_address, ptp_mcast_mac, ETH_ALEN);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, sizeof(mreq))) {
		int r = fail(err, errlen, "packet socket setup", n->ifname);

		close(fd);
		return r;
	}
	return fd;
}

static int read_mac(struct ptp_net *n, char *err, size_t errlen)
{
	struct ifreq ifr = { 0 };
	int fd, r = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, errlen, "socket", n->ifname);
	strcpy(ifr.ifr_name, n->ifname);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		r = fail(err, errlen, "SIOCGIFHWADDR", n->ifname);
	else
		memcpy(n->mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	close(fd);
	return r;
}

int ptp_net_open(struct ptp_net *n, const char *ifname, enum ptp_net_transport t,
		 const char *ts, char *err, size_t errlen)
{
	int r;

	memset(n, 0, sizeof(*n));
	n->event_fd = n->general_fd = -1;
	n->phc.fd = -1;
	n->last_rx_lo = INT64_MIN;
	n->transport = t;
	if (strlen(ifname) >= sizeof(n->ifname) || strlen(ifname) >= IFNAMSIZ) {
		snprintf(err, errlen, "'%s': interface name too long", ifname);
		return -EINVAL;
	}
	strcpy(n->ifname, ifname);
	n->ifindex = if_nametoindex(ifname);
	if (!n->ifindex)
		return fail(err, errlen, "no such interface", ifname);
	r = read_mac(n, err, errlen);
	if (r)
		return r;
	if (t == PTP_NET_UDP4) {
		n->event_fd = r = udp_socket(n, PTP_EVENT_PORT, err, errlen);
		if (r >= 0)
			n->general_fd = r = udp_socket(n, PTP_GENERAL_PORT, err, errlen);
	} else {
		n->event_fd = r = l2_socket(n, err, errlen);
	}
	if (r >= 0)
		r = choose_stamping(n, ts, err, errlen);
	if (r >= 0)
		r = set_stamping(n, err, errlen);
	if (r >= 0) {
		r = realtime_track_start(&n->realtime);
		if (r)
			snprintf(err, errlen, "CLOCK_REALTIME: %s", strerror(-r));
	}
	if (r < 0) {
		ptp_net_close(n);
		return r;
	}
	return 0;
}

void ptp_net_close(struct ptp_net *n)
{
	if (n->event_fd >= 0)
		close(n->event_fd);
	if (n->general_fd >= 0)
		close(n->general_fd);
	phc_close(&n->phc);
	n->event_fd = n->general_fd = -1;
}

/*
 * A kernel timestamp (realtime or PHC) on CLOCK_MONOTONIC, and on
 * CLOCK_REALTIME (see ptp_rx); a software stamp must lie in [lo, hi] (see
 * ptp_net.h).
 */
static int to_mono(struct ptp_net *n, int64_t ts, int64_t lo, int64_t hi,
		   int64_t *mono, int64_t *error, int64_t *rt, int64_t *rt_err)
{
	struct phc_reading r;
	int e = realtime_track_measure(&n->realtime);

	if (e)
		return e;
	if (!n->hw) {
		*rt = ts;
		*rt_err = 0;
		return realtime_track_to_mono(&n->realtime, ts, lo, hi, mono, error);
	}
	e = phc_read(&n->phc, &r);
	if (e)
		return e;
	*mono = ts - r.offset_ns;
	*error = r.error_ns;
	if (realtime_track_to_rt(&n->realtime, *mono, *error, rt, rt_err))
		*rt_err = -1;
	return 0;
}

/*
 * Raw Ethernet: strip the header and the padding of minimum-size frames,
 * which messageLength tells from the message.
 */
static ssize_t l2_payload(uint8_t *buf, ssize_t len)
{
	size_t msglen;

	if (len < ETH_HLEN)
		return -1;
	memmove(buf, buf + ETH_HLEN, len - ETH_HLEN);
	len -= ETH_HLEN;
	if (len + ETH_HLEN == ETH_ZLEN && len >= 4) {
		msglen = (size_t)buf[2] << 8 | buf[3];
		if (msglen < (size_t)len)
			len = msglen;
	}
	return len;
}

static int recv_one(struct ptp_net *n, int fd, uint8_t *buf, size_t size, struct ptp_rx *rx)
{
	char control[256];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	ssize_t len = recvmsg(fd, &msg, MSG_DONTWAIT);
	int64_t ts, read_at = monotonic_ns();

	if (len < 0)
		return -errno;
	if (msg.msg_flags & MSG_TRUNC)
		len = (ssize_t)size + 1;	/* longer than any PTP message: oversized */
	else if (n->transport == PTP_NET_L2 && (len = l2_payload(buf, len)) < 0)
		return -EAGAIN;
	rx->len = (size_t)len < size ? (size_t)len : size;
	rx->have_ts = false;
	if (fd != n->event_fd)
		return 0;
	ts = net_tstamp(&msg, n->hw ? NET_TSTAMP_HARDWARE : NET_TSTAMP_SOFTWARE);
	if (ts && !to_mono(n, ts, n->last_rx_lo, read_at, &rx->ts_mono, &rx->ts_err,
			   &rx->ts_rt, &rx->ts_rt_err)) {
		rx->have_ts = true;
		n->last_rx_lo = rx->ts_mono - rx->ts_err - RX_TS_REORDER_NS;
	}
	return 0;
}

/*
 * Discard what the error queue holds: transmit stamps that came after
 * tx_stamp() gave up. poll() reports POLLERR while one is there, whatever
 * it was asked for.
 */
static void drain_errqueue(int fd)
{
	uint8_t buf[64];
	char control[256];

	for (;;) {
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			return;
	}
}

int ptp_net_recv(struct ptp_net *n, uint8_t *buf, size_t size, int64_t deadline,
		 struct ptp_rx *rx)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = n->event_fd, .events = POLLIN },
			{ .fd = n->general_fd, .events = POLLIN },
		};
		int64_t left = deadline - monotonic_ns();
		int i, r;

		if (left <= 0)
			return -ETIMEDOUT;
		/* A REALTIME step while waiting falls in a narrow window. */
		r = realtime_track_measure(&n->realtime);
		if (r)
			return r;
		r = poll(p, n->general_fd >= 0 ? 2 : 1, timeout_ms(left));
		if (r < 0 && errno != EINTR)
			return -errno;
		for (i = 0; r > 0 && i < 2; i++) {
			if (p[i].revents & POLLERR)
				drain_errqueue(p[i].fd);
			if (!(p[i].revents & POLLIN))
				continue;
			r = recv_one(n, p[i].fd, buf, size, rx);
			if (r != -EAGAIN)
				return r;
		}
	}
}

/* Wait for the transmit stamp of the message just sent. */
static int tx_stamp(struct ptp_net *n, int64_t *ts)
{
	uint8_t buf[PTP_MAX_MSG_LEN + ETH_HLEN];
	char control[512];
	int64_t deadline = monotonic_ns() + TX_TS_TIMEOUT_MS * 1000000LL;

	for (;;) {
		struct pollfd p = { .fd = n->event_fd, .events = 0 };
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = control, .msg_controllen = sizeof(control),
		};
		int64_t left = deadline - monotonic_ns();

		if (left <= 0)
			return -ETIMEDOUT;
		/* POLLERR is reported whatever events asks for. */
		if (poll(&p, 1, timeout_ms(left)) <= 0)
			continue;
		if (recvmsg(n->event_fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			continue;
		*ts = net_tstamp(&msg, n->hw ? NET_TSTAMP_HARDWARE : NET_TSTAMP_SOFTWARE);
		if (*ts)
			return 0;
	}
}

int ptp_net_send_event(struct ptp_net *n, const uint8_t *buf, size_t len,
		       int64_t *ts_mono, int64_t *ts_err, int64_t *ts_rt, int64_t *ts_rt_err)
{
	uint8_t frame[ETH_HLEN + PTP_MAX_MSG_LEN];
	ssize_t sent;
	int64_t ts, send_at;
	int r;

	drain_errqueue(n->event_fd);
	send_at = monotonic_ns();
	if (n->transport == PTP_NET_UDP4) {
		struct sockaddr_in to = {
			.sin_family = AF_INET,
			.sin_port = htons(PTP_EVENT_PORT),
		};

		inet_pton(AF_INET, PTP_MCAST_IP, &to.sin_addr);
		sent = sendto(n->event_fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to));
	} else {
		struct ethhdr *eh = (struct ethhdr *)frame;

		if (len > PTP_MAX_MSG_LEN)
			return -EMSGSIZE;
		memcpy(eh->h_dest, ptp_mcast_mac, ETH_ALEN);
		memcpy(eh->h_source, n->mac, ETH_ALEN);
		eh->h_proto = htons(ETH_P_1588);
		memcpy(frame + ETH_HLEN, buf, len);
		len += ETH_HLEN;
		sent = send(n->event_fd, frame, len, 0);
	}
	if (sent < 0)
		return -errno;
	if ((size_t)sent != len)
		return -EIO;
	r = tx_stamp(n, &ts);
	if (r)
		return r;
	return to_mono(n, ts, send_at, monotonic_ns(), ts_mono, ts_err, ts_rt, ts_rt_err);
}

void ptp_net_clock_id(const struct ptp_net *n, uint8_t *id)
{
	pid_t pid = getpid();

	id[0] = n->mac[0];
	id[1] = n->mac[1];
	id[2] = n->mac[2];
	id[3] = (uint8_t)(pid >> 8);
	id[4] = (uint8_t)pid;
	id[5] = n->mac[3];
	id[6] = n->mac[4];
	id[7] = n->mac[5];
	if (id[3] == 0xff && id[4] == 0xfe)
		id[4] = 0xfd;
}
