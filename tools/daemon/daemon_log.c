// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon_log.h"

static int log_max = LOG_INFO;
static bool log_syslog;

static const char *const level_names[] = {
	[LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void log_setup(int max_level, bool use_syslog)
{
	if (log_syslog && !use_syslog)
		closelog();
	if (use_syslog && !log_syslog)
		openlog("lclkctl-daemon", LOG_PID, LOG_DAEMON);
	log_max = max_level;
	log_syslog = use_syslog;
}

int log_level_parse(const char *name)
{
	int i;

	for (i = LOG_ERR; i <= LOG_DEBUG; i++)
		if (level_names[i] && !strcmp(level_names[i], name))
			return i;
	return -1;
}

void log_msg(int level, const char *fmt, ...)
{
	struct timespec ts;
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	if (log_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		/* One fprintf per line so threads never interleave within it. */
		char line[1024];

		clock_gettime(CLOCK_MONOTONIC, &ts);
		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "[%lld.%03ld] %s: %s\n", (long long)ts.tv_sec,
			ts.tv_nsec / 1000000, level < LOG_ERR ? "err" :
			level_names[level], line);
	}
	va_end(ap);
}
