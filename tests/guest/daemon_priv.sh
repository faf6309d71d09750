#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The daemon's least privilege, in the VM with the module loaded (instances
# >= 1): once its device and sockets are open it runs as its user (lclk,
# made here with adduser --system as the package does, and removed after)
# with CAP_SYS_TIME and what its sources need, nothing else, not even in
# its bounding set; a user that does not exist leaves it uid 0 with the
# same capabilities; a reload works unprivileged; started as lclk.service
# starts it (as lclk, the unit's capabilities ambient) it keeps
# CAP_SYS_TIME alone; serve keeps nothing.
# And its single-instance lock is a file of root's under /run/lclk, which
# no other user can hold: "flock -x /dev/lclk0 sleep 1e9" as nobody does
# not keep it from starting. chronyd -x serves the guest's clock on
# loopback. TAP.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
dir=$(mktemp -d /tmp/lclk-priv.$$.XXXXXX)
# The daemon's user reads the configuration at a reload, serve connects to
# the control socket: as /etc/lclk and /run/lclk, the directory is open.
chmod 755 "$dir"
export LCLK_CONTROL=$dir/ctl.sock
pids=()
made_user='' holder=''
cleanup() {
	local p
	# flock(1) runs sleep as its child, which holds the lock: the group.
	[ -n "$holder" ] && kill -- -"$holder" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	[ -e "$dir/chronyd.pid" ] && kill "$(cat "$dir/chronyd.pid")" 2>/dev/null
	wait 2>/dev/null
	[ -n "$made_user" ] && deluser --system lclk >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
echo "TAP version 13"

cat >"$dir/chrony.conf" <<EOC
local stratum 1
allow 127.0.0.1
bindaddress 127.0.0.1
port 11125
cmdport 0
pidfile $dir/chronyd.pid
EOC
chronyd -x -f "$dir/chrony.conf" >"$dir/chronyd.log" 2>&1

# write_config EXTRA_LINES: one NTP source, short polls, our control socket.
write_config() {
	cat >"$dir/lclk.conf" <<-EOC
	device /dev/lclk0
	source ntp://127.0.0.1:11125
	$1
	poll 500ms 2s
	fastpolls 2
	samples 2 50ms 300ms
	maxdrift 100ppm
	control $dir/ctl.sock
	metrics off
	log info
	EOC
}

# uid_of PID: real, effective, saved and fs uid; caps_of PID: CapInh CapPrm
# CapEff CapBnd CapAmb (hex), as /proc/PID/status has them.
uid_of() { awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$1/status" 2>/dev/null; }
caps_of() {
	awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ {printf "%s%s", s, $2; s = " "}' "/proc/$1/status" 2>/dev/null
}
# caps_are HEX: inheritable and ambient empty; permitted, effective and
# bounding HEX.
caps_are() { echo "0000000000000000 $1 $1 $1 0000000000000000"; }
SYS_TIME=0000000002000000			# 1 << 25
SYS_TIME_BIND=0000000002000400			# | CAP_NET_BIND_SERVICE (10)
SYS_TIME_L2_HW=0000000002003004			# | NET_RAW (13), NET_ADMIN (12), DAC_READ_SEARCH (2)
NONE=0000000000000000

# start_daemon LOG ARGS...: the daemon in the background; its pid in $dpid.
start_daemon() {
	local log=$1
	shift
	$lclkctl daemon -c "$dir/lclk.conf" "$@" >"$dir/$log" 2>&1 &
	dpid=$!
	pids+=("$dpid")
}
stop_daemon() { kill -TERM "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; }
# running_for S PID: still alive after S seconds.
running_for() { sleep "$1"; kill -0 "$2" 2>/dev/null; }

$lclkctl set --realtime --unsync --allow-backward >/dev/null

# ---- the lock: not the device node, which any user may flock ----------------
write_config ""
# In a session (and process group) of its own: flock runs sleep as its
# child, which holds the lock, and both go at the end of this part.
setsid setpriv --reuid=nobody --regid=nogroup --clear-groups flock -x /dev/lclk0 sleep 1e9 &
holder=$!
sleep 0.5
check "nobody holds flock -x /dev/lclk0" kill -0 "$holder"
start_daemon daemon-lock.log
check "... and the daemon starts all the same ($(grep -m1 -E 'err|another' "$dir/daemon-lock.log"))" \
	running_for 2 "$dpid"
check "... and synchronises" wait_for 30 status_is synced
sed "s|^control .*|control $dir/ctl-second.sock|" "$dir/lclk.conf" >"$dir/second.conf"
out=$(timeout 10 $lclkctl daemon -c "$dir/second.conf" 2>&1)
rc=$?
check "a second daemon on /dev/lclk0 is still refused (exit $rc: $out)" \
	test "$rc" -ne 0 -a "$rc" -ne 124 -a -n "$(echo "$out" | grep 'another daemon steers it')"
lock=$(ls -ln /run/lclk/lclk0.lock 2>&1)
check "the lock is /run/lclk/lclk0.lock, root's, 0600 ($lock)" \
	test -n "$(echo "$lock" | grep -E '^-rw------- 1 0 0 ')"
stop_daemon
kill -- -"$holder" 2>/dev/null
wait "$holder" 2>/dev/null
holder=

# ---- a user that does not exist: uid 0, capabilities cut all the same ------
nouser=lclk-no-such-user-$$
start_daemon daemon-nouser.log -u "$nouser"
wait_for 30 status_is synced >/dev/null
check "-u a missing user: the daemon says so ($(grep -m1 'no user' "$dir/daemon-nouser.log"))" \
	test -n "$(grep "no user $nouser to run as" "$dir/daemon-nouser.log")"
check "... runs as uid 0 (Uid $(uid_of "$dpid"))" test "$(uid_of "$dpid")" = "0 0 0 0"
check "... with CAP_SYS_TIME alone (Cap* $(caps_of "$dpid"))" \
	test "$(caps_of "$dpid")" = "$(caps_are $SYS_TIME)"
stop_daemon

# ---- its user, made as the package makes it --------------------------------
if ! id lclk >/dev/null 2>&1; then
	adduser --system --group --quiet --no-create-home --home /nonexistent lclk && made_user=1
fi
u=$(id -u lclk)
$lclkctl set --unsync >/dev/null
start_daemon daemon.log
check "as lclk: the daemon synchronises" wait_for 30 status_is synced
check "... runs as lclk (Uid $(uid_of "$dpid"), lclk is $u)" test "$(uid_of "$dpid")" = "$u $u $u $u"
check "... with CAP_SYS_TIME alone, NTP sources only (Cap* $(caps_of "$dpid"))" \
	test "$(caps_of "$dpid")" = "$(caps_are $SYS_TIME)"
tids=$(ls /proc/"$dpid"/task | wc -l)
bad=$(for t in /proc/"$dpid"/task/*; do awk '/^CapEff:/ {print $2}' "$t/status"; done |
	grep -vx $SYS_TIME | head -1)
check "... in every one of its $tids threads (${bad:-all $SYS_TIME})" test -z "$bad"

# serve, also as lclk: nothing kept.
$lclkctl serve -a 127.0.0.1 -p 11132 >"$dir/serve.log" 2>&1 &
spid=$!
pids+=("$spid")
sleep 1
check "serve runs as lclk (Uid $(uid_of "$spid"))" test "$(uid_of "$spid")" = "$u $u $u $u"
check "... with no capability (Cap* $(caps_of "$spid"))" test "$(caps_of "$spid")" = "$(caps_are $NONE)"
kill "$spid"

# A reload, unprivileged: the configuration is read again, a new control
# socket bound in a directory of its own, the sources reopened.
mkdir -m 755 "$dir/run2"
chown lclk "$dir/run2"
chronyd_conf2=$dir/chrony2.conf
sed "s/11125/11126/; s|chronyd.pid|chronyd2.pid|" "$dir/chrony.conf" >"$chronyd_conf2"
chronyd -x -f "$chronyd_conf2" >"$dir/chronyd2.log" 2>&1
write_config "source ntp://127.0.0.1:11126 prefer"
sed -i "s|^control .*|control $dir/run2/ctl.sock|" "$dir/lclk.conf"
kill -HUP "$dpid"
export LCLK_CONTROL=$dir/run2/ctl.sock
check "SIGHUP as lclk: reloaded with 2 sources" \
	wait_for 10 grep -q 'reloaded: 2 sources' "$dir/daemon.log"
check "... the control socket moved to $dir/run2/ctl.sock" wait_for 10 selected_is ntp://127.0.0.1:11126
check "... still synchronised, still lclk with CAP_SYS_TIME alone" \
	test "$(status_is synced && echo y)" = y -a "$(caps_of "$dpid")" = "$(caps_are $SYS_TIME)" -a "$(uid_of "$dpid")" = "$u $u $u $u"
# A source needing a capability given up at start: said, not silently broken.
write_config "source ptp://lo?ts=sw"
sed -i "s|^control .*|control $dir/run2/ctl.sock|" "$dir/lclk.conf"
kill -HUP "$dpid"
check "... a reload adding ptp://lo says it needs CAP_NET_BIND_SERVICE, given up at start" \
	wait_for 10 grep -q 'ptp://lo?ts=sw needs CAP_NET_BIND_SERVICE, which the daemon gave up' \
	"$dir/daemon.log"
check "... and the daemon keeps running" running_for 1 "$dpid"
stop_daemon
kill "$(cat "$dir/chronyd2.pid")" 2>/dev/null
export LCLK_CONTROL=$dir/ctl.sock
grep -E 'notice|warn|err' "$dir/daemon.log" | sed 's/^/# daemon: /'

# ---- as lclk.service starts it: lclk, with the unit's ambient capabilities --
# systemd makes RuntimeDirectory=lclk the user's; the daemon gives up every
# ambient capability but CAP_SYS_TIME (its bounding set is systemd's to cut:
# it has no CAP_SETPCAP).
svc=+sys_time,+net_bind_service,+net_raw,+net_admin,+dac_read_search,+dac_override
SVC_BND=0000000002003406
mkdir -m 755 "$dir/svc-run"
chown lclk:lclk "$dir/svc-run"
write_config ""
sed -i "s|^control .*|control $dir/svc-run/lclkd.sock|" "$dir/lclk.conf"
$lclkctl set --unsync >/dev/null
LCLK_LOCK_DIR=$dir/svc-run setpriv --reuid=lclk --regid=lclk --init-groups \
	--inh-caps=-all,$svc --ambient-caps=-all,$svc --bounding-set=-all,$svc \
	$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon-svc.log" 2>&1 &
dpid=$!
pids+=("$dpid")
check "started as lclk with the unit's ambient capabilities: synchronises" \
	wait_for 30 status_is synced
check "... keeps CAP_SYS_TIME alone (Cap* $(caps_of "$dpid"))" \
	test "$(caps_of "$dpid")" = "0000000000000000 $SYS_TIME $SYS_TIME $SVC_BND 0000000000000000"
lock=$(ls -l "$dir/svc-run/lclk0.lock" 2>&1)
check "... its lock is lclk's, 0600, in the runtime directory ($lock)" \
	test -n "$(echo "$lock" | grep -E '^-rw------- 1 lclk ')"
stop_daemon
grep -E 'warn|err' "$dir/daemon-svc.log" | sed 's/^/# daemon (service): /'

# ---- what PTP sources keep ----------------------------------------------------
# caps_for LINE: the daemon's CapEff with that source line (it need not
# measure: the capabilities come from the configuration).
caps_for() {
	write_config "$1"
	start_daemon daemon-caps.log
	sleep 2
	caps_of "$dpid"
	stop_daemon
}
c=$(caps_for "source ptp://lo?ts=sw")
check "ptp://lo?ts=sw (UDP, ports 319/320): CAP_SYS_TIME, CAP_NET_BIND_SERVICE ($c)" \
	test "$c" = "$(caps_are $SYS_TIME_BIND)"
c=$(caps_for "source ptp://lo?transport=l2&ts=hw")
check "ptp://lo?transport=l2&ts=hw: + CAP_NET_RAW, CAP_NET_ADMIN, CAP_DAC_READ_SEARCH ($c)" \
	test "$c" = "$(caps_are $SYS_TIME_L2_HW)"

echo "1..$n"
exit $failed
