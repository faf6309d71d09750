// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon_clients.h"
#include "daemon_ctl.h"
#include "daemon_log.h"
#include "metrics_http.h"

void clients_init(struct clients *cl, clients_report_fn report, void *arg)
{
	unsigned int i;

	memset(cl, 0, sizeof(*cl));
	for (i = 0; i < CLIENTS_MAX; i++)
		cl->c[i].fd = -1;
	cl->report = report;
	cl->arg = arg;
}

static void drop(struct client *c)
{
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
}

/* A free slot's index, -1 when all are taken. */
static int free_slot(const struct clients *cl)
{
	int i;

	for (i = 0; i < CLIENTS_MAX; i++)
		if (cl->c[i].fd < 0)
			return i;
	return -1;
}

bool clients_room(const struct clients *cl)
{
	return free_slot(cl) >= 0;
}

unsigned int clients_accept(struct clients *cl, int listen_fd, enum client_kind kind,
			    int64_t now_ns)
{
	unsigned int n = 0;
	struct client *c;
	int i, fd;

	while ((i = free_slot(cl)) >= 0) {
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			break;
		n++;
		c = &cl->c[i];
		c->fd = fd;
		c->kind = kind;
		c->deadline_ns = now_ns + CLIENT_DEADLINE_NS;
		c->in_len = c->out_len = c->out_sent = 0;
	}
	return n;
}

unsigned int clients_pollfds(const struct clients *cl, struct pollfd *p)
{
	unsigned int i, n = 0;

	for (i = 0; i < CLIENTS_MAX; i++) {
		if (cl->c[i].fd < 0)
			continue;
		p[n].fd = cl->c[i].fd;
		p[n].events = cl->c[i].out ? POLLOUT : POLLIN;
		p[n].revents = 0;
		n++;
	}
	return n;
}

static bool request_whole(const struct client *c, bool eof)
{
	char method[16], path[64];

	if (c->kind == CLIENT_CONTROL)
		return eof || ctl_request_whole(c->in, c->in_len);
	/* HTTP_BAD too: a head that will never parse gets its 400 at once. */
	return http_parse_request(c->in, c->in_len, method, sizeof(method), path,
				  sizeof(path)) != HTTP_INCOMPLETE;
}

/* The answer to a whole request, into c->out. false: no memory, drop it. */
static bool answer(struct clients *cl, struct client *c)
{
	const struct daemon_report *r = cl->report(cl->arg);
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!f)
		return false;
	if (c->kind == CLIENT_CONTROL)
		ctl_answer(c->in, c->in_len, r, f);
	else
		metrics_answer(c->in, c->in_len, r, f);
	return !fclose(f);
}

/* Take what has come; false when the client is to be dropped. */
static bool receive(struct clients *cl, struct client *c)
{
	ssize_t n = read(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR;
	/* A control client may end its request by shutting its side down. */
	if (n == 0 && (c->kind != CLIENT_CONTROL || !c->in_len))
		return false;
	c->in_len += n;
	if (!request_whole(c, n == 0))
		return c->in_len < sizeof(c->in);
	return answer(cl, c);
}

/* Send what the socket takes; false once all is sent or the client left. */
static bool transmit(struct client *c)
{
	ssize_t n = send(c->fd, c->out + c->out_sent, c->out_len - c->out_sent,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return true;
		log_debug("a client left before its answer: %s", strerror(errno));
		return false;
	}
	c->out_sent += n;
	return c->out_sent < c->out_len;
}

static struct client *by_fd(struct clients *cl, int fd)
{
	unsigned int i;

	for (i = 0; i < CLIENTS_MAX; i++)
		if (cl->c[i].fd == fd)
			return &cl->c[i];
	return NULL;
}

void clients_run(struct clients *cl, const struct pollfd *p, unsigned int n, int64_t now_ns)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct client *c = by_fd(cl, p[i].fd);
		bool keep = true;

		if (!c || !p[i].revents)
			continue;
		if (!c->out)
			keep = receive(cl, c);
		/* Most answers fit the socket's buffer: sent without another poll. */
		if (keep && c->out)
			keep = transmit(c);
		if (!keep)
			drop(c);
	}
	for (i = 0; i < CLIENTS_MAX; i++) {
		if (cl->c[i].fd >= 0 && now_ns >= cl->c[i].deadline_ns) {
			log_debug("a client overstayed its %lld ms: dropped",
				  CLIENT_DEADLINE_NS / 1000000);
			drop(&cl->c[i]);
		}
	}
}

int64_t clients_next_deadline(const struct clients *cl)
{
	int64_t t = INT64_MAX;
	unsigned int i;

	for (i = 0; i < CLIENTS_MAX; i++)
		if (cl->c[i].fd >= 0 && cl->c[i].deadline_ns < t)
			t = cl->c[i].deadline_ns;
	return t;
}

void clients_close_all(struct clients *cl)
{
	unsigned int i;

	for (i = 0; i < CLIENTS_MAX; i++)
		if (cl->c[i].fd >= 0)
			drop(&cl->c[i]);
}
