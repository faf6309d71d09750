#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Read-path benchmark of the lclk module, in the VM, on every kernel of the
# matrix (tests/vm/kernels): lclk_now() via mmap vs clock_gettime() via the
# vDSO, ioctl GET_TIME vs getppid() and vs the refused-ioctl floor. Passes
# the "BENCH name value" lines of build/tests/bench/read_bench through, each
# name suffixed with the kernel (read.mmap_vs_vdso.6.12).
#
# Each kernel runs twice. First in time, as a host would see it. Then under
# QEMU's -icount (shift 0, one vCPU), where the guest's clock counts
# instructions: its figures are named *_insns (read.ioctl_insns.6.1,
# read.get_time_vs_floor_insns.6.1). Under TCG time is the emulator's, not
# a CPU's: rdtsc, for one, is a call into QEMU, so GET_TIME (which reads the
# clock) is inflated against the floor (which does not), and the best of
# 301 rounds still moves the time ratio by 0.1 from one run to the next.
# The instruction counts are exact and repeatable; they are the figures the
# goals are judged by.
#   LCLK_BENCH_SMP     vCPUs of the guest in time (default 2)
#   LCLK_BENCH_ROUNDS  rounds of each measurement in time (default 301)
cd "$(dirname "$0")/../.." || exit 1
bench=build/tests/bench/read_bench
status=0
# Not the debug kernel: KASAN and lockdep figures say nothing of a host.
for k in $(LCLK_DEBUG_KERNEL=0 scripts/kernel-cache --list); do
	ko=build/kernels/$k/lclk.ko
	if [ ! -x "$bench" ] || [ ! -f "$ko" ]; then
		echo "read.sh: build first: make matrix $bench" >&2
		exit 1
	fi
	echo "# kernel $k"
	out=$(tests/vm/vm-run -k "$k" -s "${LCLK_BENCH_SMP:-2}" -t 600 -- \
		"tests/guest/lib/insmod.sh $ko && $bench /dev/lclk0") || status=1
	echo "$out" | sed "s/^BENCH \([^ ]*\) /BENCH \1.$k /"
	echo "# kernel $k, in instructions (-icount shift=0)"
	# Counted, not timed: a few rounds give the same figure as many.
	out=$(LCLK_VM_ICOUNT=shift=0,sleep=on tests/vm/vm-run -k "$k" -s 1 \
		-t 900 -- "tests/guest/lib/insmod.sh $ko &&
		LCLK_BENCH_ROUNDS=5 $bench /dev/lclk0") || status=1
	echo "$out" | sed -e "s/^BENCH \([^ ]*\)_ns /BENCH \1_insns.$k /" \
		-e "t" -e "s/^BENCH \([^ ]*\) /BENCH \1_insns.$k /"
done
exit $status
