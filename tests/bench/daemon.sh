#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl daemon against chronyd on the same servers in the same run, in the
# VM: two chronyd (-x) servers serve the guest's CLOCK_REALTIME on loopback;
# a chronyd client (-x, so it only estimates) and the daemon both poll them
# every second. Both clocks are the guest's, so the daemon's error is
# logical - CLOCK_REALTIME (build/tests/bench/ntp_bound_check) and
# chronyd's is the offset it logs for the system clock (tracking.log).
#
#   BENCH daemon.error_vs_chrony    median |error|, ours / chronyd's, steady state
#   BENCH daemon.converge_vs_chrony start to first clock update (ours: synced), ours / chronyd's
#   BENCH daemon.cpu_percent        daemon CPU time / wall time at 1 s polling
#   BENCH daemon.rss_kib            daemon resident set at the end
# Numbers come from TCG emulation: absolute errors are far above real
# hardware's, the ratios are the point. STEADY_S (default 90) seconds of
# steady state.
set -u
cd "$(dirname "$0")/../.."

if [ "${1:-}" != --guest ]; then
	exec tests/vm/vm-run -s 2 -t 600 -- "insmod ${LCLK_MODULE:-kmod/lclk.ko} instances=1 && STEADY_S=${STEADY_S:-90} tests/bench/daemon.sh --guest"
fi

lclkctl=build/lclkctl
dir=$(mktemp -d /tmp/lclk-bench-daemon.XXXXXX)
steady=${STEADY_S:-90}
cleanup() {
	local f
	[ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null
	for f in "$dir"/*.pid; do [ -e "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
now_s() { awk '{print $1}' /proc/uptime; }

for port in 11123 11124; do
	cat >"$dir/server-$port.conf" <<-EOC
	local stratum 1
	allow 127.0.0.1
	bindaddress 127.0.0.1
	port $port
	cmdport 0
	pidfile $dir/server-$port.pid
	EOC
	chronyd -x -f "$dir/server-$port.conf" || exit 1
done
cat >"$dir/client.conf" <<-EOC
server 127.0.0.1 port 11123 minpoll 0 maxpoll 0 iburst
server 127.0.0.1 port 11124 minpoll 0 maxpoll 0 iburst
port 0
cmdport 0
pidfile $dir/client.pid
logdir $dir
log tracking
EOC
cat >"$dir/lclk.conf" <<-EOC
source ntp://127.0.0.1:11123
source ntp://127.0.0.1:11124
poll 1s 1s
samples 4 100ms 500ms
control $dir/ctl.sock
metrics off
EOC
sleep 1

t0=$(now_s)
chronyd -x -u root -f "$dir/client.conf" || exit 1
$lclkctl daemon -c "$dir/lclk.conf" 2>"$dir/daemon.log" &
daemon_pid=$!
ours_sync=
for _ in $(seq 300); do
	if [ -z "$ours_sync" ] && $lclkctl --json status 2>/dev/null | grep -q '^{"device".*"status":"synced"'; then
		ours_sync=$(now_s)
	fi
	[ -n "$ours_sync" ] && [ -s "$dir/tracking.log" ] && break
	sleep 0.1
done
# chronyd's first clock update: the first line of tracking.log, by its UTC stamp.
first=$(grep -s -m1 -E '^[0-9]{4}-' "$dir/tracking.log" | awk '{print $1" "$2}')
theirs_sync=$(python3 -c "import datetime,time,sys
t=datetime.datetime.strptime('$first','%Y-%m-%d %H:%M:%S').replace(tzinfo=datetime.timezone.utc).timestamp()
print(t - time.time() + float(open('/proc/uptime').read().split()[0]))" 2>/dev/null)
echo "# synced after: ours ${ours_sync:-never} (start $t0), chronyd ${theirs_sync:-never} (uptime seconds; chronyd logs whole seconds)"

sleep 10	# past the first fast polls
stat0=$(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")
w0=$(now_s)
start_utc=$(date -u +%H:%M:%S)
ours=$(build/tests/bench/ntp_bound_check -n $((steady * 4)) -i 250000)
w1=$(now_s)
stat1=$(awk '{print $14 + $15}' "/proc/$daemon_pid/stat")
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$daemon_pid/status")
echo "# ours: $ours"
# chronyd's offsets over the same window (column 7 of tracking.log, seconds).
theirs=$(awk -v s="$start_utc" '/^20[0-9][0-9]-/ && $2 >= s {v = $7; if (v < 0) v = -v; print v * 1e9}' \
	"$dir/tracking.log" 2>/dev/null | sort -n | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "nan"}')
tail -3 "$dir/tracking.log" 2>/dev/null | sed "s/^/# tracking: /"
echo "# window from $start_utc"
echo "# chronyd: median |offset| $theirs ns over the same window"
our_err=$(echo "$ours" | sed -n 's/.*median_err_ns \(-\?[0-9]*\).*/\1/p' | tr -d -)
hz=$(getconf CLK_TCK)
python3 - "$our_err" "$theirs" "$ours_sync" "$theirs_sync" "$t0" "$stat0" "$stat1" "$w0" "$w1" "$hz" "$rss" <<'PY'
import sys
err, their_err, os_, ts, t0, s0, s1, w0, w1, hz, rss = sys.argv[1:]
def ratio(a, b):
    try:
        return "%.3f" % (float(a) / float(b))
    except (ValueError, ZeroDivisionError):
        return "nan"
# chronyd logs whole seconds: its time counts at least 1 s.
print("BENCH daemon.error_vs_chrony", ratio(max(float(err), 1), max(float(their_err), 1)))
try:
    print("BENCH daemon.converge_vs_chrony", ratio(float(os_) - float(t0), max(float(ts) - float(t0), 1.0)))
except ValueError:
    print("BENCH daemon.converge_vs_chrony nan")
print("BENCH daemon.cpu_percent", "%.2f" % (100.0 * (int(s1) - int(s0)) / float(hz) / (float(w1) - float(w0))))
print("BENCH daemon.rss_kib", rss)
PY
