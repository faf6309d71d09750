// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/integration/trace.sh: THREADS threads make CALLS sendto and
 * CALLS recvfrom each, of one byte, on a socket pair of their own, all at
 * once on every CPU: the probes' per-CPU counters must add up to exactly
 * THREADS * CALLS calls and bytes of each (a count lost to an update
 * interleaved on one CPU shows as fewer). Prints "ready PID", waits for a
 * line on stdin, then "done" when every call has returned.
 *
 *   trace_hammer THREADS CALLS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static long calls;
static pthread_barrier_t start;

static void *hammer(void *arg)
{
	int sv[2];
	char c = 'x';
	long i;

	(void)arg;
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("trace_hammer: socketpair");
		exit(1);
	}
	pthread_barrier_wait(&start);
	for (i = 0; i < calls; i++) {
		if (sendto(sv[0], &c, 1, 0, NULL, 0) != 1 ||
		    recvfrom(sv[1], &c, 1, 0, NULL, NULL) != 1) {
			perror("trace_hammer: sendto/recvfrom");
			exit(1);
		}
	}
	close(sv[0]);
	close(sv[1]);
	return NULL;
}

int main(int argc, char **argv)
{
	long nthreads = argc > 1 ? atol(argv[1]) : 8, i;
	char line[16];
	pthread_t *t;

	calls = argc > 2 ? atol(argv[2]) : 10000;
	t = calloc(nthreads, sizeof(*t));
	if (!t || nthreads <= 0 || calls <= 0 ||
	    pthread_barrier_init(&start, NULL, nthreads))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, hammer, NULL))
			return 1;
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	printf("done\n");
	return 0;
}
