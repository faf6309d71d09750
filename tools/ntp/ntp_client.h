/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One NTP client-mode exchange with one server: a UDP socket, a request
 * with a random transmit timestamp, the reply validated and its four
 * timestamps expressed on the target clock.
 */
#ifndef LCLK_NTP_CLIENT_H
#define LCLK_NTP_CLIENT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/clock.h"
#include "ntp_packet.h"

/* Cookies remembered to tell duplicates and late replies from spoofs. */
#define NTP_CLIENT_HISTORY	64

/* Our end of one exchange, on the target clock. */
struct ntp_ours {
	int64_t t1, t4;			/* target time: request left, reply came */
	int64_t base1, base4;		/* CLOCK_MONOTONIC of t1 and t4 */
	int64_t err_ns;			/* our timestamping error, both ends */
	bool kernel_t1, kernel_t4;	/* taken by the kernel */
};

/* The last exchange answered, for the next request to ask about. */
struct ntp_answered {
	bool valid;
	uint64_t server_rx;		/* its reply's receive timestamp, raw */
	struct ntp_ours ours;
};

struct ntp_client {
	int fd;
	struct sockaddr_storage addr;	/* the server */
	socklen_t addrlen;
	char name[128];			/* "HOST:PORT (ADDR)" for messages */
	bool kernel_rx;			/* SO_TIMESTAMPING receive timestamps */
	bool kernel_tx;			/* ... and transmit timestamps */
	uint32_t tx_id;			/* SOF_TIMESTAMPING_OPT_ID of the next send */
	uint64_t sent[NTP_CLIENT_HISTORY];	/* cookies sent, a ring */
	bool answered[NTP_CLIENT_HISTORY];
	unsigned int nsent;
	struct ntp_answered last;
	uint64_t random[32];		/* for cookies, drawn a buffer at a time */
	unsigned int nrandom;		/* of them not used yet */
};

/*
 * One request and what became of it. An interleaved reply completes the
 * previous exchange instead: t1..t4 and the figures are that exchange's,
 * with the server's real transmit time as t3.
 */
struct ntp_exchange {
	enum ntp_verdict verdict;	/* of the reply to this request */
	struct ntp_packet reply;
	bool interleaved;		/* the sample is the previous exchange's */
	struct ntp_ours ours;		/* t1, t4 */
	int64_t t2, t3;			/* server time: request came, reply left */
	int64_t offset_ns;		/* ((t2 - t1) + (t3 - t4)) / 2 */
	int64_t delay_ns;		/* (t4 - t1) - (t3 - t2) */
	int64_t send_path_ns;		/* sendto() to the kernel's transmit stamp */
	unsigned int rejected;		/* other packets rejected while waiting */
};

/*
 * Resolve host (name or address) and port and open a socket for it.
 * 0 or -errno with a message in err.
 */
int ntp_client_open(struct ntp_client *c, const char *host, const char *port,
		    char *err, size_t errlen);
void ntp_client_close(struct ntp_client *c);

/*
 * Send one request and wait up to timeout_ns for its reply. The request
 * asks in interleaved mode about the last exchange answered, when there is
 * one and its server marks receive timestamps the way chrony does (lowest
 * bit set) so it can answer. Returns 0 when
 * a reply to this request came (x->verdict says whether it is usable),
 * -ETIMEDOUT, or -errno of a send error or an ICMP error (unreachable).
 * Packets that are not the reply (spoofed, duplicate, malformed, from
 * elsewhere) are rejected with a message and counted, and waiting goes on.
 */
int ntp_client_exchange(struct ntp_client *c, const struct target_clock *tc,
			int64_t timeout_ns, struct ntp_exchange *x);

/* Start afresh: the next request is a basic one. */
void ntp_client_forget(struct ntp_client *c);

#endif /* LCLK_NTP_CLIENT_H */
