// SPDX-License-Identifier: GPL-2.0
/*
 * For tests/integration/trace.sh: ia32 system calls from a 64-bit process
 * (int $0x80 takes the 32-bit entry, as a 32-bit program's calls do), whose
 * numbers mean other calls on x86_64: ia32 45 is brk, x86_64 45 recvfrom.
 * Prints "ready PID", waits for a line on stdin, makes N brk(0) calls.
 *
 *   trace_int80 N
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define IA32_BRK	45

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100, i, ret;
	char line[16];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	for (i = 0; i < n; i++) {
		ret = IA32_BRK;
		asm volatile("int $0x80" : "+a"(ret) : "b"(0) : "memory");
		if (ret < 0 && ret > -4096) {
			fprintf(stderr, "trace_int80: ia32 brk: %ld\n", ret);
			return 1;
		}
	}
	return 0;
}
