/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of bpf/trace.bpf.c share (included at its top): the
 * loader's settings, the maps, the loss counters, and a thread's calls in
 * flight (struct trace_start: its call and those of signal handlers that
 * run while it waits to be restarted).
 */
#ifndef LCLK_TRACE_COMMON_BPF_H
#define LCLK_TRACE_COMMON_BPF_H

#define EINTR		4
#define EAGAIN		11
/* What the kernel returns to have a call restarted (never seen by users). */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514
#define ERESTART_RESTARTBLOCK	516
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
const volatile bool have_task_btf;	/* bpf_get_current_task_btf(): 5.11+ */
const volatile bool use_task_storage;	/* else starts by tid in a hash */
/*
 * lclkctl's pid namespace (its inode number), 0 for the initial one. Ids
 * (self_tgid, targ_tgid and those the probes report) are as seen there,
 * and processes it does not see (the host's, from a container) are not
 * traced.
 */
const volatile __u32 ns_inum;
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
const volatile __u64 spin_gap_ns = TRACE_SPIN_GAP_NS;
/*
 * Whether the programs may be preempted mid-update (fentry/fexit: the
 * trampoline only disables migration, and under CONFIG_PREEMPT another
 * task's run of another of our programs, fexit_futex and the futex
 * restart probe on the same histogram key, or any two on the drops
 * counter, can come in between a load and its store): then the per-CPU
 * counters are added to atomically. tp_btf on raw_syscalls runs with
 * preemption disabled, where a plain add is exact and cheaper.
 */
const volatile bool atomic_counts;
/* tp_btf: enum trace_sys by syscall number */
const volatile __u8 sys_class[TRACE_MAX_NR];

/* A TCP connection's ends, noted for a message record (trace_msg.bpf.h). */
struct msg_ends {
	__u8 laddr[16];		/* IPv4 in the first 4 bytes */
	__u8 raddr[16];
	__u16 family;
	__u16 lport;
	__u16 rport;
};

/* A traced call in flight. */
struct trace_call {
	__u64 ts;
	__u64 msgvec;		/* sendmmsg/recvmmsg: struct mmsghdr * */
	/*
	 * The caller's user stack pointer at entry (0: unknown): the kernel
	 * restarts an interrupted call with it, where a signal handler's
	 * calls run below it.
	 */
	__u64 sp;
	/* --messages: the TCP socket the call moves data on, 0 if none */
	__u64 msg_sk;			/* struct sock * */
	__u32 msg_seq;			/* its sequence number then */
	struct msg_ends msg_ends;
	__s32 fd;
	__u32 cpu;
	__u8 sys;
	__u8 dev;
	bool interrupted;	/* ended with -ERESTART*: to be continued */
	bool in_restart;	/* continued by restart_syscall */
};

/*
 * Calls of a thread in flight at once: its call, and those of signal
 * handlers that run while it waits to be restarted (a handler's call
 * interrupted in turn, and so on). Deeper nesting times the innermost
 * calls only.
 */
#define TRACE_NEST	4	/* a power of 2 */

/*
 * A thread's calls in flight, calls[0] to calls[depth - 1], the last the
 * current one.
 */
struct trace_start {
	struct trace_call calls[TRACE_NEST];
	__u32 depth;
	/*
	 * A run of empty waiting calls (busy polling), kept between calls:
	 * from spin_ts (0: none), spin_calls of them so far; the last ended
	 * at spin_last, with the thread's scheduler counts then. While there
	 * is one, the entry stays with depth 0.
	 */
	__u64 spin_ts;
	__u64 spin_last;
	__u64 spin_nvcsw;
	__u64 spin_run_delay;
	__u32 spin_calls;
	__u32 spin_cpu;
};

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_map SEC(".maps");

/* A thread's calls in flight (depth > 0), and its busy-polling run. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct trace_start);
} task_starts SEC(".maps");

/* Without task storage; userspace sizes it (or shrinks it when unused). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);		/* tid */
	__type(value, struct trace_start);
} starts SEC(".maps");

/*
 * Allocated as processes show up: preallocation is per CPU per entry. Only
 * BPF_PROG_TYPE_TRACING programs (fentry, tp_btf) use it, which kernels
 * before 6.1 allow to allocate at run time without a warning.
 */
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

/* *p += v, atomically where another program can come in between. */
static __always_inline void count_add(__u64 *p, __u64 v)
{
	if (atomic_counts)
		__sync_fetch_and_add(p, v);
	else
		*p += v;
}

static __always_inline void count_drop(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&drops, &what);

	if (n)
		count_add(n, 1);
}

/* The thread's start, NULL if it has none (create: make room for one). */
static __always_inline struct trace_start *start_of(__u32 tid, bool create)
{
	struct trace_start *stp;

	if (use_task_storage)
		return bpf_task_storage_get(&task_starts, bpf_get_current_task_btf(), NULL,
					    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
	stp = bpf_map_lookup_elem(&starts, &tid);
	if (!stp && create) {
		static const struct trace_start none;

		bpf_map_update_elem(&starts, &tid, &none, BPF_NOEXIST);
		stp = bpf_map_lookup_elem(&starts, &tid);
	}
	return stp;
}

/* The thread's current call, NULL if it has none. */
static __always_inline struct trace_call *current_call(struct trace_start *stp)
{
	__u32 depth = stp->depth;

	if (!depth || depth > TRACE_NEST)
		return NULL;
	/* The mask bounds the index for the verifier, wherever clang puts it. */
	return &stp->calls[(depth - 1) & (TRACE_NEST - 1)];
}

/*
 * The thread's current call is over (or stale): forget it. With no call
 * left and no run of empty calls, the hash's entry goes.
 */
static __always_inline void pop_call(__u32 tid, struct trace_start *stp)
{
	struct trace_call *cp = current_call(stp);

	if (!cp)
		return;
	cp->ts = 0;
	stp->depth--;
	if (!use_task_storage && !stp->depth && !stp->spin_ts)
		bpf_map_delete_elem(&starts, &tid);
}

/*
 * The call of class sys that is ending, for the caller to pop; NULL if
 * there is none, or if the call is not over (-ERESTART*: the kernel runs
 * it again, or restart_syscall continues it). A call waiting to be
 * restarted is not this one (a signal handler's call, traced or not,
 * ends while it waits) and stays. A call of another kind is stale (its
 * exit was missed: tracing began or ended mid-call) and dropped.
 */
static __always_inline struct trace_call *take_call(__u32 tid, struct trace_start *stp,
						    __u8 sys, long ret)
{
	struct trace_call *cp;

	if (!stp)
		return NULL;
	cp = current_call(stp);
	if (!cp || cp->interrupted)
		return NULL;
	if (sys == TRACE_SYS_RESTART ? !cp->in_restart : cp->sys != sys || cp->in_restart) {
		pop_call(tid, stp);
		return NULL;
	}
	switch (ret) {
	case -ERESTARTSYS:
	case -ERESTARTNOINTR:
	case -ERESTARTNOHAND:
	case -ERESTART_RESTARTBLOCK:
		cp->interrupted = true;
		return NULL;
	}
	return cp;
}

/*
 * Entry of a call the kernel runs again after an interruption (same
 * number, from the same user stack pointer), or of restart_syscall: the
 * interrupted call goes on, its start stays. True if that is what this
 * entry is. A call of the same kind from deeper on the stack is a signal
 * handler's, made while the interrupted one waits.
 */
static __always_inline bool continues(struct trace_call *cp, __u8 sys, __u64 sp)
{
	if (!cp->ts || !cp->interrupted)
		return false;
	if (sys != TRACE_SYS_RESTART && (sys != cp->sys || sp != cp->sp))
		return false;
	cp->interrupted = false;
	cp->in_restart = sys == TRACE_SYS_RESTART;
	return true;
}

/*
 * Where a new call of the thread goes: above a call waiting to be
 * restarted when it comes from deeper on the user stack (a signal
 * handler's, on the interrupted code's stack); else in place of the
 * current one, whose exit was missed or which was interrupted and not
 * restarted (the program went on); or first. NULL if the stack is full.
 * A call ended by EINTR (no SA_RESTART) and followed by traced calls from
 * deeper frames stays below them; the program's next call of its kind
 * from the same frame continues it, as a call made again at once after
 * EINTR does.
 */
static __always_inline struct trace_call *push_call(struct trace_start *stp, __u64 sp)
{
	struct trace_call *cp = current_call(stp);

	if (!cp) {
		stp->depth = 1;
		return &stp->calls[0];
	}
	if (!cp->interrupted || !sp || sp >= cp->sp)
		return cp;
	if (stp->depth >= TRACE_NEST)
		return NULL;
	stp->depth++;
	return current_call(stp);
}

/* The calls that receive data. */
static __always_inline bool receives(__u8 sys)
{
	switch (sys) {
	case TRACE_SYS_RECVFROM:
	case TRACE_SYS_RECVMSG:
	case TRACE_SYS_RECVMMSG:
	case TRACE_SYS_READ:
	case TRACE_SYS_READV:
		return true;
	}
	return false;
}

#endif /* LCLK_TRACE_COMMON_BPF_H */
