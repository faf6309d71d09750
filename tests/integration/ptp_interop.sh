#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ptp:// against ptp4l masters configured as real grandmasters are: with
# TLVs the slave must skip, and with the clock quality the bound rests on.
# ptp4l on a system clock (software timestamps) announces an arbitrary
# timescale and, by default, clockClass 248: a grandmaster lclkctl takes
# only with timescale=arb, as it is, unless it is told (pmc, as ts2phc
# setups do) that it is a traceable one.
# One veth link between two network namespaces, software timestamping;
# every clock is this machine's, so |offset| <= bound must hold.
#
#   ns ${P}m  ptp4l master (free_running 1)   10.79.0.1
#   ns ${P}s  source_probe                    10.79.0.2
set -u
cd "$(dirname "$0")/../.."

PROBE=build/tests/bench/source_probe
P=pi$$
TMP=$(mktemp -d /tmp/lclk-ptp-interop.XXXXXX)
PID=
n=0
failed=0

stop_master() {
	[ -n "$PID" ] || return 0
	kill "$PID" 2>/dev/null
	wait "$PID" 2>/dev/null
	PID=
}

cleanup() {
	stop_master
	ip netns del "${P}m" 2>/dev/null
	ip netns del "${P}s" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

echo "TAP version 13"
echo "1..4"
if [ ! -x "$PROBE" ] || ! command -v ptp4l >/dev/null; then
	echo "Bail out! needs $PROBE (make tests) and ptp4l (make deps)"
	exit 1
fi

ip netns add "${P}m" && ip netns add "${P}s" || exit 1
ip link add "${P}m" type veth peer name "${P}s"
ip link set "${P}m" netns "${P}m"
ip link set "${P}s" netns "${P}s"
for r in m s; do
	ip -n "${P}$r" link set "${P}$r" name eth0
	ip -n "${P}$r" link set eth0 up
	ip -n "${P}$r" link set lo up
done
ip -n "${P}m" addr add 10.79.0.1/24 dev eth0
ip -n "${P}s" addr add 10.79.0.2/24 dev eth0

# master NAME EXTRA-CONFIG-LINES: (re)start the master with that config.
master() {
	stop_master
	printf '[global]\ntime_stamping software\nfree_running 1\nlogSyncInterval -3\nlogAnnounceInterval -2\nuds_address %s/%s.uds\n%s\n' \
		"$TMP" "$1" "$2" >"$TMP/$1.conf"
	ip netns exec "${P}m" ptp4l -4 -i eth0 -m -f "$TMP/$1.conf" >"$TMP/$1.log" 2>&1 &
	PID=$!
	for i in $(seq 50); do
		grep -q 'assuming the grand master role' "$TMP/$1.log" && return 0
		sleep 0.2
	done
	return 1
}

# The clock identity the master announces, from its log.
gm_id() {
	sed -n 's/.*selected local clock \([0-9a-f.]*\) as best master.*/\1/p' \
		"$TMP/$1.log" | tail -1
}

# within FILE: at least one "ok" line, and every one has |offset| <= bound.
within() {
	awk '$1 == "ok" { n++; o = $3 < 0 ? -$3 : $3; if (o > $4) { print "# bad: " $0; bad++ } }
		END { exit !(n > 0 && !bad) }' "$1"
}

show() { sed 's/^/# /' "$@"; }

probe() {	# probe OUT ARGS...: source_probe in the slave namespace
	local out=$1
	shift
	ip netns exec "${P}s" "$PROBE" "$@" >"$out" 2>"$out.err"
}

# 1. 802.1AS Follow_Up information TLV (an ORGANIZATION_EXTENSION) on every
# Follow_Up: IEEE 1588 has a slave skip TLVs it does not know. (asCapable
# true: an 802.1AS port sends nothing until peer delays say it may.)
master fup "$(printf 'follow_up_info 1\nasCapable true')"
probe "$TMP/t1" -v -n 3 'ptp://eth0?timescale=arb'
r=$?
show "$TMP/t1"
sed 's/seq [0-9]* //' "$TMP/t1.err" | sort | uniq -c | sed 's/^/# /'
[ $r = 0 ] && within "$TMP/t1" && ! grep -q 'rejected.*TLV' "$TMP/t1.err"
ok $? "ptp:// from ptp4l with follow_up_info 1 (organization TLV): |offset| <= bound, no TLV rejected"

# 2. allow= lists the only masters considered (an acceptable master
# table): another identity hears no master, the master's own measures.
GM=$(gm_id fup)
probe "$TMP/t2a" -v -n 1 "ptp://eth0?allow=0a0b0c.fffe.0d0e0f&wait=2s&timescale=arb"
ra=$?
probe "$TMP/t2b" -n 2 "ptp://eth0?allow=0a0b0c.fffe.0d0e0f,$GM&timescale=arb"
rb=$?
show "$TMP/t2a" "$TMP/t2b"
sed 's/seq [0-9]* //' "$TMP/t2a.err" | sort | uniq -c | sed 's/^/# /'
[ -n "$GM" ] && [ $ra = 5 ] && grep -q 'not in allow=' "$TMP/t2a.err" &&
	[ $rb = 0 ] && within "$TMP/t2b"
ok $? "allow=: a master not listed is not followed, a listed one ($GM) is"

# 3. A grandmaster that says it is traceable, to within 100 us
# (clockAccuracy 0x27): its accuracy is part of the bound. Time is this
# machine's UTC, so the TAI - UTC it announces is 0.
master gm 'clockClass 248'
r=1
for i in $(seq 20); do
	ip netns exec "${P}m" pmc -u -b 0 -f "$TMP/gm.conf" -s "$TMP/gm.uds" \
		'SET GRANDMASTER_SETTINGS_NP clockClass 6 clockAccuracy 0x27 offsetScaledLogVariance 0xffff currentUtcOffset 0 leap61 0 leap59 0 currentUtcOffsetValid 1 ptpTimescale 1 timeTraceable 1 frequencyTraceable 1 timeSource 0x20' \
		2>&1 | grep -q 'timeTraceable *1' && r=0 && break
	sleep 0.25
done
sleep 1		# an Announce with the new quality
probe "$TMP/t3" -n 2 'ptp://eth0'
[ $? = 0 ] && [ $r = 0 ] && within "$TMP/t3" &&
	awk '$1 == "ok" && $4 < 100000 { bad++ } END { exit bad > 0 }' "$TMP/t3"
r=$?
show "$TMP/t3" "$TMP/t3.err"
ok $r "traceable grandmaster (clockClass 6, clockAccuracy 100 us): bound >= 100 us, |offset| <= bound"

# 4. linuxptp's defaults: clockClass 248, clockAccuracy unknown, and on a
# system clock an ARB timescale. Refused as a reference for UTC; taken as
# it is with timescale=arb.
master def ''
probe "$TMP/t4a" -n 1 'ptp://eth0'
ra=$?
probe "$TMP/t4b" -n 1 'ptp://eth0?timescale=arb'
rb=$?
show "$TMP/t4a" "$TMP/t4b"
[ $ra = 5 ] && grep -q 'not traceable' "$TMP/t4a" && [ $rb = 0 ] && within "$TMP/t4b"
ok $? "ptp4l's default grandmaster (clockClass 248, ARB): refused, but taken with timescale=arb"

exit $((failed > 0))
