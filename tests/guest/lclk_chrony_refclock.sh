#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# chrony's PHC refclock reads lclk0's PTP clock: with logical time put a
# known distance from CLOCK_REALTIME, "chronyd -x -Q" (measure only, never
# touch the clock) must report that distance. Runs in the VM; prints TAP.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=build/lclkctl

phc=
for f in /sys/class/ptp/ptp*/clock_name; do
	[ "$(cat "$f")" = lclk0 ] && phc=/dev/$(basename "$(dirname "$f")")
done
echo "1..3"
[ -n "$phc" ] || { echo "Bail out! lclk0 has no PTP clock"; exit 1; }
echo "# lclk0's PTP clock is $phc"

n=0 failed=0
# chrony_offset: chronyd's "System clock wrong by X seconds" for the PHC
# (X = refclock - system clock), in ns. chronyd's whole output stays in
# $out for a failure's report: once in a make check, on the debug kernel,
# chronyd ended early with no measurement, and its output was lost.
out=$(mktemp /tmp/lclk-chrony-refclock.XXXXXX)
trap 'rm -f "$out"' EXIT
chrony_offset() {
	timeout 30 chronyd -x -Q -f /dev/null "refclock PHC $phc poll 0 dpoll -2" >"$out" 2>&1
	echo "rc $?" >>"$out"
	sed -n 's/.*System clock wrong by \(-\{0,1\}[0-9.]*\) seconds.*/\1/p' "$out" |
		awk '{ printf "%.0f\n", $1 * 1e9 }'
}

# expect DESCRIPTION OFFSET_NS: logical - realtime is OFFSET_NS now.
expect() {
	local got
	n=$((n + 1))
	got=$(chrony_offset)
	if [ -n "$got" ] && [ $(( got > $2 ? got - $2 : $2 - got )) -le 50000 ]; then
		echo "ok $n - $1: chronyd sees ${got} ns (want $2 +- 50us)"
	else
		echo "not ok $n - $1: chronyd sees '${got}' ns, want $2 +- 50us"
		sed 's/^/#   chronyd: /' "$out"
		"$LCLKCTL" status 2>&1 | sed 's/^/#   /'
		failed=1
	fi
}

"$LCLKCTL" set --realtime --bound 1ms --allow-backward >/dev/null
expect "logical = CLOCK_REALTIME" 0
"$LCLKCTL" step 5ms >/dev/null
expect "after a 5 ms step" 5000000
"$LCLKCTL" step --allow-backward -- -8ms >/dev/null
expect "after an 8 ms backward step" -3000000
"$LCLKCTL" set --realtime --unsync --allow-backward >/dev/null
exit $failed
