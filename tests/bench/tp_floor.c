// SPDX-License-Identifier: GPL-2.0
/*
 * tp_floor: attach tests/bench/tp_floor.bpf.c's empty programs to the raw
 * syscall tracepoints, print "Attached" on stderr and keep them attached
 * until SIGINT or SIGTERM. Exits 1 if they cannot be loaded or attached.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp_floor.skel.h"

int main(void)
{
	struct tp_floor_bpf *skel;
	sigset_t set;
	int err, sig;

	/* Blocked before attaching, so that an early signal is not lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	skel = tp_floor_bpf__open_and_load();
	if (!skel) {
		perror("tp_floor: load");
		return 1;
	}
	err = tp_floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "tp_floor: attach: %s\n", strerror(-err));
		tp_floor_bpf__destroy(skel);
		return 1;
	}
	fputs("Attached\n", stderr);
	sigwait(&set, &sig);
	tp_floor_bpf__destroy(skel);
	return 0;
}
