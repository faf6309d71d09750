// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim that makes the kernel "reject" chosen BPF programs: a
 * BPF_PROG_LOAD of a program whose name (as the kernel gets it: 15
 * characters at most) is in the comma-separated LCLK_FAIL_BPF_PROG fails
 * with EINVAL, as a verifier rejection would; an entry that ends in "*"
 * is a prefix ("fentry_*": every fentry program of lclkctl trace, not its
 * test program lclk_probe nor libbpf's feature probes), so that
 * tests/guest/trace.sh can ask lclkctl trace whether it takes an attach
 * mode without the load's cost. Every other call goes
 * through. libbpf makes its bpf() calls through syscall(3); the six
 * arguments are read whatever their number (x86_64 passes them in registers).
 *
 *   LCLK_FAIL_BPF_PROG=tp_sys_enter,fentry_recvfrom LD_PRELOAD=fail_bpf_prog.so CMD
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>

static int is_failing(const char *name)
{
	const char *list = getenv("LCLK_FAIL_BPF_PROG"), *end;
	size_t len = strnlen(name, BPF_OBJ_NAME_LEN);

	for (; list && *list; list = *end ? end + 1 : end) {
		end = strchrnul(list, ',');
		if (end > list && end[-1] == '*' &&
		    (size_t)(end - 1 - list) <= len && !strncmp(list, name, end - 1 - list))
			return 1;
		if ((size_t)(end - list) == len && !strncmp(list, name, len))
			return 1;
	}
	return 0;
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	long a[6];
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == SYS_bpf && a[0] == BPF_PROG_LOAD &&
	    is_failing(((const union bpf_attr *)a[1])->prog_name)) {
		errno = EINVAL;
		return -1;
	}
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
