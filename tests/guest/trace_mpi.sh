#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace on Open MPI's allreduce (tests/integration/trace_mpi.sh) in the
# VM's 6.1 kernel, with the module loaded: reports in logical time.
# Runs in the VM as root from the repository root; TAP.
cd "$(dirname "$0")/../.." || exit 1

ip link set lo up 2>/dev/null
TRACE_CLOCK=logical ROUNDS=10 exec bash tests/integration/trace_mpi.sh
