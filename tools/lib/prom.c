// SPDX-License-Identifier: GPL-2.0
/* Prometheus text format, written atomically (see prom.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "prom.h"

int prom_begin(struct prom *pr, const char *path)
{
	int n;

	pr->path = path;
	n = snprintf(pr->tmp, sizeof(pr->tmp), "%s.tmp.%d", path, (int)getpid());
	if (n < 0 || (size_t)n >= sizeof(pr->tmp))
		return -ENAMETOOLONG;
	pr->f = fopen(pr->tmp, "we");
	return pr->f ? 0 : -errno;
}

void prom_family(struct prom *pr, const char *name, const char *type,
		 const char *help)
{
	fprintf(pr->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int prom_label(char *buf, size_t len, const char *name, const char *value)
{
	size_t n = strlen(buf), start = n;

#define PUT(c) do { if (n + 1 >= len) goto nospace; buf[n++] = (c); } while (0)
	if (n)
		PUT(',');
	for (; *name; name++)
		PUT(*name);
	PUT('=');
	PUT('"');
	for (; *value; value++) {
		switch (*value) {
		case '\\':
			PUT('\\');
			PUT('\\');
			break;
		case '"':
			PUT('\\');
			PUT('"');
			break;
		case '\n':
			PUT('\\');
			PUT('n');
			break;
		default:
			PUT(*value);
		}
	}
	PUT('"');
#undef PUT
	buf[n] = 0;
	return 0;
nospace:
	buf[start] = 0;
	return -ENOSPC;
}

void prom_sample(struct prom *pr, const char *name, const char *labels,
		 uint64_t value)
{
	if (*labels)
		fprintf(pr->f, "%s{%s} %llu\n", name, labels, (unsigned long long)value);
	else
		fprintf(pr->f, "%s %llu\n", name, (unsigned long long)value);
}

/* ns as exact decimal seconds: 1024 -> "0.000001024", 2e9 -> "2". */
static void seconds(char *buf, size_t len, uint64_t ns)
{
	int n = snprintf(buf, len, "%llu.%09llu",
			 (unsigned long long)(ns / 1000000000),
			 (unsigned long long)(ns % 1000000000));

	while (n > 0 && buf[n - 1] == '0')
		buf[--n] = 0;
	if (n > 0 && buf[n - 1] == '.')
		buf[--n] = 0;
}

void prom_histogram(struct prom *pr, const char *name, const char *labels,
		    const uint64_t *counts, const uint64_t *le_ns, size_t n,
		    uint64_t sum_ns)
{
	const char *sep = *labels ? "," : "";
	unsigned long long cum = 0;
	char le[32], sum[32];
	size_t i;

	for (i = 0; i < n; i++) {
		cum += counts[i];
		if (i + 1 < n)
			seconds(le, sizeof(le), le_ns[i]);
		else
			strcpy(le, "+Inf");
		fprintf(pr->f, "%s_bucket{%s%sle=\"%s\"} %llu\n", name, labels, sep, le, cum);
	}
	seconds(sum, sizeof(sum), sum_ns);
	fprintf(pr->f, "%s_sum{%s} %s\n%s_count{%s} %llu\n", name, labels, sum,
		name, labels, cum);
}

int prom_commit(struct prom *pr)
{
	int err = 0;

	if (fflush(pr->f) || ferror(pr->f) || fsync(fileno(pr->f)))
		err = errno ? -errno : -EIO;
	if (fclose(pr->f) && !err)
		err = -errno;
	pr->f = NULL;
	if (!err && rename(pr->tmp, pr->path))
		err = -errno;
	if (err)
		unlink(pr->tmp);
	return err;
}
