// SPDX-License-Identifier: GPL-2.0
/*
 * tp_floor: attach tests/bench/tp_floor.bpf.c's empty programs to the raw
 * syscall tracepoints (-f: fentry and fexit on recvfrom's wrapper instead),
 * print "Attached" on stderr and keep them attached until SIGINT or
 * SIGTERM. Exits 1 if they cannot be loaded or attached.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tp_floor.skel.h"

int main(int argc, char **argv)
{
	struct tp_floor_bpf *skel;
	bool fentry = false;
	sigset_t set;
	int err, sig, opt;

	while ((opt = getopt(argc, argv, "f")) != -1) {
		if (opt != 'f') {
			fputs("usage: tp_floor [-f]\n", stderr);
			return 2;
		}
		fentry = true;
	}
	/* Blocked before attaching, so that an early signal is not lost. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);

	skel = tp_floor_bpf__open();
	if (!skel) {
		perror("tp_floor: open");
		return 1;
	}
	/* Only one pair: a kernel without fentry still loads the tp_btf one. */
	bpf_program__set_autoload(skel->progs.floor_enter, !fentry);
	bpf_program__set_autoload(skel->progs.floor_exit, !fentry);
	bpf_program__set_autoload(skel->progs.floor_fentry, fentry);
	bpf_program__set_autoload(skel->progs.floor_fexit, fentry);
	err = tp_floor_bpf__load(skel);
	if (err) {
		fprintf(stderr, "tp_floor: load: %s\n", strerror(-err));
		tp_floor_bpf__destroy(skel);
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
