// SPDX-License-Identifier: GPL-2.0
/*
 * Load bpf/trace.bpf.c with the filter as read-only data, attach it to the
 * raw syscall tracepoints (tp_btf, else raw_tp) and read what it counted.
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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"
#include "trace_probe.h"
#include "trace_sys.h"
#include "trace.skel.h"

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

static struct trace_bpf *load(const struct trace_filter *f, bool raw_tp)
{
	struct trace_bpf *skel = trace_bpf__open();

	if (!skel)
		return NULL;
	skel->rodata->self_tgid = getpid();
	skel->rodata->targ_tgid = f->pid;
	skel->rodata->threshold_ns = f->threshold_ns;
	if (f->comm)
		set_comm_filter(skel, f->comm);
	skel->rodata->filter_cgroup = f->cgroup != NULL;
	trace_sys_fill(skel->rodata->sys_class);

	bpf_program__set_autoload(skel->progs.sys_enter_btf, !raw_tp);
	bpf_program__set_autoload(skel->progs.sys_exit_btf, !raw_tp);
	bpf_program__set_autoload(skel->progs.sys_enter_raw, raw_tp);
	bpf_program__set_autoload(skel->progs.sys_exit_raw, raw_tp);
	if (trace_bpf__load(skel)) {
		trace_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

int trace_probe_start(struct trace_probe *tp, const struct trace_filter *f,
		      ring_buffer_sample_fn fn, void *ctx, int verbose)
{
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

	tp->skel = load(f, false);
	if (!tp->skel) {
		if (verbose)
			fprintf(stderr, "lclkctl trace: tp_btf failed (%s), trying raw_tp\n",
				strerror(errno));
		tp->raw_tp = true;
		tp->skel = load(f, true);
	}
	if (!tp->skel) {
		err = errno;
		code = fail(err == EPERM ? EXIT_PERM : EXIT_FAIL,
			    "cannot load the BPF programs: %s%s", strerror(err),
			    verbose ? "" : " (-vv shows the verifier's log)");
		goto out;
	}
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
			    "cannot attach to raw_syscalls: %s", strerror(-err));
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

static int read_drops(struct trace_probe *tp, struct trace_snapshot *snap)
{
	int ncpus = libbpf_num_possible_cpus(), fd, cpu;
	__u32 i;

	if (ncpus < 0)
		return ncpus;
	fd = bpf_map__fd(tp->skel->maps.drops);
	for (i = 0; i < TRACE_DROP_NR; i++) {
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

int trace_probe_read(struct trace_probe *tp, struct trace_snapshot *snap)
{
	int ncpus = libbpf_num_possible_cpus(), fd, err;
	struct trace_key key, next, *prev = NULL;
	struct trace_hist *vals, sum;
	char comm[TRACE_COMM_LEN] = "";
	__u32 comm_tgid = 0;

	memset(snap, 0, sizeof(*snap));
	if (ncpus < 0)
		return ncpus;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	fd = bpf_map__fd(tp->skel->maps.hists);
	/* The probe never deletes keys, so the walk cannot lose its place. */
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
	ring_buffer__free(tp->rb);
	trace_bpf__destroy(tp->skel);
	if (tp->cgroup_fd >= 0)
		close(tp->cgroup_fd);
	tp->rb = NULL;
	tp->skel = NULL;
	tp->cgroup_fd = -1;
}
