#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: lclk0's rate changed through its PTP clock, not by lclkctl:
#   phc_ctl freq +500 ppm for 2 s, then back to 0 (issue 30 #2).
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set.
# why the fault cannot move it: adjfine on /dev/ptpN changes lclk0's
#   model only; CLOCK_MONOTONIC_RAW is the host's oscillator.
. tests/faults/lib.bash
python=1
phc=
for p in /sys/class/lclk/lclk0/ptp*; do [ -e "$p" ] && phc=/dev/${p##*/}; done
[ -n "$phc" ] || die "lclk0 has no PTP clock"
$lclkctl set --offset 0 --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
calibrate raw
read_all "$(dur 3.5)" raw
sleep 0.5
phc_ctl -q "$phc" freq 500000 || die "phc_ctl freq"
sleep "$(dur 2)"
phc_ctl -q "$phc" freq 0
finish
