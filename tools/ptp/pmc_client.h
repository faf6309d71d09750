/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A management client of a running ptp4l over its Unix domain socket
 * (uds_address, /var/run/ptp4l by default), as linuxptp's pmc: GET
 * requests, RESPONSE messages validated like every PTP message.
 */
#ifndef LCLK_PMC_CLIENT_H
#define LCLK_PMC_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/un.h>

#include "ptp_msg.h"

struct pmc_client {
	int fd;
	struct sockaddr_un server;
	char local[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct ptp_port_id self;
	uint8_t domain;
	uint16_t seq;
	unsigned int rejected;	/* replies that were not ours or malformed */
};

int pmc_open(struct pmc_client *c, const char *server_path, uint8_t domain,
	     char *err, size_t errlen);
void pmc_close(struct pmc_client *c);

/*
 * GET managementId id; the response's data goes to *out (data_len bytes).
 * Returns 0, -ETIMEDOUT, -EPROTO for a management error status, or -errno.
 */
int pmc_get(struct pmc_client *c, uint16_t id, int64_t timeout_ns,
	    struct ptp_management *out, char *err, size_t errlen);

#endif /* LCLK_PMC_CLIENT_H */
