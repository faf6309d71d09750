/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Message records for lclkctl trace --messages, part of trace.bpf.c (its
 * filter, ring buffer and loss counters): fentry and fexit on tcp_sendmsg
 * and tcp_recvmsg. Entry runs the process filter and notes the time and
 * the socket's write_seq (send) or copied_seq (receive); exit reads it
 * again, and the difference is the range of bytes the call moved, less
 * the peer's FIN if the receive took it. Calls that moved nothing (EAGAIN,
 * MSG_PEEK, errors, end of file) are not recorded.
 *
 * One record per call, no aggregation: collective libraries move big
 * buffers in few calls, and a merge needs each range to match the other
 * end's. What the ring buffer cannot take is counted as lost
 * (TRACE_DROP_MESSAGES), never waited for.
 *
 * fexit only where a thread sleeping in tcp_recvmsg cannot outlive its
 * trampoline (5.12+): userspace loads these with fentry attach only.
 */

#include <bpf/bpf_endian.h>

#define AF_INET		2
#define AF_INET6	10

/* Valid while ts is not 0. */
struct msg_start {
	__u64 ts;
	__u64 pid_tgid;		/* as the filter saw them */
	__u32 seq;
	__u32 cpu;
};

/*
 * Per thread (sends and receives do not nest within one): in task storage
 * where the syscalls' starts are, else in a hash by kernel tid. The one not
 * used is the smallest hash (userspace).
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct msg_start);
} msg_task_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct msg_start);
} msg_starts SEC(".maps");

/* The thread's start, NULL if it has none. */
static __always_inline struct msg_start *msg_start_of(__u32 tid)
{
	if (use_task_storage)
		return bpf_task_storage_get(&msg_task_starts, bpf_get_current_task_btf(), NULL, 0);
	return bpf_map_lookup_elem(&msg_starts, &tid);
}

static __always_inline __u32 msg_seq(struct sock *sk, bool send)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
}

static __always_inline int msg_enter(struct sock *sk, bool send)
{
	__u32 tid = bpf_get_current_pid_tgid();
	struct msg_start st, *stp;

	if (excluded(&st.pid_tgid))
		return 0;
	st.seq = msg_seq(sk, send);
	st.cpu = bpf_get_smp_processor_id();
	st.ts = bpf_ktime_get_ns();
	if (use_task_storage) {
		stp = bpf_task_storage_get(&msg_task_starts, bpf_get_current_task_btf(), NULL,
					   BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (stp) {
			*stp = st;
			return 0;
		}
	} else if (!bpf_map_update_elem(&msg_starts, &tid, &st, BPF_ANY)) {
		return 0;
	}
	count_drop(TRACE_DROP_MESSAGES);
	return 0;
}

/*
 * Whether the receive that left copied_seq at seq took the peer's FIN: it
 * counts one in the sequence space but is no byte of data (an end-of-file
 * read, or the last data read with it). The FIN has come (SOCK_DONE, set
 * when it is queued, after which nothing more can come) and was taken
 * (copied_seq is up to rcv_nxt, which counts it); a receive that took none
 * of it stops one short.
 */
struct sock___sk_flags {	/* before sk_flags moved into sock_common */
	unsigned long sk_flags;
} __attribute__((preserve_access_index));

static __always_inline bool msg_took_fin(struct sock *sk, __u32 seq)
{
	struct sock___sk_flags *old = (void *)sk;
	struct tcp_sock *tp = (struct tcp_sock *)sk;
	unsigned long done = 1UL << bpf_core_enum_value(enum sock_flags, SOCK_DONE);
	unsigned long flags;

	if (bpf_core_field_exists(old->sk_flags))
		flags = BPF_CORE_READ(old, sk_flags);
	else
		flags = BPF_CORE_READ(sk, __sk_common.skc_flags);
	return (flags & done) && BPF_CORE_READ(tp, rcv_nxt) == seq;
}

static __always_inline void msg_addrs(struct sock *sk, struct trace_msg *m)
{
	m->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	m->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
	m->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (m->family == AF_INET6) {
		BPF_CORE_READ_INTO(&m->laddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
		BPF_CORE_READ_INTO(&m->raddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
	} else {
		BPF_CORE_READ_INTO((__u32 *)m->laddr, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO((__u32 *)m->raddr, sk, __sk_common.skc_daddr);
	}
}

static __always_inline int msg_exit(struct sock *sk, bool send)
{
	__u32 tid = bpf_get_current_pid_tgid(), len;
	struct msg_start *st = msg_start_of(tid);
	struct trace_msg *m;
	__u32 seq;

	if (!st || !st->ts)
		return 0;
	seq = msg_seq(sk, send);
	len = seq - st->seq;
	if (len && !send && msg_took_fin(sk, seq))
		len--;
	/* Nothing moved, or another thread's call interleaved: no range. */
	if (!len || len > (1U << 30))
		goto out;
	m = bpf_ringbuf_reserve(&events, sizeof(*m), 0);
	if (!m) {
		count_drop(TRACE_DROP_MESSAGES);
		goto out;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->begin_ns = st->ts;
	m->end_ns = bpf_ktime_get_ns();
	m->pid = st->pid_tgid >> 32;
	m->tid = st->pid_tgid;
	m->seq = st->seq;
	m->len = len;
	m->cpu = st->cpu;
	m->send = send;
	msg_addrs(sk, m);
	bpf_get_current_comm(m->comm, sizeof(m->comm));
	bpf_ringbuf_submit(m, 0);
out:
	if (use_task_storage)
		st->ts = 0;
	else
		bpf_map_delete_elem(&msg_starts, &tid);
	return 0;
}

SEC("fentry/tcp_sendmsg")
int BPF_PROG(msg_send_enter, struct sock *sk)
{
	return msg_enter(sk, true);
}

SEC("fexit/tcp_sendmsg")
int BPF_PROG(msg_send_exit, struct sock *sk)
{
	return msg_exit(sk, true);
}

SEC("fentry/tcp_recvmsg")
int BPF_PROG(msg_recv_enter, struct sock *sk)
{
	return msg_enter(sk, false);
}

SEC("fexit/tcp_recvmsg")
int BPF_PROG(msg_recv_exit, struct sock *sk)
{
	return msg_exit(sk, false);
}
