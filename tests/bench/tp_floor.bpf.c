// SPDX-License-Identifier: GPL-2.0
/*
 * The floor under lclkctl trace's cost, for tests/bench/trace.sh: empty
 * programs on the same raw syscall tracepoints, attached the same way
 * (tp_btf). What a process pays with these attached is the kernel's share
 * (the syscall slow path every task takes once raw_syscalls has a probe, and
 * two BPF dispatches); what it pays with trace.bpf.c beyond that is ours.
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

char LICENSE[] SEC("license") = "GPL";
