/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between bpf/trace.bpf.c and lclkctl trace: what the probes count
 * and what they stream.
 */
#ifndef LCLK_TRACE_H
#define LCLK_TRACE_H

#define TRACE_COMM_LEN	16
#define TRACE_COMM_WORDS	(TRACE_COMM_LEN / 8)	/* compared as __u64s */

/*
 * Syscall numbers below this are looked up in the probe's class table; all
 * the traced ones are (x86_64 and arm64 number them below 460).
 */
#define TRACE_MAX_NR	512

/*
 * Latency histogram slots: slot 0 holds 0 and 1 ns, slot k > 0 holds
 * (2^(k-1), 2^k] ns, so 2^k ns is the slot's inclusive upper edge (a
 * Prometheus "le"). The last slot also takes everything longer.
 */
#define TRACE_SLOTS	40

/*
 * A thread that busy-polls (Open MPI's TCP transport, NCCL's socket
 * proxy) waits in a run of calls that find nothing, not in one call: the
 * run, from the first empty call to the one that gets data, is timed as
 * one wait. Running longer than this between its calls (or sleeping at
 * all) ends a run; waiting for a CPU does not. The default of lclkctl
 * trace --spin-gap.
 */
#define TRACE_SPIN_GAP_NS	1000000ULL

/* Calls longer than this many ns streamed as outliers by default. */
#define TRACE_DEFAULT_THRESHOLD_NS	1000000ULL

/* What a traced syscall is for; 0 (TRACE_SYS_NONE) is "not traced". */
enum trace_sys {
	TRACE_SYS_NONE,
	TRACE_SYS_SENDTO,
	TRACE_SYS_RECVFROM,
	TRACE_SYS_SENDMSG,
	TRACE_SYS_RECVMSG,
	TRACE_SYS_SENDMMSG,
	TRACE_SYS_RECVMMSG,
	TRACE_SYS_READ,		/* read/write/readv/writev: sockets only */
	TRACE_SYS_WRITE,
	TRACE_SYS_READV,
	TRACE_SYS_WRITEV,
	TRACE_SYS_POLL,
	TRACE_SYS_PPOLL,
	TRACE_SYS_SELECT,
	TRACE_SYS_PSELECT6,
	TRACE_SYS_EPOLL_WAIT,
	TRACE_SYS_EPOLL_PWAIT,
	TRACE_SYS_EPOLL_PWAIT2,
	TRACE_SYS_FUTEX_WAIT,	/* futex wait/lock operations only */
	TRACE_SYS_FUTEX_WAITV,
	TRACE_SYS_IOCTL,
	TRACE_SYS_NR,
};

/*
 * restart_syscall: not a class of its own. It continues a call that a
 * stop or a signal without handler interrupted with -ERESTART_RESTARTBLOCK
 * (futex, poll and select waits with a timeout), and that call is timed
 * from its first entry to its last exit.
 */
#define TRACE_SYS_RESTART	0xff

/* How the call ended, from its return value. */
enum trace_outcome {
	TRACE_OUT_DATA,		/* > 0: bytes, messages or ready descriptors */
	TRACE_OUT_ZERO,		/* 0: EOF, timeout, futex woken; futex -EAGAIN
				 * (its word changed before the wait) */
	TRACE_OUT_EAGAIN,	/* -EAGAIN: nothing there yet (busy polling) */
	TRACE_OUT_ERROR,	/* any other -errno */
	TRACE_OUT_INTR,		/* -EINTR: a signal handler ended the call */
	TRACE_OUT_NR,
};

/* The device an ioctl went to, from the file's name (see trace.bpf.c). */
enum trace_dev {
	TRACE_DEV_NONE,		/* not an ioctl */
	TRACE_DEV_NVIDIA,	/* /dev/nvidia* */
	TRACE_DEV_INFINIBAND,	/* /dev/infiniband/... */
	TRACE_DEV_OTHER,
	TRACE_DEV_NR,
};

struct trace_key {
	__u32 tgid;
	__u8 sys;		/* enum trace_sys */
	__u8 outcome;		/* enum trace_outcome */
	__u8 dev;		/* enum trace_dev */
	__u8 pad;
};

/* Per CPU; userspace sums the CPUs. Calls are the sum of the slots. */
struct trace_hist {
	__u64 slots[TRACE_SLOTS];
	__u64 sum_ns;
	__u64 bytes;
	char comm[TRACE_COMM_LEN];	/* of the process, at its first call */
};

/* Per-CPU counters of what the probes could not record. */
enum trace_drop {
	TRACE_DROP_EVENTS,	/* outlier ring buffer full */
	TRACE_DROP_STARTS,	/* too many calls in flight to time, or the
				 * thread's task storage busy at entry */
	TRACE_DROP_HIST,	/* histogram map full */
	TRACE_DROP_RECURSION,	/* probe skipped: the CPU was already in one of
				 * ours (the kernel counts these per program) */
	TRACE_DROP_MESSAGES,	/* message records lost: ring buffer full, or
				 * too many sends/receives in flight */
	TRACE_DROP_EXITS,	/* calls not counted: the thread's task storage
				 * busy at exit (preempted in a lookup); may
				 * count a call a lost start counted already */
	TRACE_DROP_NR,
};

/*
 * What a ring-buffer record is: every record begins with this header, and
 * lclkctl dispatches on its type (tools/trace/trace_record.c), never on
 * the record's size. size is the record's size as the probe wrote it;
 * records of an unknown type, or shorter than their type's struct, are
 * rejected and counted.
 */
enum trace_rec_type {
	TRACE_REC_NONE,		/* never written: a zeroed record is invalid */
	TRACE_REC_OUTLIER,	/* struct trace_outlier */
	TRACE_REC_MSG,		/* struct trace_msg */
	TRACE_REC_NR,
};

struct trace_rec_hdr {
	__u32 type;		/* enum trace_rec_type */
	__u32 size;		/* sizeof the record's struct */
};

/* One outlier, as streamed through the ring buffer. */
struct trace_outlier {
	struct trace_rec_hdr hdr;	/* TRACE_REC_OUTLIER */
	__u64 start_ns;		/* bpf_ktime_get_ns() at entry: CLOCK_MONOTONIC */
	__u64 latency_ns;
	__u64 bytes;
	__s64 ret;
	__u32 pid;		/* thread group */
	__u32 tid;
	__s32 fd;		/* -1 for calls without one */
	__u32 cpu;		/* the CPU start_ns was read on */
	__u32 end_cpu;		/* the CPU the end (exit) was read on */
	__u8 sys;
	__u8 outcome;
	__u8 dev;
	__u8 pad;
	/*
	 * Busy polling: the waiting calls before this one that found nothing
	 * (0 ready, -EAGAIN), in a run from start_ns; 0 for a call on its own.
	 */
	__u32 empty_calls;
	char comm[TRACE_COMM_LEN];	/* thread name */
};

/*
 * One TCP send or receive of a traced process (lclkctl trace --messages),
 * through the same ring buffer as the outliers (TRACE_REC_MSG): the
 * bytes it moved as a range of the connection's sequence space, write_seq
 * before and after a send, copied_seq before and after a receive, which
 * both ends of the connection number alike.
 */
struct trace_msg {
	struct trace_rec_hdr hdr;	/* TRACE_REC_MSG */
	__u64 begin_ns;		/* entry, CLOCK_MONOTONIC */
	__u64 end_ns;		/* exit */
	__u32 pid;
	__u32 tid;
	__u32 seq;		/* first byte */
	__u32 len;		/* bytes */
	__u32 cpu;		/* the CPU begin_ns was read on */
	__u32 end_cpu;		/* the CPU end_ns was read on */
	__u16 family;		/* AF_INET or AF_INET6 */
	__u16 lport;		/* local port */
	__u16 rport;		/* remote port */
	__u8 send;		/* 1: send, 0: receive */
	__u8 pad[1];
	__u8 laddr[16];		/* local address: IPv4 in the first 4 bytes */
	__u8 raddr[16];
	char comm[TRACE_COMM_LEN];	/* thread name */
};

#endif /* LCLK_TRACE_H */
