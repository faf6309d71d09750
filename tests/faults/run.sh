#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fault campaign (issue 30): every tests/faults/SCENARIO.sh, each with a
# freshly loaded module, as TAP. A scenario names its fault, its truth and
# why the fault cannot move that truth, and prints
#
#	FAULT NAME readings N violations M max_err_over_bound X
#
# A scenario listed in tests/faults/known-failures (with the item of issue
# 30 whose fix it waits for) that fails is "not ok ... # TODO": shown, not
# counted as passing, not failing the run; once it passes, it says to take
# it off the list.
#
#   tests/faults/run.sh [--long] [SCENARIO...]
#
# --long (make bench): each scenario runs six times longer, and the totals
# are BENCH lines. Runs in the guest as root from the repository root;
# LCLK_MODULE is the module to reload between scenarios (none: keep the
# one loaded).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

# The scenarios change the system clock: the test VM's, never the host's.
if ! grep -q ' lclk\.session=' /proc/cmdline; then
	echo "1..0 # SKIP not in the test VM (tests/vm/vm-run): the scenarios change the system clock"
	exit 0
fi
if [ "${1:-}" = --long ]; then
	export LCLK_FAULT_LONG=1
	shift
fi
scenarios=()
if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	for s in tests/faults/*.sh; do
		[ "$s" = tests/faults/run.sh ] || scenarios+=("$s")
	done
fi
module=${LCLK_MODULE:-kmod/lclk.ko}
known=tests/faults/known-failures

# reload: each scenario starts from a module as loaded (no model, no
# per-CPU offsets, no PHC adjustment).
reload() {
	[ "$module" = none ] && return 0
	rmmod lclk 2>/dev/null
	tests/guest/lib/insmod.sh "$module" instances=2
}

echo "TAP version 13"
echo "1..${#scenarios[@]}"
n=0 failed=0 total_r=0 total_v=0 worst=0 ran=0
for s in "${scenarios[@]}"; do
	n=$((n + 1))
	name=$(basename "$s" .sh)
	reload || { echo "not ok $n - fault $name: the module did not load"; failed=1; continue; }
	# a system clock as no scenario left it: its truths are made of it
	if ! build/tests/faults/fault_reader sysclock; then
		echo "not ok $n - fault $name: the system clock is still slewed"
		failed=1
		continue
	fi
	# what the scenario says of itself: its fault, its truth, and why
	awk '/^# (fault|truth|why)/ { p = 1 } /^[^#]/ { exit } p' "$s"
	start=$(cut -d' ' -f1 /proc/uptime)
	out=$(timeout -k 5 "${LCLK_FAULT_TIMEOUT:-300}" "$s" 2>&1)
	rc=$?
	secs=$(awk -v s="$start" '{ printf "%.0f", $1 - s }' /proc/uptime)
	printf '%s\n' "$out" | grep -v '^FAULT ' | sed 's/^\([^#]\)/# \1/'
	line=$(printf '%s\n' "$out" | grep '^FAULT ' | tail -n 1)
	[ -n "$line" ] || line="FAULT $name could not run: exit status $rc, no summary"
	echo "$line ($secs s)"
	item=$(awk -v s="$name" '$1 == s { $1 = ""; sub(/^ /, ""); print }' "$known" 2>/dev/null)
	if [[ $line =~ readings\ ([0-9]+)\ violations\ ([0-9]+)\ max_err_over_bound\ ([0-9.a-z]+) ]]; then
		ran=$((ran + 1))
		total_r=$((total_r + BASH_REMATCH[1]))
		total_v=$((total_v + BASH_REMATCH[2]))
		worst=$(awk -v a="$worst" -v b="${BASH_REMATCH[3]}" 'BEGIN { print (b > a ? b : a) }')
	fi
	[ "${LCLK_FAULT_LONG:-0}" = 1 ] && [[ $line =~ readings\ ([0-9]+)\ violations\ ([0-9]+)\ max_err_over_bound\ ([0-9.a-z]+) ]] &&
		echo "BENCH bound.$name.violations ${BASH_REMATCH[2]}  # readings ${BASH_REMATCH[1]}, max_err_over_bound ${BASH_REMATCH[3]}"
	desc="fault $name: ${line#FAULT "$name" }"
	if [ "$rc" -eq 0 ] && [ -z "$item" ]; then
		echo "ok $n - $desc"
	elif [ "$rc" -eq 0 ]; then
		echo "ok $n - $desc (listed as a known failure waiting for $item: it passes now, take it off $known)"
	elif [ -n "$item" ]; then
		echo "not ok $n - $desc # TODO known failure, waits for $item"
	else
		echo "not ok $n - $desc"
		failed=1
	fi
done
rmmod lclk 2>/dev/null
[ "$module" = none ] || tests/guest/lib/insmod.sh "$module" instances=2
if [ "${LCLK_FAULT_LONG:-0}" = 1 ]; then
	echo "BENCH bound.violations $total_v"
	echo "BENCH bound.readings $total_r"
	echo "BENCH bound.scenarios $ran"
	echo "BENCH bound.max_err_over_bound $worst"
fi
exit "$failed"
