#!/bin/sh
# The cluster jobs (tests/guest/cluster_mpi.sh, cluster_gloo.sh: traced MPI
# and gloo across four hosts) on the kernels tests/vm/kernels marks
# "bench-cluster": "make check" runs them on 6.1 only, and they took 7
# minutes of its time on each further kernel; their tracers attach to each
# kernel's functions, which the kernel-level trace tests check in every
# "make check". Passes the guest suite's TAP through; fails if any failed.
# Needs build/kernels/ALIAS/lclk.ko ("make bench" builds the matrix first).
cd "$(dirname "$0")/../.." || exit 1
kernels=$(awk '!/^#/ && $3 == "bench-cluster" { print $1 }' tests/vm/kernels)
[ -n "$kernels" ] || exit 0
LCLK_LOG_DIR=build/bench-logs LCLK_VM_KERNELS="$kernels" \
	LCLK_GUEST_TESTS="tests/guest/cluster_mpi.sh tests/guest/cluster_gloo.sh" \
	tests/run-suites.sh vm
