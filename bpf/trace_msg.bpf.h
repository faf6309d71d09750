/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Message records for lclkctl trace --messages, part of trace.bpf.c's
 * syscall probes. In a traced call (send*, recv*, read, write, readv,
 * writev), fentry on tcp_sendmsg or tcp_recvmsg notes in the call's start
 * the socket and its write_seq (send) or copied_seq (receive); the call's
 * exit reads it again, and the difference is the range of bytes the call
 * moved, less the peer's FIN if a receive took it. The record is stamped
 * with the call's entry and exit. Calls that moved nothing (EAGAIN,
 * MSG_PEEK, errors, end of file) are not recorded, nor is what moves
 * outside the traced calls (sendfile, splice, io_uring).
 *
 * fentry only, the exit being the syscall probe's: an fexit on the TCP
 * functions too cost two more trampolines per call, which call the
 * function from within (tests/bench/trace_messages.sh). And a thread
 * asleep in tcp_recvmsg is not inside a trampoline, on any kernel.
 *
 * One record per call, no aggregation: collective libraries move big
 * buffers in few calls, and a merge needs each range to match the other
 * end's. What the ring buffer cannot take is counted as lost
 * (TRACE_DROP_MESSAGES), never waited for.
 *
 * Helpers only, included at the top of trace.bpf.c (after
 * trace_common.bpf.h); the programs msg_send and msg_recv are defined
 * there with the others.
 */
#ifndef LCLK_TRACE_MSG_BPF_H
#define LCLK_TRACE_MSG_BPF_H

#include <bpf/bpf_endian.h>

#define AF_INET6	10

/* The traced calls that send data (receives(): those that receive it). */
static __always_inline bool sends(__u8 sys)
{
	return sys == TRACE_SYS_SENDTO || sys == TRACE_SYS_SENDMSG || sys == TRACE_SYS_SENDMMSG ||
	       sys == TRACE_SYS_WRITE || sys == TRACE_SYS_WRITEV;
}

static __always_inline __u32 msg_seq(struct sock *sk, bool send)
{
	struct tcp_sock *tp = (struct tcp_sock *)sk;

	return send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
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

/*
 * The record of call st, over at now, having moved bytes (0 where the call
 * does not say: sendmmsg and recvmmsg return a count of messages).
 */
static __always_inline void msg_record(const struct trace_call *st, __u32 tgid,
				       __u32 tid, __u64 bytes, __u64 now)
{
	struct sock *sk = (void *)st->msg_sk;
	bool send = sends(st->sys);
	struct trace_msg *m;
	__u32 seq, len;

	seq = msg_seq(sk, send);
	len = seq - st->msg_seq;
	if (len && !send && msg_took_fin(sk, seq))
		len--;
	/*
	 * Nothing moved; or the range is not the call's alone: another
	 * thread's call on the socket went in between (or a SYN took a
	 * number: MSG_FASTOPEN).
	 */
	if (!len || (bytes && len != bytes) || len > (1U << 30))
		return;
	m = bpf_ringbuf_reserve(&events, sizeof(*m), 0);
	if (!m) {
		count_drop(TRACE_DROP_MESSAGES);
		return;
	}
	__builtin_memset(m, 0, sizeof(*m));
	m->hdr.type = TRACE_REC_MSG;
	m->hdr.size = sizeof(*m);
	m->begin_ns = st->ts;
	m->end_ns = now;
	m->pid = tgid;
	m->tid = tid;
	m->seq = st->msg_seq;
	m->len = len;
	m->cpu = st->cpu;
	m->end_cpu = bpf_get_smp_processor_id();
	m->send = send;
	m->family = st->msg_ends.family;
	m->lport = st->msg_ends.lport;
	m->rport = st->msg_ends.rport;
	__builtin_memcpy(m->laddr, st->msg_ends.laddr, sizeof(m->laddr));
	__builtin_memcpy(m->raddr, st->msg_ends.raddr, sizeof(m->raddr));
	bpf_get_current_comm(m->comm, sizeof(m->comm));
	bpf_ringbuf_submit(m, 0);
}

static __always_inline void msg_note_ends(struct sock *sk, struct msg_ends *e)
{
	struct sock_common *skc = &sk->__sk_common;

	e->family = skc->skc_family;
	e->lport = skc->skc_num;
	e->rport = bpf_ntohs(skc->skc_dport);
	if (e->family == AF_INET6) {
		__builtin_memcpy(e->laddr, skc->skc_v6_rcv_saddr.in6_u.u6_addr8, 16);
		__builtin_memcpy(e->raddr, skc->skc_v6_daddr.in6_u.u6_addr8, 16);
	} else {
		__builtin_memset(e->laddr, 0, sizeof(e->laddr));
		__builtin_memset(e->raddr, 0, sizeof(e->raddr));
		__builtin_memcpy(e->laddr, &skc->skc_rcv_saddr, 4);
		__builtin_memcpy(e->raddr, &skc->skc_daddr, 4);
	}
}

/*
 * The socket the thread's traced call sends or receives on, and where it
 * begins in the sequence space; noted once per call: a sendmmsg sends
 * several times, a restarted call goes on.
 */
static __always_inline int msg_note(struct sock *sk, bool send)
{
	struct trace_start *stp = start_of((__u32)bpf_get_current_pid_tgid(), false);
	struct trace_call *cp = stp ? current_call(stp) : NULL;
	struct tcp_sock *tp;

	if (!cp || !cp->ts || cp->msg_sk || cp->interrupted ||
	    !(send ? sends(cp->sys) : receives(cp->sys)))
		return 0;
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp)
		return 0;
	cp->msg_seq = send ? tp->write_seq : tp->copied_seq;
	cp->msg_sk = (__u64)sk;
	msg_note_ends(sk, &cp->msg_ends);
	return 0;
}

#endif /* LCLK_TRACE_MSG_BPF_H */
