/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/daemon/: other subsystems include this header.
 *
 * The daemon's log: levels like syslog's, to stderr (with a monotonic
 * timestamp, for a terminal or journald) or to syslog.
 */
#ifndef LCLK_DAEMON_LOG_H
#define LCLK_DAEMON_LOG_H

#include <stdbool.h>
#include <syslog.h>

/* level is LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO or LOG_DEBUG. */
void log_setup(int max_level, bool use_syslog);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "err", "warning", "notice", "info", "debug" -> LOG_*; -1 if unknown. */
int log_level_parse(const char *name);

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...)	log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* LCLK_DAEMON_LOG_H */
