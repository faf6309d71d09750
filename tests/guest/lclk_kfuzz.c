// SPDX-License-Identifier: GPL-2.0
/*
 * lclk_kfuzz: a kernel-interface fuzzer for the lclk module, run in the VM.
 *
 * Threads race each other through every way in: random and boundary
 * ioctls on /dev/lclkN (every LCLK_IOC_*, with mutated sizes, directions
 * and numbers, reserved fields set, and pointers that are NULL, read-only,
 * in the kernel or straddling an unmapped page), mmap with odd lengths,
 * offsets and protections, read() and lseek() of the text view, and on
 * /dev/ptpN clock_gettime/settime/adjtime and the PTP_* ioctls. A writer
 * makes valid model changes as fast as it can, a thread without
 * CAP_SYS_TIME tries the same changes, and a reloader rmmod's and insmod's
 * the module (with another instance count) under all of them.
 *
 * What the kernel does wrong shows up as a KASAN, lockdep, UBSAN or WARN
 * report on the console, which fails the run in the test bed (vm-run).
 * This program checks what it can see from userspace: a mapping is never
 * writable and reads a well-formed page, an unprivileged change never
 * succeeds, answers are in range, the module always reloads and works at
 * the end, and every kind of call reached the module at least once.
 *
 *   lclk_kfuzz [--seconds N] [--seed S] [--workers N]
 *
 * Defaults come from LCLK_KFUZZ_SECONDS (20, the default guest suite's
 * short run; "make fuzz-kernel" runs longer), LCLK_KFUZZ_SEED (from the
 * clock) and LCLK_KFUZZ_WORKERS (3). The seed fixes each thread's sequence
 * of calls; how the threads interleave is the scheduler's. The module to
 * reload is LCLK_MODULE with LCLK_MODULE_ARGS, as tests/guest/run.sh loaded
 * it; it is left loaded with those arguments. Output is TAP.
 */
#include <getopt.h>
#include <inttypes.h>
#include <linux/ptp_clock.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sys/timex.h>

#include "lclk_test.h"

#define MAX_WORKERS	16
#define SLOTS		8		/* shared fds of each kind */
#define MAX_DEV		4		/* /dev/lclk0..3, /dev/ptp0..3 */
#define PAGE		4096L
#define REPORT		10		/* violations printed */
#define FD_TO_CLOCKID(fd)	((~(clockid_t)(fd) << 3) | 3)

enum op {
	OP_OPEN, OP_CLOSE, OP_IOCTL, OP_MMAP, OP_READ, OP_WRITE_MODEL,
	OP_UNPRIV, OP_PHC_OPEN, OP_PHC_CLOCK, OP_PHC_IOCTL, OP_RELOAD,
	NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"open", "close", "ioctl", "mmap", "read", "model-write",
	"unprivileged", "phc-open", "phc-clock", "phc-ioctl", "rmmod",
};

static atomic_llong calls[NR_OPS], oks[NR_OPS];
static atomic_llong get_time_oks, unloads, loads;
static atomic_int stop, drain, violations;
static atomic_int lclk_slots[SLOTS], ptp_slots[SLOTS];
static int ncpus_guess = 1;

static struct {
	const char *module, *args;
	char name[64];
} mod;

static void violation(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&violations, 1) >= REPORT)
		return;
	va_start(ap, fmt);
	fputs("# VIOLATION: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

/* ---- seeded randomness (splitmix64: one state word per thread) ---------- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

#define ONE_OF(r, a)	((a)[below(r, sizeof(a) / sizeof((a)[0]))])

/* Values at the edges of what the ABI accepts, and of the types. */
static __s64 pick_s64(struct rng *r)
{
	static const __s64 edges[] = {
		0, 1, -1, 2, 999999999, 1000000000, -1000000000,
		INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
		INT32_MAX, INT32_MIN, UINT32_MAX, 1LL << 32,
		LCLK_MAX_RATE_PPT, LCLK_MAX_RATE_PPT + 1,
		-LCLK_MAX_RATE_PPT, -LCLK_MAX_RATE_PPT - 1,
		LCLK_MAX_OFFSET_NS, LCLK_MAX_OFFSET_NS + 1,
		-LCLK_MAX_OFFSET_NS, -LCLK_MAX_OFFSET_NS - 1,
		LCLK_MAX_BOUND_NS, LCLK_MAX_BOUND_NS + 1,
		LCLK_MAX_CPU_OFFSET_NS, LCLK_MAX_CPU_OFFSET_NS + 1,
		-LCLK_MAX_CPU_OFFSET_NS, -LCLK_MAX_CPU_OFFSET_NS - 1,
	};

	switch (below(r, 4)) {
	case 0:
		return ONE_OF(r, edges);
	case 1:
		return (__s64)rnd(r);
	case 2:
		return (__s64)below(r, 2 * NSEC) - NSEC;
	default:
		/* Near "now", for t0 fields. */
		return lclk_monotonic_ns() + (__s64)below(r, 2 * NSEC) - NSEC;
	}
}

/* The first per-CPU entry that would lie past the page's first page. */
#define CPU_PAST_PAGE	((PAGE - sizeof(struct lclk_page)) / sizeof(__s64))

static __u32 pick_u32(struct rng *r)
{
	static const __u32 edges[] = {
		0, 1, 2, 3, 0x7f, 0x80, 0xff, INT32_MAX, UINT32_MAX,
		LCLK_MAX_DRIFT_PPB, LCLK_MAX_DRIFT_PPB + 1, LCLK_SET_ALL_MODES,
		LCLK_SET_ALL_MODES + 1, LCLK_ALL_FLAGS, LCLK_ALL_FLAGS + 1,
		CPU_PAST_PAGE - 1, CPU_PAST_PAGE, CPU_PAST_PAGE + 1,
		PAGE / sizeof(__s64) - 1, PAGE / sizeof(__s64), 1024, 8192,
	};

	switch (below(r, 3)) {
	case 0:
		return ONE_OF(r, edges);
	case 1:
		return (__u32)rnd(r);
	default:
		return (__u32)below(r, ncpus_guess + 3);
	}
}

/* Reserved fields: mostly zero, as the ABI asks, sometimes not. */
static void fill_rsv(struct rng *r, void *rsv, size_t len)
{
	memset(rsv, 0, len);
	if (below(r, 4) == 0)
		((unsigned char *)rsv)[below(r, len)] = (unsigned char)(1 + below(r, 255));
}

/* ---- where arguments live ------------------------------------------------ */

/*
 * Each thread's arena: two writable pages, an unmapped one, a read-only
 * one. An argument may start anywhere in it, or at NULL or in the kernel.
 */
struct arena {
	unsigned char *base;
};

static void arena_init(struct arena *a)
{
	a->base = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a->base == MAP_FAILED)
		abort();
	munmap(a->base + 2 * PAGE, PAGE);
	mprotect(a->base + 3 * PAGE, PAGE, PROT_READ);
}

static void *pick_ptr(struct rng *r, struct arena *a, size_t size)
{
	switch (below(r, 16)) {
	case 0:
		return NULL;
	case 1:		/* straddles into the unmapped page */
		return a->base + 2 * PAGE - 1 - below(r, size ? size - 1 : 1);
	case 2:		/* read-only: writing the answer faults */
		return a->base + 3 * PAGE;
	case 3:
		return (void *)0xffff888000000000UL;
	case 4:
		/* Anywhere but this process's own memory, which it would corrupt. */
		return (void *)(uintptr_t)(rnd(r) | 1UL << 63);
	default:
		return a->base;
	}
}

/* ---- the lclk ioctls ----------------------------------------------------- */

static const unsigned int lclk_cmds[] = {
	LCLK_IOC_INFO, LCLK_IOC_GET_TIME, LCLK_IOC_GET_MODEL,
	LCLK_IOC_SET_MODEL, LCLK_IOC_STEP, LCLK_IOC_GET_CPU_OFFSET,
	LCLK_IOC_SET_CPU_OFFSET, LCLK_IOC_GET_STATS, LCLK_IOC_GET_DISRUPTION,
};

/* A command of the ABI, or one with its size, direction or number bent. */
static unsigned int pick_cmd(struct rng *r)
{
	unsigned int cmd = ONE_OF(r, lclk_cmds);

	switch (below(r, 12)) {
	case 0:
		return _IOC(_IOC_DIR(cmd), LCLK_IOC_MAGIC, _IOC_NR(cmd),
			    below(r, 300));
	case 1:
		return _IOC(below(r, 4), LCLK_IOC_MAGIC, _IOC_NR(cmd),
			    _IOC_SIZE(cmd));
	case 2:
		return _IOC(_IOC_DIR(cmd), LCLK_IOC_MAGIC, below(r, 32),
			    _IOC_SIZE(cmd));
	case 3:
		return (unsigned int)rnd(r);
	default:
		return cmd;
	}
}

/* Fill the argument as its command expects, with edge values, or with noise. */
static void fill_arg(struct rng *r, unsigned int cmd, void *buf, size_t size)
{
	size_t i;

	memset(buf, 0, size);
	if (below(r, 4) == 0) {
		for (i = 0; i < size; i++)
			((unsigned char *)buf)[i] = (unsigned char)rnd(r);
		return;
	}
	switch (cmd) {
	case LCLK_IOC_SET_MODEL: {
		struct lclk_set_model *m = buf;

		m->modes = below(r, 3) ? (__u32)below(r, LCLK_SET_ALL_MODES + 1) : pick_u32(r);
		m->flags = below(r, 3) ? (__u32)below(r, 2) : pick_u32(r);
		m->t0_ns = below(r, 2) ? 0 : pick_s64(r);
		m->offset_ns = pick_s64(r);
		m->rate_ppt = pick_s64(r);
		m->bound_ns = pick_s64(r);
		m->holdover_ns = pick_s64(r);
		m->max_drift_ppb = pick_u32(r);
		m->model_flags = below(r, 2) ? (__u32)below(r, 2) : pick_u32(r);
		/* corrections the module's timer ends during the run, too */
		m->corr_ppt = below(r, 2) ? (__s64)below(r, 1000000000) - 500000000 :
			      pick_s64(r);
		m->corr_ns = below(r, 2) ? (__s64)below(r, 100000000) : pick_s64(r);
		/* leaps, some due within the run (logical time near 1 s ahead) */
		m->leap = below(r, 2) ? (__u32)below(r, 3) : pick_u32(r);
		m->leap_ns = below(r, 2) ? 0 : pick_s64(r);
		m->tai_offset_s = below(r, 2) ? (__s32)below(r, 40) : (__s32)pick_u32(r);
		m->vmclock_marker = below(r, 2) ? 0 : (__u64)pick_s64(r);
		if (below(r, 8) == 0)
			fill_rsv(r, m->rsv, sizeof(m->rsv));
		break;
	}
	case LCLK_IOC_STEP: {
		struct lclk_step *s = buf;

		s->delta_ns = pick_s64(r);
		s->flags = below(r, 3) ? (__u32)below(r, 2) : pick_u32(r);
		fill_rsv(r, s->rsv, sizeof(s->rsv));
		break;
	}
	case LCLK_IOC_GET_CPU_OFFSET:
	case LCLK_IOC_SET_CPU_OFFSET: {
		struct lclk_cpu_offset *o = buf;

		o->cpu = pick_u32(r);
		o->flags = below(r, 3) ? (__u32)below(r, 2) : pick_u32(r);
		o->offset_ns = pick_s64(r);
		fill_rsv(r, o->rsv, sizeof(o->rsv));
		break;
	}
	case LCLK_IOC_GET_TIME: {
		struct lclk_time *t = buf;

		t->flags = below(r, 4) ? 0 : pick_u32(r);
		fill_rsv(r, t->rsv, sizeof(t->rsv));
		break;
	}
	default:
		/* Output-only structs: input is ignored, so leave it zero. */
		break;
	}
}

/* Answers the module gave: check what the ABI promises of them. */
static void check_answer(unsigned int cmd, const void *buf)
{
	if (cmd == LCLK_IOC_GET_TIME) {
		const struct lclk_time *t = buf;

		atomic_fetch_add(&get_time_oks, 1);
		/* DISRUPTED (a VM with a vmclock, restored): no bound */
		if (t->status > LCLK_STATUS_DISRUPTED || t->bound_ns < 0 ||
		    (t->status == LCLK_STATUS_DISRUPTED &&
		     t->bound_ns != LCLK_BOUND_UNKNOWN))
			violation("GET_TIME: status %u bound %lld", t->status,
				  (long long)t->bound_ns);
	} else if (cmd == LCLK_IOC_INFO) {
		const struct lclk_info *i = buf;

		if (i->abi_version != LCLK_ABI_VERSION || i->mmap_size % PAGE)
			violation("INFO: abi %u mmap_size %u", i->abi_version,
				  i->mmap_size);
	}
}

static int shared_fd(struct rng *r, atomic_int *slots)
{
	return atomic_load(&slots[below(r, SLOTS)]);
}

static void op_ioctl(struct rng *r, struct arena *a, int fd)
{
	unsigned int cmd = pick_cmd(r);
	size_t size = _IOC_SIZE(cmd);
	void *arg = a->base;
	int ret;

	/* Room for the argument in the first two pages. */
	if (size > 2 * PAGE)
		size = 2 * PAGE;
	fill_arg(r, cmd, a->base, size);
	if (below(r, 4) == 0)
		arg = pick_ptr(r, a, size);
	atomic_fetch_add(&calls[OP_IOCTL], 1);
	ret = ioctl(fd, cmd, arg);
	if (ret == 0) {
		atomic_fetch_add(&oks[OP_IOCTL], 1);
		if (arg == a->base)
			check_answer(cmd, a->base);
	}
}

/* ---- open, close, mmap, read --------------------------------------------- */

static void dev_path(char *buf, size_t len, const char *kind, struct rng *r)
{
	snprintf(buf, len, "/dev/%s%u", kind, (unsigned int)below(r, MAX_DEV));
}

static int open_dev(struct rng *r, const char *kind, enum op op)
{
	static const int modes[] = { O_RDONLY, O_RDWR, O_WRONLY, O_RDONLY | O_NONBLOCK };
	char path[32];
	int fd;

	dev_path(path, sizeof(path), kind, r);
	atomic_fetch_add(&calls[op], 1);
	fd = open(path, ONE_OF(r, modes) | O_CLOEXEC);
	if (fd >= 0)
		atomic_fetch_add(&oks[op], 1);
	return fd;
}

/*
 * Opens of /dev/ptpN wait while the module loads. posix_clock_register()
 * in kernel/time/posix-clock.c (5.4 and later: 5.10, 6.1 and 6.12 alike)
 * makes the node openable in cdev_device_add() but sets clk->dev only
 * after that returns. An open in between takes get_device(NULL), which is
 * no reference, and its close puts the device all the same: one put too
 * many, so at rmmod posix_clock_unregister() frees the PTP clock under
 * itself (KASAN use-after-free, or a refcount_t underflow WARN). No PTP
 * driver can close that window, so this fuzzer stays out of it, and only
 * it: opens still race rmmod, and every other call races insmod.
 */
static pthread_rwlock_t insmod_lock;

static int open_phc(struct rng *r)
{
	int fd;

	pthread_rwlock_rdlock(&insmod_lock);
	fd = open_dev(r, "ptp", OP_PHC_OPEN);
	pthread_rwlock_unlock(&insmod_lock);
	return fd;
}

/* Put a new fd into a shared slot; whatever was there is closed. */
static void put_in_slot(struct rng *r, atomic_int *slots, int fd)
{
	int old;

	if (fd < 0)
		return;
	old = atomic_exchange(&slots[below(r, SLOTS)], fd);
	if (old >= 0)
		close(old);
}

/* Only the thread that takes an fd out of its slot closes it. */
static void close_slot(atomic_int *slot)
{
	int fd = atomic_exchange(slot, -1);

	if (fd < 0)
		return;
	atomic_fetch_add(&calls[OP_CLOSE], 1);
	if (close(fd) == 0)
		atomic_fetch_add(&oks[OP_CLOSE], 1);
}

static void close_all_slots(void)
{
	for (int i = 0; i < SLOTS; i++) {
		close_slot(&lclk_slots[i]);
		close_slot(&ptp_slots[i]);
	}
}

/* The mapped page, read the way lclk.h reads it; a torn page is skipped. */
static void check_page(const struct lclk_page *p, size_t len, __u32 ncpus)
{
	__u32 seq, magic, abi, n;

	for (int tries = 0; tries < 1000; tries++) {
		seq = lclk_read_begin(p);
		magic = LCLK_LOAD(p->magic);
		abi = LCLK_LOAD(p->abi_version);
		n = LCLK_LOAD(p->ncpus);
		/* Touch every offset the mapping holds (volatile loads). */
		for (__u32 c = 0; c < n && sizeof(*p) + (c + 1) * 8 <= len; c++)
			(void)LCLK_LOAD(p->cpu_offset_ns[c]);
		if (lclk_read_retry(p, seq))
			continue;
		if (magic != LCLK_PAGE_MAGIC || abi != LCLK_ABI_VERSION || n != ncpus)
			violation("page: magic %#x abi %u ncpus %u (INFO: %u)",
				  magic, abi, n, ncpus);
		return;
	}
}

static void op_mmap(struct rng *r, int fd)
{
	static const int prots[] = {
		PROT_READ, PROT_READ, PROT_READ | PROT_WRITE, PROT_WRITE,
		PROT_READ | PROT_EXEC, PROT_NONE,
	};
	static const int flags[] = {
		MAP_SHARED, MAP_SHARED, MAP_PRIVATE, MAP_SHARED | MAP_POPULATE,
	};
	struct lclk_info info = { 0 };
	size_t len;
	off_t off = 0;
	int prot = ONE_OF(r, prots), flag = ONE_OF(r, flags);
	void *map, *moved;

	if (ioctl(fd, LCLK_IOC_INFO, &info) < 0)
		info.mmap_size = PAGE;
	switch (below(r, 8)) {
	case 0:
		len = below(r, 3);
		break;
	case 1:
		len = info.mmap_size + PAGE;
		break;
	case 2:
		len = info.mmap_size - 1 - below(r, 64);
		break;
	case 3:
		len = (size_t)1 << (12 + below(r, 20));
		break;
	default:
		len = info.mmap_size;
	}
	if (below(r, 6) == 0)
		off = below(r, 2) ? PAGE * (off_t)(1 + below(r, 4)) : (off_t)rnd(r) & ~(PAGE - 1);
	atomic_fetch_add(&calls[OP_MMAP], 1);
	map = mmap(NULL, len, prot, flag, fd, off);
	if (map == MAP_FAILED)
		return;
	atomic_fetch_add(&oks[OP_MMAP], 1);
	if ((prot & PROT_WRITE) && (flag & MAP_SHARED))
		violation("a writable shared mapping of the page (len %zu)", len);
	if ((prot & PROT_READ) && len >= sizeof(struct lclk_page))
		check_page(map, len, info.ncpus);
	if ((flag & MAP_SHARED) && mprotect(map, len, PROT_READ | PROT_WRITE) == 0)
		violation("mprotect made the shared page writable");
	/* Try to grow or move it; where it went is what to unmap. */
	if (below(r, 4) == 0) {
		size_t new_len = len + PAGE * below(r, 3);

		moved = mremap(map, len, new_len, MREMAP_MAYMOVE);
		if (moved != MAP_FAILED) {
			map = moved;
			len = new_len;
		}
	}
	if (below(r, 4) == 0)
		madvise(map, len, below(r, 2) ? MADV_DONTNEED : MADV_WILLNEED);
	munmap(map, len);
}

static void op_read(struct rng *r, int fd)
{
	static const size_t lens[] = { 0, 1, 7, 64, 4095, 4096, 65536 };
	static char buf[65536];		/* shared: what is read is not looked at */
	off_t off;

	switch (below(r, 4)) {
	case 0:
		lseek(fd, pick_s64(r), below(r, 3));
		break;
	case 1:
		off = below(r, 2) ? 0 : (off_t)below(r, 8192);
		atomic_fetch_add(&calls[OP_READ], 1);
		if (pread(fd, buf, ONE_OF(r, lens), off) >= 0)
			atomic_fetch_add(&oks[OP_READ], 1);
		return;
	default:
		break;
	}
	atomic_fetch_add(&calls[OP_READ], 1);
	if (read(fd, buf, ONE_OF(r, lens)) >= 0)
		atomic_fetch_add(&oks[OP_READ], 1);
}

/* mmap and read on an fd of this thread's own, never closed under it. */
static void op_private(struct rng *r)
{
	int fd = open_dev(r, "lclk", OP_OPEN), n;

	if (fd < 0)
		return;
	for (n = 1 + below(r, 4); n > 0; n--) {
		if (below(r, 2))
			op_mmap(r, fd);
		else
			op_read(r, fd);
	}
	close(fd);
}

/* ---- the PTP clock ------------------------------------------------------- */

static struct timespec pick_timespec(struct rng *r)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	switch (below(r, 4)) {
	case 0:
		ts.tv_sec = pick_s64(r);
		ts.tv_nsec = pick_s64(r);
		break;
	case 1:
		ts.tv_sec += (time_t)below(r, 100) - 50;
		ts.tv_nsec = ONE_OF(r, ((const long[]){ 0, 999999999, 1000000000, -1 }));
		break;
	default:
		ts.tv_sec += (time_t)below(r, 3) - 1;
	}
	return ts;
}

static void op_phc_clock(struct rng *r, int fd)
{
	static const unsigned int adj_modes[] = {
		0, ADJ_FREQUENCY, ADJ_SETOFFSET, ADJ_SETOFFSET | ADJ_NANO,
		ADJ_OFFSET, ADJ_OFFSET | ADJ_NANO, ADJ_MAXERROR, ADJ_ESTERROR,
		ADJ_STATUS, ADJ_TICK, ADJ_FREQUENCY | ADJ_SETOFFSET,
	};
	clockid_t clk = FD_TO_CLOCKID(fd);
	struct timespec ts = pick_timespec(r);
	struct timex tx;
	int ret;

	/* Only dynamic clocks: FD_TO_CLOCKID(-1) would be a static one. */
	if (fd < 0)
		return;
	atomic_fetch_add(&calls[OP_PHC_CLOCK], 1);
	switch (below(r, 5)) {
	case 0:
		ret = clock_gettime(clk, &ts);
		break;
	case 1:
		ret = clock_getres(clk, &ts);
		break;
	case 2:
		ret = clock_settime(clk, &ts);
		break;
	default:
		memset(&tx, 0, sizeof(tx));
		tx.modes = below(r, 4) ? ONE_OF(r, adj_modes) : (unsigned int)rnd(r);
		tx.freq = below(r, 2) ? (long)below(r, 2000000) - 1000000 : (long)pick_s64(r);
		tx.offset = (long)pick_s64(r) % (below(r, 2) ? 1000000000L : INT64_MAX);
		tx.time.tv_sec = below(r, 2) ? (long)below(r, 3) - 1 : (long)pick_s64(r);
		tx.time.tv_usec = below(r, 2) ? (long)below(r, 1000000) : (long)pick_s64(r);
		ret = clock_adjtime(clk, &tx);
		break;
	}
	if (ret >= 0)
		atomic_fetch_add(&oks[OP_PHC_CLOCK], 1);
}

static void op_phc_ioctl(struct rng *r, struct arena *a, int fd)
{
	static const unsigned long ptp_cmds[] = {
		PTP_CLOCK_GETCAPS, PTP_EXTTS_REQUEST, PTP_PEROUT_REQUEST,
		PTP_ENABLE_PPS, PTP_SYS_OFFSET, PTP_PIN_GETFUNC, PTP_PIN_SETFUNC,
		PTP_SYS_OFFSET_PRECISE, PTP_SYS_OFFSET_EXTENDED,
		PTP_CLOCK_GETCAPS2, PTP_EXTTS_REQUEST2, PTP_PEROUT_REQUEST2,
		PTP_ENABLE_PPS2, PTP_SYS_OFFSET2, PTP_PIN_GETFUNC2,
		PTP_PIN_SETFUNC2, PTP_SYS_OFFSET_PRECISE2, PTP_SYS_OFFSET_EXTENDED2,
	};
	static const unsigned int samples[] = { 0, 1, 2, 5, PTP_MAX_SAMPLES, PTP_MAX_SAMPLES + 1, UINT32_MAX };
	unsigned long cmd = ONE_OF(r, ptp_cmds);
	size_t size = _IOC_SIZE(cmd);
	void *arg = a->base;
	size_t i;

	memset(a->base, 0, size);
	if (below(r, 3) == 0) {
		for (i = 0; i < size; i++)
			a->base[i] = (unsigned char)rnd(r);
	} else if (cmd == PTP_SYS_OFFSET || cmd == PTP_SYS_OFFSET2 ||
		   cmd == PTP_SYS_OFFSET_EXTENDED || cmd == PTP_SYS_OFFSET_EXTENDED2) {
		/* n_samples leads both structs. */
		*(unsigned int *)a->base = ONE_OF(r, samples);
	} else if (size >= sizeof(unsigned int)) {
		/* index, or channel, leads the others. */
		*(unsigned int *)a->base = (unsigned int)below(r, 4);
	}
	if (cmd == PTP_ENABLE_PPS || cmd == PTP_ENABLE_PPS2)
		arg = (void *)(uintptr_t)below(r, 3);	/* a value, not a pointer */
	else if (below(r, 4) == 0)
		arg = pick_ptr(r, a, size);
	atomic_fetch_add(&calls[OP_PHC_IOCTL], 1);
	if (ioctl(fd, cmd, arg) == 0)
		atomic_fetch_add(&oks[OP_PHC_IOCTL], 1);
}

/* ---- threads ------------------------------------------------------------- */

struct thread {
	pthread_t id;
	struct rng r;
	struct arena a;
};

/* Everything at random, on fds other threads open and close. */
static void *worker(void *arg)
{
	struct thread *t = arg;
	struct rng *r = &t->r;

	arena_init(&t->a);
	while (!atomic_load(&stop)) {
		if (atomic_load(&drain)) {
			/*
			 * The reloader wants the module free: hold nothing,
			 * but now and then open, to race the unload.
			 */
			close_all_slots();
			if (below(r, 8) == 0)
				op_private(r);
			else
				usleep(1000);
			continue;
		}
		switch (below(r, 16)) {
		case 0:
			put_in_slot(r, lclk_slots, open_dev(r, "lclk", OP_OPEN));
			break;
		case 1:
			put_in_slot(r, ptp_slots, open_phc(r));
			break;
		case 2:
			close_slot(below(r, 2) ? &lclk_slots[below(r, SLOTS)] :
				   &ptp_slots[below(r, SLOTS)]);
			break;
		case 3:
		case 4:
			op_private(r);
			break;
		case 5:
		case 6:
		case 7:
			op_phc_clock(r, shared_fd(r, ptp_slots));
			break;
		case 8:
		case 9:
			op_phc_ioctl(r, &t->a, shared_fd(r, ptp_slots));
			break;
		default:
			op_ioctl(r, &t->a, shared_fd(r, lclk_slots));
			break;
		}
	}
	return NULL;
}

/* Valid changes, as an agent makes them, racing the readers. */
static int model_write(struct rng *r, int fd, __u32 ncpus)
{
	struct lclk_set_model m = { 0 };
	struct lclk_step s = { 0 };
	struct lclk_cpu_offset o = { 0 };

	switch (below(r, 3)) {
	case 0:
		m.modes = LCLK_SET_OFFSET | LCLK_SET_RATE | LCLK_SET_BOUND |
			  (below(r, 2) ? LCLK_SET_HOLDOVER | LCLK_SET_MAX_DRIFT : 0) |
			  (below(r, 8) ? 0 : LCLK_SET_UNSYNC);
		m.flags = LCLK_ALLOW_BACKWARD;
		m.offset_ns = (__s64)below(r, 2 * NSEC) - NSEC;
		m.rate_ppt = (__s64)below(r, 2 * 100000000) - 100000000;
		m.bound_ns = (__s64)below(r, 1000000);
		m.holdover_ns = (__s64)below(r, 10 * NSEC) + 1;
		m.max_drift_ppb = (__u32)below(r, 100000);
		return ioctl(fd, LCLK_IOC_SET_MODEL, &m);
	case 1:
		s.delta_ns = (__s64)below(r, 2000000) - 1000000;
		s.flags = LCLK_ALLOW_BACKWARD;
		return ioctl(fd, LCLK_IOC_STEP, &s);
	default:
		o.cpu = (__u32)below(r, ncpus ? ncpus : 1);
		o.offset_ns = (__s64)below(r, 2 * LCLK_MAX_CPU_OFFSET_NS + 1) - LCLK_MAX_CPU_OFFSET_NS;
		o.flags = LCLK_ALLOW_BACKWARD;
		return ioctl(fd, LCLK_IOC_SET_CPU_OFFSET, &o);
	}
}

static void *writer(void *arg)
{
	struct thread *t = arg;
	struct lclk_info info;
	int fd = -1;

	while (!atomic_load(&stop)) {
		if (fd < 0) {
			fd = open_dev(&t->r, "lclk", OP_OPEN);
			if (fd < 0 || ioctl(fd, LCLK_IOC_INFO, &info) < 0) {
				if (fd >= 0)
					close(fd);
				fd = -1;
				usleep(1000);
				continue;
			}
		}
		atomic_fetch_add(&calls[OP_WRITE_MODEL], 1);
		if (model_write(&t->r, fd, info.ncpus) == 0)
			atomic_fetch_add(&oks[OP_WRITE_MODEL], 1);
		/* Let go now and then, so that the module can unload. */
		if (atomic_load(&drain) || below(&t->r, 64) == 0) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Without CAP_SYS_TIME (capabilities are per thread), no change may pass. */
static void *unprivileged(void *arg)
{
	struct thread *t = arg;
	struct rng *r = &t->r;
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	int fd;

	arena_init(&t->a);
	if (syscall(SYS_capget, &h, d) < 0)
		abort();
	d[CAP_TO_INDEX(CAP_SYS_TIME)].effective &= ~CAP_TO_MASK(CAP_SYS_TIME);
	if (syscall(SYS_capset, &h, d) < 0)
		abort();
	while (!atomic_load(&stop)) {
		/* A shared fd stays its slot's to close; an own one is closed here. */
		int own = below(r, 2);

		if (atomic_load(&drain)) {
			usleep(1000);
			continue;
		}
		fd = own ? open_dev(r, "lclk", OP_OPEN) : shared_fd(r, lclk_slots);
		atomic_fetch_add(&calls[OP_UNPRIV], 1);
		if (model_write(r, fd, ncpus_guess) == 0)
			violation("a change without CAP_SYS_TIME succeeded");
		else if (errno == EPERM)
			atomic_fetch_add(&oks[OP_UNPRIV], 1);
		if (below(r, 4) == 0)
			op_ioctl(r, &t->a, fd);
		if (own && fd >= 0)
			close(fd);
	}
	return NULL;
}

/* ---- module reload ------------------------------------------------------- */

static int module_loaded(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", mod.name);
	return access(path, F_OK) == 0;
}

static int load_module(const char *args)
{
	int fd = open(mod.module, O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	pthread_rwlock_wrlock(&insmod_lock);
	ret = syscall(SYS_finit_module, fd, args, 0) < 0 ? -errno : 0;
	pthread_rwlock_unlock(&insmod_lock);
	close(fd);
	if (ret == 0)
		atomic_fetch_add(&loads, 1);
	return ret;
}

static int unload_module(void)
{
	atomic_fetch_add(&calls[OP_RELOAD], 1);
	if (syscall(SYS_delete_module, mod.name, O_NONBLOCK) < 0)
		return -errno;
	atomic_fetch_add(&oks[OP_RELOAD], 1);
	atomic_fetch_add(&unloads, 1);
	return 0;
}

/*
 * rmmod whenever the module is free, which the others make likely now and
 * then by draining; insmod it back with 1 to 4 instances while they keep
 * opening the devices that come and go.
 */
static void *reloader(void *arg)
{
	struct thread *t = arg;
	char args[64];
	int ret, n;

	for (n = 0; !atomic_load(&stop); n++) {
		usleep(20000 + below(&t->r, 180000));
		if (n % 8 == 7)
			atomic_store(&drain, 1);
		for (int i = 0; i < (n % 8 == 7 ? 100 : 1) && !atomic_load(&stop); i++) {
			if (unload_module() == 0)
				break;
			usleep(5000);
		}
		atomic_store(&drain, 0);
		if (module_loaded())
			continue;
		usleep(below(&t->r, 5000));
		snprintf(args, sizeof(args), "instances=%u", 1 + (unsigned int)below(&t->r, MAX_DEV));
		ret = load_module(args);
		if (ret)
			violation("insmod %s %s: %s", mod.module, args, strerror(-ret));
	}
	return NULL;
}

/* ---- main ---------------------------------------------------------------- */

static long env_or(const char *name, long def)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 0) : def;
}

static void print_counts(const char *prefix)
{
	long long total = 0;

	printf("# %s", prefix);
	for (int i = 0; i < NR_OPS; i++) {
		printf(" %s %lld/%lld", op_names[i], (long long)atomic_load(&oks[i]),
		       (long long)atomic_load(&calls[i]));
		total += atomic_load(&calls[i]);
	}
	printf("; %lld calls\n", total);
	fflush(stdout);
}

static long long total_calls(void)
{
	long long total = 0;

	for (int i = 0; i < NR_OPS; i++)
		total += atomic_load(&calls[i]);
	return total;
}

/* Every kind of call must have reached the module, or the run proved little. */
static void check_coverage(int reload, long seconds)
{
	if (!atomic_load(&get_time_oks))
		violation("no GET_TIME succeeded");
	if (!atomic_load(&oks[OP_MMAP]))
		violation("no mmap succeeded");
	if (!atomic_load(&oks[OP_READ]))
		violation("no read succeeded");
	if (!atomic_load(&oks[OP_WRITE_MODEL]))
		violation("no model write succeeded");
	if (!atomic_load(&oks[OP_UNPRIV]))
		violation("no unprivileged change was refused with EPERM");
	if (!atomic_load(&oks[OP_PHC_CLOCK]) || !atomic_load(&oks[OP_PHC_IOCTL]))
		violation("no PHC call succeeded");
	if (reload && seconds >= 10 && !atomic_load(&unloads))
		violation("the module never unloaded");
}

/* Leave the module as run.sh loaded it, and see that it works. */
static void restore_module(int reload)
{
	struct lclk_info info = { 0 };
	int fd, ret;

	close_all_slots();
	if (reload && atomic_load(&loads)) {
		if (module_loaded() && syscall(SYS_delete_module, mod.name, O_NONBLOCK) < 0)
			violation("rmmod at the end: %s", strerror(errno));
	}
	if (reload && !module_loaded()) {
		ret = load_module(mod.args);
		if (ret)
			violation("insmod %s %s at the end: %s", mod.module, mod.args, strerror(-ret));
	}
	fd = open(LCLK_DEV0, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, LCLK_IOC_INFO, &info) < 0 || info.abi_version != LCLK_ABI_VERSION)
		violation("the module does not answer at the end: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ "workers", required_argument, NULL, 'w' },
		{ 0 },
	};
	long seconds = env_or("LCLK_KFUZZ_SECONDS", 20);
	long workers = env_or("LCLK_KFUZZ_WORKERS", 3);
	uint64_t seed = (uint64_t)env_or("LCLK_KFUZZ_SEED", 0);
	struct thread threads[MAX_WORKERS + 3];
	pthread_rwlockattr_t attr;
	const char *base;
	int nthreads, reload, c;
	long elapsed;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			seconds = strtol(optarg, NULL, 0);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'w':
			workers = strtol(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [--seconds N] [--seed S] [--workers N]\n", argv[0]);
			return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS || seconds < 1) {
		fprintf(stderr, "lclk_kfuzz: 1..%d workers and at least 1 second\n", MAX_WORKERS);
		return 2;
	}
	if (!seed)
		seed = (uint64_t)lclk_monotonic_ns() ^ ((uint64_t)getpid() << 32);

	mod.module = getenv("LCLK_MODULE") ? getenv("LCLK_MODULE") : "kmod/lclk.ko";
	mod.args = getenv("LCLK_MODULE_ARGS") ? getenv("LCLK_MODULE_ARGS") : "instances=2";
	base = strrchr(mod.module, '/');
	snprintf(mod.name, sizeof(mod.name), "%s", base ? base + 1 : mod.module);
	mod.name[strcspn(mod.name, ".")] = '\0';
	reload = strcmp(mod.module, "none") != 0;
	ncpus_guess = (int)sysconf(_SC_NPROCESSORS_CONF);
	/* Else a steady stream of opens could keep insmod waiting forever. */
	pthread_rwlockattr_init(&attr);
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&insmod_lock, &attr);
	pthread_rwlockattr_destroy(&attr);
	for (int i = 0; i < SLOTS; i++) {
		atomic_init(&lclk_slots[i], -1);
		atomic_init(&ptp_slots[i], -1);
	}

	printf("1..1\n");
	printf("# lclk_kfuzz: seed %" PRIu64 " (again: --seed %" PRIu64 " or LCLK_KFUZZ_SEED), %ld s, %ld workers, %s\n",
	       seed, seed, seconds, workers, reload ? "rmmod/insmod racing" : "no module reload");
	fflush(stdout);

	nthreads = 0;
	for (long i = 0; i < workers + 2 + reload; i++) {
		struct thread *t = &threads[nthreads++];
		void *(*fn)(void *) = i < workers ? worker :
				      i == workers ? writer :
				      i == workers + 1 ? unprivileged : reloader;

		memset(t, 0, sizeof(*t));
		t->r.s = seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1));
		if (pthread_create(&t->id, NULL, fn, t))
			abort();
	}
	for (elapsed = 0; elapsed < seconds; elapsed++) {
		sleep(1);
		if (elapsed % 300 == 299)
			print_counts("progress:");
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i].id, NULL);

	restore_module(reload);
	check_coverage(reload, seconds);
	print_counts("calls (ok/all):");
	printf("# module unloads %lld, loads %lld\n", (long long)atomic_load(&unloads),
	       (long long)atomic_load(&loads));
	if (atomic_load(&violations)) {
		printf("not ok 1 - lclk_kfuzz: %d violations (seed %" PRIu64 ")\n",
		       atomic_load(&violations), seed);
		return 1;
	}
	printf("ok 1 - lclk_kfuzz: %lld calls in %ld s, %lld module reloads, nothing broken (seed %" PRIu64 ")\n",
	       total_calls(), seconds, (long long)atomic_load(&unloads), seed);
	return 0;
}
