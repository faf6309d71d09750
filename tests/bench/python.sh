#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lclk.Clock().now() from Python against time.monotonic_ns(), in the VM on
# the host's kernel, with Debian's interpreter and the package "make python"
# built: BENCH python.now_vs_monotonic_ns (goal <= 1.5).
#   LCLK_BENCH_SMP     vCPUs of the guest (default 2)
cd "$(dirname "$0")/../.." || exit 1
ko=build/kernels/6.1/lclk.ko
[ -f "$ko" ] || ko=kmod/lclk.ko
if [ ! -f build/python/lib/lclk/.built ] || [ ! -f "$ko" ]; then
	echo "python.sh: build first: make python, and make matrix (or make module)" >&2
	exit 1
fi
tests/vm/vm-run -k 6.1 -s "${LCLK_BENCH_SMP:-2}" -t 600 -- \
	"tests/guest/lib/insmod.sh $ko && lclkctl=build/lclkctl && \$lclkctl set --bound 1ms >/dev/null &&
	 PYTHONPATH=build/python/lib /usr/bin/python3 tests/bench/python_now.py /dev/lclk0"
