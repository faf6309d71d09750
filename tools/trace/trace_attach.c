// SPDX-License-Identifier: GPL-2.0
/*
 * Feature probes for lclkctl trace's attach modes. fentry/fexit go on the
 * syscall wrappers only when
 * - the kernel frees a trampoline only after every task that entered it
 *   has left (5.12, "bpf: Fix fexit trampoline"): before, detaching fexit
 *   while a thread sleeps in a traced epoll_wait or futex returns that
 *   thread into freed memory. The fix added struct bpf_tramp_image, which
 *   BTF shows;
 * - the wrappers are in BTF with their argument described, and a test
 *   program attaches to one (as libbpf-tools' fentry_can_attach() does):
 *   the kernel may lack trampolines for the architecture or ftrace's
 *   direct calls.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace_attach.h"

#if defined(__x86_64__)
#define SYSCALL_PREFIX	"__x64_sys_"
#else
#define SYSCALL_PREFIX	NULL	/* bpf/trace.bpf.c reads x86_64 registers */
#endif

bool trace_syscall_func(const struct trace_kernel *k, const char *name,
			char *buf, size_t len)
{
	if (!SYSCALL_PREFIX)
		return false;
	snprintf(buf, len, "%s%s", SYSCALL_PREFIX, name);
	return btf__find_by_name_kind(k->btf, buf, BTF_KIND_FUNC) > 0;
}

/*
 * Whether BTF describes function id's first argument as a pointer to a
 * struct: the programs read the wrappers' struct pt_regs *. Some kernels'
 * BTF (Debian's 5.10) has only a declaration of struct pt_regs there, and
 * the verifier refuses any access to such an argument.
 */
static bool first_arg_is_struct_ptr(const struct btf *btf, int id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	t = btf__type_by_id(btf, t->type);		/* FUNC -> FUNC_PROTO */
	if (!btf_is_func_proto(t) || btf_vlen(t) < 1)
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, btf_params(t)[0].type));
	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, t->type));
	return t && btf_is_struct(t);
}

/* Load an empty fentry program for BTF function id and attach it. */
static int fentry_try_attach(int id)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = id);
	int prog, link, err = 0;

	prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "lclk_probe", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0)
		err = -errno;
	else
		close(link);
	close(prog);
	return err;
}

static void probe_fentry(struct trace_kernel *k)
{
	char func[64];
	int id, err;

	if (btf__find_by_name_kind(k->btf, "bpf_tramp_image", BTF_KIND_STRUCT) <= 0) {
		snprintf(k->no_fentry, sizeof(k->no_fentry),
			 "this kernel (before 5.12) may free an fexit trampoline while a thread sleeps in it");
		return;
	}
	if (!trace_syscall_func(k, "recvfrom", func, sizeof(func))) {
		snprintf(k->no_fentry, sizeof(k->no_fentry),
			 SYSCALL_PREFIX ? "no syscall wrappers (%srecvfrom) in the kernel's BTF" :
			 "per-syscall probes are built for x86_64 only%s",
			 SYSCALL_PREFIX ? SYSCALL_PREFIX : "");
		return;
	}
	id = btf__find_by_name_kind(k->btf, func, BTF_KIND_FUNC);
	if (!first_arg_is_struct_ptr(k->btf, id)) {
		snprintf(k->no_fentry, sizeof(k->no_fentry),
			 "the kernel's BTF does not describe %s's argument (struct pt_regs is only declared)",
			 func);
		return;
	}
	err = fentry_try_attach(id);
	if (err)
		snprintf(k->no_fentry, sizeof(k->no_fentry),
			 "a test fentry program on %s fails: %s", func, strerror(-err));
}

/* Whether enum type has a value called name: the kernel's helper ids. */
static bool btf_has_enumerator(const struct btf *btf, const char *type,
			       const char *name)
{
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i;

	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	if (id <= 0)
		return false;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return true;
	return false;
}

int trace_kernel_probe(struct trace_kernel *k)
{
	memset(k, 0, sizeof(*k));
	k->btf = btf__load_vmlinux_btf();
	if (!k->btf)
		return -errno;
	k->task_btf = btf_has_enumerator(k->btf, "bpf_func_id",
					 "BPF_FUNC_get_current_task_btf");
	k->task_storage = k->task_btf &&
		libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	k->tp_btf = btf__find_by_name_kind(k->btf, "btf_trace_sys_enter", BTF_KIND_TYPEDEF) > 0;
	probe_fentry(k);
	return 0;
}

void trace_kernel_free(struct trace_kernel *k)
{
	btf__free(k->btf);
	k->btf = NULL;
}
