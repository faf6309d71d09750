// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/integration/trace.sh: a recv interrupted by a signal whose
 * handler (SA_RESTART) makes traced calls of its own, a sendto and a recv
 * (the interrupted call's own kind), and that the kernel restarts when
 * the handler returns. The recv is one call, from its first entry to its
 * data, the handler's time included: its latency is what this program
 * measures around it, less the entry and exit.
 *
 * Prints "ready PID", waits for a line on stdin; then blocks in recv on a
 * socket pair while a thread signals it at DELAY_MS and sends the data at
 * 2 * DELAY_MS; prints "recv_ns N" (CLOCK_MONOTONIC around the recv) and
 * "handler_ran N" (times the handler ran).
 *
 *   trace_sigrestart [DELAY_MS]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int data_sv[2], handler_sv[2];
static long delay_ms = 200;
static pthread_t main_thread;
static volatile sig_atomic_t handler_ran;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Traced calls from within the handler: a sendto, and a recv of it. */
static void on_usr1(int sig)
{
	int saved = errno;
	char c = 'h';

	(void)sig;
	if (sendto(handler_sv[0], &c, 1, 0, NULL, 0) == 1 &&
	    recvfrom(handler_sv[1], &c, 1, 0, NULL, NULL) == 1)
		handler_ran++;
	errno = saved;
}

static void *signaller(void *arg)
{
	char c = 'd';

	(void)arg;
	sleep_ms(delay_ms);
	pthread_kill(main_thread, SIGUSR1);
	sleep_ms(delay_ms);
	if (write(data_sv[0], &c, 1) != 1)
		exit(1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_RESTART };
	long long t0, t1;
	pthread_t t;
	char line[16], c;
	ssize_t n;

	if (argc > 1)
		delay_ms = atol(argv[1]);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, data_sv) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, handler_sv) ||
	    sigaction(SIGUSR1, &sa, NULL))
		return 2;
	main_thread = pthread_self();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	if (pthread_create(&t, NULL, signaller, NULL))
		return 1;
	t0 = now_ns();
	n = recvfrom(data_sv[1], &c, 1, 0, NULL, NULL);
	t1 = now_ns();
	pthread_join(t, NULL);
	if (n != 1) {
		fprintf(stderr, "trace_sigrestart: recv: %zd %s\n", n, strerror(errno));
		return 1;
	}
	printf("recv_ns %lld\nhandler_ran %d\n", t1 - t0, (int)handler_ran);
	return 0;
}
