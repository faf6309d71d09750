#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace in the VM's 6.1 kernel with the module loaded: the ping-pong
# checks of tests/integration/trace.sh, with outliers in logical time. The
# clock is stepped a day ahead first, so logical and CLOCK_MONOTONIC differ
# and an outlier stamped in the wrong one lands outside its round.
# Runs in the VM as root from the repository root; TAP.
cd "$(dirname "$0")/../.." || exit 1

if ! build/lclkctl step 86400s >/dev/null; then
	echo "not ok 1 - lclkctl step 86400s"
	exit 1
fi
# TCG is slow and jittery: fewer rounds, a longer delay (bucket (33.6, 67.1] ms).
TRACE_CLOCK=logical ROUNDS=30 DELAY_US=40000 exec bash tests/integration/trace.sh
