// SPDX-License-Identifier: GPL-2.0
/*
 * lclkctl cpu-skew: how far CLOCK_MONOTONIC read on each CPU disagrees
 * with the reference CPU.
 *
 * Two threads, pinned to the reference CPU and to CPU k, pass a token back
 * and forth through one cache line. The initiator reads its clock (t1),
 * hands the token over, and reads again when it comes back (t2); the other
 * side reads its clock (tb) between the two. Whatever the cache latency,
 * tb happened within [t1, t2] of the initiator's time, so
 * skew = clock_k - clock_ref lies in [tb - t2, tb - t1]. Intersecting the
 * intervals of all rounds, run with either side initiating, leaves what the
 * fastest round trips allow; its middle is the estimate and its half width
 * the uncertainty.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/cli.h"
#include "lib/device.h"
#include "lib/json.h"
#include "lib/units.h"
#include "uapi/linux/lclk.h"

enum { OPT_ROUNDS = 0x100, OPT_APPLY, OPT_BACKWARD };

/* The token, alone on its cache line; the responder's reading on another. */
struct pingpong {
	_Alignas(64) unsigned long token;	/* see play() */
	_Alignas(64) int64_t stamp;
	long rounds;
	int cpu[2];				/* reference, other */
};

/* One thread; lo/hi bound skew = clock(other) - clock(reference). */
struct side {
	struct pingpong *pp;
	int who;				/* 0: reference CPU, 1: the other */
	int64_t lo, hi, min_rtt;
	int err;
};

static int64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void wait_token(const unsigned long *p, unsigned long v)
{
	while (__atomic_load_n(p, __ATOMIC_ACQUIRE) != v)
		;
}

/*
 * Round r is initiated by side r % 2 and moves the token from 3r to 3r+3:
 * the initiator sends 3r+1 (ping), the responder answers 3r+2 (pong), and
 * the initiator releases the line with 3r+3 only after its second reading,
 * so the next round's initiator (the other side) cannot overwrite the pong
 * before it was seen.
 */
static void *play(void *arg)
{
	struct side *s = arg;
	struct pingpong *pp = s->pp;
	cpu_set_t set;
	long r;

	CPU_ZERO(&set);
	CPU_SET(pp->cpu[s->who], &set);
	s->err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	s->lo = INT64_MIN;
	s->hi = INT64_MAX;
	s->min_rtt = INT64_MAX;
	for (r = 0; r < pp->rounds; r++) {
		unsigned long ping = 3 * r + 1;
		int64_t t1, t2, tb, lo, hi;

		if (r % 2 != s->who) {
			wait_token(&pp->token, ping);
			__atomic_store_n(&pp->stamp, mono(), __ATOMIC_RELAXED);
			__atomic_store_n(&pp->token, ping + 1, __ATOMIC_RELEASE);
			continue;
		}
		wait_token(&pp->token, ping - 1);
		t1 = mono();
		__atomic_store_n(&pp->token, ping, __ATOMIC_RELEASE);
		wait_token(&pp->token, ping + 1);
		t2 = mono();
		tb = __atomic_load_n(&pp->stamp, __ATOMIC_RELAXED);
		__atomic_store_n(&pp->token, ping + 2, __ATOMIC_RELEASE);
		if (s->who == 0) {	/* the other CPU read tb within [t1, t2] */
			lo = tb - t2;
			hi = tb - t1;
		} else {		/* the reference read tb within [t1, t2] */
			lo = t1 - tb;
			hi = t2 - tb;
		}
		if (lo > s->lo)
			s->lo = lo;
		if (hi < s->hi)
			s->hi = hi;
		if (t2 - t1 < s->min_rtt)
			s->min_rtt = t2 - t1;
	}
	return NULL;
}

struct skew {
	int cpu;
	int64_t skew_ns;	/* clock(cpu) - clock(reference) */
	int64_t uncertainty_ns;
	int64_t min_rtt_ns;
	bool consistent;	/* the intervals intersected */
};

/* Measure one CPU against the reference; false if threads failed. */
static bool measure_pair(int ref, int cpu, long rounds, struct skew *out)
{
	struct pingpong *pp;
	struct side side[2];
	pthread_t tid[2];
	int64_t lo, hi;
	int i;

	pp = aligned_alloc(64, sizeof(*pp));
	if (!pp)
		return false;
	memset(pp, 0, sizeof(*pp));
	pp->rounds = rounds;
	pp->cpu[0] = ref;
	pp->cpu[1] = cpu;
	for (i = 0; i < 2; i++) {
		side[i] = (struct side){ .pp = pp, .who = i };
		if (pthread_create(&tid[i], NULL, play, &side[i])) {
			if (i)	/* the first side waits for a partner forever */
				pthread_cancel(tid[0]);
			free(pp);
			return false;
		}
	}
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	free(pp);
	if (side[0].err || side[1].err)
		return false;
	lo = side[0].lo > side[1].lo ? side[0].lo : side[1].lo;
	hi = side[0].hi < side[1].hi ? side[0].hi : side[1].hi;
	out->cpu = cpu;
	out->consistent = lo <= hi;
	out->skew_ns = lo + (hi - lo) / 2;
	out->uncertainty_ns = out->consistent ? (hi - lo + 1) / 2 : (lo - hi + 1) / 2;
	out->min_rtt_ns = side[0].min_rtt < side[1].min_rtt ? side[0].min_rtt : side[1].min_rtt;
	return true;
}

/*
 * Set every measured CPU's offset to -skew (CPU ref to 0), all or none:
 * everything is checked against the current offsets before the first
 * change, and should a write still fail (another writer got in between),
 * the CPUs already set get their old offsets back. That undoes our own
 * change, so it may move a CPU's time back (by at most what we moved it)
 * even without --allow-backward: a half-applied table would leave the CPUs
 * disagreeing more than either state. Returns an exit code.
 */
static int apply(const char *dev, const struct skew *sk, int n, int ref, bool backward)
{
	const struct cli_cmd *cmd = &cmd_cpu_skew;
	struct lclk_cpu_offset co[CPU_SETSIZE + 1], old[CPU_SETSIZE + 1];
	struct lclk_info info;
	int fd, err, i, m = 0;

	if (!device_can_set_time())
		return device_error(cmd->name, dev, "apply", -EPERM);
	fd = device_open(dev, true);
	if (fd < 0)
		return device_error(cmd->name, dev, "open", fd);
	err = device_ioctl(fd, LCLK_IOC_INFO, &info);
	if (err)
		goto fail;
	co[m++] = (struct lclk_cpu_offset){ .cpu = ref, .offset_ns = 0 };
	for (i = 0; i < n; i++)
		co[m++] = (struct lclk_cpu_offset){ .cpu = sk[i].cpu, .offset_ns = -sk[i].skew_ns };
	for (i = 0; i < m; i++) {
		struct lclk_cpu_offset cur = { .cpu = co[i].cpu };

		if (co[i].cpu >= info.ncpus) {
			fprintf(stderr, "lclkctl %s: CPU %u is beyond the instance's %u CPUs: nothing applied\n",
				cmd->name, co[i].cpu, info.ncpus);
			close(fd);
			return EXIT_FAIL;
		}
		if (llabs(co[i].offset_ns) > LCLK_MAX_CPU_OFFSET_NS) {
			fprintf(stderr, "lclkctl %s: CPU %u: skew %lld ns is beyond the 1 ms limit: nothing applied\n",
				cmd->name, co[i].cpu, (long long)-co[i].offset_ns);
			close(fd);
			return EXIT_FAIL;
		}
		err = device_ioctl(fd, LCLK_IOC_GET_CPU_OFFSET, &cur);
		if (err)
			goto fail;
		old[i] = (struct lclk_cpu_offset){ .cpu = cur.cpu, .offset_ns = cur.offset_ns,
						   .flags = LCLK_ALLOW_BACKWARD };
		if (co[i].offset_ns < cur.offset_ns && !backward) {
			fprintf(stderr, "lclkctl %s: CPU %u: lowering its offset (%lld to %lld ns) moves its time back: add --allow-backward; nothing applied\n",
				cmd->name, co[i].cpu, (long long)cur.offset_ns,
				(long long)co[i].offset_ns);
			close(fd);
			return EXIT_USAGE;
		}
		co[i].flags = backward ? LCLK_ALLOW_BACKWARD : 0;
	}
	for (i = 0; i < m; i++) {
		err = device_ioctl(fd, LCLK_IOC_SET_CPU_OFFSET, &co[i]);
		if (err) {
			int set = i, lost = 0;

			while (i-- > 0)
				lost += !!device_ioctl(fd, LCLK_IOC_SET_CPU_OFFSET, &old[i]);
			if (lost)
				fprintf(stderr, "lclkctl %s: CPU %u: set failed; of the CPUs set before it, %d of %d could not be restored\n",
					cmd->name, co[set].cpu, lost, set);
			else
				fprintf(stderr, "lclkctl %s: CPU %u: set failed; the CPUs set before it (%d) were restored: nothing applied\n",
					cmd->name, co[set].cpu, set);
			goto fail;
		}
	}
	close(fd);
	return EXIT_OK;
fail:
	close(fd);
	return device_error(cmd->name, dev, "apply", err);
}

static void print(const struct skew *sk, int n, int ref, const struct cli_global *g,
		  bool applied)
{
	char a[UNITS_BUFSZ], b[UNITS_BUFSZ], c[UNITS_BUFSZ];
	struct json j;
	int i;

	if (!g->json) {
		printf("%-5s %12s %12s %12s\n", "CPU", "SKEW", "+-", "MIN-RTT");
		printf("%-5d %12s %12s %12s (reference)\n", ref, "0ns", "0ns", "-");
		for (i = 0; i < n; i++)
			printf("%-5d %12s %12s %12s%s\n", sk[i].cpu,
			       units_ns(a, sizeof(a), sk[i].skew_ns),
			       units_ns(b, sizeof(b), sk[i].uncertainty_ns),
			       units_ns(c, sizeof(c), sk[i].min_rtt_ns),
			       sk[i].consistent ? "" : " inconsistent: clock jumped?");
		if (applied)
			printf("per-CPU offsets set to -SKEW\n");
		return;
	}
	json_init(&j, stdout);
	json_obj_begin(&j, NULL);
	json_int(&j, "reference_cpu", ref);
	json_arr_begin(&j, "cpus");
	for (i = 0; i < n; i++) {
		json_obj_begin(&j, NULL);
		json_int(&j, "cpu", sk[i].cpu);
		json_int(&j, "skew_ns", sk[i].skew_ns);
		json_int(&j, "uncertainty_ns", sk[i].uncertainty_ns);
		json_int(&j, "min_rtt_ns", sk[i].min_rtt_ns);
		json_bool(&j, "consistent", sk[i].consistent);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_bool(&j, "applied", applied);
	json_obj_end(&j);
	json_end(&j);
}

static int run(int argc, char **argv, struct cli_global *g)
{
	static const struct option opts[] = {
		{ "rounds",	    required_argument, NULL, OPT_ROUNDS },
		{ "apply",	    no_argument,       NULL, OPT_APPLY },
		{ "allow-backward", no_argument,       NULL, OPT_BACKWARD },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const struct cli_cmd *cmd = &cmd_cpu_skew;
	static struct skew sk[CPU_SETSIZE];
	bool do_apply = false, backward = false;
	long long rounds = 20000;
	int opt, ret = -1, cpu, ref = -1, n = 0;
	cpu_set_t allowed;

	while ((opt = cli_getopt(argc, argv, CLI_COMMON_SHORTOPTS, opts, cmd, g, &ret)) != -1) {
		switch (opt) {
		case OPT_ROUNDS:
			if (!cli_parse_s64(cmd, "--rounds", optarg, &rounds))
				return EXIT_USAGE;
			if (rounds < 2 || rounds > 100000000)
				return cli_usage_error(cmd, "--rounds: must be 2..100000000");
			break;
		case OPT_APPLY:
			do_apply = true;
			break;
		case OPT_BACKWARD:
			backward = true;
			break;
		default:
			return cli_usage_error(cmd, "bad option");
		}
	}
	if (ret >= 0)
		return ret;
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		perror("lclkctl cpu-skew: sched_getaffinity");
		return EXIT_FAIL;
	}
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &allowed))
			continue;
		if (ref < 0) {
			ref = cpu;
			continue;
		}
		if (!measure_pair(ref, cpu, rounds, &sk[n])) {
			fprintf(stderr, "lclkctl cpu-skew: cannot run threads on CPUs %d and %d\n",
				ref, cpu);
			return EXIT_FAIL;
		}
		n++;
	}
	if (ref != 0 && !g->json)
		printf("CPU 0 is not available to this process: CPU %d is the reference\n", ref);
	if (!n) {
		fprintf(stderr, "lclkctl cpu-skew: only one CPU available: nothing to compare\n");
		return EXIT_FAIL;
	}
	ret = EXIT_OK;
	if (do_apply) {
		for (cpu = 0; cpu < n; cpu++) {
			if (!sk[cpu].consistent) {
				fprintf(stderr, "lclkctl cpu-skew: CPU %d: inconsistent measurement: nothing applied\n",
					sk[cpu].cpu);
				return EXIT_FAIL;
			}
		}
		ret = apply(g->device, sk, n, ref, backward);
	}
	print(sk, n, ref, g, do_apply && ret == EXIT_OK);
	return ret;
}

const struct cli_cmd cmd_cpu_skew = {
	.name = "cpu-skew",
	.summary = "measure CLOCK_MONOTONIC disagreement between CPUs; --apply sets per-CPU offsets",
	.usage =
	"Usage: lclkctl cpu-skew [--rounds N] [--apply [--allow-backward]] [--json]\n"
	"\n"
	"Pin a thread to the reference CPU (CPU 0, or the first this process may\n"
	"use) and one to each other CPU in turn, pass a token between them over\n"
	"one cache line N times (default 20000), and intersect what each round\n"
	"trip allows: SKEW is CLOCK_MONOTONIC on that CPU minus on the reference,\n"
	"+- what the fastest round trips leave open. Changes nothing unless\n"
	"--apply is given: then each CPU's lclk offset is set to -SKEW (the\n"
	"reference's to 0), all checked before the first is set; lowering an\n"
	"offset needs --allow-backward. --apply needs CAP_SYS_TIME.\n"
	"Run it on an idle machine: preemption only costs rounds, not accuracy.\n"
	"\n"
	"Examples:\n"
	"  lclkctl cpu-skew\n"
	"  taskset -c 0-7 lclkctl cpu-skew --rounds 100000 --json\n"
	"  lclkctl cpu-skew --apply --allow-backward\n",
	.run = run,
};
