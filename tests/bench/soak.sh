#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Soak of "lclkctl daemon", in the VM, for SOAK_S seconds (default 600):
# the daemon steers /dev/lclk0 from two chronyd (-x) servers and the test
# responder, reached through a router namespace, while
#   - the router's netem delay, jitter and loss change every minute,
#   - servers are killed and restarted (one, then all for 40 s: holdover),
#   - the responder answers Kiss-o'-Death RATE for a minute,
#   - the daemon gets a SIGHUP every 30 s,
#   - a slowloris client holds the metrics port, a byte every 190 ms.
# clock_watch reads the clock on every CPU throughout against the ground
# truth: the servers serve this guest's CLOCK_REALTIME.
#
#   BENCH daemon.soak_violations            readings the bound did not cover (must be 0)
#   BENCH daemon.soak_max_error_over_bound  largest error / bound of any reading (< 1)
set -u
cd "$(dirname "$0")/../.."

if [ "${1:-}" != --guest ]; then
	exec tests/vm/vm-run -s 2 -t $((${SOAK_S:-600} + 300)) -- \
		"insmod ${LCLK_MODULE:-kmod/lclk.ko} instances=1 && SOAK_S=${SOAK_S:-600} tests/bench/soak.sh --guest"
fi

lclkctl=$PWD/build/lclkctl
soak=${SOAK_S:-600}
NTP_TAG=soak
NTP_NET=77
# shellcheck source=../integration/ntp_lib.sh
. tests/integration/ntp_lib.sh
daemon_pid= watch_pid= loris_pid=
cleanup() {
	local p
	for p in $daemon_pid $watch_pid $loris_pid; do kill "$p" 2>/dev/null; done
	servers_stop
	wait 2>/dev/null
	ntp_cleanup
}
trap cleanup EXIT

ntp_setup && ntp_setup_router || { echo "# soak: namespaces failed"; exit 1; }
srv=$NTP_V4_ROUTED

# server_start NAME: chronyd A (port 11123) or B (11124), or the responder
# (11125, KIND... following).
server_start() {
	local name=$1 port
	shift
	case $name in
	A) port=11123 ;;
	B) port=11124 ;;
	R) ip netns exec "$NTP_SRV" python3 tests/integration/ntp_responder.py "$srv" 11125 "$@" &
	   echo $! >"$NTP_DIR/R.pid"
	   return ;;
	esac
	cat >"$NTP_DIR/$name.conf" <<-EOC
	local stratum 1
	allow
	bindaddress $srv
	port $port
	cmdport 0
	pidfile $NTP_DIR/$name.pid
	EOC
	in_srv chronyd -x -f "$NTP_DIR/$name.conf"
}
server_stop() {
	[ -s "$NTP_DIR/$1.pid" ] && kill "$(cat "$NTP_DIR/$1.pid")" 2>/dev/null
	rm -f "$NTP_DIR/$1.pid"
}
servers_stop() { server_stop A; server_stop B; server_stop R; }

# netem LINE...: the same impairment on both of the router's devices.
netem() {
	local dev
	for dev in "$NTP_RTR_TO_SRV" "$NTP_RTR_TO_CLI"; do
		in_rtr tc qdisc del dev "$dev" root 2>/dev/null
		[ $# -eq 0 ] || in_rtr tc qdisc add dev "$dev" root netem "$@"
	done
}
# One impairment a minute, in turn.
impairments=(
	""
	"delay 1ms 500us"
	"delay 5ms 2ms loss 5%"
	"delay 200us 100us loss 20%"
	""
	"delay 10ms 5ms loss 1%"
	"delay 2ms 1ms"
	"loss 30%"
	"delay 500us 400us"
	"delay 3ms 3ms loss 10%"
)

server_start A
server_start B
server_start R good
cat >"$NTP_DIR/lclk.conf" <<-EOC
source ntp://$srv:11123
source ntp://$srv:11124
source ntp://$srv:11125
poll 1s 16s
samples 4 100ms 500ms
metrics 127.0.0.1:9478
control $NTP_DIR/ctl.sock
log info
EOC
sleep 1
# Not through in_cli: $! must be the daemon itself (ip execs it).
ip netns exec "$NTP_CLI" "$lclkctl" daemon -c "$NTP_DIR/lclk.conf" 2>"$NTP_DIR/daemon.log" &
daemon_pid=$!
for _ in $(seq 120); do
	$lclkctl --json status 2>/dev/null | grep -q '"status":"synced"' && break
	sleep 0.5
done
echo "# soak: synced, $soak s of flapping begin"

ip netns exec "$NTP_CLI" python3 - <<'PY' &
# Slowloris: keep the metrics port busy, a byte every 190 ms, reconnecting
# whenever the daemon hangs up.
import socket, time
while True:
    try:
        s = socket.create_connection(("127.0.0.1", 9478), timeout=5)
        for c in b"GET /metrics HTTP/1.1\r\nHost: x\r\n" * 1000:
            s.send(bytes([c]))
            time.sleep(0.19)
    except OSError:
        time.sleep(0.19)
PY
loris_pid=$!

build/tests/bench/clock_watch -i 1000 >"$NTP_DIR/watch.out" 2>&1 &
watch_pid=$!

# Thirty-second slots; in each ten minutes, the servers flap on this plan.
slots=$(( (soak + 29) / 30 ))
for slot in $(seq 0 $((slots - 1))); do
	minute=$((slot / 2))
	wait_s=30
	if [ $((slot % 2)) -eq 0 ]; then
		imp=${impairments[$((minute % ${#impairments[@]}))]}
		# shellcheck disable=SC2086
		netem $imp
		echo "# soak: minute $minute: netem '$imp'"
	fi
	case $((slot % 20)) in
	4) server_stop A ;;
	6) server_start A ;;
	10) servers_stop ;;	# every server gone for 40 s: holdover
	11) sleep 10; server_start A; server_start B; server_start R good; wait_s=20 ;;
	12) server_stop R; server_start R "kod=RATE" ;;
	14) server_stop R; server_start R good ;;
	16) server_stop B ;;
	18) server_start B ;;
	esac
	kill -HUP "$daemon_pid" 2>/dev/null || { echo "# soak: the daemon died"; break; }
	sleep "$wait_s"
done

kill -TERM "$watch_pid"
wait "$watch_pid"
watch=$(cat "$NTP_DIR/watch.out")
echo "# soak: clock_watch: $watch"
LCLK_CONTROL=$NTP_DIR/ctl.sock $lclkctl status 2>/dev/null | sed 's/^/# /'
grep -E 'warn|err' "$NTP_DIR/daemon.log" | sort | uniq -c | sort -rn | head -20 | sed 's/^/# daemon: /'
alive=yes
kill -0 "$daemon_pid" 2>/dev/null || alive=no
echo "# soak: daemon alive at the end: $alive"
violations=$(echo "$watch" | sed -n 's/.*bound_violations \([0-9]*\).*/\1/p')
ratio=$(echo "$watch" | sed -n 's/.*max_err_over_bound \([0-9.]*\).*/\1/p')
[ "$alive" = yes ] || violations=${violations:-dead}
echo "BENCH daemon.soak_violations ${violations:-nan}"
echo "BENCH daemon.soak_max_error_over_bound ${ratio:-nan}"
