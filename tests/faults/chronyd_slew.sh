#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: chronyd on the same host corrects a 1 s offset of the system
#   clock at its default maxslewrate (83,333 ppm): its server is /dev/lclk1
#   (CLOCK_REALTIME + 1 s) served over NTP on loopback (issue 30 #1).
# truth: CLOCK_MONOTONIC_RAW + c, c measured when the clock is set.
# why the fault cannot move it: chronyd slews CLOCK_REALTIME and with it
#   CLOCK_MONOTONIC (adjtimex), never CLOCK_MONOTONIC_RAW.
. tests/faults/lib.bash
command -v chronyd >/dev/null || die "no chronyd"
$lclkctl set --offset 0 --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
{ $lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null &&
	$lclkctl -d /dev/lclk1 step 1s >/dev/null; } || die "set lclk1"
serve_lclk1 11135
calibrate raw
cat >"$dir/chrony.conf" <<EOC
server 127.0.0.1 port 11135 iburst minpoll -4 maxpoll -4
cmdport 0
pidfile $dir/chronyd.pid
EOC
read_all "$(dur 5)" raw
chronyd -d -f "$dir/chrony.conf" >"$dir/chronyd.log" 2>&1 &
chrony=$!
pids+=("$chrony")
sleep "$(dur 5)"
# SIGTERM: chronyd leaves the system clock's frequency as it found it
kill -TERM "$chrony"
wait "$chrony" 2>/dev/null
grep -m3 -iE 'wrong|slew|step|selected' "$dir/chronyd.log" | sed 's/^/# chronyd: /'
$reader tick -x 10000 -s 0 >/dev/null
finish
