/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of tools/trace/: other subsystems include this header.
 *
 * The system calls lclkctl trace times, and the names it prints for them.
 */
#ifndef LCLK_TRACE_SYS_H
#define LCLK_TRACE_SYS_H

#include <linux/types.h>
#include <stdint.h>

#include "bpf/trace.h"

/* table[nr] = enum trace_sys of syscall nr on this architecture, else 0. */
void trace_sys_fill(volatile __u8 table[TRACE_MAX_NR]);

/* "recvfrom", "futex_wait", ...; "?" when out of range. */
const char *trace_sys_name(unsigned int sys);
/* "data", "zero", "eagain", "error", "intr" */
const char *trace_outcome_name(unsigned int outcome);
/* "" for TRACE_DEV_NONE, else "nvidia", "infiniband", "other" */
const char *trace_dev_name(unsigned int dev);

#endif /* LCLK_TRACE_SYS_H */
