// SPDX-License-Identifier: GPL-2.0
/*
 * Latency of the system calls collective-communication libraries block in,
 * for lclkctl trace.
 *
 * Two programs on the raw syscall tracepoints time every traced call of
 * the selected processes: sys_enter stores the start in a per-thread map,
 * sys_exit adds the latency to a per-CPU log2 histogram keyed by (process,
 * syscall, outcome, ioctl device) and streams calls above the threshold
 * through a ring buffer. Each program comes as tp_btf and raw_tp;
 * userspace loads one pair. The ring buffer needs 5.8+; the tp_btf pair
 * reads the current task through BTF (5.11+), older kernels get raw_tp.
 *
 * The process filter runs first, so that a process it excludes pays for
 * the tracepoint and little more: one helper call per program (two with
 * --cgroup) and a few comparisons. Helper calls are what costs: ~10 ns each
 * on the 2-core AMD VM this was measured on, where the tracepoint's own
 * floor (empty programs, tests/bench/tp_floor.bpf.c) is 120-160 ns a call.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace.h"

#define EAGAIN		11
#define S_IFMT		00170000
#define S_IFSOCK	0140000

/* futex(2) operations that wait; the command is op without these flags. */
#define FUTEX_WAIT		0
#define FUTEX_LOCK_PI		6
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_LOCK_PI2		13
#define FUTEX_CMD_MASK		0x7f

/* sendmmsg/recvmmsg: bytes are summed over this many messages at most. */
#define MMSG_MAX		16

/* Set by userspace before load. */
const volatile __u32 self_tgid;		/* lclkctl itself: never traced */
const volatile __u32 targ_tgid;		/* 0: any process */
const volatile bool filter_comm;
/*
 * The name as two words and the mask of its bytes up to and including the
 * NUL: the bytes after a name's NUL are not always zero (task->comm was set
 * with strlcpy before 5.17; bpf_get_current_comm() does not pad).
 */
const volatile __u64 targ_comm[TRACE_COMM_WORDS];
const volatile __u64 targ_comm_mask[TRACE_COMM_WORDS];
const volatile bool filter_cgroup;	/* cgroup in cgroup_map[0] */
const volatile __u64 threshold_ns = TRACE_DEFAULT_THRESHOLD_NS;
const volatile __u8 sys_class[TRACE_MAX_NR];	/* enum trace_sys by number */

struct trace_start {
	__u64 ts;
	__u64 msgvec;		/* sendmmsg/recvmmsg: struct mmsghdr * */
	__s32 fd;
	__u32 cpu;
	__u8 sys;
	__u8 dev;
};

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);		/* tid */
	__type(value, struct trace_start);
} starts SEC(".maps");

/* Allocated as processes show up: preallocation is per CPU per entry. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 8192);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct trace_key);
	__type(value, struct trace_hist);
} hists SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, TRACE_DROP_NR);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static const struct trace_hist zero_hist;

static __always_inline void count_drop(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &what);

	if (n)
		(*n)++;
}

static __always_inline bool comm_matches(const __u64 comm[TRACE_COMM_WORDS])
{
	return !((comm[0] ^ targ_comm[0]) & targ_comm_mask[0]) &&
	       !((comm[1] ^ targ_comm[1]) & targ_comm_mask[1]);
}

/*
 * Whether the filter rejects the calling thread; its ids in *pid_tgid.
 * Cheapest test first. btf (a constant: tp_btf programs) reads tgid, tid
 * and name from the task with a single helper call; raw_tp programs, for
 * kernels before 5.11, need one helper for the ids and one for the name.
 */
static __always_inline bool excluded(bool btf, __u64 *pid_tgid)
{
	struct task_struct *task = NULL;
	__u64 comm[TRACE_COMM_WORDS];
	__u32 tgid;

	if (btf) {
		task = bpf_get_current_task_btf();
		tgid = task->tgid;
		*pid_tgid = (__u64)tgid << 32 | (__u32)task->pid;
	} else {
		*pid_tgid = bpf_get_current_pid_tgid();
		tgid = *pid_tgid >> 32;
	}
	if (targ_tgid && tgid != targ_tgid)
		return true;
	if (tgid == self_tgid)
		return true;
	if (filter_comm) {
		if (btf) {
			comm[0] = ((__u64 *)task->comm)[0];
			comm[1] = ((__u64 *)task->comm)[1];
		} else {
			bpf_get_current_comm(comm, sizeof(comm));
		}
		if (!comm_matches(comm))
			return true;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_map, 0) != 1)
		return true;
	return false;
}

static __always_inline __u8 class_of(long nr)
{
	if ((unsigned long)nr >= TRACE_MAX_NR)
		return TRACE_SYS_NONE;
	return sys_class[nr];
}

static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds, *f = NULL;

	if (!fdt || fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

static __always_inline bool is_socket(struct file *f)
{
	return f && (BPF_CORE_READ(f, f_inode, i_mode) & S_IFMT) == S_IFSOCK;
}

/*
 * The device of an ioctl, by the name of the file: NVIDIA's nodes are
 * nvidia0.., nvidiactl, nvidia-uvm, nvidia-caps/..., the verbs and RDMA CM
 * nodes live in /dev/infiniband. Majors would not tell: nvidia-uvm's and
 * rdma_cm's are dynamic or shared (misc).
 */
static __always_inline __u8 ioctl_dev(struct file *f)
{
	static const char nvidia[] = "nvidia";
	static const char ib[] = "infiniband";
	const unsigned char *name;
	char buf[sizeof(ib)];
	int i;

	if (!f)
		return TRACE_DEV_OTHER;
	name = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(buf, sizeof(buf), name) < 0)
		return TRACE_DEV_OTHER;
	for (i = 0; i < sizeof(nvidia) - 1; i++)
		if (buf[i] != nvidia[i])
			break;
	if (i == sizeof(nvidia) - 1)
		return TRACE_DEV_NVIDIA;
	name = BPF_CORE_READ(f, f_path.dentry, d_parent, d_name.name);
	if (bpf_probe_read_kernel_str(buf, sizeof(buf), name) < 0)
		return TRACE_DEV_OTHER;
	for (i = 0; i < sizeof(ib); i++)
		if (buf[i] != ib[i])
			return TRACE_DEV_OTHER;
	return TRACE_DEV_INFINIBAND;
}

static __always_inline bool futex_waits(unsigned long op)
{
	switch (op & FUTEX_CMD_MASK) {
	case FUTEX_WAIT:
	case FUTEX_LOCK_PI:
	case FUTEX_WAIT_BITSET:
	case FUTEX_WAIT_REQUEUE_PI:
	case FUTEX_LOCK_PI2:
		return true;
	}
	return false;
}

static __always_inline int on_enter(bool btf, struct pt_regs *regs, long nr)
{
	struct trace_start st = { .fd = -1 };
	__u64 pid_tgid;
	__u32 tid;
	__u8 sys;

	if (excluded(btf, &pid_tgid))
		return 0;
	tid = (__u32)pid_tgid;
	sys = class_of(nr);
	switch (sys) {
	case TRACE_SYS_NONE:
		return 0;
	case TRACE_SYS_FUTEX_WAIT:
		if (!futex_waits(PT_REGS_PARM2_CORE_SYSCALL(regs)))
			return 0;
		break;
	case TRACE_SYS_READ:
	case TRACE_SYS_WRITE:
	case TRACE_SYS_READV:
	case TRACE_SYS_WRITEV:
		st.fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
		if (!is_socket(fd_file(st.fd)))
			return 0;
		break;
	case TRACE_SYS_IOCTL:
		st.fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
		st.dev = ioctl_dev(fd_file(st.fd));
		break;
	case TRACE_SYS_SENDMMSG:
	case TRACE_SYS_RECVMMSG:
		st.msgvec = PT_REGS_PARM2_CORE_SYSCALL(regs);
		st.fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
		break;
	case TRACE_SYS_SENDTO:
	case TRACE_SYS_RECVFROM:
	case TRACE_SYS_SENDMSG:
	case TRACE_SYS_RECVMSG:
	case TRACE_SYS_EPOLL_WAIT:
	case TRACE_SYS_EPOLL_PWAIT:
	case TRACE_SYS_EPOLL_PWAIT2:
		st.fd = PT_REGS_PARM1_CORE_SYSCALL(regs);
		break;
	}
	st.sys = sys;
	st.cpu = bpf_get_smp_processor_id();
	st.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&starts, &tid, &st, BPF_ANY))
		count_drop(TRACE_DROP_STARTS);
	return 0;
}

static __always_inline __u32 slot_of(__u64 ns)
{
	__u32 slot = 0;
	__u64 v;

	if (ns <= 1)
		return 0;
	/* ceil(log2(ns)) = floor(log2(ns - 1)) + 1 */
	v = ns - 1;
	if (v >> 32) { v >>= 32; slot += 32; }
	if (v >> 16) { v >>= 16; slot += 16; }
	if (v >> 8) { v >>= 8; slot += 8; }
	if (v >> 4) { v >>= 4; slot += 4; }
	if (v >> 2) { v >>= 2; slot += 2; }
	if (v >> 1) slot += 1;
	slot += 1;
	return slot < TRACE_SLOTS ? slot : TRACE_SLOTS - 1;
}

static __always_inline __u8 outcome_of(long ret)
{
	if (ret > 0)
		return TRACE_OUT_DATA;
	if (ret == 0)
		return TRACE_OUT_ZERO;
	return ret == -EAGAIN ? TRACE_OUT_EAGAIN : TRACE_OUT_ERROR;
}

static __always_inline __u64 mmsg_bytes(__u64 msgvec, long nmsgs)
{
	struct mmsghdr *vec = (void *)msgvec;
	__u64 bytes = 0;
	unsigned int len;
	int i;

	for (i = 0; i < MMSG_MAX && i < nmsgs; i++) {
		if (bpf_probe_read_user(&len, sizeof(len), &vec[i].msg_len))
			break;
		bytes += len;
	}
	return bytes;
}

static __always_inline __u64 bytes_of(const struct trace_start *st, long ret)
{
	if (ret <= 0)
		return 0;
	switch (st->sys) {
	case TRACE_SYS_SENDTO:
	case TRACE_SYS_RECVFROM:
	case TRACE_SYS_SENDMSG:
	case TRACE_SYS_RECVMSG:
	case TRACE_SYS_READ:
	case TRACE_SYS_WRITE:
	case TRACE_SYS_READV:
	case TRACE_SYS_WRITEV:
		return ret;
	case TRACE_SYS_SENDMMSG:
	case TRACE_SYS_RECVMMSG:
		return mmsg_bytes(st->msgvec, ret);
	}
	return 0;
}

static __always_inline void add_to_hist(const struct trace_key *key,
					__u64 lat, __u64 bytes)
{
	struct trace_hist *h = bpf_map_lookup_elem(&hists, key);

	if (!h) {
		bpf_map_update_elem(&hists, key, &zero_hist, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&hists, key);
		if (!h) {
			count_drop(TRACE_DROP_HIST);
			return;
		}
	}
	h->slots[slot_of(lat)]++;
	h->sum_ns += lat;
	h->bytes += bytes;
	if (!h->comm[0])
		bpf_get_current_comm(h->comm, sizeof(h->comm));
}

static __always_inline int on_exit(bool btf, struct pt_regs *regs, long ret)
{
	struct trace_outlier *e;
	struct trace_key key = {};
	struct trace_start *stp, st;
	__u64 pid_tgid, lat, bytes;
	__u32 tid;
	long nr;

	if (excluded(btf, &pid_tgid))
		return 0;
	tid = (__u32)pid_tgid;
	/* The number only after the filter: raw_tp reads it with a helper. */
	nr = btf ? regs->orig_ax : BPF_CORE_READ(regs, orig_ax);
	if (!class_of(nr))
		return 0;
	stp = bpf_map_lookup_elem(&starts, &tid);
	if (!stp)
		return 0;
	lat = bpf_ktime_get_ns() - stp->ts;
	st = *stp;
	bpf_map_delete_elem(&starts, &tid);

	bytes = bytes_of(&st, ret);
	key.tgid = pid_tgid >> 32;
	key.sys = st.sys;
	key.outcome = outcome_of(ret);
	key.dev = st.dev;
	add_to_hist(&key, lat, bytes);

	if (lat < threshold_ns)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(TRACE_DROP_EVENTS);
		return 0;
	}
	e->start_ns = st.ts;
	e->latency_ns = lat;
	e->bytes = bytes;
	e->ret = ret;
	e->pid = key.tgid;
	e->tid = tid;
	e->fd = st.fd;
	e->cpu = st.cpu;
	e->sys = st.sys;
	e->outcome = key.outcome;
	e->dev = st.dev;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter_btf, struct pt_regs *regs, long id)
{
	return on_enter(true, regs, id);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(sys_exit_btf, struct pt_regs *regs, long ret)
{
	return on_exit(true, regs, ret);
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter_raw, struct pt_regs *regs, long id)
{
	return on_enter(false, regs, id);
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit_raw, struct pt_regs *regs, long ret)
{
	return on_exit(false, regs, ret);
}

char LICENSE[] SEC("license") = "GPL";
