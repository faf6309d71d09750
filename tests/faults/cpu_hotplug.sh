#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: CPU 1 taken offline and back, again and again, while every CPU
#   has a per-CPU offset (a few us, as cpu-skew --apply sets them) and
#   readers run on all CPUs.
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set (on
#   CPU 0, whose offset is 0): the guest's CPUs share one clock, so each
#   offset is an error the bound (100 us) covers.
# why the fault cannot move it: hotplug changes which CPUs run, not the
#   oscillator.
. tests/faults/lib.bash
[ -w /sys/devices/system/cpu/cpu1/online ] || die "CPU 1 cannot be taken offline"
$lclkctl set --offset 0 --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
calibrate raw
for c in $(seq 1 $(($(nproc) - 1))); do
	$lclkctl cpu-offset "$c" "$((c * 3))us" >/dev/null || die "cpu-offset $c"
done
read_all "$(dur 3)" raw
read_one mmap "$(dur 3)" raw
end=$((SECONDS + $(dur 2)))
cycles=0
while [ $SECONDS -lt $end ]; do
	echo 0 >/sys/devices/system/cpu/cpu1/online || die "cpu1 offline"
	sleep 0.2
	echo 1 >/sys/devices/system/cpu/cpu1/online || die "cpu1 online"
	sleep 0.2
	cycles=$((cycles + 1))
done
echo "# CPU 1 offline and back $cycles times"
finish
