/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * Least privilege for the long-running commands (daemon, serve): once
 * their devices and sockets are open they become an unprivileged user
 * and keep only the capabilities they still use. Capabilities are a mask
 * of PRIV_CAP(CAP_*).
 */
#ifndef LCLK_PRIV_H
#define LCLK_PRIV_H

#include <stddef.h>
#include <stdint.h>

#define PRIV_CAP(c)		(1ULL << (c))
/* Who the daemon and serve become, created by the package (adduser --system). */
#define PRIV_DEFAULT_USER	"lclk"

/*
 * Become user (uid, gid, no supplementary group but its own) keeping
 * only the capabilities in keep, effective and permitted; the bounding
 * set is cut to keep as well, inheritable and ambient sets are emptied,
 * and no_new_privs is set. "root" keeps uid 0 but not the capabilities.
 * A user that does not exist is no error: the process stays uid 0 with
 * the capabilities cut all the same, and note says so (the caller logs
 * it). Not started as root (a test, or capabilities given by the
 * service manager), it only cuts its capabilities.
 *
 * Capabilities are per thread: call before starting any. Returns 0, or
 * -errno with err set; note is "" or the warning.
 */
int priv_drop(const char *user, uint64_t keep, char *note, size_t notelen,
	      char *err, size_t errlen);

/* The capabilities this thread has in its permitted set. */
uint64_t priv_permitted(void);

/* "CAP_SYS_TIME CAP_NET_RAW", the names of caps, into buf. */
const char *priv_names(uint64_t caps, char *buf, size_t len);

#endif /* LCLK_PRIV_H */
