#!/bin/bash
# A daemon that dies (SIGKILL, a crash, the OOM killer) or hangs (SIGSTOP)
# in the middle of a correction: the correction on top of its frequency
# estimate must end by itself, at its planned end or when the daemon's
# file closes, and the bound must cover the clock all along.
# The truth is /dev/lclk1, which nothing here steers but this script:
# served by lclkctl serve, it is /dev/lclk0's one source, and neither the
# signal nor the daemon can move it. Once the daemon has learned that the
# two run at the same rate, lclk1 is stepped 400 us ahead: small enough
# that over a 2 s poll the PI servo's frequency estimate stays below its
# 500 ppm clamp (0.3 x 200 ppm) while its correction (0.7 x 200 ppm) rides
# on top of it. The daemon is signalled while that correction runs, and
# readers check lclk0's bound against lclk1 for the next 15 s: a correction
# left running overshoots by its rate times that time, past a bound that
# grows at the frequency estimate's rate (from about 7 s on).
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
check_bound=build/tests/bench/ntp_bound_check
dir=$(mktemp -d /tmp/lclk-daemon-kill.$$.XXXXXX)
export LCLK_CONTROL=$dir/ctl.sock
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
echo "TAP version 13"

cat >"$dir/lclk.conf" <<EOC
device /dev/lclk0
source ntp://127.0.0.1:11125
poll 2s 2s
samples 4 50ms 200ms
maxdrift 20ppm
maxslew 500ppm
control $dir/ctl.sock
metrics off
log info
EOC
# the module's count of model changes: the daemon's updates, and this script's
updates() {
	$lclkctl --json status 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)['stats']['updates'])"
}
model() {
	$lclkctl --json status 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)['model']['$1'])"
}

# A correction of more than 50 ppm runs: the rate is that far beyond the
# frequency estimate, which the daemon's max_drift is maxdrift (20 ppm) plus.
mid_correction() {
	local j rate drift
	j=$($lclkctl --json status 2>/dev/null) || return 1
	rate=$(grep -o '"rate_ppt":-\?[0-9]*' <<<"$j" | head -1 | cut -d: -f2)
	drift=$(grep -o '"max_drift_ppb":[0-9]*' <<<"$j" | head -1 | cut -d: -f2)
	[ -n "$rate" ] && [ -n "$drift" ] || return 1
	seen="rate $rate ppt, max_drift $drift ppb"
	[ $(( ${rate#-} - (drift - 20000) * 1000 )) -gt 50000000 ]
}

# wait_for, polling every 0.05 s: a correction lasts one 2 s poll.
wait_for_fast() {
	local end=$((SECONDS + $1 * ${LCLK_TIME_SCALE:-1}))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# scenario SIGNAL: a fresh truth and a clock near it (both at
# CLOCK_REALTIME: the servo settles from a small offset, not from where the
# last scenario left the clock), a daemon that settles, a 400 us step of
# the truth, SIGNAL during the daemon's correction, 15 s of readings.
scenario() {
	local sig=$1 pid spid start before r rc

	$lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null &&
		$lclkctl set --realtime --unsync --rate 0 --allow-backward >/dev/null
	LCLK_CONTROL=$dir/none.sock $lclkctl -d /dev/lclk1 serve -a 127.0.0.1 -p 11125 \
		--rate 50 --burst 20 >"$dir/serve.log" 2>&1 &
	spid=$!
	pids+=("$spid")
	start=$(updates)
	$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	settled() { [ "$(updates)" -ge $((start + 8)) ]; }
	check "$sig: the daemon synchronises and runs 8 updates" wait_for 60 settled
	echo "# settled: rate $(model rate_ppt) ppt, max_drift $(model max_drift_ppb) ppb"
	$lclkctl -d /dev/lclk1 step 400us >/dev/null
	check "$sig: lclk1 stepped 400 us ahead: the daemon corrects it" \
		wait_for_fast 10 mid_correction
	kill -"$sig" "$pid"
	echo "# signalled at $seen; then rate $(model rate_ppt) ppt, max_drift $(model max_drift_ppb) ppb; daemon log:"
	sed 's/^/#   /' "$dir/daemon.log" | tail -n 8
	r=$($check_bound -d /dev/lclk0 -r /dev/lclk1 -n 150 -i 100000 2>&1)
	rc=$?
	echo "# 15 s later: rate $(model rate_ppt) ppt, max_drift $(model max_drift_ppb) ppb"
	check "$sig: for 15 s after it, the bound still covers lclk1 ($r)" test "$rc" -eq 0
	kill -CONT "$pid" 2>/dev/null
	kill -9 "$pid" "$spid" 2>/dev/null
	wait "$pid" "$spid" 2>/dev/null
}

scenario KILL
scenario STOP
echo "1..$n"
exit "$failed"
