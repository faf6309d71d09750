// SPDX-License-Identifier: GPL-2.0
#include <time.h>		/* before linux/errqueue.h, which needs timespec */
#include <linux/errqueue.h>

#include "clock_offset.h"
#include "net_tstamp.h"

int64_t net_tstamp(struct msghdr *msg, unsigned int which)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		const struct scm_timestamping *st;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING ||
		    c->cmsg_len < CMSG_LEN(sizeof(*st)))
			continue;
		st = (const void *)CMSG_DATA(c);
		return timespec_ns(&st->ts[which]);
	}
	return 0;
}
