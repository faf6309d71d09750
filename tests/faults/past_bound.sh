#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a time before the last update, converted afterwards (long-wait
#   starts in lclkctl trace, Clock.from_monotonic()): readers convert the
#   CLOCK_MONOTONIC of 1 s ago while the clock, 40 ppm fast (max_drift
#   50 ppm), is resynchronised every 0.5 s (issue 30 #4).
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set; the
#   truth of a time 1 s ago is the truth now minus 1 s (nothing slews the
#   base here).
# why the fault cannot move it: converting a past stamp and resyncing the
#   model change lclk's view, not CLOCK_MONOTONIC_RAW.
. tests/faults/lib.bash
$lclkctl set --offset 0 --rate 40 --bound 20us --max-drift 50000 --allow-backward >/dev/null ||
	die "set"
calibrate raw
read_one past "$(dur 3)" raw -p 1000000000
read_one mmap "$(dur 3)" raw
end=$((SECONDS + $(dur 3)))
while [ $SECONDS -lt $end ]; do
	sleep 0.5
	$reader resync -d /dev/lclk0 -T raw -c "$C" -e "$E" -b 20000 || die "resync"
done
finish
