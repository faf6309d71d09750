/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What bpf/trace.bpf.c reads from a syscall's registers, per architecture
 * (included at its top): the arguments, the caller's user stack pointer,
 * the syscall number at exit, and whether the call came through a 32-bit
 * entry. Build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64.
 *
 * vmlinux.h is the build machine's (x86's): arm64's registers are read
 * through CO-RE flavours of its struct pt_regs, which libbpf relocates
 * against the running kernel's BTF, so one vmlinux.h serves both.
 */
#ifndef LCLK_TRACE_ARCH_BPF_H
#define LCLK_TRACE_ARCH_BPF_H

#if defined(__TARGET_ARCH_x86)

#define TS_COMPAT	0x0002	/* x86 thread_info.status: 32-bit syscall */

/* Plain loads: regs is a BTF pointer (the wrapper's or sys_enter's argument). */
#define sys_arg1(regs)		PT_REGS_PARM1_SYSCALL(regs)
#define sys_arg2(regs)		PT_REGS_PARM2_SYSCALL(regs)
#define sys_user_sp(regs)	PT_REGS_SP(regs)
/* At sys_exit the number is in orig_ax; ax holds the return value. */
#define sys_nr_at_exit(regs)	((regs)->orig_ax)

/*
 * Whether the current syscall came through the 32-bit entry (a 32-bit
 * process, or int $0x80): its number is an ia32 one, which names another
 * call than the same x86_64 number (45 is brk there, recvfrom here).
 */
static __always_inline bool compat_syscall(bool task_btf)
{
	struct task_struct *task;

	if (!bpf_core_field_exists(struct task_struct, thread_info.status))
		return false;
	if (task_btf)
		return bpf_get_current_task_btf()->thread_info.status & TS_COMPAT;
	task = (void *)bpf_get_current_task();
	return BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
}

#elif defined(__TARGET_ARCH_arm64)

/*
 * arm64's struct pt_regs (arch/arm64/include/asm/ptrace.h): regs[], sp,
 * pc and pstate sit in an anonymous union, which CO-RE looks into.
 * orig_x0 keeps the first argument after x0 took the return value.
 */
struct pt_regs___lclk_arm64 {
	__u64 regs[31];
	__u64 sp;
	__u64 orig_x0;
	__s32 syscallno;
} __attribute__((preserve_access_index));

struct thread_info___lclk_arm64 {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct task_struct___lclk_arm64 {
	struct thread_info___lclk_arm64 thread_info;
} __attribute__((preserve_access_index));

#define TIF_32BIT	22	/* arm64 thread_info.flags: an AArch32 task */

/*
 * Plain loads from the BTF pointer, as on x86, where libbpf's arm64
 * PT_REGS_PARM1_SYSCALL() would call bpf_probe_read_kernel() (about 75
 * instructions more a call on x86's 6.1); CO-RE places the fields.
 */
#define arm64_regs(regs)	((struct pt_regs___lclk_arm64 *)(regs))
#define sys_arg1(regs)		(arm64_regs(regs)->orig_x0)
#define sys_arg2(regs)		(arm64_regs(regs)->regs[1])
#define sys_user_sp(regs)	(arm64_regs(regs)->sp)
#define sys_nr_at_exit(regs)	(arm64_regs(regs)->syscallno)

/*
 * An AArch32 task's numbers are arm's, not arm64's (the fentry programs
 * never see its calls: they go through the __arm64_compat_sys_ wrappers).
 */
static __always_inline bool compat_syscall(bool task_btf)
{
	struct task_struct___lclk_arm64 *task = (void *)bpf_get_current_task();

	return BPF_CORE_READ(task, thread_info.flags) & (1UL << TIF_32BIT);
}

#else
#error "bpf/trace_arch.bpf.h: build with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64"
#endif

#endif /* LCLK_TRACE_ARCH_BPF_H */
