// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under lclkctl trace's cost, for tests/bench/trace.sh and
 * trace_insns.sh: empty programs on the same attach points, attached the
 * same way. With tp_btf on the raw syscall tracepoints, what a process
 * pays is the kernel's share (the syscall slow path every task takes once
 * raw_syscalls has a probe, and two BPF dispatches); with fentry/fexit on
 * recvfrom's wrapper, it is the trampoline's, which any fentry tracer of
 * that function pays. What a process pays with trace.bpf.c beyond that is
 * ours. tp_floor loads one pair (-f: the fentry one).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("tp_btf/sys_enter")
int BPF_PROG(floor_enter)
{
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_exit)
{
	return 0;
}

SEC("fentry/__x64_sys_recvfrom")
int BPF_PROG(floor_fentry)
{
	return 0;
}

SEC("fexit/__x64_sys_recvfrom")
int BPF_PROG(floor_fexit)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
