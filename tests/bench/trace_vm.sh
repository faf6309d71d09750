#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# tests/bench/trace.sh in the VM, on the host release's kernel (6.1), once
# in each attach mode of lclkctl trace: fentry/fexit on the traced
# syscalls, and tp_btf on raw_syscalls, the fallback. This build machine's
# own kernel refuses fentry, so only here do the two stand side by side.
# Each figure's name gets the mode: BENCH trace.untraced_syscall_ns.fentry.
# Then tests/bench/trace_messages.sh (trace --messages, which needs fentry)
# in a VM of its own, its figures as they are.
#
# The guest runs under TCG, where every instruction is emulated: what a
# probe adds per call is many times its cost on hardware, so the ns figures
# compare the modes with each other and with the floor printed beside them,
# not with goals set for bare metal. The ratio to bpftrace is the one that
# carries over.
#
# trace --messages runs on one vCPU: TCG emulates every vCPU on one host
# thread, so the reader's work on another vCPU passes, as guest time, on
# the traced process's CPU clock too (2 vCPUs: a ratio of 3.0; 1: 1.2).
#
# That guest's clock counts instructions (QEMU's -icount, 2^3 ns each;
# sleep=on: an idle guest waits in real time). With the host's clock, a
# pause of the emulator's thread (this machine is shared) passed as CPU
# time of whatever ran in the guest then: the same --messages run gave
# ratios of 1.13 to 1.27 from one session to the next, and single runs
# 0.87 to 2.23 within one. Counted, five runs agree within 1 %. Its CPU
# figures are then instructions x 8 ns: the work a probe adds, which is
# what the ratio compares. trace.sh stays on real time: under -icount its
# fentry run did not finish in 900 s (bpftrace's compile, counted).
#   LCLK_BENCH_SMP     vCPUs of the guest for trace.sh (default 2)
#   REPS               runs of each configuration (default 3)
#   MSG_ICOUNT         -icount of the --messages guest (default
#                      shift=3,sleep=on; empty: real time)
cd "$(dirname "$0")/../.." || exit 1
ko=build/kernels/6.1/lclk.ko
if [ ! -f "$ko" ] || [ ! -x build/lclkctl ]; then
	echo "trace_vm.sh: build first: make all matrix" >&2
	exit 1
fi
status=0
for mode in fentry tp_btf; do
	echo "# attach mode $mode"
	out=$(tests/vm/vm-run -k 6.1 -s "${LCLK_BENCH_SMP:-2}" -t 900 -- \
		"tests/guest/lib/insmod.sh $ko && TRACE_ATTACH=$mode REPS=${REPS:-3} tests/bench/trace.sh") ||
		status=1
	echo "$out" | sed "s/^BENCH \([^ ]*\) /BENCH \1.$mode /"
done
echo "# trace --messages"
LCLK_VM_ICOUNT="${MSG_ICOUNT-shift=3,sleep=on}" tests/vm/vm-run -k 6.1 -s 1 -t 1500 -- \
	"tests/guest/lib/insmod.sh $ko && tests/bench/trace_messages.sh" || status=1
exit $status
