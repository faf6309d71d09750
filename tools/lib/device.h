/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * ioctl access to an lclk instance for the commands that read or change the
 * model, with one place that turns an errno into a message and an exit code
 * (cli.h), so every command explains "no module" or "no permission" alike.
 */
#ifndef LCLK_DEVICE_H
#define LCLK_DEVICE_H

#include <stdbool.h>

#include "uapi/linux/lclk.h"

/* Open path read-only (queries) or read-write (changes). fd or -errno. */
int device_open(const char *path, bool write);

/* ioctl(fd, req, arg), retried on EINTR. 0 or -errno. */
int device_ioctl(int fd, unsigned long req, void *arg);

/* Whether this process has CAP_SYS_TIME in its effective set. */
bool device_can_set_time(void);

/*
 * Print "lclkctl CMD: PATH: WHAT: reason" for err (-errno) on stderr and
 * return the matching exit code: EXIT_PERM, EXIT_NODEV, EXIT_USAGE (a
 * backward change without --allow-backward) or EXIT_FAIL.
 */
int device_error(const char *cmd, const char *path, const char *what, int err);

#endif /* LCLK_DEVICE_H */
