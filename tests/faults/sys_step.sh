#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: the system clock stepped an hour ahead and back (date -s, as an
#   NTP client's first step or an admin does).
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set.
# why the fault cannot move it: settimeofday moves CLOCK_REALTIME only.
. tests/faults/lib.bash
$lclkctl set --realtime --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
calibrate raw
read_all "$(dur 2.5)" raw
sleep 0.5
date -s '+1 hour' >/dev/null || die "date -s"
sleep "$(dur 1)"
date -s '-1 hour' >/dev/null
finish
