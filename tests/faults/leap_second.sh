#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a leap second: UTC, as the daemon's source keeps it (/dev/lclk1,
#   served over NTP), repeats a second. lclk1 is put 12 s before
#   2017-01-01T00:00:00Z (the last leap) with that insertion set on it: it
#   steps back 1 s at midnight, as CLOCK_REALTIME did, and serve announces
#   it (NTP's leap indicator) until then.
# truth: UTC, by lclk1's line before the leap (CLOCK_MONOTONIC_RAW + c, c
#   measured against lclk1, which runs at rate 0 and max_drift 0), less the
#   second it repeats from midnight on. Not lclk1 read live: its own step
#   comes from a timer, a little late, and it reads a second ahead until
#   then. The daemon hears of the leap from the indicator and hands it to
#   the module, whose step of /dev/lclk0 is due at the same instant.
# why the fault cannot move it: the leap is what defines it, and nothing
#   steers lclk1 but this script.
. tests/faults/lib.bash
python=1
new_year_2017=1483228800
tests/guest/lib/lclk_set.py /dev/lclk1 time $((new_year_2017 - 12)) || die "set lclk1"
tests/guest/lib/lclk_set.py /dev/lclk1 leap 1 "$new_year_2017" 36 || die "leap on lclk1"
serve_lclk1 11134
start_daemon ntp://127.0.0.1:11134 1s
for _ in $(seq 80); do
	$lclkctl --json status 2>/dev/null | grep -q '"leap": *"insert"' && break
	sleep 0.1
done
$lclkctl --json status 2>/dev/null | grep -q '"leap": *"insert"' ||
	die "the daemon did not set the announced leap"
now=$($lclkctl -d /dev/lclk1 --json status |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["time_ns"] // 10**9)') ||
	die "read lclk1"
calibrate raw /dev/lclk1
export LCLK_FAULT_LEAP_AT=$((new_year_2017 * 1000000000))
# across midnight, and 3 s (the long campaign: 18 s) on
read_all $((new_year_2017 - now + $(dur 3))) raw
finish
