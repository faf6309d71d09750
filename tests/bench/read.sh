#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Read-path benchmark of the lclk module, in the VM, on every kernel of the
# matrix (tests/vm/kernels): lclk_now() via mmap vs clock_gettime() via the
# vDSO, ioctl GET_TIME vs getppid(). Passes the "BENCH name value" lines of
# build/tests/bench/read_bench through, each name suffixed with the kernel
# (read.mmap_vs_vdso.6.12).
#   LCLK_BENCH_SMP     vCPUs of the guest (default 2)
#   LCLK_BENCH_ROUNDS  rounds of each measurement (default 31)
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
done
exit $status
