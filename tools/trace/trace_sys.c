// SPDX-License-Identifier: GPL-2.0
/*
 * What lclkctl trace looks at: the calls NCCL's socket transport, Gloo and
 * Open MPI's TCP transport block or spin in. glibc's send() and recv() are
 * sendto and recvfrom; read/write and their vector forms count on sockets
 * only and futex only when it waits (the probe checks both).
 */
#include <stddef.h>
#include <sys/syscall.h>

#include "trace_sys.h"

static const struct {
	long nr;
	__u8 sys;
} traced[] = {
	{ SYS_sendto,		TRACE_SYS_SENDTO },
	{ SYS_recvfrom,		TRACE_SYS_RECVFROM },
	{ SYS_sendmsg,		TRACE_SYS_SENDMSG },
	{ SYS_recvmsg,		TRACE_SYS_RECVMSG },
	{ SYS_sendmmsg,		TRACE_SYS_SENDMMSG },
	{ SYS_recvmmsg,		TRACE_SYS_RECVMMSG },
	{ SYS_read,		TRACE_SYS_READ },
	{ SYS_write,		TRACE_SYS_WRITE },
	{ SYS_readv,		TRACE_SYS_READV },
	{ SYS_writev,		TRACE_SYS_WRITEV },
#ifdef SYS_poll
	{ SYS_poll,		TRACE_SYS_POLL },
#endif
	{ SYS_ppoll,		TRACE_SYS_PPOLL },
#ifdef SYS_select
	{ SYS_select,		TRACE_SYS_SELECT },
#endif
	{ SYS_pselect6,		TRACE_SYS_PSELECT6 },
#ifdef SYS_epoll_wait
	{ SYS_epoll_wait,	TRACE_SYS_EPOLL_WAIT },
#endif
	{ SYS_epoll_pwait,	TRACE_SYS_EPOLL_PWAIT },
#ifdef SYS_epoll_pwait2
	{ SYS_epoll_pwait2,	TRACE_SYS_EPOLL_PWAIT2 },
#endif
	{ SYS_futex,		TRACE_SYS_FUTEX_WAIT },
#ifdef SYS_futex_waitv
	{ SYS_futex_waitv,	TRACE_SYS_FUTEX_WAITV },
#endif
	{ SYS_ioctl,		TRACE_SYS_IOCTL },
	{ SYS_restart_syscall,	TRACE_SYS_RESTART },
};

static const char *const sys_names[TRACE_SYS_NR] = {
	[TRACE_SYS_NONE]	= "none",
	[TRACE_SYS_SENDTO]	= "sendto",
	[TRACE_SYS_RECVFROM]	= "recvfrom",
	[TRACE_SYS_SENDMSG]	= "sendmsg",
	[TRACE_SYS_RECVMSG]	= "recvmsg",
	[TRACE_SYS_SENDMMSG]	= "sendmmsg",
	[TRACE_SYS_RECVMMSG]	= "recvmmsg",
	[TRACE_SYS_READ]	= "read",
	[TRACE_SYS_WRITE]	= "write",
	[TRACE_SYS_READV]	= "readv",
	[TRACE_SYS_WRITEV]	= "writev",
	[TRACE_SYS_POLL]	= "poll",
	[TRACE_SYS_PPOLL]	= "ppoll",
	[TRACE_SYS_SELECT]	= "select",
	[TRACE_SYS_PSELECT6]	= "pselect6",
	[TRACE_SYS_EPOLL_WAIT]	= "epoll_wait",
	[TRACE_SYS_EPOLL_PWAIT]	= "epoll_pwait",
	[TRACE_SYS_EPOLL_PWAIT2] = "epoll_pwait2",
	[TRACE_SYS_FUTEX_WAIT]	= "futex_wait",
	[TRACE_SYS_FUTEX_WAITV]	= "futex_waitv",
	[TRACE_SYS_IOCTL]	= "ioctl",
};

static const char *const outcome_names[TRACE_OUT_NR] = {
	[TRACE_OUT_DATA]	= "data",
	[TRACE_OUT_ZERO]	= "zero",
	[TRACE_OUT_EAGAIN]	= "eagain",
	[TRACE_OUT_ERROR]	= "error",
	[TRACE_OUT_INTR]	= "intr",
};

static const char *const dev_names[TRACE_DEV_NR] = {
	[TRACE_DEV_NONE]	= "",
	[TRACE_DEV_NVIDIA]	= "nvidia",
	[TRACE_DEV_INFINIBAND]	= "infiniband",
	[TRACE_DEV_OTHER]	= "other",
};

void trace_sys_fill(volatile __u8 table[TRACE_MAX_NR])
{
	size_t i;

	for (i = 0; i < TRACE_MAX_NR; i++)
		table[i] = TRACE_SYS_NONE;
	for (i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		if (traced[i].nr >= 0 && traced[i].nr < TRACE_MAX_NR)
			table[traced[i].nr] = traced[i].sys;
}

const char *trace_sys_name(unsigned int sys)
{
	return sys < TRACE_SYS_NR ? sys_names[sys] : "?";
}

const char *trace_outcome_name(unsigned int outcome)
{
	return outcome < TRACE_OUT_NR ? outcome_names[outcome] : "?";
}

const char *trace_dev_name(unsigned int dev)
{
	return dev < TRACE_DEV_NR ? dev_names[dev] : "?";
}
