// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/guest/trace_counters.sh: the per-CPU drops counter, shared by
 * every fexit program, hit by two of them on each CPU while a third thread
 * preempts them at random instructions.
 *
 * On each CPU: a thread that makes CALLS sendto and one that makes CALLS
 * sendmsg (fexit_sendto and fexit_sendmsg: two programs, so neither is a
 * recursion miss of the other), both on an unconnected UDP socket
 * (EDESTADDRREQ at once: cheap, never blocks), and a SCHED_FIFO thread
 * that wakes every PERIOD_US microseconds (an hrtimer) and preempts
 * whichever of the two is running. Under full preemption and QEMU's
 * -icount, the wakeup lands at any instruction, now and then between the
 * load and the store of a plain "count += 1" in a program; the other
 * thread then runs and its counts are overwritten when the first resumes.
 *
 * Prints "ready PID", waits for a line on stdin, then "calls N" (every call
 * made, each checked to have failed with EDESTADDRREQ) when all are done.
 *
 *   trace_preempt CALLS [PERIOD_US]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct worker {
	pthread_t t;
	int cpu;
	int kind;	/* 0: sendto, 1: sendmsg, 2: the preemptor */
};

static long calls, period_ns;
static volatile int running;
static pthread_barrier_t start;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set)) {
		fprintf(stderr, "trace_preempt: affinity to CPU %d failed\n", cpu);
		exit(2);
	}
}

static void *preemptor(struct worker *w)
{
	struct sched_param sp = { .sched_priority = 10 };
	struct timespec ts;

	if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
		fprintf(stderr, "trace_preempt: SCHED_FIFO refused\n");
		exit(2);
	}
	pthread_barrier_wait(&start);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	while (running) {
		ts.tv_nsec += period_ns;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_nsec -= 1000000000;
			ts.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	(void)w;
	return NULL;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct iovec iov;
	struct msghdr msg;
	char c = 'x';
	long i;
	int fd;

	pin(w->cpu);
	if (w->kind == 2)
		return preemptor(w);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("trace_preempt: socket");
		exit(2);
	}
	iov.iov_base = &c;
	iov.iov_len = 1;
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	pthread_barrier_wait(&start);
	for (i = 0; i < calls; i++) {
		long r = w->kind ? sendmsg(fd, &msg, 0) : sendto(fd, &c, 1, 0, NULL, 0);

		if (r != -1 || errno != EDESTADDRREQ) {
			fprintf(stderr, "trace_preempt: %s: %ld, %s\n",
				w->kind ? "sendmsg" : "sendto", r, strerror(errno));
			exit(2);
		}
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, n;
	struct worker *w;
	char line[16];

	calls = argc > 1 ? atol(argv[1]) : 10000;
	period_ns = (argc > 2 ? atol(argv[2]) : 20) * 1000;
	n = ncpu * 3;
	w = calloc(n, sizeof(*w));
	if (!w || calls <= 0 || period_ns <= 0 || pthread_barrier_init(&start, NULL, n))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	running = 1;
	for (i = 0; i < n; i++) {
		w[i].cpu = i / 3;
		w[i].kind = i % 3;
		if (pthread_create(&w[i].t, NULL, work, &w[i]))
			return 1;
	}
	for (i = 0; i < n; i++)
		if (w[i].kind != 2)
			pthread_join(w[i].t, NULL);
	running = 0;
	for (i = 0; i < n; i++)
		if (w[i].kind == 2)
			pthread_join(w[i].t, NULL);
	printf("calls %ld\n", 2 * ncpu * calls);
	fflush(stdout);
	return 0;
}
