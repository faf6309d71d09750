#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: the daemon killed (SIGKILL, a crash, the OOM killer) 0.2 s into
#   the slew of a 3 ms correction (issue 30 #8).
# truth: /dev/lclk1, the daemon's one source (served over NTP on
#   loopback), stepped 3 ms ahead by this script before the readers start
#   and steered by nothing else.
# why the fault cannot move it: the daemon writes only /dev/lclk0; killing
#   it leaves lclk1's model, and its CLOCK_MONOTONIC base, alone.
. tests/faults/lib.bash
python=1
$lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null ||
	die "set lclk1"
serve_lclk1 11131
start_daemon ntp://127.0.0.1:11131
$lclkctl -d /dev/lclk1 step 3ms >/dev/null
wait_updates 1 10 || die "the daemon did not measure the step"
C=0 E=1000
read_all "$(dur 5)" /dev/lclk1
sleep 0.2
kill -9 "$daemon"
echo "# killed mid-slew: $($lclkctl status | grep -m1 -i rate)"
finish
