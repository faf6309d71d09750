/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/lib/: other subsystems include this header.
 *
 * Prometheus text exposition for node_exporter's textfile collector. The
 * file is written under a temporary name in the same directory and renamed
 * over the target, so the collector never reads half a file.
 *
 *	struct prom pr;
 *	char labels[256] = "";
 *
 *	prom_begin(&pr, "/var/lib/node_exporter/lclk.prom");
 *	prom_family(&pr, "x_seconds", "histogram", "What x measures.");
 *	prom_label(labels, sizeof(labels), "pid", "42");
 *	prom_histogram(&pr, "x_seconds", labels, counts, le_ns, n, sum_ns);
 *	prom_commit(&pr);
 */
#ifndef LCLK_PROM_H
#define LCLK_PROM_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct prom {
	FILE *f;
	const char *path;
	char tmp[PATH_MAX];
};

/* Open the temporary file; 0 or -errno. */
int prom_begin(struct prom *pr, const char *path);

/* "# HELP" and "# TYPE" lines of a metric family. */
void prom_family(struct prom *pr, const char *name, const char *type,
		 const char *help);

/*
 * Append name="value" (escaped, comma-separated) to a label list; returns
 * -ENOSPC (and leaves buf as it was) when it does not fit.
 */
int prom_label(char *buf, size_t len, const char *name, const char *value);

/* name{labels} value */
void prom_sample(struct prom *pr, const char *name, const char *labels,
		 uint64_t value);

/*
 * A histogram of durations, in seconds: counts[i] observations fell in
 * bucket i, whose inclusive upper edge is le_ns[i]; the last bucket has no
 * edge (it is +Inf). Writes the cumulative _bucket series, _sum and _count.
 */
void prom_histogram(struct prom *pr, const char *name, const char *labels,
		    const uint64_t *counts, const uint64_t *le_ns, size_t n,
		    uint64_t sum_ns);

/* Flush, sync and rename into place; on any error remove it. 0 or -errno. */
int prom_commit(struct prom *pr);

#endif /* LCLK_PROM_H */
