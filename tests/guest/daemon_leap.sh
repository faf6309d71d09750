#!/bin/bash
# A leap second through lclkctl daemon and serve, in the VM with the module
# loaded (instances >= 2). /dev/lclk1 is the reference: its logical time
# is put at 2016-12-31T23:59:15Z (the guest's clocks are not touched), a
# leap insertion at midnight set on it, and lclkctl serve answers from it
# with NTP's leap indicator. The daemon steers /dev/lclk0 by it: it must
# hand the leap to the module (status shows it pending), cancel it when
# the reference stops announcing it, set it again, and across midnight
# both clocks must step back 1 s and stay together. About a minute.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
dir=$(mktemp -d /tmp/lclk-leap.$$.XXXXXX)
export LCLK_CONTROL=$dir/ctl.sock
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

. tests/guest/lib/daemon.bash
echo "TAP version 13"

NEW_YEAR_2017=1483228800

# setmodel DEV "time SECONDS" | "leap LEAP AT_SECONDS TAI": one SET_MODEL.
# shellcheck disable=SC2086 # the words of $2 are the arguments
setmodel() { tests/guest/lib/lclk_set.py "$1" $2; }
j() { $lclkctl -d "$1" --json status 2>/dev/null |
	python3 -c "import json,sys; d=json.load(sys.stdin); print($2)"; }
leap_is() { [ "$(j /dev/lclk0 'd["leap"]')" = "$1" ]; }

setmodel /dev/lclk1 "time $((NEW_YEAR_2017 - 45))"
setmodel /dev/lclk1 "leap 1 $NEW_YEAR_2017 0"
$lclkctl -d /dev/lclk1 serve -a 127.0.0.1 -p 11140 -u root --stratum 1 >"$dir/serve.log" 2>&1 &
pids+=("$!")
cat >"$dir/lclk.conf" <<-EOC
device /dev/lclk0
source ntp://127.0.0.1:11140
poll 500ms 1s
fastpolls 2
samples 2 50ms 300ms
holdover 30s
control $dir/ctl.sock
metrics off
log info
EOC
$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
pids+=("$!")
check "daemon synchronises to the reference" wait_for 15 status_is synced
check "the daemon sets the announced insertion (status: insert pending)" wait_for 10 leap_is insert
$lclkctl status | grep -E '^(time|bound|leap)' | sed 's/^/# /'
setmodel /dev/lclk1 "leap 0 0 0"
check "... cancels it when no longer announced" wait_for 10 leap_is none
setmodel /dev/lclk1 "leap 1 $NEW_YEAR_2017 0"
check "... sets it again" wait_for 10 leap_is insert
back0=$(j /dev/lclk0 'd["stats"]["backward_steps"]')
back1=$(j /dev/lclk1 'd["stats"]["backward_steps"]')
# past midnight (logical), and a few polls after it
wait_for 60 test "$(j /dev/lclk1 'd["time_ns"] // 10**9')" -ge $((NEW_YEAR_2017 + 4))
sleep 3
check "the reference stepped back once at midnight" \
	test "$(j /dev/lclk1 'd["stats"]["backward_steps"]')" = $((back1 + 1))
check "the daemon's clock stepped back once, by the module" \
	test "$(j /dev/lclk0 'd["stats"]["backward_steps"]')" = $((back0 + 1))
$lclkctl status | grep -E '^(status|time|bound|leap|stats)' | sed 's/^/# /'
check "... its leap is cleared" leap_is none
check "... and it is still synced" status_is synced
# the two clocks agree after it, to well under the second: GET_TIME of
# each, back to back
d=$(python3 -c '
import fcntl, os, struct
fmt = "<IIqqqI5I"			# struct lclk_time, 56 bytes
GET_TIME = (3 << 30) | (struct.calcsize(fmt) << 16) | (0xEC << 8) | 2
t = [struct.unpack(fmt, fcntl.ioctl(os.open(d, os.O_RDONLY), GET_TIME,
                                    bytes(struct.calcsize(fmt))))[3]
     for d in ("/dev/lclk0", "/dev/lclk1")]
print(t[1] - t[0])')
echo "# lclk1 - lclk0 after midnight: $d ns (two GET_TIMEs apart)"
check "... and agrees with the reference to 10 ms after it" test "${d#-}" -lt 10000000
grep -E 'leap second' "$dir/daemon.log" | sed 's/^/# /'
check "the daemon did not sync in the seconds around it" \
	grep -q 'leap second: no sync within' "$dir/daemon.log"
echo "1..$n"
exit $failed
