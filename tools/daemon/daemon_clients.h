/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * The clients of the daemon's control socket and metrics endpoint, served
 * from its event loop without ever blocking it: every connection is
 * non-blocking, read as its bytes come until the request is whole,
 * answered from a buffer as fast as the socket takes it, and closed at a
 * deadline counted from its accept, whatever it sends or does not. A slow
 * or hostile client delays nobody but itself, and the clock's updates
 * never wait for one. While every slot is taken the listening sockets are
 * not polled: newcomers wait in their backlog, first come first served.
 */
#ifndef LCLK_DAEMON_CLIENTS_H
#define LCLK_DAEMON_CLIENTS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon_report.h"

#define CLIENTS_MAX		16
/* From accept to the last byte of the answer, at most. */
#define CLIENT_DEADLINE_NS	2000000000LL
/* The longest request head taken (an HTTP request's, see metrics_http.h). */
#define CLIENT_REQUEST_MAX	4096

enum client_kind { CLIENT_CONTROL, CLIENT_METRICS };

struct client {
	int fd;			/* -1: a free slot */
	enum client_kind kind;
	int64_t deadline_ns;
	size_t in_len;
	char in[CLIENT_REQUEST_MAX];
	char *out;		/* the answer, once the request is whole */
	size_t out_len, out_sent;
};

/* The report to answer from, brought up to date when a request is whole. */
typedef const struct daemon_report *(*clients_report_fn)(void *arg);

struct clients {
	struct client c[CLIENTS_MAX];
	clients_report_fn report;
	void *arg;
};

void clients_init(struct clients *cl, clients_report_fn report, void *arg);
/* Whether another connection can be taken. */
bool clients_room(const struct clients *cl);
/* Take the connections waiting on listen_fd, as many as there is room for; how many. */
unsigned int clients_accept(struct clients *cl, int listen_fd, enum client_kind kind, int64_t now_ns);
/* One pollfd per open connection, from p[0] (at most CLIENTS_MAX); how many. */
unsigned int clients_pollfds(const struct clients *cl, struct pollfd *p);
/*
 * Read, answer and write as far as the n pollfds' revents allow without
 * blocking; close the connections that are done or past their deadline.
 */
void clients_run(struct clients *cl, const struct pollfd *p, unsigned int n, int64_t now_ns);
/* The earliest deadline of an open connection, INT64_MAX without one. */
int64_t clients_next_deadline(const struct clients *cl);
void clients_close_all(struct clients *cl);

#endif /* LCLK_DAEMON_CLIENTS_H */
