/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * Prometheus metrics of the daemon over a minimal HTTP/1.0 server: one
 * request per connection, "GET /metrics" answered with the text exposition
 * format (version 0.0.4), anything else with 404/405/400. Listens on
 * loopback unless configured otherwise ("metrics ADDR:PORT").
 */
#ifndef LCLK_METRICS_HTTP_H
#define LCLK_METRICS_HTTP_H

#include <stddef.h>
#include <stdio.h>

#include "daemon_report.h"

/* "127.0.0.1:9478", "[::1]:9478", "0.0.0.0:9478". fd or -errno (err says). */
int metrics_listen(const char *addr, char *err, size_t errlen);
/*
 * The whole answer to a request whose head, buf[0..len), is complete or
 * too long (http_parse_request() is not HTTP_INCOMPLETE): "GET /metrics"
 * (or HEAD) gets r's exposition, anything else an error status.
 * daemon_clients.h does the I/O.
 */
void metrics_answer(const char *buf, size_t len, const struct daemon_report *r, FILE *f);

/* The exposition itself. */
void metrics_render(const struct daemon_report *r, FILE *f);

enum http_parse {
	HTTP_INCOMPLETE,	/* no blank line yet */
	HTTP_OK,
	HTTP_BAD,		/* not a request line we understand */
};

/*
 * Parse the head of a request in buf[0..len): the method and path of its
 * request line (copied, NUL-terminated, truncated to their buffers).
 */
enum http_parse http_parse_request(const char *buf, size_t len, char *method,
				   size_t mlen, char *path, size_t plen);

#endif /* LCLK_METRICS_HTTP_H */
