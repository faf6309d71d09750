// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim: a file stands in for an lclk device as a process in a
 * time namespace that shifts CLOCK_MONOTONIC sees one, so the readers'
 * ioctl paths run on a host without the module. The file named by
 * LCLK_FAKE_PATH (any file: it is never read) answers the lclk ioctls:
 *
 *   INFO       ABI version 2, mmap capable, a 4096-byte page
 *   GET_TIME   logical = CLOCK_MONOTONIC + LCLK_FAKE_OFFSET_NS (default
 *              1e9), bound 1234 ns, SYNCED
 *   GET_MODEL  the same line: offset, bound0 1234, synced now, no drift
 *
 * and mapping it does what the module does in such a namespace
 * (LCLK_FAKE_PAGE):
 *
 *   none     mmap fails with EOPNOTSUPP: opened inside the namespace
 *   refused  the page says LCLK_PAGE_REFUSED, no model, seq 0: a mapping
 *            inherited into the namespace
 *
 * Every other call, and every call on another file, goes through.
 *
 *   LCLK_FAKE_PATH=/tmp/x LCLK_FAKE_PAGE=refused LD_PRELOAD=fake_lclk.so CMD
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/lclk.h"

#define FAKE_BOUND_NS	1234

/* Is fd the file LCLK_FAKE_PATH names? */
static int is_fake(int fd)
{
	const char *want = getenv("LCLK_FAKE_PATH");
	char link[64], path[PATH_MAX], real[PATH_MAX];
	ssize_t n;

	if (fd < 0 || !want || !realpath(want, real))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return 0;
	path[n] = '\0';
	return strcmp(path, real) == 0;
}

static long long offset_ns(void)
{
	const char *s = getenv("LCLK_FAKE_OFFSET_NS");

	return s ? atoll(s) : 1000000000LL;
}

static long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int fake_ioctl(unsigned long request, void *arg)
{
	switch (request) {
	case LCLK_IOC_INFO: {
		struct lclk_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->abi_version = LCLK_ABI_VERSION;
		i->caps = LCLK_CAP_MMAP;
		i->phc_index = -1;
		i->mmap_size = 4096;
		return 0;
	}
	case LCLK_IOC_GET_TIME: {
		struct lclk_time *t = arg;

		if (t->flags) {
			errno = EINVAL;
			return -1;
		}
		t->base_ns = monotonic_ns();
		t->logical_ns = t->base_ns + offset_ns();
		t->bound_ns = FAKE_BOUND_NS;
		t->status = LCLK_STATUS_SYNCED;
		t->cpu = 0;
		return 0;
	}
	case LCLK_IOC_GET_MODEL: {
		struct lclk_params *m = arg;

		memset(m, 0, sizeof(*m));
		m->t0_ns = m->last_update_ns = monotonic_ns();
		m->offset_ns = offset_ns();
		m->bound0_ns = FAKE_BOUND_NS;
		m->holdover_ns = 1LL << 62;
		m->status = LCLK_STATUS_SYNCED;
		return 0;
	}
	default:
		errno = ENOTTY;
		return -1;
	}
}

int ioctl(int fd, unsigned long request, ...)
{
	static int (*real)(int, unsigned long, void *);
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (_IOC_TYPE(request) == LCLK_IOC_MAGIC && is_fake(fd))
		return fake_ioctl(request, arg);
	if (!real)
		real = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	return real(fd, request, arg);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	const char *page = getenv("LCLK_FAKE_PAGE");
	struct lclk_page *p;

	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	if (!is_fake(fd))
		return real(addr, len, prot, flags, fd, off);
	if (!page || strcmp(page, "refused")) {
		errno = EOPNOTSUPP;
		return MAP_FAILED;
	}
	p = real(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	p->magic = LCLK_PAGE_MAGIC;
	p->abi_version = LCLK_ABI_VERSION;
	p->flags = LCLK_PAGE_REFUSED;
	mprotect(p, len, prot);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}
