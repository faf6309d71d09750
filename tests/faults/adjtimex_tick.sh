#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: the system clock slewed: adjtimex tick +5 % (10500 us a tick) for
#   2 s, as a time daemon may slew it (chronyd up to 83,333 ppm), issue 30 #1.
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set.
# readers: mmap, ioctl, Python, and in the long campaign lclkctl trace's
#   stamps of blocking reads.
# why the fault cannot move it: adjtimex changes the rate of
#   CLOCK_MONOTONIC and CLOCK_REALTIME, never that of CLOCK_MONOTONIC_RAW.
. tests/faults/lib.bash
python=1
$lclkctl set --offset 0 --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
calibrate raw
trace_calls
read_all "$(dur 3.5)" raw
sleep 0.5
$reader tick -x 10500 -s "$(dur 2)"
finish
