#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The frequency the daemon learns from one public-class NTP server, which
# it may ask only every 64 s whatever its own poll (issue 32 §1): chronyd
# (-x) serves this machine's clock in one network namespace on 198.51.100.1
# (TEST-NET-2, not private); the daemon, in another, with its default poll
# (1 s up) and samples, steers a file that stands in for /dev/lclk0
# (tests/shim/fake_lclk.so, LCLK_FAKE_STEER; no module, so it runs on the
# host) whose oscillator runs DRIFT_PPM (default 50) fast. After DURATION_S
# (default 1800) the daemon's frequency estimate should cancel that drift,
# plus whatever frequency the host's own clock is slewed at (chronyd
# serves CLOCK_REALTIME; it is measured against CLOCK_MONOTONIC over the
# same run).
#
#   BENCH daemon.public_freq_error_ppm  |learned frequency - true|, ppm
# Extra lines: the run's length, updates, the servo's last offset.
# LCLKCTL: another build of lclkctl to measure (default build/lclkctl).
set -u
cd "$(dirname "$0")/../.." || exit 1
LCLKCTL=${LCLKCTL:-$PWD/build/lclkctl}
SHIM=$PWD/build/tests/shim/fake_lclk.so
DURATION_S=${DURATION_S:-1800}
DRIFT_PPM=${DRIFT_PPM:-50}
NTP_TAG=bp$$
. tests/integration/ntp_lib.sh
PUB_SRV=198.51.100.1
daemon_pid=
cleanup() {
	[ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null
	ntp_cleanup
}
trap cleanup EXIT

# CLOCK_REALTIME - CLOCK_MONOTONIC and CLOCK_MONOTONIC, in ns.
rt_minus_mono() {
	python3 -c 'import time; m = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
print(time.time_ns() - m, m)'
}

ntp_setup
in_srv ip addr add "$PUB_SRV/24" dev "v$NTP_TAG"
in_cli ip addr add 198.51.100.2/24 dev "w$NTP_TAG"
ntp_start_chronyd
dir=$NTP_DIR
: >"$dir/lclk0"
mkdir -m 0700 "$dir/lock"
cat >"$dir/lclk.conf" <<EOC
device $dir/lclk0
source ntp://$PUB_SRV
control $dir/ctl.sock
metrics off
EOC
sleep 1
read -r d0 m0 < <(rt_minus_mono)
ip netns exec "$NTP_CLI" env LD_PRELOAD="$SHIM" LCLK_FAKE_PATH="$dir/lclk0" LCLK_FAKE_STEER=1 \
	LCLK_FAKE_DRIFT_PPB=$((DRIFT_PPM * 1000)) LCLK_LOCK_DIR="$dir/lock" \
	"$LCLKCTL" daemon -c "$dir/lclk.conf" 2>"$dir/daemon.log" &
daemon_pid=$!
sleep "$DURATION_S"
read -r d1 m1 < <(rt_minus_mono)
python3 - "$dir/ctl.sock" "$DRIFT_PPM" "$d0" "$m0" "$d1" "$m1" "$DURATION_S" <<'PY'
import json, socket, sys
path, drift, d0, m0, d1, m1, secs = sys.argv[1:]
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b"sources json\n")
r = json.loads(b"".join(iter(lambda: s.recv(65536), b"")))
# The host's CLOCK_REALTIME runs this fast against CLOCK_MONOTONIC.
host_ppm = (int(d1) - int(d0)) / (int(m1) - int(m0)) * 1e6
learned_ppm = r["freq_ppt"] / 1e6
print("# %s s, %d updates, last offset %d ns, learned %.3f ppm, oscillator +%s ppm, host clock %+.3f ppm"
      % (secs, r["updates"], r["offset_ns"], learned_ppm, drift, host_ppm))
print("BENCH daemon.public_freq_error_ppm %.3f" % abs(learned_ppm + float(drift) - host_ppm))
PY
grep -cE 'holding over|leaving holdover' "$dir/daemon.log" | sed 's/^/# holdover messages in the log: /'
