// SPDX-License-Identifier: GPL-2.0
/*
 * Hand an exit status from the guest to the host: QEMU's isa-debug-exit
 * device at port 0xf4 makes QEMU exit with (status << 1) | 1. The guest
 * kernel has no /dev/port, hence ioperm + outb.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define DEBUG_EXIT_PORT 0xf4

int main(int argc, char **argv)
{
	int status = argc > 1 ? atoi(argv[1]) : 0;

	/* QEMU's exit code is 8 bits wide: keep (status << 1) | 1 in it. */
	if (status < 0 || status > 127)
		status = 127;
	if (ioperm(DEBUG_EXIT_PORT, 4, 1)) {
		perror("guest-exit: ioperm");
		return 1;
	}
	outb(status, DEBUG_EXIT_PORT);
	return 1;	/* not reached: QEMU has exited */
}
