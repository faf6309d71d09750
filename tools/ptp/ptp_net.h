/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PTP transports for a slave: UDP/IPv4 (event port 319, general port 320,
 * multicast 224.0.1.129) or IEEE 802.3 (EtherType 0x88F7, multicast
 * 01:1B:19:00:00:00), with SO_TIMESTAMPING receive and transmit timestamps
 * of event messages: hardware stamps (the NIC's PHC) when the interface has
 * them, software stamps (CLOCK_REALTIME) otherwise. Every timestamp is
 * returned on CLOCK_MONOTONIC, the lclk base, with the error of that
 * conversion.
 */
#ifndef LCLK_PTP_NET_H
#define LCLK_PTP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/realtime_track.h"
#include "phc.h"

enum ptp_net_transport { PTP_NET_UDP4, PTP_NET_L2 };

struct ptp_net {
	enum ptp_net_transport transport;
	int event_fd;		/* L2: the one socket */
	int general_fd;		/* L2: -1 */
	int ifindex;
	uint8_t mac[6];
	bool hw;		/* hardware timestamps, in phc's time */
	struct phc phc;
	/* REALTIME steps: for software stamps, and the REALTIME of others */
	struct realtime_track realtime;
	/* Earliest time the next receive stamp may have (after the last one). */
	int64_t last_rx_lo;
	char ifname[16];
};

struct ptp_rx {
	size_t len;		/* PTP message bytes in the buffer */
	bool have_ts;		/* an event message with its receive stamp */
	int64_t ts_mono;	/* receive time on CLOCK_MONOTONIC */
	int64_t ts_err;		/* error of ts_mono from the conversion */
	/*
	 * The system clock's reading then, CLOCK_REALTIME: a software stamp
	 * itself (error 0), or ts_mono with the REALTIME - MONOTONIC
	 * difference in force then. Error -1: not known (a REALTIME step
	 * too close to it).
	 */
	int64_t ts_rt, ts_rt_err;
};

/*
 * Open the sockets on ifname. ts is "auto", "sw" or "hw"; "auto" takes
 * hardware stamps when ethtool reports them and a PHC. Returns 0 or -errno
 * with err set.
 */
int ptp_net_open(struct ptp_net *n, const char *ifname, enum ptp_net_transport t,
		 const char *ts, char *err, size_t errlen);
void ptp_net_close(struct ptp_net *n);

/*
 * Receive one message, waiting until the monotonic deadline. Returns 0,
 * -ETIMEDOUT, or -errno.
 */
int ptp_net_recv(struct ptp_net *n, uint8_t *buf, size_t size, int64_t deadline,
		 struct ptp_rx *rx);

/*
 * Send an event message to the PTP multicast address and return its
 * transmit time on CLOCK_MONOTONIC, and on CLOCK_REALTIME as ptp_rx.ts_rt.
 * Returns 0 or -errno.
 */
int ptp_net_send_event(struct ptp_net *n, const uint8_t *buf, size_t len,
		       int64_t *ts_mono, int64_t *ts_err, int64_t *ts_rt, int64_t *ts_rt_err);

/*
 * A clock identity for this slave from the interface's MAC address. Octets
 * 3-4 carry the process id instead of EUI-48's ff:fe, so that lclkctl and a
 * ptp4l (which uses ff:fe) on the same interface never take each other's
 * Delay_Resp.
 */
void ptp_net_clock_id(const struct ptp_net *n, uint8_t *id);

#endif /* LCLK_PTP_NET_H */
