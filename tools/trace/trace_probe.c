// SPDX-License-Identifier: GPL-2.0
/*
 * Load bpf/trace.bpf.c with the filter as read-only data, attach it
 * (fentry/fexit on the traced syscalls, or tp_btf on raw_syscalls: see
 * tools/trace/trace_attach.c) and read what it counted.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/cli.h"
#include "trace.skel.h"
#include "trace_attach.h"
#include "trace_probe.h"
#include "trace_sys.h"

#define VMLINUX_BTF	"/sys/kernel/btf/vmlinux"

static int libbpf_verbose;

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && libbpf_verbose < 2)
		return 0;
	if (!libbpf_verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int fail(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("lclkctl trace: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

/* CAP_BPF + CAP_PERFMON (5.8+), or CAP_SYS_ADMIN, in the effective set. */
static bool may_trace(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
#define HAS_CAP(c) (data[CAP_TO_INDEX(c)].effective & CAP_TO_MASK(c))
	return HAS_CAP(CAP_SYS_ADMIN) ||
	       (HAS_CAP(CAP_BPF) && HAS_CAP(CAP_PERFMON));
#undef HAS_CAP
}

static int check_filter(const struct trace_filter *f, int *cgroup_fd)
{
	struct statfs sfs;

	*cgroup_fd = -1;
	if (f->pid && kill(f->pid, 0) && errno == ESRCH)
		return fail(EXIT_USAGE, "--pid %d: no such process", f->pid);
	if (f->comm && (!*f->comm || strlen(f->comm) >= TRACE_COMM_LEN))
		return fail(EXIT_USAGE, "--comm '%s': a command name has 1 to %d characters",
			    f->comm, TRACE_COMM_LEN - 1);
	if (!f->cgroup)
		return EXIT_OK;
	*cgroup_fd = open(f->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*cgroup_fd < 0)
		return fail(EXIT_USAGE, "--cgroup %s: %s", f->cgroup, strerror(errno));
	if (fstatfs(*cgroup_fd, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		close(*cgroup_fd);
		*cgroup_fd = -1;
		return fail(EXIT_USAGE, "--cgroup %s: not a cgroup v2 directory", f->cgroup);
	}
	return EXIT_OK;
}

static int check_system(void)
{
	if (!may_trace())
		return fail(EXIT_PERM, "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN): run as root");
	if (access(VMLINUX_BTF, R_OK))
		return fail(EXIT_FAIL, "kernel has no BTF (%s: %s): CONFIG_DEBUG_INFO_BTF=y is needed",
			    VMLINUX_BTF, strerror(errno));
	if (libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 1)
		return fail(EXIT_FAIL, "kernel has no BPF ring buffer: Linux 5.8 or later is needed");
	return EXIT_OK;
}

/*
 * The probe compares names a word at a time, under a mask of the name's
 * bytes and its NUL (check_filter() made sure the NUL fits).
 */
static void set_comm_filter(struct trace_bpf *skel, const char *comm)
{
	union {
		char bytes[TRACE_COMM_LEN];
		__u64 words[TRACE_COMM_WORDS];
	} name = {}, mask = {};
	int i;

	strncpy(name.bytes, comm, TRACE_COMM_LEN - 1);
	memset(mask.bytes, 0xff, strlen(name.bytes) + 1);
	for (i = 0; i < TRACE_COMM_WORDS; i++) {
		skel->rodata->targ_comm[i] = name.words[i];
		skel->rodata->targ_comm_mask[i] = mask.words[i];
	}
	skel->rodata->filter_comm = true;
}

const char *trace_attach_name(enum trace_attach mode)
{
	return mode == TRACE_ATTACH_FENTRY ? "fentry" :
	       mode == TRACE_ATTACH_TP_BTF ? "tp_btf" : "auto";
}

/* Which mode to use; EXIT_FAIL after a message if the one asked for is out. */
static int choose_mode(struct trace_probe *tp, const struct trace_kernel *k,
		       enum trace_attach want)
{
	if (want != TRACE_ATTACH_TP_BTF && !k->no_fentry[0]) {
		tp->mode = TRACE_ATTACH_FENTRY;
		return EXIT_OK;
	}
	if (want == TRACE_ATTACH_FENTRY)
		return fail(EXIT_FAIL, "--attach fentry: %s", k->no_fentry);
	if (!k->tp_btf)
		return fail(EXIT_FAIL, "kernel has no tp_btf on raw_syscalls: Linux 5.5 or later is needed");
	tp->mode = TRACE_ATTACH_TP_BTF;
	if (want == TRACE_ATTACH_AUTO)
		snprintf(tp->why, sizeof(tp->why), "%s", k->no_fentry);
	return EXIT_OK;
}

/*
 * fentry: each fentry_NAME/fexit_NAME pair goes to syscall NAME's wrapper,
 * fentry_fn_NAME/fexit_fn_NAME to kernel function NAME; either is not
 * loaded when the kernel lacks the function (epoll_pwait2 came in 5.11,
 * futex_waitv in 5.16). tp_btf: the two raw_syscalls programs.
 */
static int select_programs(struct trace_probe *tp, const struct trace_kernel *k,
			   bool messages)
{
	bool fentry = tp->mode == TRACE_ATTACH_FENTRY;
	struct bpf_program *prog;
	char func[64];

	tp->nsyscalls = 0;
	bpf_object__for_each_program(prog, tp->skel->obj) {
		const char *name = bpf_program__name(prog);
		const char *sys = NULL;
		bool load;

		if (!strncmp(name, "msg_", 4)) {
			/* trace_msg.bpf.h: on TCP functions, in either mode */
			if (bpf_program__set_autoload(prog, messages))
				return -errno;
			continue;
		}
		if (!strncmp(name, "fentry_", 7))
			sys = name + 7;
		else if (!strncmp(name, "fexit_", 6))
			sys = name + 6;
		if (!sys) {
			load = !fentry;
		} else if (!strncmp(sys, "fn_", 3)) {
			snprintf(func, sizeof(func), "%s", sys + 3);
			load = fentry && btf__find_by_name_kind(k->btf, func, BTF_KIND_FUNC) > 0;
		} else {
			load = fentry && trace_syscall_func(k, sys, func, sizeof(func));
			tp->nsyscalls += load && sys == name + 7;
		}
		if (sys && load && bpf_program__set_attach_target(prog, 0, func))
			return -errno;
		if (bpf_program__set_autoload(prog, load))
			return -errno;
	}
	return 0;
}

/*
 * Calls the start hash can hold: one per thread the kernel allows
 * (kernel.pid_max), up to 2^18: the hash's buckets are allocated up front,
 * 16 bytes each. Beyond, calls in flight are counted as lost starts.
 */
#define MAX_STARTS	(1UL << 18)

static __u32 max_starts(void)
{
	unsigned long n = 0;
	FILE *f = fopen("/proc/sys/kernel/pid_max", "re");

	if (f) {
		if (fscanf(f, "%lu", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n && n < MAX_STARTS ? n : MAX_STARTS;
}

/*
 * Starts in task storage, or in a hash by tid: the map not used still has
 * to exist, as the smallest hash (its code is dead and the verifier drops
 * it, the map reference stays).
 */
static int place_starts(struct trace_probe *tp, const struct trace_kernel *k)
{
	struct trace_bpf *skel = tp->skel;
	int err;

	tp->task_storage = k->task_storage;
	skel->rodata->use_task_storage = tp->task_storage;
	if (tp->task_storage)
		return bpf_map__set_max_entries(skel->maps.starts, 1);
	/*
	 * Entries allocated as calls start (the programs are
	 * BPF_PROG_TYPE_TRACING, which may allocate at run time before 6.1
	 * too); those of exited threads are reaped.
	 */
	err = bpf_map__set_max_entries(skel->maps.starts, max_starts());
	err = err ?: bpf_map__set_map_flags(skel->maps.starts, BPF_F_NO_PREALLOC);
	err = err ?: bpf_map__set_type(skel->maps.task_starts, BPF_MAP_TYPE_HASH);
	err = err ?: bpf_map__set_map_flags(skel->maps.task_starts, 0);
	err = err ?: bpf_map__set_max_entries(skel->maps.task_starts, 1);
	return err;
}

/*
 * Our pid namespace's inode number, 0 for the initial one (whose inode
 * number is fixed: PROC_PID_INIT_INO). In a container the probes translate
 * ids into it, and --pid and /proc/PID use it.
 */
#define PROC_PID_INIT_INO	0xEFFFFFFCU

static __u32 pid_ns_inum(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PROC_PID_INIT_INO)
		return 0;
	return st.st_ino;
}

static int load(struct trace_probe *tp, const struct trace_kernel *k,
		const struct trace_filter *f)
{
	struct trace_bpf *skel = trace_bpf__open();
	int err;

	if (!skel)
		return -errno;
	tp->skel = skel;
	skel->rodata->have_task_btf = k->task_btf;
	skel->rodata->ns_inum = pid_ns_inum();
	skel->rodata->self_tgid = getpid();
	skel->rodata->targ_tgid = f->pid;
	skel->rodata->threshold_ns = f->threshold_ns;
	skel->rodata->spin_gap_ns = f->spin_gap_ns ? f->spin_gap_ns : TRACE_SPIN_GAP_NS;
	if (f->comm)
		set_comm_filter(skel, f->comm);
	skel->rodata->filter_cgroup = f->cgroup != NULL;
	/*
	 * fentry programs may be preempted: atomic adds. tp_btf on
	 * raw_syscalls runs with preemption off (so do the counts of message
	 * records, from its sys_exit program): plain ones.
	 */
	skel->rodata->atomic_counts = tp->mode == TRACE_ATTACH_FENTRY;
	trace_sys_fill(skel->rodata->sys_class);

	/*
	 * Message records come with every send and receive: room for bursts
	 * while the reader is off the CPU (80k records, not 10k).
	 */
	if (f->messages && bpf_map__set_max_entries(skel->maps.events, 8 << 20))
		return -errno;
	err = select_programs(tp, k, f->messages);
	err = err ?: place_starts(tp, k);
	if (err)
		return err;
	return trace_bpf__load(skel) ? -errno : 0;
}

int trace_probe_start(struct trace_probe *tp, const struct trace_filter *f,
		      ring_buffer_sample_fn fn, void *ctx, int verbose)
{
	struct trace_kernel k;
	int code, err, zero = 0;

	memset(tp, 0, sizeof(*tp));
	libbpf_verbose = verbose;
	libbpf_set_print(print_libbpf);
	code = check_filter(f, &tp->cgroup_fd);
	if (code)
		return code;
	code = check_system();
	if (code)
		goto out;

	if (trace_kernel_probe(&k)) {
		code = fail(EXIT_FAIL, "cannot read the kernel's BTF: %s", strerror(errno));
		goto out;
	}
	code = choose_mode(tp, &k, f->attach);
	/*
	 * The message programs are fentry only, which older kernels would
	 * take too; they are offered where the tests have run them.
	 */
	if (!code && f->messages && k.no_fentry[0])
		code = fail(EXIT_FAIL, "--messages needs fentry on tcp_sendmsg and tcp_recvmsg, and %s",
			    k.no_fentry);
	if (!code) {
		err = load(tp, &k, f);
		if (err)
			code = fail(err == -EPERM ? EXIT_PERM : EXIT_FAIL,
				    "cannot load the BPF programs (%s): %s%s",
				    trace_attach_name(tp->mode), strerror(-err),
				    verbose ? "" : " (-vv shows the verifier's log)");
	}
	trace_kernel_free(&k);
	if (code)
		goto out;
	if (tp->cgroup_fd >= 0 &&
	    bpf_map_update_elem(bpf_map__fd(tp->skel->maps.cgroup_map), &zero,
				&tp->cgroup_fd, BPF_ANY)) {
		code = fail(EXIT_FAIL, "--cgroup %s: %s", f->cgroup, strerror(errno));
		goto out;
	}
	tp->rb = ring_buffer__new(bpf_map__fd(tp->skel->maps.events), fn, ctx, NULL);
	if (!tp->rb) {
		code = fail(EXIT_FAIL, "ring buffer: %s", strerror(errno));
		goto out;
	}
	err = trace_bpf__attach(tp->skel);
	if (err) {
		code = fail(err == -EPERM ? EXIT_PERM : EXIT_FAIL,
			    "cannot attach (%s): %s", trace_attach_name(tp->mode),
			    strerror(-err));
		goto out;
	}
	return EXIT_OK;
out:
	trace_probe_stop(tp);
	return code;
}

int trace_probe_poll(struct trace_probe *tp, int timeout_ms)
{
	int n = ring_buffer__poll(tp->rb, timeout_ms);

	return n < 0 ? n : 0;
}

/*
 * Runs of our programs the kernel skipped because the CPU was already in
 * one of them (an interrupt during a probe): counted per program (5.12+;
 * 0 before, where the kernel kept no count).
 */
static __u64 recursion_misses(struct trace_probe *tp)
{
	struct bpf_program *prog;
	__u64 n = 0;

	bpf_object__for_each_program(prog, tp->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			n += info.recursion_misses;
	}
	return n;
}

static int read_drops(struct trace_probe *tp, struct trace_snapshot *snap)
{
	int ncpus = libbpf_num_possible_cpus(), fd, cpu;
	__u32 i;

	if (ncpus < 0)
		return ncpus;
	fd = bpf_map__fd(tp->skel->maps.drops);
	for (i = 0; i < TRACE_DROP_NR; i++) {
		if (i == TRACE_DROP_RECURSION) {
			snap->drops[i] = recursion_misses(tp);
			continue;
		}
		__u64 vals[ncpus];

		if (bpf_map_lookup_elem(fd, &i, vals))
			return -errno;
		snap->drops[i] = 0;
		for (cpu = 0; cpu < ncpus; cpu++)
			snap->drops[i] += vals[cpu];
	}
	return 0;
}

/*
 * The process's name now: the probe keeps the name of the thread that made
 * the first call, which is stale after an exec.
 */
static void proc_comm(__u32 tgid, char comm[TRACE_COMM_LEN])
{
	char path[32], buf[TRACE_COMM_LEN + 1];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		buf[TRACE_COMM_LEN - 1] = 0;
		if (buf[0])
			memcpy(comm, buf, TRACE_COMM_LEN);
	}
	fclose(f);
}

/* One key's per-CPU values summed; comm from the first CPU that has one. */
static void sum_cpus(const struct trace_hist *vals, int ncpus,
		     struct trace_hist *sum)
{
	int cpu, k;

	memset(sum, 0, sizeof(*sum));
	for (cpu = 0; cpu < ncpus; cpu++) {
		const struct trace_hist *v = &vals[cpu];

		for (k = 0; k < TRACE_SLOTS; k++)
			sum->slots[k] += v->slots[k];
		sum->sum_ns += v->sum_ns;
		sum->bytes += v->bytes;
		if (!sum->comm[0] && v->comm[0])
			memcpy(sum->comm, v->comm, sizeof(sum->comm));
	}
}

/* Whether process or thread id (as seen here) has exited. */
static bool gone(__u32 id)
{
	return kill(id, 0) && errno == ESRCH;
}

/* Move the series of key out of the map into tp->retired. */
static int retire(struct trace_probe *tp, int fd, const struct trace_key *key,
		  struct trace_hist *vals, int ncpus)
{
	struct trace_hist sum;

	if (bpf_map_lookup_elem(fd, key, vals))
		return errno == ENOENT ? 0 : -errno;
	/*
	 * The process is gone, nothing adds to its series now, unless its pid
	 * was reused in between: those few calls are lost.
	 */
	if (bpf_map_delete_elem(fd, key))
		return errno == ENOENT ? 0 : -errno;
	sum_cpus(vals, ncpus, &sum);
	return trace_snapshot_append(&tp->retired, key, &sum);
}

/*
 * The keys of map fd whose id (first 32 bits of the key: tgid or tid) has
 * exited, collected before any is deleted: deleting the key a walk stands
 * on restarts the walk.
 */
static int gone_keys(int fd, size_t key_size, void **keys, size_t *n)
{
	char key[16], next[16], *prev = NULL, *grown;
	size_t cap = 0;

	*keys = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, key_size);
		prev = key;
		if (!gone(*(__u32 *)key))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			grown = realloc(*keys, cap * key_size);
			if (!grown)
				return -ENOMEM;
			*keys = grown;
		}
		memcpy((char *)*keys + *n * key_size, key, key_size);
		(*n)++;
	}
	return 0;
}

int trace_probe_reap(struct trace_probe *tp)
{
	int ncpus = libbpf_num_possible_cpus(), fd, err;
	struct trace_hist *vals;
	void *keys;
	size_t i, n;

	if (ncpus < 0)
		return ncpus;
	fd = bpf_map__fd(tp->skel->maps.hists);
	err = gone_keys(fd, sizeof(struct trace_key), &keys, &n);
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		err = err ?: -ENOMEM;
	for (i = 0; !err && i < n; i++)
		err = retire(tp, fd, (struct trace_key *)keys + i, vals, ncpus);
	trace_snapshot_sort(&tp->retired);
	free(vals);
	free(keys);
	if (err || tp->task_storage)
		return err;
	fd = bpf_map__fd(tp->skel->maps.starts);
	err = gone_keys(fd, sizeof(__u32), &keys, &n);
	for (i = 0; !err && i < n; i++)
		bpf_map_delete_elem(fd, (__u32 *)keys + i);
	free(keys);
	return err;
}

int trace_probe_read(struct trace_probe *tp, struct trace_snapshot *snap)
{
	int ncpus = libbpf_num_possible_cpus(), fd, err;
	struct trace_key key, next, *prev = NULL;
	struct trace_hist *vals, sum;
	char comm[TRACE_COMM_LEN] = "";
	__u32 comm_tgid = 0;
	size_t i;

	memset(snap, 0, sizeof(*snap));
	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(tp->skel->maps.hists);
	/*
	 * The probe never deletes keys and trace_probe_reap() does not run
	 * meanwhile, so the walk cannot lose its place.
	 */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, vals))
			continue;
		sum_cpus(vals, ncpus, &sum);
		if (key.tgid != comm_tgid) {
			comm_tgid = key.tgid;
			memcpy(comm, sum.comm, sizeof(comm));
			proc_comm(key.tgid, comm);
		}
		memcpy(sum.comm, comm, sizeof(comm));
		err = trace_snapshot_append(snap, &key, &sum);
		if (err)
			goto fail;
	}
	free(vals);
	for (i = 0; i < tp->retired.n; i++) {
		err = trace_snapshot_append(snap, &tp->retired.s[i].key, &tp->retired.s[i].h);
		if (err) {
			trace_snapshot_free(snap);
			return err;
		}
	}
	trace_snapshot_sort(snap);
	err = read_drops(tp, snap);
	if (err)
		trace_snapshot_free(snap);
	return err;
fail:
	free(vals);
	trace_snapshot_free(snap);
	return err;
}

void trace_probe_stop(struct trace_probe *tp)
{
	trace_snapshot_free(&tp->retired);
	ring_buffer__free(tp->rb);
	trace_bpf__destroy(tp->skel);
	if (tp->cgroup_fd >= 0)
		close(tp->cgroup_fd);
	tp->rb = NULL;
	tp->skel = NULL;
	tp->cgroup_fd = -1;
}
