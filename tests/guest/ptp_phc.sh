#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# phc: source on the module's own PTP clocks (instances=2): lclk1's PHC is
# the reference of lclk0. lclkctl sync converges lclk0 on it; phc2sys,
# steering lclk0's PHC from lclk1's, does the same for comparison. Both
# PHCs count the logical clocks' UTC, hence clock=utc. Runs in the VM with
# the module loaded; prints TAP.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
PROBE=$PWD/build/tests/bench/source_probe
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n $2"; else failed=$((failed + 1)); echo "not ok $n $2"; fi; }
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

echo "1..5"
phc_of() {	# /dev/ptpN of lclkK, from the PTP class's clock names
	local d
	for d in /sys/class/ptp/ptp*; do
		[ "$(cat "$d/clock_name")" = "lclk$1" ] && { echo "/dev/${d##*/}"; return 0; }
	done
	return 1
}
[ -c /dev/lclk1 ] || { echo "Bail out! needs the module with instances=2"; exit 1; }
PHC0=$(phc_of 0) && PHC1=$(phc_of 1) || { echo "Bail out! no lclk PHCs"; exit 1; }
SRC="phc:$PHC1?clock=utc"
echo "# lclk0 = $PHC0, lclk1 = $PHC1"

# Offset of the last "ok" line of a probe, and its bound.
last() { awk '$1 == "ok" { o = $3; b = $4 } END { print o, b }' "$1"; }
abs() { echo $(($1 < 0 ? -$1 : $1)); }

timeout 30 "$PROBE" -d /dev/lclk0 -n 2 "$SRC" >"$OUT/p0" 2>&1
read -r off0 b0 <<<"$(last "$OUT/p0")"
timeout 10 "$LCLKCTL" -d /dev/lclk1 step 3ms >/dev/null
timeout 30 "$PROBE" -d /dev/lclk0 -n 2 "$SRC" >"$OUT/p1" 2>&1
sed 's/^/# /' "$OUT/p0" "$OUT/p1"
read -r off1 b1 <<<"$(last "$OUT/p1")"
# Stepping lclk1 by 3 ms moves the measured offset by 3 ms, within the bounds.
[ -n "$off0" ] && [ -n "$off1" ] &&
	[ "$(abs $((off1 - off0 - 3000000)))" -le $((b0 + b1 + 1000)) ]
ok $? "phc: sees lclk1 step by 3 ms (offset $off0 -> $off1 ns, bounds $b0, $b1)"

timeout 60 "$LCLKCTL" -d /dev/lclk0 sync --samples 2 --step-threshold 100us "$SRC" >"$OUT/sync" 2>&1
rc=$?
sed 's/^/# /' "$OUT/sync"
ok $rc "lclkctl -d /dev/lclk0 sync $SRC"

timeout 30 "$PROBE" -d /dev/lclk0 -n 2 "$SRC" >"$OUT/p2" 2>&1
sed 's/^/# /' "$OUT/p2"
awk '$1 == "ok" { o = $3 < 0 ? -$3 : $3; if (o > $4 + 1000) bad++; n++ } END { exit !(n && !bad) }' "$OUT/p2"
ok $? "after sync lclk0 agrees with lclk1 within the bound"

# phc2sys does the same through lclk0's PHC (adjtime/adjfine).
timeout 10 "$LCLKCTL" -d /dev/lclk1 step 200us >/dev/null
timeout 8 phc2sys -s "$PHC1" -c "$PHC0" -O 0 -R 4 -m >"$OUT/phc2sys" 2>&1
tail -4 "$OUT/phc2sys" | sed 's/^/# /'
timeout 30 "$PROBE" -d /dev/lclk0 -n 2 "$SRC" >"$OUT/p3" 2>&1
sed 's/^/# /' "$OUT/p3"
read -r off bound <<<"$(last "$OUT/p3")"
[ -n "$off" ] && [ "$(abs "$off")" -lt 10000 ]
ok $? "phc2sys converges lclk0 on lclk1 too (phc: sees $off ns)"

delay=$(awk '/delay/ { for (i = 1; i < NF; i++) if ($i == "delay") d = $(i + 1) } END { print d }' "$OUT/phc2sys")
timeout 60 "$PWD/build/tests/bench/phc_read" "$PHC1" 200 >"$OUT/bench" 2>&1
sed 's/^/# /' "$OUT/bench"
echo "# phc2sys reported delay: ${delay:-?} ns"
grep -q 'BENCH ptp.phc_window_ns_median' "$OUT/bench"
ok $? "PHC read window vs phc2sys delay"
exit $((failed > 0))
