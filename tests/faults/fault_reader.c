// SPDX-License-Identifier: GPL-2.0
/*
 * The fault campaign's one truth-checking reader, and the few faults a
 * shell cannot apply. Every scenario (tests/faults/SCENARIO.sh) compares lclk's
 * readings with a truth that its fault cannot move:
 *
 *	fault_reader calibrate [-d DEV] -T TRUTH
 *		print "C ERR": logical(DEV) - TRUTH now, and how well that
 *		is known (half the tightest bracket of 200 tries), in ns
 *	fault_reader read -n NAME -k KIND [-d DEV] -T TRUTH [-c C] [-e ERR]
 *			  [-s SECONDS] [-i USEC] [-r BURST] [-p PAST_NS] [-N SHIFT_S]
 *		read DEV for SECONDS through KIND (mmap: include/lclk.h's
 *		page; ioctl: LCLK_IOC_GET_TIME; past: lclk_from_base() of
 *		the base time PAST_NS ago), BURST readings every USEC; -N: from a child
 *		forked into a new time namespace whose CLOCK_MONOTONIC is
 *		SHIFT_S ahead, through the page mapped before it
 *	fault_reader calls -T TRUTH [-c C] [-e ERR] [-s SECONDS]
 *		blocking read()s of a socket, each ended 3 ms later by a
 *		write of a distinct length N, for lclkctl trace to stamp:
 *		"CALL N LO HI", the truth interval of the call (entry and
 *		exit are both inside it); tests/faults/trace_check.py
 *		matches the outliers to them by length
 *	fault_reader tick -x TICK_US -s SECONDS
 *		adjtimex(ADJ_TICK) for SECONDS, then the tick it found
 *	fault_reader resync -d DEV -T TRUTH -c C -b BOUND_NS
 *		a perfect sync: logical(DEV) = TRUTH + C now, bound BOUND_NS
 *	fault_reader sysclock
 *		put the system clock's rate back (tick, frequency, no pending
 *		adjtime), as a scenario that slewed it may have left it, and
 *		fail unless CLOCK_MONOTONIC then runs at CLOCK_MONOTONIC_RAW's
 *		rate within 10 ppm: the premise of every truth made of it
 *
 * TRUTH is "raw" (CLOCK_MONOTONIC_RAW, which adjtimex cannot slew),
 * "realtime", or an lclk device whose page is the truth (one that only the
 * scenario steers); the truth of a reading is TRUTH + C. Each reading is
 * bracketed by a truth read before and one after it, so the true time of
 * the reading lies in [before + C - ERR, after + C + ERR], and its error is
 * its distance from that interval. A reading is a violation when its status
 * is SYNCED or HOLDOVER and its error exceeds its bound; each is printed:
 *
 *	VIOLATION NAME KIND at=S logical=L bound=B status=S truth=[LO,HI] err=E
 *	READER NAME KIND readings N synced N violations N max_err_over_bound X
 *		max_err_ns E
 *
 * (tests/faults/lib.bash sums the READER lines into the scenario's FAULT
 * line.) The exit status is 0 whatever was seen; non-zero only when the
 * reader could not run.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lclk_test.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define MAX_PRINTED	20	/* violations printed in full, per reader */

struct truth {
	clockid_t clock;	/* when ref.fd < 0 */
	struct lclk_clock ref;	/* a device whose logical time is the truth */
	__s64 c, err;		/* truth = clock + c, known within err */
	__s64 shift;		/* what a time namespace adds to clock */
};

static __s64 truth_raw(struct truth *t)
{
	struct lclk_now n;

	if (t->ref.fd < 0)
		return lclk_clock_ns(t->clock) - t->shift;
	lclk_now(&t->ref, &n);
	return n.time_ns;
}

static int truth_init(struct truth *t, const char *spec)
{
	memset(t, 0, sizeof(*t));
	t->ref.fd = -1;
	if (!strcmp(spec, "raw")) {
		t->clock = CLOCK_MONOTONIC_RAW;
	} else if (!strcmp(spec, "realtime")) {
		t->clock = CLOCK_REALTIME;
	} else if (lclk_open(&t->ref, spec)) {
		fprintf(stderr, "fault_reader: truth %s: %s\n", spec, strerror(errno));
		return -1;
	}
	return 0;
}

static int open_dev(struct lclk_clock *c, const char *dev)
{
	int err = lclk_open(c, dev);

	if (err)
		fprintf(stderr, "fault_reader: %s: %s\n", dev, strerror(-err));
	return err;
}

/* logical(c) - truth now, within *err: the tightest of 200 brackets. */
static __s64 calibrate(struct lclk_clock *c, struct truth *t, __s64 *err)
{
	__s64 best = 0, width = INT64_MAX;
	struct lclk_now n;
	int i;

	for (i = 0; i < 200; i++) {
		__s64 a = truth_raw(t), b;

		lclk_now(c, &n);
		b = truth_raw(t);
		if (b - a < width) {
			width = b - a;
			best = n.time_ns - a - (b - a) / 2;
		}
	}
	*err = width / 2 + 1;
	return best;
}

struct tally {
	const char *name, *kind;
	long readings, synced, violations;
	double max_ratio;
	__s64 max_err;
};

static void check(struct tally *y, const struct lclk_now *n, __s64 lo, __s64 hi,
		  __s64 start)
{
	__s64 err = n->time_ns < lo ? lo - n->time_ns :
		    n->time_ns > hi ? n->time_ns - hi : 0;
	double ratio;

	y->readings++;
	if (n->status != LCLK_STATUS_SYNCED && n->status != LCLK_STATUS_HOLDOVER)
		return;
	y->synced++;
	ratio = n->bound_ns > 0 ? (double)err / n->bound_ns : (err ? INFINITY : 0);
	if (ratio > y->max_ratio)
		y->max_ratio = ratio;
	if (err > y->max_err)
		y->max_err = err;
	if (err <= n->bound_ns)
		return;
	if (y->violations++ < MAX_PRINTED)
		printf("VIOLATION %s %s at=%.3f logical=%lld bound=%lld status=%u truth=[%lld,%lld] err=%lld\n",
		       y->name, y->kind, (double)(lo - start) / NSEC,
		       (long long)n->time_ns, (long long)n->bound_ns, n->status,
		       (long long)lo, (long long)hi, (long long)err);
}

/*
 * UTC on a continuous line: with LCLK_FAULT_LEAP_AT (ns on the truth's
 * scale), the second before it is repeated, as a leap second's insertion
 * repeats it, so a truth at or after it is 1 s less. A bracket that
 * straddles it knows the truth only within both sides.
 */
static void leap_truth(__s64 *lo, __s64 *hi)
{
	static __s64 at = -1;
	__s64 a, b;

	if (at < 0) {
		const char *e = getenv("LCLK_FAULT_LEAP_AT");

		at = e ? strtoll(e, NULL, 0) : 0;
	}
	if (!at)
		return;
	a = *lo - (*lo >= at ? NSEC : 0);
	b = *hi - (*hi >= at ? NSEC : 0);
	*lo = a < b ? a : b;
	*hi = a < b ? b : a;
}

/* Read c through kind for seconds; the truth of each reading bracketed. */
static void read_loop(struct lclk_clock *c, struct truth *t, const char *kind,
		      double seconds, long interval_us, long burst, __s64 past,
		      struct tally *y)
{
	__s64 start = truth_raw(t), end = start + (__s64)(seconds * NSEC);
	struct lclk_now n;

	for (;;) {
		__s64 before = truth_raw(t), after, lo, hi;

		if (!strcmp(kind, "ioctl"))
			lclk_now_ioctl(c, &n);
		else if (!strcmp(kind, "past"))
			lclk_from_base(c, lclk_monotonic_ns() - past, -1, &n);
		else
			lclk_now(c, &n);
		after = truth_raw(t);
		if (!y->readings)
			printf("START %s %s\n", y->name, y->kind);
		lo = before - past + t->c - t->err;
		hi = after - past + t->c + t->err;
		leap_truth(&lo, &hi);
		check(y, &n, lo, hi, start);
		if (after >= end)
			break;
		if (interval_us && y->readings % burst == 0)
			usleep(interval_us);
	}
	printf("READER %s %s readings %ld synced %ld violations %ld max_err_over_bound %.6f max_err_ns %lld\n",
	       y->name, y->kind, y->readings, y->synced, y->violations,
	       y->max_ratio, (long long)y->max_err);
}

/*
 * A process that mapped the page, then moved its children into a time
 * namespace whose CLOCK_MONOTONIC (and _RAW) run shift ahead: the child
 * reads through the inherited page. Its truth subtracts the shift, which
 * the namespace adds to the truth clock as to the base.
 */
static int in_timens_child(__s64 shift_s, struct truth *t)
{
	char buf[64];
	FILE *f;
	pid_t pid;
	int st;

	if (unshare(CLONE_NEWTIME)) {
		perror("fault_reader: unshare(CLONE_NEWTIME)");
		return -1;
	}
	f = fopen("/proc/self/timens_offsets", "w");
	snprintf(buf, sizeof(buf), "monotonic %lld 0\n", (long long)shift_s);
	if (!f || fputs(buf, f) < 0 || fclose(f)) {
		perror("fault_reader: timens_offsets");
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (t->ref.fd < 0 && t->clock != CLOCK_REALTIME)
			t->shift = shift_s * NSEC;
		return 0;
	}
	waitpid(pid, &st, 0);
	exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

static int call_fds[2], go_fds[2];

/* A call's length: distinct over the 4000 calls (12 s) a scenario makes. */
#define CALL_LEN(i)	(1 + (i) % 4000)

/*
 * The other end: a write of 1, 2, ... bytes, 3 ms after each is asked
 * for through a pipe (not a socket: lclkctl trace would stamp that read
 * too).
 */
static void *call_writer(void *arg)
{
	static char buf[4096];
	long i;
	char go;

	(void)arg;
	for (i = 0; read(go_fds[0], &go, 1) == 1; i++) {
		usleep(3000);
		if (write(call_fds[1], buf, CALL_LEN(i)) < 0)
			break;
	}
	return NULL;
}

/* Two ends of a TCP connection on loopback: the sockets lclkctl traces. */
static int tcp_pair(int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	fd[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (fd[0] < 0 || connect(fd[0], (struct sockaddr *)&a, sizeof(a)))
		return -1;
	fd[1] = accept(l, NULL, NULL);
	close(l);
	if (fd[1] < 0)
		return -1;
	/* each write goes out at once, as one segment */
	setsockopt(fd[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static int cmd_calls(struct truth *t, double seconds)
{
	__s64 end = truth_raw(t) + (__s64)(seconds * NSEC);
	static char buf[4096];
	pthread_t th;
	long i;

	if (tcp_pair(call_fds) || pipe(go_fds) ||
	    pthread_create(&th, NULL, call_writer, NULL))
		return perror("fault_reader: calls"), 1;
	for (i = 0; truth_raw(t) < end; i++) {
		__s64 before, after;
		ssize_t got;

		if (write(go_fds[1], "", 1) != 1)
			return perror("fault_reader: calls"), 1;
		before = truth_raw(t);
		got = read(call_fds[0], buf, sizeof(buf));
		after = truth_raw(t);
		if (got != CALL_LEN(i))
			return fprintf(stderr, "fault_reader: calls: read %zd\n", got), 1;
		printf("CALL %zd %lld %lld\n", got, (long long)(before + t->c - t->err),
		       (long long)(after + t->c + t->err));
	}
	return 0;
}

/*
 * The system clock is changed only in the test VM (tests/vm/vm-run boots
 * it with lclk.session= on its command line), never on the host that runs
 * the suites.
 */
static int in_test_vm(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/cmdline", "r");
	int ok = f && fgets(buf, sizeof(buf), f) && strstr(buf, " lclk.session=");

	if (f)
		fclose(f);
	if (!ok)
		fprintf(stderr, "fault_reader: not in the test VM: the system clock is left alone\n");
	return ok;
}

static int cmd_tick(long tick_us, double seconds)
{
	struct timex tx = { .modes = 0 };
	long old;

	if (adjtimex(&tx) < 0)
		return perror("adjtimex"), 1;
	old = tx.tick;
	tx.modes = ADJ_TICK;
	tx.tick = tick_us;
	if (adjtimex(&tx) < 0)
		return perror("adjtimex(ADJ_TICK)"), 1;
	usleep((useconds_t)(seconds * 1e6));
	tx.modes = ADJ_TICK;
	tx.tick = old;
	if (adjtimex(&tx) < 0)
		return perror("adjtimex(ADJ_TICK) restore"), 1;
	printf("# tick %ld us for %.1f s, then %ld again\n", tick_us, seconds, old);
	return 0;
}

/* CLOCK_MONOTONIC - CLOCK_MONOTONIC_RAW, within *err: the tightest bracket. */
static __s64 mono_minus_raw(__s64 *err)
{
	return lclk_clock_gap(CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC, 200, err);
}

static int cmd_sysclock(void)
{
	struct timex tx = {
		.modes = ADJ_TICK | ADJ_FREQUENCY | ADJ_STATUS,
		.tick = 1000000 / sysconf(_SC_CLK_TCK),
		.status = STA_UNSYNC,
	};
	__s64 m0, r0, m1, r1, e0, e1;
	double ppm;

	if (adjtimex(&tx) < 0)
		return perror("adjtimex"), 1;
	tx.modes = ADJ_OFFSET_SINGLESHOT;
	tx.offset = 0;
	if (adjtimex(&tx) < 0)
		return perror("adjtimex(ADJ_OFFSET_SINGLESHOT)"), 1;
	m0 = mono_minus_raw(&e0);
	r0 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
	usleep(300000);
	m1 = mono_minus_raw(&e1);
	r1 = lclk_clock_ns(CLOCK_MONOTONIC_RAW);
	ppm = (double)(m1 - m0) / (r1 - r0) * 1e6;
	printf("# CLOCK_MONOTONIC runs %+.1f ppm (+- %.1f) from CLOCK_MONOTONIC_RAW\n",
	       ppm, (double)(e0 + e1) / (r1 - r0) * 1e6);
	if (fabs(ppm) > 20 + (double)(e0 + e1) / (r1 - r0) * 1e6)
		return 1;
	return 0;
}

static int cmd_resync(struct lclk_clock *c, struct truth *t, __s64 bound)
{
	struct lclk_set_model s = {
		.modes = LCLK_SET_OFFSET | LCLK_SET_BOUND,
		.flags = LCLK_ALLOW_BACKWARD,
		.bound_ns = bound,
	};
	__s64 a = truth_raw(t), m = lclk_monotonic_ns(), b = truth_raw(t);

	/* truth at m, within (b - a) / 2 + err: the bound says so too */
	s.t0_ns = m;
	s.bound_ns += (b - a) / 2 + t->err + 1;
	s.offset_ns = a + (b - a) / 2 + t->c - m;
	if (ioctl(c->fd, LCLK_IOC_SET_MODEL, &s))
		return perror("fault_reader: SET_MODEL"), 1;
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fault_reader calibrate|read|calls|tick|resync|sysclock [options] (see tests/faults/fault_reader.c)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/lclk0", *spec = "raw", *kind = "mmap", *name = "?";
	__s64 past = 0, shift_s = 0, bound = 1000;
	long interval_us = 100, burst = 1, tick_us = 10000;
	struct tally y = { 0 };
	double seconds = 2;
	struct lclk_clock c;
	struct truth t;
	const char *cmd;
	int opt;

	if (argc < 2)
		usage();
	cmd = argv[1];
	memset(&t, 0, sizeof(t));
	optind = 2;
	while ((opt = getopt(argc, argv, "d:T:c:e:n:k:s:i:r:p:N:x:b:")) != -1) {
		switch (opt) {
		case 'd': dev = optarg; break;
		case 'T': spec = optarg; break;
		case 'c': t.c = strtoll(optarg, NULL, 0); break;
		case 'e': t.err = strtoll(optarg, NULL, 0); break;
		case 'n': name = optarg; break;
		case 'k': kind = optarg; break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 'i': interval_us = strtol(optarg, NULL, 0); break;
		case 'r': burst = strtol(optarg, NULL, 0) > 0 ? strtol(optarg, NULL, 0) : 1; break;
		case 'p': past = strtoll(optarg, NULL, 0); break;
		case 'N': shift_s = strtoll(optarg, NULL, 0); break;
		case 'x': tick_us = strtol(optarg, NULL, 0); break;
		case 'b': bound = strtoll(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (!strcmp(cmd, "tick") || !strcmp(cmd, "sysclock")) {
		if (!in_test_vm())
			return 1;
		return !strcmp(cmd, "tick") ? cmd_tick(tick_us, seconds) : cmd_sysclock();
	}
	{
		__s64 c0 = t.c, e0 = t.err;

		if (truth_init(&t, spec))
			return 1;
		t.c = c0;
		t.err = e0;
	}
	if (!strcmp(cmd, "calls"))
		return cmd_calls(&t, seconds);
	if (open_dev(&c, dev))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "calibrate")) {
		__s64 err, off = calibrate(&c, &t, &err);

		printf("%lld %lld\n", (long long)off, (long long)err);
		return 0;
	}
	if (!strcmp(cmd, "resync"))
		return cmd_resync(&c, &t, bound);
	if (strcmp(cmd, "read"))
		usage();
	if (shift_s && in_timens_child(shift_s, &t))
		return 1;
	y.name = name;
	y.kind = shift_s ? "mmap-timens-child" : kind;
	read_loop(&c, &t, kind, seconds, interval_us, burst, past, &y);
	return 0;
}
