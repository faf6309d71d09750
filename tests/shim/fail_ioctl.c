// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim for failure paths a real device reaches only in a race:
 * the Nth lclk ioctl named by LCLK_FAIL_IOCTL fails with EIO; every other
 * call goes through.
 *
 *   LCLK_FAIL_IOCTL=SET_CPU_OFFSET LCLK_FAIL_IOCTL_NTH=2 LD_PRELOAD=fail_ioctl.so CMD
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "uapi/linux/lclk.h"

static const struct {
	const char *name;
	unsigned long request;
} requests[] = {
	{ "SET_MODEL",		LCLK_IOC_SET_MODEL },
	{ "STEP",		LCLK_IOC_STEP },
	{ "SET_CPU_OFFSET",	LCLK_IOC_SET_CPU_OFFSET },
};

static unsigned long failing(void)
{
	const char *name = getenv("LCLK_FAIL_IOCTL");
	unsigned int i;

	for (i = 0; name && i < sizeof(requests) / sizeof(requests[0]); i++)
		if (!strcmp(name, requests[i].name))
			return requests[i].request;
	return 0;
}

int ioctl(int fd, unsigned long request, ...)
{
	static int (*real)(int, unsigned long, void *);
	static unsigned long calls;
	const char *nth = getenv("LCLK_FAIL_IOCTL_NTH");
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real)
		real = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	if (nth && request == failing() && ++calls == strtoul(nth, NULL, 0)) {
		errno = EIO;
		return -1;
	}
	return real(fd, request, arg);
}
