#!/bin/bash
# lclkctl daemon with a PTP and an NTP source, in the VM with the module
# loaded: a ptp4l grandmaster in a network namespace, reached over a veth
# pair (ptp://VETH, software timestamps), and a chronyd server (-x) on
# loopback. Both serve the guest's CLOCK_REALTIME, the ground truth.
#   converge, PTP selected over NTP by the default preference, both in
#   "lclkctl status" with their class; "preference ntp ptp peer" (SIGHUP)
#   selects NTP, the default PTP again;
#   stop ptp4l -> NTP (class failover); restart ptp4l -> PTP again;
#   stop both -> HOLDOVER, the bound growing at the maximum drift;
#   restart ptp4l -> synchronised again;
#   then /dev/lclk1 follows a ptp4l slave here through a ptp4l: source;
# while readers on every CPU check monotonicity and the bound throughout.
set -uo pipefail
cd "${LCLK_REPO:-.}" || exit 1

lclkctl=build/lclkctl
watch=build/tests/bench/clock_watch
dir=$(mktemp -d /tmp/lclk-daemon-ptp.$$.XXXXXX)
ns=lclk-dptp-$$
veth=ldp$$		# ours; its peer ${veth}g is the grandmaster's
# ptp4l on a system clock announces an ARB timescale and clockClass 248:
# the source takes its time as it is (lclkctl(8), PTP SOURCES).
ptp_src="ptp://$veth?timescale=arb"
ptp_re="ptp://$veth\\?timescale=arb"	# for grep -E
ntp_port=11223
export LCLK_CONTROL=$dir/ctl.sock
pids=()
ptp4l_pid=
cleanup() {
	local p
	for p in "${pids[@]}" $ptp4l_pid; do kill "$p" 2>/dev/null; done
	[ -e "$dir/chronyd.pid" ] && kill "$(cat "$dir/chronyd.pid")" 2>/dev/null
	wait 2>/dev/null
	ip link del "$veth" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
. tests/guest/lib/ptp_master.bash
echo "TAP version 13"

for cmd in ptp4l chronyd ip; do
	if ! command -v $cmd >/dev/null; then
		echo "1..0 # SKIP $cmd is not installed"
		exit 0
	fi
done

# ---- the link: grandmaster 10.78.0.1 in $ns, daemon 10.78.0.2 here -------
ptp_master_link "$ns" "$veth" 10.78.0
rc=$?
check "veth link to a namespace for the grandmaster" test $rc -eq 0
[ $rc -eq 0 ] || { echo "Bail out! no veth link"; exit 1; }

# ptp4l as grandmaster on the system clock.
ptp_master_conf "$dir/ptp4l.conf" "$dir"
start_ptp4l() {
	ip netns exec "$ns" ptp4l -4 -i "${veth}g" -m -f "$dir/ptp4l.conf" \
		>>"$dir/ptp4l.log" 2>&1 &
	ptp4l_pid=$!
}
stop_ptp4l() {
	kill "$ptp4l_pid" 2>/dev/null
	wait "$ptp4l_pid" 2>/dev/null
	ptp4l_pid=
}

# chronyd serving CLOCK_REALTIME on 127.0.0.1, never touching the clock.
cat >"$dir/chrony.conf" <<-EOC
local stratum 1
allow 127.0.0.1
bindaddress 127.0.0.1
port $ntp_port
cmdport 0
pidfile $dir/chronyd.pid
EOC
start_chronyd() { chronyd -x -f "$dir/chrony.conf" >>"$dir/chronyd.log" 2>&1; }
stop_chronyd() {
	kill "$(cat "$dir/chronyd.pid")" 2>/dev/null
	rm -f "$dir/chronyd.pid"
}

# timed NAME SECONDS CMD...: check that CMD comes true within SECONDS, and say when.
timed() {
	local name=$1 limit=$2 t0=$SECONDS
	shift 2
	if wait_for "$limit" "$@"; then
		ok "$name (after $((SECONDS - t0)) s)"
	else
		not_ok "$name (not within $limit s)"
		$lclkctl status 2>&1 | sed 's/^/# /'
	fi
}

# By default (no "preference" line) the order is ptp over ntp over peers.
# The NTP server is listed first so that file order cannot be what picks PTP.
write_config() {
	cat >"$dir/lclk.conf" <<-EOC
	device /dev/lclk0
	source ntp://127.0.0.1:$ntp_port
	source $ptp_src
	$1
	poll 500ms 2s
	fastpolls 2
	samples 4 50ms 400ms
	holdover 3s
	maxdrift 100ppm
	control $dir/ctl.sock
	metrics off
	log info
	EOC
}
# daemon_json EXPR: a value of the daemon's JSON status (d: its object).
daemon_json() {
	$lclkctl --json status | python3 -c "import json, sys
d = json.load(sys.stdin)['daemon']
print($1)"
}
updates() { daemon_json 'd["updates"]' 2>/dev/null; }
# updates_beyond N: the daemon made more than N updates.
updates_beyond() { local u; u=$(updates) && [ "${u:-0}" -gt "$1" ]; }
# ntp_steers N: synchronised, on NTP, more than N updates made.
ntp_steers() { updates_beyond "$1" && status_is synced && selected_is "ntp://127.0.0.1:$ntp_port"; }
synced_on_ptp() { status_is synced && selected_is "$ptp_src"; }

# ---- converge, PTP over NTP ---------------------------------------------------
start_ptp4l
start_chronyd
$watch -i 500 >"$dir/watch.out" 2>&1 &
watch_pid=$!
pids+=("$watch_pid")
write_config ""
$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
daemon_pid=$!
pids+=("$daemon_pid")
timed "daemon synchronises" 30 status_is synced
timed "PTP is selected over NTP by default" 20 selected_is "$ptp_src"
sleep 2
table=$($lclkctl status)
echo "$table" | sed 's/^/# /'
check "status: both sources in the table with their class, PTP selected, NTP candidate" \
	test -n "$(echo "$table" | grep -E "^  \* $ptp_re +ptp +[0-7]+ ")" -a -n \
	"$(echo "$table" | grep -E "^  \+ ntp://127.0.0.1:$ntp_port +ntp +[0-7]+ ")"
classes=$(daemon_json '"\n".join(s["url"] + " " + s["class"] for s in d["sources"])' 2>&1)
echo "$classes" | sed 's/^/# json: /'
check "status --json: both sources with their class" test -n \
	"$(echo "$classes" | grep -x "$ptp_src ptp")" -a -n \
	"$(echo "$classes" | grep -x "ntp://127.0.0.1:$ntp_port ntp")"

# PTP's bound is also the smaller: reversing the class order must be what
# makes NTP win, and restoring the default what brings PTP back.
write_config "preference ntp ptp peer"
kill -HUP "$daemon_pid"
timed "preference ntp ptp peer (SIGHUP): NTP is selected" 20 \
	selected_is "ntp://127.0.0.1:$ntp_port"
write_config ""
kill -HUP "$daemon_pid"
timed "default preference again (SIGHUP): PTP is selected" 20 selected_is "$ptp_src"

# ---- class failover and back -----------------------------------------------
stop_ptp4l
timed "ptp4l stopped: NTP takes over" 20 selected_is "ntp://127.0.0.1:$ntp_port"
u=$(updates)
timed "NTP steers the clock: two more updates, synchronised" 20 ntp_steers $((u + 1))
start_ptp4l
timed "ptp4l restarted: PTP is selected again" 30 selected_is "$ptp_src"

# ---- holdover, recovery ---------------------------------------------------
stop_ptp4l
stop_chronyd
timed "both stopped: HOLDOVER" 20 status_is holdover
check_holdover_growth
start_ptp4l
timed "ptp4l back: synchronised again, on PTP" 30 synced_on_ptp

# ---- exit ---------------------------------------------------------------------
kill -TERM "$daemon_pid"
wait "$daemon_pid"
check "SIGTERM: the daemon exits 0" test $? -eq 0
kill -TERM "$watch_pid"
wait "$watch_pid"
rc=$?
check "readers on every CPU: monotonic, bound holds ($(cat "$dir/watch.out"))" test "$rc" -eq 0
grep -E 'notice|warn|err' "$dir/daemon.log" | sed 's/^/# /'

# ---- a ptp4l: source: a ptp4l slave here, read over its management socket --
# The slave runs free (software timestamps, the system clock untouched);
# the daemon steers /dev/lclk1 by what it reports.
cat >"$dir/slave.conf" <<-EOC
[global]
time_stamping software
free_running 1
slaveOnly 1
uds_address $dir/slave.uds
EOC
ptp4l -4 -i "$veth" -m -f "$dir/slave.conf" >"$dir/slave.log" 2>&1 &
pids+=("$!")
follow ptp4l "" "source ptp4l:$dir/slave.uds?timescale=arb"
echo "1..$n"
exit $failed
