#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ptp:// against the system clock while CLOCK_REALTIME is stepped, as a
# guest agent catching a paused VM's clock up steps it: a ptp4l master in a
# network namespace (software timestamps), lclkctl's PTP slave here
# (source_probe, no device: the system clock is the target), and a helper
# stepping CLOCK_REALTIME by 1 to 5 ms either way every 0.5 s. The master
# stamps with the same CLOCK_REALTIME, so the true offset is 0 at every
# instant: every measurement must have |offset| <= bound, or fail (a burst
# whose every sample spans a step is refused). Only ever run in the VM: it
# steps the clock.
set -uo pipefail
cd "${LCLK_REPO:-.}" || exit 1

probe=build/tests/bench/source_probe
dir=$(mktemp -d /tmp/lclk-ptp-steps.$$.XXXXXX)
ns=lclk-pst-$$
veth=lps$$		# ours; its peer ${veth}g is the master's
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	ip link del "$veth" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/ptp_master.bash

echo "TAP version 13"
for cmd in ptp4l ip python3; do
	if ! command -v $cmd >/dev/null; then
		echo "1..0 # SKIP $cmd is not installed"
		exit 0
	fi
done
# The guest's own kernel, never this machine's clock: a VM has a DMI
# product, or at least no other user of the clock.
if ! grep -qsi qemu /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name; then
	echo "1..0 # SKIP steps CLOCK_REALTIME: runs only in the QEMU guest"
	exit 0
fi
echo "1..2"

if ! ptp_master_link "$ns" "$veth" 10.79.0; then
	echo "Bail out! no veth link"
	exit 1
fi
ptp_master_conf "$dir/ptp4l.conf" "$dir"
ip netns exec "$ns" ptp4l -4 -i "${veth}g" -m -f "$dir/ptp4l.conf" >"$dir/ptp4l.log" 2>&1 &
pids+=($!)

# 1. Without steps: the measurements hold (the test bed works).
"$probe" -d /nonexistent/lclk0 -n 3 "ptp://$veth?timescale=arb" >"$dir/calm" 2>&1
sed 's/^/# calm: /' "$dir/calm"
awk '$1 == "ok" { n++; o = $3 < 0 ? -$3 : $3; if (o > $4) bad++ }
     END { exit !(n > 0 && !bad) }' "$dir/calm"
r=$?
if [ $r = 0 ]; then echo "ok 1 - no steps: |offset| <= bound"; else echo "not ok 1 - no steps: |offset| <= bound"; fi

# 2. Steps of 1 to 5 ms either way every 0.5 s for 25 s, while measuring.
python3 - >"$dir/steps" 2>&1 <<-'EOP' &
import random, time
def step(by):
    time.clock_settime_ns(time.CLOCK_REALTIME, time.clock_gettime_ns(time.CLOCK_REALTIME) + by)
random.seed(1)
end, net = time.monotonic() + 25, 0
while time.monotonic() < end:
    time.sleep(0.5)
    by = random.randint(1, 5) * 1000000 * random.choice((-1, 1))
    step(by)
    net += by
    print(by, flush=True)
step(-net)  # the next tests find the clock where it was
EOP
stepper=$!
pids+=("$stepper")
"$probe" -d /nonexistent/lclk0 -t 22 "ptp://$veth?timescale=arb" >"$dir/steps.out" 2>&1
wait "$stepper"
echo "# $(wc -l <"$dir/steps") steps of CLOCK_REALTIME, $(awk '{ s += $1 < 0 ? -$1 : $1 } END { print s / 1e6 }' "$dir/steps") ms in all"
sed 's/^/# stepped: /' "$dir/steps.out"
awk '$1 == "ok" { n++; o = $3 < 0 ? -$3 : $3; if (o > $4) { bad++; print "# bad: " $0 } }
     $1 == "fail" { f++ }
     END { printf "# %d measurements held, %d beyond their bound, %d refused\n", n - bad, bad, f
	   exit !(n >= 3 && !bad) }' "$dir/steps.out"
r=$?
t="REALTIME stepped +-1..5 ms every 0.5 s: every |offset| <= bound"
if [ $r = 0 ]; then echo "ok 2 - $t"; else echo "not ok 2 - $t"; fi
