/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the running kernel offers lclkctl trace, probed rather than guessed
 * from its version (distribution kernels backport): which attach mode is
 * possible and where per-thread starts can live.
 */
#ifndef LCLK_TRACE_ATTACH_H
#define LCLK_TRACE_ATTACH_H

#include <bpf/btf.h>
#include <stdbool.h>
#include <stddef.h>

struct trace_kernel {
	struct btf *btf;	/* vmlinux */
	bool task_btf;		/* bpf_get_current_task_btf() (5.11+) */
	bool task_storage;	/* BPF task storage (5.11+) */
	bool tp_btf;		/* tp_btf programs on raw_syscalls (5.5+) */
	/* Why fentry/fexit cannot be used: "" when they can. */
	char no_fentry[192];
};

/* Probe; 0 or -errno (no vmlinux BTF). trace_kernel_free() after. */
int trace_kernel_probe(struct trace_kernel *k);
void trace_kernel_free(struct trace_kernel *k);

/*
 * The BTF function that is syscall name's entry point on this
 * architecture (__x64_sys_recvfrom), in buf. False if the kernel has none.
 */
bool trace_syscall_func(const struct trace_kernel *k, const char *name,
			char *buf, size_t len);

#endif /* LCLK_TRACE_ATTACH_H */
