#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace in the VM's kernel with the module loaded: the ping-pong
# checks of tests/integration/trace.sh, with outliers in logical time, in
# the attach mode TRACE_ATTACH (default fentry), part TRACE_PARTS (default
# core; tests/guest/trace_*.sh run the other mode and part, each within
# the runner's time limit). The clock is stepped a day ahead first, so
# logical and CLOCK_MONOTONIC differ and an outlier stamped in the wrong one
# lands outside its round. Where the kernel refuses fentry (before 5.12), that
# mode is skipped with lclkctl's reason.
# Runs in the VM as root from the repository root; TAP.
cd "$(dirname "$0")/../.." || exit 1
mode=${TRACE_ATTACH:-fentry}
parts=${TRACE_PARTS:-core}

# Whether lclkctl trace takes the mode, up to loading its programs, which
# the shim makes fail: loading and attaching fentry's 45 programs, and
# detaching them, take 12 s under TCG, and the test does it ten times over.
LD_PRELOAD=build/tests/shim/fail_bpf_prog.so LCLK_FAIL_BPF_PROG='fentry_*,fexit_*,tp_*,msg_*' \
	build/lclkctl trace --attach "$mode" --duration 100ms >/tmp/trace-mode.out 2>&1
why=$(sed -n "s/^lclkctl trace: --attach $mode: //p" /tmp/trace-mode.out)
if [ -n "$why" ]; then
	echo "1..1"
	echo "ok 1 # SKIP --attach $mode: $why"
	exit 0
fi
if ! grep -q "^lclkctl trace: cannot load the BPF programs ($mode)" /tmp/trace-mode.out; then
	sed 's/^/# /' /tmp/trace-mode.out
	echo "not ok 1 - lclkctl trace --attach $mode"
	exit 1
fi
if ! build/lclkctl step 86400s >/dev/null; then
	echo "not ok 1 - lclkctl step 86400s"
	exit 1
fi
# TCG is slow and jittery: fewer rounds, a longer delay (bucket (33.6, 67.1] ms),
# and fewer still for the two busy spinners. On the debug kernel
# (LCLK_TIME_SCALE 4) the initiator can lose tens of ms between its send and
# its receive, which would then wait that much less: the delay scales too.
# TRACE_FULL_PREEMPT: the counters-under-contention test switches this
# guest's kernel to full preemption while it runs, to force recursion misses.
TRACE_ATTACH=$mode TRACE_PARTS=$parts TRACE_CLOCK=logical ROUNDS=30 BUSY_ROUNDS=8 TRACE_FULL_PREEMPT=1 \
	DELAY_US=$((40000 * ${LCLK_TIME_SCALE:-1})) \
	exec bash tests/integration/trace.sh
