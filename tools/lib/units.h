/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * Human-readable durations and rates for lclkctl's text output.
 */
#ifndef LCLK_UNITS_H
#define LCLK_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define UNITS_BUFSZ 32

/* "-12.345us", "1.500000s", "unknown" for LCLK_BOUND_UNKNOWN; returns buf. */
const char *units_ns(char *buf, size_t len, int64_t ns);
/* Parts per trillion as "+1.234ppm" / "-56ppb"; returns buf. */
const char *units_ppt(char *buf, size_t len, int64_t ppt);
/* A CLOCK_MONOTONIC age as "3.2s ago", "never" for 0; returns buf. */
const char *units_age(char *buf, size_t len, int64_t now_ns, int64_t then_ns);

#endif /* LCLK_UNITS_H */
