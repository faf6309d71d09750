#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace attaching and detaching, again and again, while other CPUs
# run the traced syscalls: each attach patches the syscalls' entries
# (ftrace for fentry, static keys for tp_btf) under the readers' feet, and
# the guest kernel must survive it - the test bed's log scan fails the run
# on any Oops. It fails where QEMU runs a vCPU per host thread (6.12
# panics, 6.1 hangs: tests/vm/vm-run). Runs in the VM as root; TAP.
cd "$(dirname "$0")/../.." || exit 1
rounds=${TRACE_ATTACH_ROUNDS:-3}

# Two readers: enough to crash the broken test bed in the first rounds,
# few enough not to starve a single-threaded one.
readers=
for _ in 1 2; do
	(while :; do dd if=/dev/zero of=/dev/null bs=1 count=100000 2>/dev/null; done) &
	readers="$readers $!"
done
trap 'kill $readers 2>/dev/null; wait 2>/dev/null' EXIT

echo "1..1"
n=0 failed=0
while [ "$n" -lt "$rounds" ]; do
	if ! build/lclkctl trace --duration 100ms >/tmp/trace-attach.out 2>&1; then
		sed 's/^/# /' /tmp/trace-attach.out
		failed=1
		break
	fi
	n=$((n + 1))
done
mode=$(sed -n 's/^Tracing .* with \([a-z_/]*\) on .*/\1/p' /tmp/trace-attach.out)
if [ "$failed" = 0 ]; then
	echo "ok 1 - $n attaches and detaches ($mode) under 2 busy readers"
else
	echo "not ok 1 - lclkctl trace failed in round $((n + 1))"
fi
