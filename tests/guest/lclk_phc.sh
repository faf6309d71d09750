#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The PTP clock of each lclk instance, driven by Debian's linuxptp: phc_ctl's
# get/set/adj/freq change what /dev/lclk0 reports, and phc2sys disciplines
# lclk1 from lclk0 until the two agree. Nothing here touches CLOCK_REALTIME.
# Runs in the VM as root from the repository root; TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; failed=1; }
check() { # check DESCRIPTION COMMAND...
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}

# snap lclkN: one snapshot of /dev/lclkN; get KEY: a value from it.
snap() { SNAP=$(cat "/dev/$1"); }
get() { printf '%s\n' "$SNAP" | sed -n "s/^$1: //p"; }
abs() { if [ "$1" -lt 0 ]; then echo $((-$1)); else echo "$1"; fi; }

phc_of() { # /dev/ptpN of lclkN: the PTP clock is a child of its device
	for p in /sys/class/lclk/"$1"/ptp*; do
		[ -e "$p" ] && echo "/dev/${p##*/}"
	done
}
# in_range VALUE LOW HIGH: LOW <= VALUE < HIGH, false if VALUE is not a number
in_range() {
	case $1 in '' | *[!0-9-]*) return 1 ;; esac
	[ "$1" -ge "$2" ] && [ "$1" -lt "$3" ]
}

module=${LCLK_MODULE:-kmod/lclk.ko}
args=${LCLK_MODULE_ARGS:-instances=2}
reloaded=0
if [ ! -e /dev/lclk1 ]; then
	# phc2sys needs two instances; put the runner's module back at the end
	rmmod lclk && insmod "$module" instances=2 && reloaded=1
fi

echo "1..15"
A=$(phc_of lclk0)
B=$(phc_of lclk1)
check "lclk0 has a PTP clock ($A) named lclk0" \
	[ "$(cat "/sys/class/ptp/${A#/dev/}/clock_name" 2>/dev/null)" = lclk0 ]
check "lclk1 has its own PTP clock ($B)" [ -e "$B" -a "$A" != "$B" ]
check "max_adjustment is max_rate_ppb" \
	[ "$(cat "/sys/class/ptp/${A#/dev/}/max_adjustment")" = \
	  "$(cat /sys/module/lclk/parameters/max_rate_ppb)" ]

snap lclk0
adj0=$(get phc_adjustments)

# freq 0 then set: logical time is 1e9 s plus what elapsed since, which
# is under 5 s (times LCLK_TIME_SCALE: a debug kernel's tools start slowly)
elapsed_max=$((5 * ${LCLK_TIME_SCALE:-1}))
phc_ctl -q "$A" freq 0 set 1000000000 >/dev/null
snap lclk0
logical=$(get logical_ns)
check "phc_ctl set 1000000000: logical_ns $logical" \
	in_range "$logical" 1000000000000000000 $(((1000000000 + elapsed_max) * 1000000000))
check "phc_ctl set: the date reads 2001-09-09" \
	sh -c "printf '%s\n' \"\$1\" | grep -q '^time: 2001-09-09T01:46:4'" _ "$SNAP"

got=$(phc_ctl "$A" get | sed -n 's/.*clock time is \([0-9]*\)\..*/\1/p')
check "phc_ctl get reads it back: $got s" in_range "$got" 1000000000 $((1000000000 + elapsed_max))

# adj: with rate 0 the offset moves by exactly the step
snap lclk0
off0=$(get offset_ns)
back0=$(get backward_steps)
phc_ctl -q "$A" adj 10 >/dev/null
snap lclk0
off1=$(get offset_ns)
check "phc_ctl adj 10 moves the offset by 10 s ($((off1 - off0)))" \
	[ $((off1 - off0)) -eq 10000000000 ]
phc_ctl -q "$A" -- adj -2.5 >/dev/null
snap lclk0
off2=$(get offset_ns)
check "phc_ctl adj -2.5 steps back by 2.5 s ($((off2 - off1))), counted" \
	[ $((off2 - off1)) -eq -2500000000 -a "$(get backward_steps)" -eq $((back0 + 1)) ]

# freq in ppb; the model's rate is in ppt
phc_ctl -q "$A" freq 100000 >/dev/null
snap lclk0
check "phc_ctl freq 100000 sets rate_ppt $(get rate_ppt)" \
	[ "$(get rate_ppt)" -eq 100000000 ]
check "phc_ctl freq reads it back" \
	sh -c "phc_ctl \"\$1\" freq 2>&1 | grep -q 'offset is 100000.0*ppb'" _ "$A"
phc_ctl -q "$A" freq 600000 >/dev/null 2>&1
snap lclk0
check "phc_ctl freq 600000 beyond max_rate is refused, rate kept" \
	[ "$(get rate_ppt)" -eq 100000000 ]
check "phc_adjustments counted the 5 changes ($adj0 -> $(get phc_adjustments))" \
	[ "$(get phc_adjustments)" -eq $((adj0 + 5)) ]

# phc2sys: lclk1 starts 1e9 s off and 200 ppm fast; lclk0 runs at -50 ppm
rt_before=$(awk '{print $1}' /proc/uptime)
date_before=$(date +%s)
phc_ctl -q "$A" -- set freq -50000 >/dev/null
phc_ctl -q "$B" set 1000000000 freq 200000 >/dev/null
timeout -s INT 15 phc2sys -s "$A" -c "$B" -O 0 -R 8 -m -q >/tmp/phc2sys.log 2>&1
echo "# phc2sys, last lines:"
tail -n 3 /tmp/phc2sys.log | sed 's/^/# /'
worst=$(tail -n 16 /tmp/phc2sys.log |
	sed -n 's/.* offset *\(-\{0,1\}[0-9]*\) .*/\1/p' |
	awk 'BEGIN { w = -1 } { v = $1 < 0 ? -$1 : $1; if (v > w) w = v } END { print w }')
check "phc2sys converged: worst |offset| of the last 2 s is $worst ns" \
	in_range "$worst" 0 20000

# Independent of phc2sys's measurement: both clocks are functions of the
# same CLOCK_MONOTONIC, so evaluate lclk1 at the base time lclk0 was read at
# (the two snapshots are a process start apart, and the rate runs between).
snap lclk0
b0=$(get base_ns)
l0=$(get logical_ns)
r0=$(get rate_ppt)
snap lclk1
b1=$(get base_ns)
l1=$(($(get logical_ns) + (b0 - b1) + (b0 - b1) * $(get rate_ppt) / 1000000000000))
r1=$(get rate_ppt)
diff=$((l1 - l0))
rdiff=$(abs $((r1 - r0)))
check "lclk1 - lclk0 = $diff ns at the same base time, rates differ by $rdiff ppt" \
	[ "$(abs $diff)" -lt 10000 -a "$rdiff" -lt 20000000 ]

# CLOCK_REALTIME was left alone: it kept pace with uptime
rt_after=$(awk '{print $1}' /proc/uptime)
date_after=$(date +%s)
drift=$(awk -v a="$rt_before" -v b="$rt_after" -v c="$date_before" -v d="$date_after" \
	'BEGIN { x = (d - c) - (b - a); print (x < 0 ? -x : x) < 2 }')
check "CLOCK_REALTIME kept pace with uptime while phc2sys ran" [ "$drift" = 1 ]

# leave both clocks plain: no rate, at CLOCK_REALTIME
phc_ctl -q "$A" freq 0 set >/dev/null
phc_ctl -q "$B" freq 0 set >/dev/null

if [ "$reloaded" = 1 ]; then
	# shellcheck disable=SC2086
	rmmod lclk && insmod "$module" $args || failed=1
fi
exit $failed
