// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "lclk_model.h"
#include "units.h"

const char *units_ns(char *buf, size_t len, int64_t ns)
{
	double a = llabs(ns);

	if (ns == LCLK_BOUND_UNKNOWN)
		snprintf(buf, len, "unknown");
	else if (a < 1e3)
		snprintf(buf, len, "%lldns", (long long)ns);
	else if (a < 1e6)
		snprintf(buf, len, "%.3fus", ns / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else
		snprintf(buf, len, "%.6fs", ns / 1e9);
	return buf;
}

const char *units_ppt(char *buf, size_t len, int64_t ppt)
{
	if (llabs(ppt) >= 1000000)
		snprintf(buf, len, "%+.3fppm", ppt / 1e6);
	else
		snprintf(buf, len, "%+.3fppb", ppt / 1e3);
	return buf;
}

const char *units_age(char *buf, size_t len, int64_t now_ns, int64_t then_ns)
{
	char d[UNITS_BUFSZ];

	if (!then_ns)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%s ago", units_ns(d, sizeof(d), now_ns - then_ns));
	return buf;
}
