#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a leap second: UTC, as the daemon's source (/dev/lclk1 served
#   over NTP) keeps it, repeats a second: lclk1 steps back 1 s, as the
#   kernel does at 23:59:60 (issue 30 #7).
# truth: UTC, which is lclk1 read live: the leap moves UTC by definition.
#   A clock can only meet this truth if it is told the leap in advance
#   (the NTP leap indicator); lclk's serve always sends LI = 0 and nothing
#   in the model carries a leap yet, so this waits for the leap policy.
# why the fault cannot move it: nothing steers lclk1 but this script.
. tests/faults/lib.bash
python=1
$lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null ||
	die "set lclk1"
serve_lclk1 11134
# polled every second, as a source's poll is: a leap nobody announced is
# seen at the next one
start_daemon ntp://127.0.0.1:11134 1s
C=0 E=1000
read_all "$(dur 3)" /dev/lclk1
sleep 0.5
$lclkctl -d /dev/lclk1 step --allow-backward -- -1s >/dev/null || die "step lclk1"
may_unsync=1 finish
