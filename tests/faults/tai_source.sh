#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: the daemon's source counts TAI: a phc: source on a PHC that runs
#   37 s ahead of UTC (lclk1, marked --tai), on a UTC clock (issue 30 #6).
# truth: lclk1 - 37 s (UTC), read live.
# why the fault cannot move it: the source's timescale is a property of
#   the source; nothing steers lclk1 but this script.
. tests/faults/lib.bash
phc1=
for p in /sys/class/lclk/lclk1/ptp*; do [ -e "$p" ] && phc1=/dev/${p##*/}; done
[ -n "$phc1" ] || die "lclk1 has no PTP clock"
{ $lclkctl -d /dev/lclk1 set --realtime --tai --bound 1us --max-drift 0 --allow-backward >/dev/null &&
	$lclkctl -d /dev/lclk1 step 37s >/dev/null; } || die "set lclk1"
$lclkctl -d /dev/lclk0 set --utc --unsync --allow-backward >/dev/null
cat >"$dir/lclk.conf" <<EOC
device /dev/lclk0
source phc:$phc1
poll 250ms 250ms
samples 4 20ms 100ms
maxdrift 20ppm
control $dir/ctl.sock
metrics off
log info
EOC
$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
pids+=("$!")
C=-37000000000 E=1000
read_all "$(dur 3)" /dev/lclk1
may_unsync=1 finish
