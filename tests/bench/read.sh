#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Read-path benchmark of the lclk module, in the VM: lclk_now() via mmap vs
# clock_gettime() via the vDSO, ioctl GET_TIME vs getppid(). Passes the
# "BENCH name value" lines of build/tests/bench/read_bench through.
#   LCLK_BENCH_SMP     vCPUs of the guest (default 2)
#   LCLK_BENCH_ROUNDS  rounds of each measurement (default 31)
cd "$(dirname "$0")/../.." || exit 1
bench=build/tests/bench/read_bench
if [ ! -x "$bench" ] || [ ! -f kmod/lclk.ko ]; then
	echo "read.sh: build first: make module $bench" >&2
	exit 1
fi
exec tests/vm/vm-run -s "${LCLK_BENCH_SMP:-2}" -t 600 -- \
	"insmod kmod/lclk.ko && $bench /dev/lclk0"
