// SPDX-License-Identifier: GPL-2.0
/* ptp4l management over its Unix domain socket. */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/clock_offset.h"
#include "lib/timeout.h"
#include "pmc_client.h"

int pmc_open(struct pmc_client *c, const char *server_path, uint8_t domain,
	     char *err, size_t errlen)
{
	/* Runner threads open their ptp4l: sources at the same time. */
	static atomic_uint instances;
	unsigned int instance = atomic_fetch_add(&instances, 1) + 1;
	struct sockaddr_un local = { .sun_family = AF_UNIX };
	pid_t pid = getpid();
	int r;

	memset(c, 0, sizeof(*c));
	c->domain = domain;
	c->server.sun_family = AF_UNIX;
	if (strlen(server_path) >= sizeof(c->server.sun_path)) {
		snprintf(err, errlen, "'%s': socket path too long", server_path);
		return -ENAMETOOLONG;
	}
	strcpy(c->server.sun_path, server_path);
	/* Our identity: the process id, so replies to another client differ. */
	memcpy(c->self.clock_id, "lclk", 4);
	c->self.clock_id[4] = (uint8_t)(pid >> 24);
	c->self.clock_id[5] = (uint8_t)(pid >> 16);
	c->self.clock_id[6] = (uint8_t)(pid >> 8);
	c->self.clock_id[7] = (uint8_t)pid;
	c->self.port = (uint16_t)instance;

	c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return r;
	}
	/* ptp4l answers to the sender's address, so ours must be bound. */
	snprintf(local.sun_path, sizeof(local.sun_path), "/var/run/lclkctl.%d.%u",
		 (int)pid, instance);
	unlink(local.sun_path);
	if (bind(c->fd, (struct sockaddr *)&local, sizeof(local))) {
		r = -errno;
		snprintf(err, errlen, "bind %s: %s", local.sun_path, strerror(errno));
		close(c->fd);
		c->fd = -1;
		return r;
	}
	strcpy(c->local, local.sun_path);
	return 0;
}

void pmc_close(struct pmc_client *c)
{
	if (c->fd >= 0) {
		close(c->fd);
		unlink(c->local);
	}
	c->fd = -1;
}

static int send_get(struct pmc_client *c, uint16_t id, char *err, size_t errlen)
{
	uint8_t buf[PTP_MAX_MSG_LEN];
	struct ptp_msg m;
	int len;

	memset(&m, 0, sizeof(m));
	m.h.type = PTP_MANAGEMENT;
	m.h.domain = c->domain;
	m.h.source = c->self;
	m.h.seq = ++c->seq;
	m.h.control = 4;		/* management, as 1588 v1 had it */
	m.h.log_interval = 0x7f;
	memset(m.mgmt.target.clock_id, 0xff, PTP_CLOCK_ID_LEN);
	m.mgmt.target.port = 0xffff;	/* all ports of the clock */
	m.mgmt.action = PTP_MGMT_GET;
	m.mgmt.tlv_type = PTP_TLV_MANAGEMENT;
	m.mgmt.id = id;
	len = ptp_msg_encode(&m, buf, sizeof(buf));
	if (sendto(c->fd, buf, (size_t)len, 0, (struct sockaddr *)&c->server,
		   sizeof(c->server)) != len) {
		int r = -errno;

		snprintf(err, errlen, "%s: %s", c->server.sun_path,
			 r ? strerror(errno) : "short send");
		return r ? r : -EIO;
	}
	return 0;
}

int pmc_get(struct pmc_client *c, uint16_t id, int64_t timeout_ns,
	    struct ptp_management *out, char *err, size_t errlen)
{
	int64_t deadline = monotonic_ns() + timeout_ns;
	int r = send_get(c, id, err, errlen);

	if (r)
		return r;
	for (;;) {
		uint8_t buf[PTP_MAX_MSG_LEN + 1];
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - monotonic_ns();
		const char *reason;
		struct ptp_msg m;
		ssize_t len;

		if (left <= 0 || poll(&p, 1, timeout_ms(left)) == 0) {
			snprintf(err, errlen, "%s: no management response (is ptp4l running there?)",
				 c->server.sun_path);
			return -ETIMEDOUT;
		}
		len = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (len < 0)
			continue;
		if (ptp_msg_decode(buf, (size_t)len, &m, &reason) ||
		    m.h.type != PTP_MANAGEMENT || m.h.seq != c->seq ||
		    !ptp_port_id_eq(&m.mgmt.target, &c->self) || m.mgmt.id != id ||
		    (m.mgmt.action != PTP_MGMT_RESPONSE && m.mgmt.tlv_type == PTP_TLV_MANAGEMENT)) {
			c->rejected++;
			continue;
		}
		if (m.mgmt.tlv_type == PTP_TLV_MANAGEMENT_ERROR) {
			snprintf(err, errlen, "%s: management error %u for id 0x%04x",
				 c->server.sun_path, m.mgmt.error, id);
			return -EPROTO;
		}
		*out = m.mgmt;
		return 0;
	}
}
