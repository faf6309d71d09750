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
 *   SET_MODEL  with LCLK_FAKE_STEER set: the clock starts UNSYNCED, as a
 *              module just loaded; offset, rate, correction, bound,
 *              holdover, drift and leap are taken as the module takes them,
 *              and GET_TIME/GET_MODEL follow the model from then on. The
 *              clock's own oscillator is LCLK_FAKE_DRIFT_PPB off (default
 *              0), so a daemon steering it has a frequency to learn. The
 *              model is this process's alone (a daemon's, under test).
 *   GET_DISRUPTION with LCLK_FAKE_VMCLOCK naming a file that holds a
 *              number: the VM's vmclock disruption marker, which a test
 *              rewrites to stand for a snapshot restore; EOPNOTSUPP (no
 *              vmclock) without. Steered, as the module: SET_MODEL with
 *              LCLK_SET_VMCLOCK and another marker fails with ESTALE, and
 *              a synced clock reads DISRUPTED once the marker differs from
 *              the one of its last sync.
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
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "uapi/linux/lclk.h"
#include "lclk.h"

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

/*
 * The steered model (LCLK_FAKE_STEER): logical(t) = t + offset + (t - t0) x
 * (rate + corr + the oscillator's drift), corr until corr_end. Runner
 * threads read it while the daemon's loop sets it.
 */
static struct {
	pthread_mutex_t lock;
	int init;
	long long t0, offset, rate_ppt, corr_ppt, corr_end, bound0, last_update;
	long long holdover;
	unsigned int max_drift_ppb, status, model_flags, leap;
	int tai_offset_s;
	unsigned long long synced_marker;
} fm = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The VM's disruption marker (LCLK_FAKE_VMCLOCK): 0 or -errno. */
static int vm_marker(unsigned long long *marker)
{
	const char *path = getenv("LCLK_FAKE_VMCLOCK");
	FILE *f;
	int ok;

	if (!path)
		return -EOPNOTSUPP;
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", marker) == 1;
	fclose(f);
	return ok ? 0 : -EAGAIN;	/* being rewritten */
}

static long long drift_ppt(void)
{
	const char *s = getenv("LCLK_FAKE_DRIFT_PPB");

	return s ? atoll(s) * 1000 : 0;
}

static long long fm_rate(void)
{
	return fm.rate_ppt + fm.corr_ppt + drift_ppt();
}

static long long fm_logical(long long t)
{
	return lclk_logical(t, fm.t0, fm.offset, lclk_ppt_to_mult(fm_rate()));
}

/* Move the anchor to t (the lock held), ending a correction due by then. */
static void fm_anchor(long long t)
{
	if (!fm.init) {
		fm.init = 1;
		fm.t0 = t;
		fm.offset = offset_ns();
		fm.bound0 = FAKE_BOUND_NS;
		fm.holdover = 1LL << 62;
		fm.status = LCLK_STATUS_UNSYNCED;
		return;
	}
	if (fm.corr_end && fm.corr_end <= t) {
		fm.offset = fm_logical(fm.corr_end) - fm.corr_end;
		fm.t0 = fm.corr_end;
		fm.corr_ppt = 0;
		fm.corr_end = 0;
	}
	fm.offset = fm_logical(t) - t;
	fm.t0 = t;
}

static void fm_get(struct lclk_params *m)
{
	unsigned long long marker;

	memset(m, 0, sizeof(*m));
	pthread_mutex_lock(&fm.lock);
	fm_anchor(monotonic_ns());
	m->t0_ns = fm.t0;
	m->offset_ns = fm.offset;
	m->rate_ppt = fm_rate();
	m->rate_mult = lclk_ppt_to_mult(m->rate_ppt);
	m->bound0_ns = fm.bound0;
	m->last_update_ns = fm.last_update;
	m->holdover_ns = fm.holdover;
	m->max_drift_ppb = fm.max_drift_ppb;
	m->drift_mult = fm.max_drift_ppb ? lclk_ppb_to_mult(fm.max_drift_ppb) : 0;
	m->status = fm.status;
	if ((fm.status == LCLK_STATUS_SYNCED || fm.status == LCLK_STATUS_HOLDOVER) &&
	    !vm_marker(&marker) && marker != fm.synced_marker)
		m->status = LCLK_STATUS_DISRUPTED;
	m->model_flags = fm.model_flags;
	m->tai_offset_s = (__s16)fm.tai_offset_s;
	m->leap = (__u8)fm.leap;
	pthread_mutex_unlock(&fm.lock);
}

static int fm_set(const struct lclk_set_model *s)
{
	long long now = monotonic_ns(), t0 = s->t0_ns ? s->t0_ns : now;
	unsigned long long marker = 0;
	int err = vm_marker(&marker);

	if ((s->modes & LCLK_SET_VMCLOCK) && (err || marker != s->vmclock_marker)) {
		errno = err == -EOPNOTSUPP ? EOPNOTSUPP : err ? EAGAIN : ESTALE;
		return -1;
	}
	pthread_mutex_lock(&fm.lock);
	fm_anchor(now);
	if (s->modes & LCLK_SET_RATE) {
		fm.rate_ppt = s->rate_ppt;
		fm.corr_ppt = s->modes & LCLK_SET_CORRECTION ? s->corr_ppt : 0;
		fm.corr_end = fm.corr_ppt ? now + s->corr_ns : 0;
	}
	if (s->modes & LCLK_SET_OFFSET) {
		fm.offset = s->offset_ns + lclk_scale(now - t0, lclk_ppt_to_mult(fm_rate()));
		fm.t0 = now;
	}
	if (s->modes & LCLK_SET_BOUND) {
		fm.bound0 = s->bound_ns;
		fm.last_update = t0;
		fm.status = LCLK_STATUS_SYNCED;
		fm.synced_marker = marker;
	}
	if (s->modes & LCLK_SET_HOLDOVER)
		fm.holdover = s->holdover_ns;
	if (s->modes & LCLK_SET_MAX_DRIFT)
		fm.max_drift_ppb = s->max_drift_ppb;
	if (s->modes & LCLK_SET_FLAGS)
		fm.model_flags = s->model_flags;
	if (s->modes & LCLK_SET_LEAP) {
		fm.leap = s->leap;
		fm.tai_offset_s = s->tai_offset_s;
	}
	pthread_mutex_unlock(&fm.lock);
	return 0;
}

static int steered(void)
{
	return !!getenv("LCLK_FAKE_STEER");
}

static int fake_ioctl(unsigned long request, void *arg)
{
	if (steered() && request == LCLK_IOC_GET_TIME) {
		struct lclk_time *t = arg;
		struct lclk_params m;
		struct lclk_now n;

		fm_get(&m);
		lclk_eval(&m, NULL, monotonic_ns(), -1, &n);
		t->base_ns = n.base_ns;
		t->logical_ns = n.time_ns;
		t->bound_ns = n.bound_ns;
		t->status = n.status;
		t->cpu = 0;
		return 0;
	}
	if (steered() && request == LCLK_IOC_GET_MODEL) {
		fm_get(arg);
		return 0;
	}
	if (steered() && request == LCLK_IOC_SET_MODEL)
		return fm_set(arg);
	switch (request) {
	case LCLK_IOC_GET_DISRUPTION: {
		struct lclk_disruption *d = arg;
		unsigned long long marker;
		int err = vm_marker(&marker);

		if (err) {
			errno = -err;
			return -1;
		}
		memset(d, 0, sizeof(*d));
		d->marker = marker;
		return 0;
	}
	case LCLK_IOC_INFO: {
		struct lclk_info *i = arg;

		memset(i, 0, sizeof(*i));
		i->abi_version = LCLK_ABI_VERSION;
		i->caps = LCLK_CAP_MMAP;
		i->phc_index = -1;
		i->mmap_size = 4096;
		/* What a daemon may steer it by: the module's defaults. */
		if (steered()) {
			i->max_rate_ppt = LCLK_MAX_RATE_PPT;
			i->max_drift_ppb = 50000;
		}
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
