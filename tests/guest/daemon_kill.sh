#!/bin/bash
# A daemon killed in the middle of a correction (SIGKILL, a crash, the OOM
# killer): the rate it set to work off an offset stays in the model with
# nobody to end it, and the bound must cover where that leaves the clock.
# The truth is /dev/lclk1, which nothing here steers but this script:
# served by lclkctl serve, it is /dev/lclk0's one source. Once the daemon
# has learned that the two run at the same rate, lclk1 is stepped 3 ms
# ahead; the daemon slews lclk0 towards it (up to its 500 ppm limit), dies
# 0.2 s into that correction, and readers check lclk0's bound against lclk1
# for the next 25 s, long past the time the daemon would have ended it: a
# correction left running overshoots by its rate times that time, and the
# bound has to have grown as fast.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
check_bound=build/tests/bench/ntp_bound_check
dir=$(mktemp -d /tmp/lclk-daemon-kill.$$.XXXXXX)
export LCLK_CONTROL=$dir/ctl.sock
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
echo "TAP version 13"

$lclkctl -d /dev/lclk1 set --realtime --bound 1us --max-drift 0 --allow-backward >/dev/null &&
	$lclkctl set --unsync >/dev/null
LCLK_CONTROL=$dir/none.sock $lclkctl -d /dev/lclk1 serve -a 127.0.0.1 -p 11125 \
	--rate 50 --burst 20 >"$dir/serve.log" 2>&1 &
pids+=("$!")
cat >"$dir/lclk.conf" <<EOC
device /dev/lclk0
source ntp://127.0.0.1:11125
poll 1s 1s
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
start=$(updates)
$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
pid=$!
pids+=("$pid")
model() {
	$lclkctl --json status 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)['model']['$1'])"
}
settled() { [ "$(updates)" -ge $((start + 10)) ]; }
check "the daemon synchronises and runs 10 updates" wait_for 60 settled
echo "# settled: rate $(model rate_ppt) ppt, max_drift $(model max_drift_ppb) ppb"
$lclkctl -d /dev/lclk1 step 3ms >/dev/null
before=$(updates)
corrected() { [ "$(updates)" -gt "$before" ]; }
check "lclk1 stepped 3 ms ahead: the daemon starts correcting it" wait_for 10 corrected
sleep 0.2
kill -9 "$pid"
wait "$pid" 2>/dev/null
echo "# killed at rate $(model rate_ppt) ppt, max_drift $(model max_drift_ppb) ppb; daemon log:"
sed 's/^/#   /' "$dir/daemon.log" | tail -n 5
$lclkctl status | sed 's/^/# /'
r=$($check_bound -d /dev/lclk0 -r /dev/lclk1 -n 250 -i 100000 2>&1)
rc=$?
check "for 25 s after the daemon died, the bound still covers lclk1 ($r)" test "$rc" -eq 0
echo "1..$n"
exit "$failed"
