#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: the daemon's one source steps back 1 s (a misconfigured or
#   rebooted server, a grandmaster that jumped): /dev/lclk1, served over
#   NTP, stepped by -1 s once the daemon follows it.
# truth: the source's timeline before the step, CLOCK_MONOTONIC_RAW + c
#   with c measured against lclk1 (rate 0, max_drift 0) before the step.
#   A clock that follows the jump is 1 s from that truth; one that does not
#   is 1 s from the source: the only honest answers while the two disagree
#   are a bound that covers both, or UNSYNCED.
# why the fault cannot move it: the step changes lclk1's offset, not the
#   oscillator both clocks run on.
. tests/faults/lib.bash
$lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null ||
	die "set lclk1"
serve_lclk1 11133
start_daemon ntp://127.0.0.1:11133
calibrate raw /dev/lclk1
read_all "$(dur 3)" raw
sleep 0.5
$lclkctl -d /dev/lclk1 step --allow-backward -- -1s >/dev/null || die "step lclk1"
may_unsync=1 finish
