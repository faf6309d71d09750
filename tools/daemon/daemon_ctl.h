/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * The daemon's control socket: a UNIX stream socket where a client writes
 * one request line and reads the answer until the daemon closes:
 *
 *   "sources json\n"   the daemon's report (daemon_report.h) as JSON
 *   "sources text\n"   the same as a table, like "chronyc sources"
 *   "stratum\n"        "DEVICE N": the stratum a server of DEVICE's time
 *                      announces ("lclkctl serve"), or "DEVICE none" while
 *                      no source is selected
 *
 * It only reports; nothing on it changes the clock, so it is world-readable
 * (mode 0666) and "lclkctl status" needs no privilege.
 */
#ifndef LCLK_DAEMON_CTL_H
#define LCLK_DAEMON_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/json.h"
#include "daemon_report.h"

/* The socket "lclkctl status" asks: $LCLK_CONTROL, else the default. */
const char *ctl_socket_path(void);

/*
 * Bind and listen at path, mode 0666. A stale socket there is replaced;
 * -EADDRINUSE when a daemon answers there, -EEXIST when it is no socket.
 * fd or -errno.
 */
int ctl_listen(const char *path, char *err, size_t errlen);
/* A request is a line: whole at its newline (or this long without one). */
#define CTL_REQUEST_MAX		64
bool ctl_request_whole(const char *buf, size_t len);
/* The answer to the request in buf[0..len), written to f (daemon_clients.h does the I/O). */
void ctl_answer(const char *buf, size_t len, const struct daemon_report *r, FILE *f);
void ctl_close(int listen_fd, const char *path);

/*
 * The stratum to serve from r's device: the selected source's plus one
 * (16, unsynchronised, past 15), or 0 when none is selected.
 */
int ctl_report_stratum(const struct daemon_report *r);

/* The renderings the socket serves. */
void ctl_report_json(const struct daemon_report *r, FILE *f);
void ctl_report_text(const struct daemon_report *r, FILE *f);

/*
 * Send request to the daemon at path and return its answer (malloc'd, NUL
 * terminated) in *out. 0 or -errno (-ENOENT/-ECONNREFUSED: not running).
 */
int ctl_query(const char *path, const char *request, char **out);

/*
 * The same exchange without ever blocking, for a caller with an event loop
 * of its own ("lclkctl serve", which must answer NTP clients whatever the
 * daemon's socket does: a local user can hold every client slot of it).
 * The connect and the request's write are non-blocking (a full backlog is
 * a failure, not a wait), the answer is read as the caller's poll says it
 * came, and the query is given up at its deadline.
 */
#define CTL_ASYNC_ANSWER_MAX	512

struct ctl_async {
	int fd;			/* -1: no query under way */
	int64_t deadline_ns;	/* CLOCK_MONOTONIC */
	size_t len;
	char answer[CTL_ASYNC_ANSWER_MAX];	/* NUL terminated once done */
};

void ctl_async_init(struct ctl_async *q);
/* Whether a query is under way (its fd to poll for POLLIN). */
static inline bool ctl_async_busy(const struct ctl_async *q)
{
	return q->fd >= 0;
}
/*
 * Send request to the daemon at path, to be answered by timeout_ns after
 * now_ns. 0, or -errno with no query under way (-EAGAIN: its backlog is
 * full; -ENOENT/-ECONNREFUSED: not running).
 */
int ctl_async_start(struct ctl_async *q, const char *path, const char *request,
		    int64_t now_ns, int64_t timeout_ns);
/*
 * Read what came (revents: of the caller's poll on q->fd, 0 if none). 1: the
 * daemon answered and closed, the answer is in q->answer; 0: still under
 * way; -errno: failed or past its deadline (-ETIMEDOUT). Only 0 leaves it
 * under way.
 */
int ctl_async_run(struct ctl_async *q, short revents, int64_t now_ns);
void ctl_async_cancel(struct ctl_async *q);

/* Sections of "lclkctl status" (cmd_status.c): the daemon's source table. */
struct status;
void daemon_ctl_status_text(const struct status *s);
void daemon_ctl_status_json(const struct status *s, struct json *j);

#endif /* LCLK_DAEMON_CTL_H */
