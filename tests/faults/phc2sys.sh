#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: phc2sys steers lclk0's PTP clock onto CLOCK_REALTIME (linuxptp
#   as deployed with a PHC: settime, adjtime and adjfine from outside
#   lclkctl), starting 500 us off (within the clock's 1 ms bound).
# truth: CLOCK_REALTIME, which nothing in the guest slews or steps here.
# why the fault cannot move it: phc2sys writes only /dev/ptpN, lclk0's
#   PTP clock; it reads the system clock.
. tests/faults/lib.bash
phc=
for p in /sys/class/lclk/lclk0/ptp*; do [ -e "$p" ] && phc=/dev/${p##*/}; done
[ -n "$phc" ] || die "lclk0 has no PTP clock"
{ $lclkctl set --realtime --bound 1ms --max-drift 50000 --allow-backward >/dev/null &&
	$lclkctl step 500us >/dev/null; } || die "set"
C=0 E=0
read_all "$(dur 3)" realtime
sleep 0.5
phc2sys -s CLOCK_REALTIME -c "$phc" -O 0 -R 4 -m -q >"$dir/phc2sys.log" 2>&1 &
pids+=("$!")
sleep "$(dur 2)"
kill "$!"
head -n 3 "$dir/phc2sys.log" | sed 's/^/# phc2sys: /'
tail -n 2 "$dir/phc2sys.log" | sed 's/^/# phc2sys: /'
finish
