// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/prom.h"
#include "uapi/linux/lclk.h"
#include "daemon_log.h"
#include "lclk_model.h"
#include "metrics_http.h"

#define HTTP_MAX_HEAD		4096

int metrics_listen(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV };
	char host[128];
	const char *colon = strrchr(addr, ':'), *h = addr;
	struct addrinfo *ai;
	size_t n;
	int fd, one = 1, ret;

	if (!colon)
		goto bad;
	n = colon - addr;
	if (*h == '[' && n >= 2 && addr[n - 1] == ']') {
		h++;
		n -= 2;
	}
	if (!n || n >= sizeof(host))
		goto bad;
	memcpy(host, h, n);
	host[n] = '\0';
	ret = getaddrinfo(host, colon + 1, &hints, &ai);
	if (ret) {
		snprintf(err, errlen, "metrics %s: %s", addr, gai_strerror(ret));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 8) < 0) {
			ret = -errno;
			close(fd);
			fd = ret;
		}
	} else {
		fd = -errno;
	}
	freeaddrinfo(ai);
	if (fd < 0)
		snprintf(err, errlen, "metrics %s: %s", addr, strerror(-fd));
	return fd;
bad:
	snprintf(err, errlen, "metrics %s: expected ADDR:PORT", addr);
	return -EINVAL;
}

enum http_parse http_parse_request(const char *buf, size_t len, char *method,
				   size_t mlen, char *path, size_t plen)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4), *sp1, *sp2, *eol;

	if (!end)
		end = memmem(buf, len, "\n\n", 2);	/* tolerated, as most servers do */
	if (!end)
		return len >= HTTP_MAX_HEAD ? HTTP_BAD : HTTP_INCOMPLETE;
	/* The blank line exists, so the request line has its end. */
	eol = memchr(buf, '\n', len);
	if (memchr(buf, '\0', eol - buf))
		return HTTP_BAD;
	sp1 = memchr(buf, ' ', eol - buf);
	if (!sp1 || sp1 == buf)
		return HTTP_BAD;
	sp2 = memchr(sp1 + 1, ' ', eol - sp1 - 1);
	if (!sp2 || sp2 == sp1 + 1 || eol - sp2 < 9 || memcmp(sp2 + 1, "HTTP/1.", 7))
		return HTTP_BAD;
	snprintf(method, mlen, "%.*s", (int)(sp1 - buf), buf);
	snprintf(path, plen, "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
	return HTTP_OK;
}

static void reply(FILE *f, const char *status, const char *type, const char *body, size_t len)
{
	fprintf(f, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
		status, type, len);
	fwrite(body, 1, len, f);
}

static void error_reply(FILE *f, const char *status)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%s\n", status);

	reply(f, status, "text/plain", body, n);
}

void metrics_answer(const char *buf, size_t len, const struct daemon_report *r, FILE *f)
{
	char method[16], path[64], *body = NULL;
	size_t blen = 0;
	FILE *b;

	if (http_parse_request(buf, len, method, sizeof(method), path, sizeof(path)) != HTTP_OK) {
		error_reply(f, "400 Bad Request");
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		error_reply(f, "405 Method Not Allowed");
		return;
	}
	if (strcmp(path, "/metrics")) {
		error_reply(f, "404 Not Found");
		return;
	}
	b = open_memstream(&body, &blen);
	if (!b) {
		error_reply(f, "500 Internal Server Error");
		return;
	}
	metrics_render(r, b);
	fclose(b);
	reply(f, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body,
	      strcmp(method, "HEAD") ? blen : 0);
	free(body);
}

/* ---- exposition ------------------------------------------------------- */

static void gauge(FILE *f, const char *name, const char *labels, double v)
{
	fprintf(f, "%s%s%s%s %.12g\n", name, *labels ? "{" : "", labels, *labels ? "}" : "", v);
}

static void ns_gauge(FILE *f, const char *name, const char *labels, int64_t ns)
{
	if (ns == LCLK_BOUND_UNKNOWN)
		fprintf(f, "%s%s%s%s +Inf\n", name, *labels ? "{" : "", labels,
			*labels ? "}" : "");
	else
		gauge(f, name, labels, ns * 1e-9);
}

static void source_labels(const struct source_report *s, char *buf, size_t len)
{
	buf[0] = '\0';
	prom_label(buf, len, "source", s->url);
	prom_label(buf, len, "class", config_class_name(s->class));
}

void metrics_render(const struct daemon_report *r, FILE *f)
{
	static const uint32_t statuses[] = {
		LCLK_STATUS_UNSYNCED, LCLK_STATUS_SYNCED, LCLK_STATUS_HOLDOVER,
		LCLK_STATUS_DISRUPTED,
	};
	struct prom pr = { .f = f };
	char labels[512], dev[320] = "";
	unsigned int i, k;

	prom_label(dev, sizeof(dev), "device", r->device);

	prom_family(&pr, "lclk_offset_seconds", "gauge",
	       "Offset of the selected source at the last update (reference - logical).");
	gauge(f, "lclk_offset_seconds", dev, r->offset_ns * 1e-9);
	prom_family(&pr, "lclk_rate_ratio", "gauge",
	       "Rate of the logical clock relative to CLOCK_MONOTONIC, correction included.");
	gauge(f, "lclk_rate_ratio", dev, r->rate_ppt * 1e-12);
	prom_family(&pr, "lclk_frequency_ratio", "gauge", "The servo's frequency estimate.");
	gauge(f, "lclk_frequency_ratio", dev, r->freq_ppt * 1e-12);
	prom_family(&pr, "lclk_bound_seconds", "gauge", "Error bound now (+Inf when unsynchronised).");
	ns_gauge(f, "lclk_bound_seconds", dev, r->bound_ns);
	prom_family(&pr, "lclk_poll_interval_seconds", "gauge", "Current poll interval.");
	gauge(f, "lclk_poll_interval_seconds", dev, r->poll_ns * 1e-9);
	prom_family(&pr, "lclk_status", "gauge", "1 for the clock's sync status now, 0 for the others.");
	for (k = 0; k < sizeof(statuses) / sizeof(statuses[0]); k++) {
		snprintf(labels, sizeof(labels), "%s", dev);
		prom_label(labels, sizeof(labels), "status", lclk_status_name(statuses[k]));
		gauge(f, "lclk_status", labels, r->status == statuses[k]);
	}
	prom_family(&pr, "lclk_updates_total", "counter", "Model updates made by the daemon.");
	gauge(f, "lclk_updates_total", dev, r->updates);
	prom_family(&pr, "lclk_steps_total", "counter", "Updates that stepped logical time.");
	gauge(f, "lclk_steps_total", dev, r->steps);
	prom_family(&pr, "lclk_rejected_replies_total", "counter",
	       "Replies from sources rejected (malformed, spoofed, unsynchronised...).");
	gauge(f, "lclk_rejected_replies_total", dev, r->rejected);
	prom_family(&pr, "lclk_disruptions_total", "counter",
		    "VM restores and migrations seen through the vmclock's disruption marker.");
	gauge(f, "lclk_disruptions_total", dev, r->disruptions);

	prom_family(&pr, "lclk_source_state", "gauge", "1 for each source's state, 0 for the others.");
	for (i = 0; i < r->nsources; i++) {
		for (k = 0; k < NR_SOURCE_STATES; k++) {
			source_labels(&r->sources[i], labels, sizeof(labels));
			prom_label(labels, sizeof(labels), "state", source_state_name(k));
			gauge(f, "lclk_source_state", labels, r->sources[i].state == k);
		}
	}
	prom_family(&pr, "lclk_source_reach", "gauge", "Reach register: the last 8 polls, newest in bit 0.");
	for (i = 0; i < r->nsources; i++) {
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_reach", labels, r->sources[i].reach);
	}
	prom_family(&pr, "lclk_source_offset_seconds", "gauge", "Last measured offset (reference - logical).");
	for (i = 0; i < r->nsources; i++) {
		if (!r->sources[i].measured)
			continue;
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_offset_seconds", labels, r->sources[i].offset_ns * 1e-9);
	}
	prom_family(&pr, "lclk_source_delay_seconds", "gauge", "Last measured round-trip delay.");
	for (i = 0; i < r->nsources; i++) {
		if (!r->sources[i].measured)
			continue;
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_delay_seconds", labels, r->sources[i].delay_ns * 1e-9);
	}
	prom_family(&pr, "lclk_source_bound_seconds", "gauge", "Error bound of the last measurement.");
	for (i = 0; i < r->nsources; i++) {
		if (!r->sources[i].measured)
			continue;
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_bound_seconds", labels, r->sources[i].bound_ns * 1e-9);
	}
	prom_family(&pr, "lclk_source_polls_total", "counter", "Polls of the source.");
	for (i = 0; i < r->nsources; i++) {
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_polls_total", labels, r->sources[i].polls);
	}
	prom_family(&pr, "lclk_source_failures_total", "counter", "Polls that gave no measurement.");
	for (i = 0; i < r->nsources; i++) {
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_failures_total", labels, r->sources[i].failures);
	}
	prom_family(&pr, "lclk_source_rejected_replies_total", "counter", "Replies of the source rejected.");
	for (i = 0; i < r->nsources; i++) {
		source_labels(&r->sources[i], labels, sizeof(labels));
		gauge(f, "lclk_source_rejected_replies_total", labels, r->sources[i].rejected);
	}
}
