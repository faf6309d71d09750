// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic socket ping-pong for lclkctl trace's tests and benchmark.
 *
 * The initiator (this process) and a forked peer share an AF_UNIX
 * SOCK_SEQPACKET pair. Each round the initiator send()s 8 bytes and recv()s
 * the 8-byte answer; the peer recv()s, waits the delay (nanosleep, not a
 * traced call) and send()s back. So, with glibc, each process makes exactly
 * N sendto and N recvfrom calls (the peer one more recvfrom, which finds
 * the end), and the initiator's recvfrom lasts the delay plus a wake-up.
 * With -b both spin on recv(MSG_DONTWAIT), making EAGAIN calls in between,
 * the way busy-polling transports do.
 *
 * Output, one line each:
 *   ready PID PEER_PID        before the first round (after -w's line)
 *   done ROUNDS CALLS PEER_CALLS ELAPSED_NS CPU_NS
 * ROUNDS completed (-t MS stops early), CALLS the send/recv calls of the
 * initiator, PEER_CALLS the peer's, CPU_NS the initiator's CPU time: what
 * a benchmark divides by CALLS, unaffected by waiting for a busy CPU.
 * -T puts the two on a TCP connection over 127.0.0.1 (TCP_NODELAY)
 * instead, for lclkctl trace --messages, which records TCP only.
 * -l FILE logs each round as "SEND_BEFORE RECV_AFTER EMPTY RECV_BEFORE" in
 * logical time (/dev/lclk0) or, without the module, CLOCK_MONOTONIC: any
 * traced call of the round starts and ends between the first two; EMPTY is
 * the number of the initiator's receives that found nothing (EAGAIN, EINTR)
 * that round; the receives lie between RECV_BEFORE and RECV_AFTER, so a
 * round where those are close had its answer waiting (the initiator was
 * off the CPU for the peer's delay) and its receive did not wait.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lclk.h"

struct counts {
	uint64_t calls[2];	/* [0] initiator, [1] peer */
};

struct opts {
	long rounds;
	long delay_us;
	long limit_ms;
	bool busy;
	bool tcp;
	bool wait_line;
	const char *log;
	const char *comm;
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void usage(void)
{
	fputs("usage: pingpong [-n ROUNDS] [-t LIMIT_MS] [-d DELAY_US] [-b] [-T] [-w] [-l LOG] [-c COMM]\n",
	      stderr);
	exit(2);
}

/* One message each way; busy: spin on EAGAIN. Counts every call. */
static void xsend(int fd, uint64_t *calls)
{
	char msg[8] = "pingpong";

	(*calls)++;
	if (send(fd, msg, sizeof(msg), 0) != sizeof(msg))
		die("send");
}

/* Receives one message; *empty counts the calls that found none. */
static int xrecv(int fd, bool busy, uint64_t *calls, uint64_t *empty)
{
	char msg[8];
	ssize_t n;

	for (;;) {
		(*calls)++;
		n = recv(fd, msg, sizeof(msg), busy ? MSG_DONTWAIT : 0);
		if (n == sizeof(msg))
			return 0;
		if (n == 0)
			return -1;	/* the other side is gone */
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("recv");
		(*empty)++;
	}
}

static void peer(int fd, const struct opts *o, struct counts *c)
{
	struct timespec d = {
		.tv_sec = o->delay_us / 1000000,
		.tv_nsec = (o->delay_us % 1000000) * 1000,
	};
	uint64_t empty = 0;
	long i;

	for (i = 0; i < o->rounds; i++) {
		/* The first wait is for "go": no spinning before it. */
		if (xrecv(fd, o->busy && i > 0, &c->calls[1], &empty))
			_exit(0);	/* a -t run's initiator stopped early */
		if (o->delay_us)
			nanosleep(&d, NULL);
		xsend(fd, &c->calls[1]);
	}
	/*
	 * Close only after the initiator has: a spinning initiator's
	 * recv(MSG_DONTWAIT) on SOCK_SEQPACKET can find the queue empty, then
	 * the shutdown flag set by our exit, and return end of file while the
	 * last answer waits in the queue.
	 */
	xrecv(fd, false, &c->calls[1], &empty);
	_exit(0);
}

/* The peer closed its end early: say how it ended (once seen without a cause). */
static void peer_gone(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		fprintf(stderr, "pingpong: the peer went away (waitpid: %s)\n", strerror(errno));
	else if (WIFSIGNALED(status))
		fprintf(stderr, "pingpong: the peer went away, killed by signal %d (%s)\n",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		fprintf(stderr, "pingpong: the peer went away, exit status %d\n",
			WEXITSTATUS(status));
}

static int64_t cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

static int64_t now_ns(const struct lclk_clock *lc, bool logical)
{
	struct lclk_now n;

	if (!logical)
		return lclk_monotonic_ns();
	lclk_now(lc, &n);
	return n.time_ns;
}

/* A connected TCP pair over loopback, as socketpair() gives a local one. */
static void tcp_pair(int sv[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		die("listen");
	sv[0] = socket(AF_INET, SOCK_STREAM, 0);
	if (sv[0] < 0 || connect(sv[0], (struct sockaddr *)&a, sizeof(a)))
		die("connect");
	sv[1] = accept(l, NULL, NULL);
	if (sv[1] < 0)
		die("accept");
	close(l);
	setsockopt(sv[0], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(sv[1], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static void parse(int argc, char **argv, struct opts *o)
{
	int opt;

	while ((opt = getopt(argc, argv, "n:t:d:bTwl:c:")) != -1) {
		switch (opt) {
		case 'n':
			o->rounds = atol(optarg);
			break;
		case 't':
			o->limit_ms = atol(optarg);
			break;
		case 'd':
			o->delay_us = atol(optarg);
			break;
		case 'b':
			o->busy = true;
			break;
		case 'T':
			o->tcp = true;
			break;
		case 'w':
			o->wait_line = true;
			break;
		case 'l':
			o->log = optarg;
			break;
		case 'c':
			o->comm = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind < argc || o->rounds <= 0 || o->delay_us < 0 || o->limit_ms < 0)
		usage();
}

int main(int argc, char **argv)
{
	struct opts o = { .rounds = 1000 };
	struct lclk_clock lc = { .fd = -1 };
	int64_t start, elapsed, cpu, deadline, *stamps = NULL;
	uint64_t *empty = NULL;
	bool logical;
	struct counts *c;
	int sv[2], status;
	char line[64];
	pid_t pid;
	long i;

	parse(argc, argv, &o);
	if (o.comm && prctl(PR_SET_NAME, o.comm))
		die("prctl");
	logical = lclk_open(&lc, "/dev/lclk0") == 0;
	if (o.log && (!(stamps = calloc(3 * o.rounds, sizeof(*stamps))) ||
		      !(empty = calloc(o.rounds, sizeof(*empty)))))
		die("calloc");
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED)
		die("mmap");
	if (o.tcp)
		tcp_pair(sv);
	else if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv))
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		close(sv[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		peer(sv[1], &o, c);
	}
	close(sv[1]);

	printf("ready %d %d\n", (int)getpid(), (int)pid);
	fflush(stdout);
	if (o.wait_line && !fgets(line, sizeof(line), stdin))
		die("waiting for the start line");

	cpu = cpu_ns();
	start = lclk_monotonic_ns();
	deadline = o.limit_ms ? start + o.limit_ms * 1000000LL : INT64_MAX;
	for (i = 0; i < o.rounds && lclk_monotonic_ns() < deadline; i++) {
		uint64_t round_empty = 0;

		if (stamps)
			stamps[3 * i] = now_ns(&lc, logical);
		xsend(sv[0], &c->calls[0]);
		if (stamps)
			stamps[3 * i + 2] = now_ns(&lc, logical);
		if (xrecv(sv[0], o.busy, &c->calls[0], &round_empty)) {
			peer_gone(pid);
			return 1;
		}
		if (stamps) {
			stamps[3 * i + 1] = now_ns(&lc, logical);
			empty[i] = round_empty;
		}
	}
	elapsed = lclk_monotonic_ns() - start;
	cpu = cpu_ns() - cpu;
	o.rounds = i;
	close(sv[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("peer");

	if (o.log) {
		FILE *f = fopen(o.log, "w");

		if (!f)
			die(o.log);
		for (i = 0; i < o.rounds; i++)
			fprintf(f, "%lld %lld %llu %lld\n", (long long)stamps[3 * i],
				(long long)stamps[3 * i + 1], (unsigned long long)empty[i],
				(long long)stamps[3 * i + 2]);
		if (fclose(f))
			die(o.log);
	}
	printf("done %ld %llu %llu %lld %lld\n", o.rounds,
	       (unsigned long long)c->calls[0], (unsigned long long)c->calls[1],
	       (long long)elapsed, (long long)cpu);
	return 0;
}
