// SPDX-License-Identifier: GPL-2.0
/*
 * The per-call cost of one syscall, alone: recv(MSG_DONTWAIT) on an empty
 * socket, the EAGAIN call busy-polling transports repeat, in BATCHES
 * batches of CALLS calls. Prints the CPU ns per call of each batch, one a
 * line. tests/bench/trace.sh runs it beside the probes to price what a
 * process they do not trace pays per call: unlike the ping-pong, whose mix
 * of cheap EAGAIN calls and wake-ups follows the scheduler, every call here
 * is the same. With -w it first prints "ready PID" and waits for a line on
 * stdin, so a tracer can attach to it before the first call. With -g the
 * call is getppid() instead, one lclkctl trace does not trace: what any
 * process pays for each of its syscalls while a trace runs.
 *
 *   eagain_loop [-n CALLS] [-b BATCHES] [-w] [-g]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long calls = 100000, batches = 20, b, i;
	bool wait_line = false, getppid_only = false;
	char c, line[64];
	long long start;
	int sv[2], opt;

	while ((opt = getopt(argc, argv, "n:b:wg")) != -1) {
		switch (opt) {
		case 'n':
			calls = atol(optarg);
			break;
		case 'b':
			batches = atol(optarg);
			break;
		case 'w':
			wait_line = true;
			break;
		case 'g':
			getppid_only = true;
			break;
		default:
			goto usage;
		}
	}
	if (optind < argc || calls <= 0 || batches <= 0)
		goto usage;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)) {
		perror("eagain_loop: socketpair");
		return 1;
	}
	if (wait_line) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin)) {
			fputs("eagain_loop: no start line\n", stderr);
			return 1;
		}
	}
	for (b = 0; b < batches; b++) {
		start = thread_cpu_ns();
		for (i = 0; getppid_only && i < calls; i++)
			syscall(SYS_getppid);	/* glibc does not cache it, but be sure */
		for (i = 0; !getppid_only && i < calls; i++) {
			if (recv(sv[0], &c, 1, MSG_DONTWAIT) != -1 || errno != EAGAIN) {
				fputs("eagain_loop: recv on an empty socket did not fail with EAGAIN\n",
				      stderr);
				return 1;
			}
		}
		printf("%.2f\n", (double)(thread_cpu_ns() - start) / calls);
	}
	return 0;
usage:
	fputs("usage: eagain_loop [-n CALLS] [-b BATCHES] [-w] [-g]\n", stderr);
	return 2;
}
