// SPDX-License-Identifier: GPL-2.0
/*
 * Latency of the system calls collective-communication libraries block in,
 * for lclkctl trace.
 *
 * Entry and exit of every traced call of the selected processes: entry
 * stores the start per thread, exit adds the latency to a per-CPU log2
 * histogram keyed by (process, syscall, outcome, ioctl device) and streams
 * calls above the threshold through a ring buffer (5.8+), a busy-polling
 * thread's run of empty calls as one wait (spin_step()).
 *
 * Two ways to see the calls; userspace loads one:
 * - fentry/fexit on each traced syscall's wrapper (__x64_sys_recvfrom...,
 *   targets set at run time from BTF): only the traced syscalls pay
 *   anything, a few ns of trampoline for a process the filter excludes.
 * - tp_btf on raw_syscalls sys_enter/sys_exit, the fallback: any program
 *   there puts every syscall of every task on the slow path (120-160 ns a
 *   call measured on the 2-core VM, tests/bench/tp_floor.bpf.c).
 * Starts live in task storage (5.11+) or else a hash by tid. With
 * bpf_get_current_task_btf() (5.11+) the probes read the name and the
 * scheduler counts from the task directly; without, through
 * bpf_probe_read_kernel().
 *
 * The process filter runs first, so that a process it excludes pays for
 * the attach point and little more: one helper call per program and a few
 * comparisons.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "trace.h"
#include "trace_arch.bpf.h"
#include "trace_common.bpf.h"
#include "trace_msg.bpf.h"

static __always_inline bool comm_matches(const __u64 comm[TRACE_COMM_WORDS])
{
	return !((comm[0] ^ targ_comm[0]) & targ_comm_mask[0]) &&
	       !((comm[1] ^ targ_comm[1]) & targ_comm_mask[1]);
}

/*
 * The name of the calling thread's process: its thread group leader's, as
 * the threads of a process may rename themselves (NCCL's and PyTorch's do).
 */
static __always_inline void process_comm(__u64 comm[TRACE_COMM_WORDS])
{
	struct task_struct *leader;

	if (have_task_btf) {
		leader = bpf_get_current_task_btf()->group_leader;
		comm[0] = ((__u64 *)leader->comm)[0];
		comm[1] = ((__u64 *)leader->comm)[1];
	} else {
		leader = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(),
				       group_leader);
		bpf_probe_read_kernel(comm, TRACE_COMM_LEN, &leader->comm);
	}
}

#define MAX_PID_NS_LEVEL	32

/* pid's number in lclkctl's namespace; 0 if it has none there. */
static __always_inline __u32 nr_in_ns(struct pid *pid)
{
	unsigned int level = BPF_CORE_READ(pid, level), l;
	struct upid up;

	for (l = 0; l < MAX_PID_NS_LEVEL && l <= level; l++) {
		if (bpf_core_read(&up, sizeof(up), &pid->numbers[l]))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == ns_inum)
			return up.nr;
	}
	return 0;
}

/* The caller's tgid << 32 | tid as lclkctl sees them; 0 if it does not. */
static __always_inline __u64 ids_in_ns(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u32 tgid = nr_in_ns(BPF_CORE_READ(task, group_leader, thread_pid));

	return tgid ? (__u64)tgid << 32 | nr_in_ns(BPF_CORE_READ(task, thread_pid)) : 0;
}

/* The caller's ids as lclkctl sees them, cheaply when it is not in a container. */
static __always_inline __u64 current_ids(void)
{
	return ns_inum ? ids_in_ns() : bpf_get_current_pid_tgid();
}

/*
 * Whether the filter rejects the calling thread; its ids in *pid_tgid.
 * Cheapest test first: every call of every process to a traced syscall
 * pays for it. bpf_get_current_pid_tgid() costs fewer instructions than
 * two loads from bpf_get_current_task_btf(), which the JIT guards as
 * faulting loads.
 */
static __always_inline bool excluded(__u64 *pid_tgid)
{
	__u64 comm[TRACE_COMM_WORDS];
	__u32 tgid;

	if (ns_inum) {
		*pid_tgid = ids_in_ns();
		tgid = *pid_tgid >> 32;
		if (!tgid)
			return true;
	} else {
		*pid_tgid = bpf_get_current_pid_tgid();
		tgid = *pid_tgid >> 32;
	}
	if (targ_tgid && tgid != targ_tgid)
		return true;
	if (tgid == self_tgid)
		return true;
	if (filter_comm) {
		process_comm(comm);
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
	unsigned int i;

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



/* The calls a busy-polling thread spins in. */
static __always_inline bool polls(__u8 sys)
{
	switch (sys) {
	case TRACE_SYS_POLL:
	case TRACE_SYS_PPOLL:
	case TRACE_SYS_SELECT:
	case TRACE_SYS_PSELECT6:
	case TRACE_SYS_EPOLL_WAIT:
	case TRACE_SYS_EPOLL_PWAIT:
	case TRACE_SYS_EPOLL_PWAIT2:
		return true;
	}
	return receives(sys);
}

/*
 * The current thread's voluntary context switches, and the time it has
 * spent runnable but waiting for a CPU (schedstats' run_delay; 0 where the
 * kernel does not keep it).
 */
static __always_inline void sched_counts(__u64 *nvcsw, __u64 *run_delay)
{
	struct task_struct *task;

	/*
	 * Busy polling reads these at every entry and exit: with task BTF,
	 * as two loads rather than two bpf_probe_read_kernel() calls.
	 */
	if (have_task_btf) {
		task = bpf_get_current_task_btf();
		*nvcsw = task->nvcsw;
		*run_delay = bpf_core_field_exists(task->sched_info.run_delay) ?
			     task->sched_info.run_delay : 0;
		return;
	}
	task = (void *)bpf_get_current_task();
	*nvcsw = BPF_CORE_READ(task, nvcsw);
	*run_delay = bpf_core_field_exists(task->sched_info.run_delay) ?
		     BPF_CORE_READ(task, sched_info.run_delay) : 0;
}

/*
 * Whether the thread, since the last empty call of its run, did something
 * else than poll again: it slept (a voluntary switch: nanosleep, a lock),
 * or ran for over spin_gap_ns. Time it waited for a CPU does not
 * count: spinners on a busy host are preempted, and still waiting.
 */
static __always_inline bool spin_broken(const struct trace_start *stp, __u64 now)
{
	__u64 nvcsw, run_delay;

	sched_counts(&nvcsw, &run_delay);
	if (nvcsw != stp->spin_nvcsw)
		return true;
	return now - stp->spin_last > spin_gap_ns + (run_delay - stp->spin_run_delay);
}

/* A call of class sys (fentry: known, tp_btf: looked up by number). */
static __always_inline int on_enter(__u8 sys, struct pt_regs *regs)
{
	struct trace_call *cp = NULL;
	struct trace_start *stp;
	__u64 pid_tgid, msgvec = 0, sp;
	__u8 dev = TRACE_DEV_NONE;
	__s32 fd = -1;
	__u32 tid;

	if (sys == TRACE_SYS_NONE || excluded(&pid_tgid))
		return 0;
	tid = (__u32)pid_tgid;
	sp = regs ? sys_user_sp(regs) : 0;
	stp = start_of(tid, false);
	if (stp)
		cp = current_call(stp);
	if (cp && continues(cp, sys, sp))
		return 0;
	switch (sys) {
	case TRACE_SYS_RESTART:		/* of a call not traced */
		goto untimed;
	case TRACE_SYS_FUTEX_WAIT:
		if (!futex_waits(sys_arg2(regs)))
			goto untimed;
		break;
	case TRACE_SYS_READ:
	case TRACE_SYS_WRITE:
	case TRACE_SYS_READV:
	case TRACE_SYS_WRITEV:
		fd = sys_arg1(regs);
		if (!is_socket(fd_file(fd)))
			goto untimed;
		break;
	case TRACE_SYS_IOCTL:
		fd = sys_arg1(regs);
		dev = ioctl_dev(fd_file(fd));
		break;
	case TRACE_SYS_SENDMMSG:
	case TRACE_SYS_RECVMMSG:
		msgvec = sys_arg2(regs);
		fd = sys_arg1(regs);
		break;
	case TRACE_SYS_SENDTO:
	case TRACE_SYS_RECVFROM:
	case TRACE_SYS_SENDMSG:
	case TRACE_SYS_RECVMSG:
	case TRACE_SYS_EPOLL_WAIT:
	case TRACE_SYS_EPOLL_PWAIT:
	case TRACE_SYS_EPOLL_PWAIT2:
		fd = sys_arg1(regs);
		break;
	}
	if (!stp)
		stp = start_of(tid, true);
	cp = stp ? push_call(stp, sp) : NULL;
	if (!cp) {
		count_drop(TRACE_DROP_STARTS);
		return 0;
	}
	cp->msgvec = msgvec;
	cp->sp = sp;
	cp->msg_sk = 0;
	cp->fd = fd;
	cp->dev = dev;
	cp->sys = sys;
	cp->interrupted = false;
	cp->in_restart = false;
	cp->cpu = bpf_get_smp_processor_id();
	cp->ts = bpf_ktime_get_ns();
	if (stp->spin_ts && polls(sys) && spin_broken(stp, cp->ts))
		stp->spin_ts = 0;
	return 0;
untimed:
	/*
	 * Its exit must not find an older call's start: one whose exit was
	 * missed goes. One waiting to be restarted stays (this may be a
	 * signal handler's call), and no exit takes it.
	 */
	if (cp && !cp->interrupted)
		pop_call(tid, stp);
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

static __always_inline __u8 outcome_of(__u8 sys, long ret)
{
	if (ret > 0)
		return TRACE_OUT_DATA;
	if (ret == 0)
		return TRACE_OUT_ZERO;
	if (ret == -EINTR)
		return TRACE_OUT_INTR;
	if (ret == -EAGAIN)
		/* A futex wait's word changed before it slept: no polling. */
		return sys == TRACE_SYS_FUTEX_WAIT ? TRACE_OUT_ZERO : TRACE_OUT_EAGAIN;
	return TRACE_OUT_ERROR;
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

static __always_inline __u64 bytes_of(const struct trace_call *st, long ret)
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
	count_add(&h->slots[slot_of(lat)], 1);
	count_add(&h->sum_ns, lat);
	count_add(&h->bytes, bytes);
	if (!h->comm[0])
		process_comm((__u64 *)h->comm);
}

enum poll_result {
	POLL_NONE,	/* not a call that waits for data */
	POLL_EMPTY,	/* found nothing: 0 ready, -EAGAIN */
	POLL_DATA,
	POLL_OTHER,	/* EOF, an error, a signal: the wait is over */
};

static __always_inline enum poll_result poll_result(__u8 sys, __u8 outcome)
{
	if (!polls(sys))
		return POLL_NONE;
	if (outcome == TRACE_OUT_DATA)
		return POLL_DATA;
	/* poll, epoll, select: 0 ready; recv, read: -EAGAIN (0 is EOF). */
	if (outcome == (sys >= TRACE_SYS_POLL && sys <= TRACE_SYS_EPOLL_PWAIT2 ?
			TRACE_OUT_ZERO : TRACE_OUT_EAGAIN))
		return POLL_EMPTY;
	return POLL_OTHER;
}

/* The outlier to stream for a call that began at st->ts. */
struct outlier_span {
	__u64 begin;
	__u32 cpu;
	__u32 empty_calls;
};

/*
 * Busy polling: a run of empty waiting calls is one wait, streamed with
 * the call that ends it with data (sends and other calls in between leave
 * the run alone; on_enter() ends it when the thread did something else,
 * and EOF or an error ends it here). Returns the span to stream for this
 * call.
 */
static __always_inline struct outlier_span spin_step(struct trace_start *stp,
						     const struct trace_call *cp,
						     __u8 outcome, __u64 now)
{
	struct outlier_span span = { .begin = cp->ts, .cpu = cp->cpu };

	switch (poll_result(cp->sys, outcome)) {
	case POLL_NONE:
		return span;
	case POLL_EMPTY:
		if (!stp->spin_ts) {
			stp->spin_ts = cp->ts;
			stp->spin_cpu = cp->cpu;
			stp->spin_calls = 0;
		}
		stp->spin_calls++;
		stp->spin_last = now;
		sched_counts(&stp->spin_nvcsw, &stp->spin_run_delay);
		return span;
	case POLL_DATA:
		if (stp->spin_ts) {
			span.begin = stp->spin_ts;
			span.cpu = stp->spin_cpu;
			span.empty_calls = stp->spin_calls;
		}
		break;
	case POLL_OTHER:
		break;
	}
	stp->spin_ts = 0;
	return span;
}

static __always_inline int on_exit(__u8 sys, long ret)
{
	struct trace_outlier *e;
	struct trace_key key = {};
	struct trace_call *cp;
	struct trace_start *stp;
	struct outlier_span span;
	__u64 pid_tgid, lat, bytes, now;
	__s32 fd;
	__u32 tid;

	/*
	 * Not the whole filter: a call's process cannot change while it runs,
	 * but its name or cgroup can. The start says whether entry selected
	 * it; this only spares the threads of other processes a lookup.
	 */
	if (sys == TRACE_SYS_NONE)
		return 0;
	pid_tgid = current_ids();
	if (targ_tgid && pid_tgid >> 32 != targ_tgid)
		return 0;
	tid = (__u32)pid_tgid;
	/*
	 * With task storage, a lookup fails when another program holds the
	 * CPU's storage lock: under full preemption, a thread preempted in
	 * one (kernels before 6.2 refuse even a lookup then). Asked to
	 * create, it fails only so (or out of memory), so a NULL is a call
	 * lost, and counted: at most once too often, when the same holder
	 * made its entry fail as well (a lost start). The price: a thread of
	 * a process the filter leaves out gets its storage at its first
	 * traced exit, freed with the thread; its exits look up as before.
	 */
	stp = start_of(tid, use_task_storage);
	if (!stp && use_task_storage) {
		count_drop(TRACE_DROP_EXITS);
		return 0;
	}
	cp = take_call(tid, stp, sys, ret);
	if (!cp)
		return 0;
	now = bpf_ktime_get_ns();
	lat = now - cp->ts;

	/*
	 * The call is read in place, not copied (88 bytes, every traced
	 * call): pop_call() only clears its start, and nothing else runs on
	 * this thread's storage until this program returns.
	 */
	bytes = bytes_of(cp, ret);
	key.tgid = pid_tgid >> 32;
	key.sys = cp->sys;
	key.outcome = outcome_of(cp->sys, ret);
	key.dev = cp->dev;
	add_to_hist(&key, lat, bytes);
	if (cp->msg_sk && ret > 0)
		msg_record(cp, key.tgid, tid,
			   key.sys == TRACE_SYS_SENDMMSG || key.sys == TRACE_SYS_RECVMMSG ? 0 : bytes,
			   now);

	span = spin_step(stp, cp, key.outcome, now);
	fd = cp->fd;
	pop_call(tid, stp);
	if (now - span.begin < threshold_ns)
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_drop(TRACE_DROP_EVENTS);
		return 0;
	}
	e->hdr.type = TRACE_REC_OUTLIER;
	e->hdr.size = sizeof(*e);
	e->start_ns = span.begin;
	e->latency_ns = now - span.begin;
	e->empty_calls = span.empty_calls;
	e->bytes = bytes;
	e->ret = ret;
	e->pid = key.tgid;
	e->tid = tid;
	e->fd = fd;
	e->cpu = span.cpu;
	e->end_cpu = bpf_get_smp_processor_id();
	e->sys = key.sys;
	e->outcome = key.outcome;
	e->dev = key.dev;
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* The fallback: every syscall, classified by number. */
static __always_inline __u8 tp_class_of(long nr)
{
	__u8 sys = class_of(nr);

	return sys && !compat_syscall(have_task_btf) ? sys : TRACE_SYS_NONE;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(tp_sys_enter, struct pt_regs *regs, long id)
{
	return on_enter(tp_class_of(id), regs);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(tp_sys_exit, struct pt_regs *regs, long ret)
{
	return on_exit(tp_class_of(sys_nr_at_exit(regs)), ret);
}

/*
 * fentry_NAME and fexit_NAME attach to syscall NAME's wrapper, found by
 * userspace in BTF (tools/trace/trace_probe.c); the wrapper's argument is the
 * caller's registers.
 */
#define SYSCALL_PROBES(name, sys)					\
SEC("fentry")								\
int BPF_PROG(fentry_##name, struct pt_regs *regs)			\
{									\
	return on_enter(sys, regs);					\
}									\
SEC("fexit")								\
int BPF_PROG(fexit_##name, struct pt_regs *regs, long ret)		\
{									\
	return on_exit(sys, ret);					\
}

SYSCALL_PROBES(sendto, TRACE_SYS_SENDTO)
SYSCALL_PROBES(recvfrom, TRACE_SYS_RECVFROM)
SYSCALL_PROBES(sendmsg, TRACE_SYS_SENDMSG)
SYSCALL_PROBES(recvmsg, TRACE_SYS_RECVMSG)
SYSCALL_PROBES(sendmmsg, TRACE_SYS_SENDMMSG)
SYSCALL_PROBES(recvmmsg, TRACE_SYS_RECVMMSG)
SYSCALL_PROBES(read, TRACE_SYS_READ)
SYSCALL_PROBES(write, TRACE_SYS_WRITE)
SYSCALL_PROBES(readv, TRACE_SYS_READV)
SYSCALL_PROBES(writev, TRACE_SYS_WRITEV)
SYSCALL_PROBES(poll, TRACE_SYS_POLL)
SYSCALL_PROBES(ppoll, TRACE_SYS_PPOLL)
SYSCALL_PROBES(select, TRACE_SYS_SELECT)
SYSCALL_PROBES(pselect6, TRACE_SYS_PSELECT6)
SYSCALL_PROBES(epoll_wait, TRACE_SYS_EPOLL_WAIT)
SYSCALL_PROBES(epoll_pwait, TRACE_SYS_EPOLL_PWAIT)
SYSCALL_PROBES(epoll_pwait2, TRACE_SYS_EPOLL_PWAIT2)
SYSCALL_PROBES(futex, TRACE_SYS_FUTEX_WAIT)
SYSCALL_PROBES(futex_waitv, TRACE_SYS_FUTEX_WAITV)
SYSCALL_PROBES(ioctl, TRACE_SYS_IOCTL)

/*
 * restart_syscall's wrapper has no BTF (SYSCALL_DEFINE0), so the
 * continuations of the traced calls are seen where restart_syscall runs
 * them: fentry_fn_NAME and fexit_fn_NAME attach to kernel function NAME.
 */
#define RESTART_PROBES(name)						\
SEC("fentry")								\
int BPF_PROG(fentry_fn_##name, struct restart_block *restart)		\
{									\
	return on_enter(TRACE_SYS_RESTART, NULL);			\
}									\
SEC("fexit")								\
int BPF_PROG(fexit_fn_##name, struct restart_block *restart, long ret)	\
{									\
	return on_exit(TRACE_SYS_RESTART, ret);				\
}

RESTART_PROBES(futex_wait_restart)	/* futex waits with a timeout */
RESTART_PROBES(do_restart_poll)		/* poll with a timeout */

/*
 * --messages (trace_msg.bpf.h): a traced call's socket and its place in
 * the sequence space, noted where TCP sends or receives.
 */
SEC("fentry/tcp_sendmsg")
int BPF_PROG(msg_send, struct sock *sk)
{
	return msg_note(sk, true);
}

SEC("fentry/tcp_recvmsg")
int BPF_PROG(msg_recv, struct sock *sk)
{
	return msg_note(sk, false);
}

char LICENSE[] SEC("license") = "GPL";
