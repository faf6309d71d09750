// SPDX-License-Identifier: GPL-2.0
/*
 * Measure a time source repeatedly through the source interface and print
 * one line per measurement, for the PTP integration tests and benchmarks:
 *
 *   source_probe [-d DEV] [-n COUNT] [-t SECONDS] [-s SAMPLES] [-v] URL
 *
 * Line: "ok mono_ns offset_ns bound_ns delay_ns refid stratum tai samples
 * rejected" or "fail mono_ns reason". Exits 0 if any measurement succeeded,
 * 5 (EXIT_NOSOURCE) if none did, 2 on a bad command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/clock_offset.h"
#include "sync/source.h"

int main(int argc, char **argv)
{
	struct source_opts so = { .samples = 0, .timeout_ns = 1000000000LL };
	const char *dev = "/dev/lclk0";
	long count = 1, secs = 0, ok = 0;
	struct target_clock tc;
	struct source src;
	char err[256];
	int64_t end;
	int opt, r;

	while ((opt = getopt(argc, argv, "d:n:t:s:v")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'n':
			count = atol(optarg);
			break;
		case 't':
			secs = atol(optarg);
			break;
		case 's':
			so.samples = (unsigned int)atoi(optarg);
			break;
		case 'v':
			so.verbose++;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: source_probe [-d DEV] [-n COUNT] [-t SECONDS] [-s SAMPLES] [-v] URL\n");
		return EXIT_USAGE;
	}
	r = target_open(&tc, dev, false);
	if (r) {
		fprintf(stderr, "%s: %s\n", dev, strerror(-r));
		return EXIT_NODEV;
	}
	r = source_open(&src, argv[optind], &so, err, sizeof(err));
	if (r) {
		fprintf(stderr, "%s\n", err);
		return EXIT_NOSOURCE;
	}
	end = monotonic_ns() + secs * 1000000000LL;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (long i = 0; secs ? monotonic_ns() < end : i < count; i++) {
		struct measurement m;

		r = src.ops->measure(&src, &tc, &m, err, sizeof(err));
		if (r) {
			printf("fail %lld %s\n", (long long)monotonic_ns(), err);
			continue;
		}
		ok++;
		printf("ok %lld %lld %lld %lld %s %d %d %u %u\n", (long long)m.base_ns,
		       (long long)m.offset_ns, (long long)m.bound_ns, (long long)m.delay_ns,
		       m.refid, m.stratum, m.tai, m.samples, m.rejected);
	}
	source_close(&src);
	target_close(&tc);
	return ok ? EXIT_OK : EXIT_NOSOURCE;
}
