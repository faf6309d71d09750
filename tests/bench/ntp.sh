#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NTP accuracy against chrony, on the same link in the same run: a chronyd
# (-x) serves this machine's clock in one network namespace; from another,
# "lclkctl query" (no module: it measures the system clock) and
# "chronyd -Q" measure it in alternating trials. Both clocks are one, so
# |offset| is the error. chronyd -Q prints microseconds, so medians below
# 0.5 us count as 0.5 us on both sides.
#
#   BENCH ntp.error_vs_chrony         median |error| ratio, plain veth (host)
#   BENCH ntp.error_vs_chrony_jitter  the same with netem jitter on both
#                                     directions (in the VM: the host has no netem)
#   BENCH ntp.time_to_sync_s          start of "lclkctl sync" to a synced
#                                     module, clock 5 s off (in the VM; TCG
#                                     makes it slower than real hardware)
# Extra lines: the medians themselves. TRIALS (default 20) trials each.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
TRIALS=${TRIALS:-20}
NTP_TAG=bn$$
. tests/integration/ntp_lib.sh
trap ntp_cleanup EXIT

median_abs() { python3 -c 'import sys,statistics; v=[abs(float(x)) for x in sys.stdin.read().split()]; print(statistics.median(v) if v else "nan")'; }

# trials NAME: TRIALS alternating measurements; prints the medians and the ratio.
trials() {
	local name=$1 ours=$NTP_DIR/ours theirs=$NTP_DIR/theirs i o c
	: > "$ours"
	: > "$theirs"
	for i in $(seq "$TRIALS"); do
		o=$(in_cli "$LCLKCTL" query --json "ntp://$NTP_V4" 2>/dev/null |
			jget 'd["combined"]["offset_ns"]' 2>/dev/null)
		c=$(in_cli timeout 30 chronyd -Q -t 10 -f /dev/null \
			"server $NTP_V4 iburst maxsamples 4" 2>&1 |
			sed -n 's/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p')
		[ -n "$o" ] && echo "$o" >> "$ours"
		[ -n "$c" ] && python3 -c "print($c * 1e9)" >> "$theirs"
	done
	o=$(median_abs < "$ours")
	c=$(median_abs < "$theirs")
	echo "BENCH $name.lclkctl_median_ns $o"
	echo "BENCH $name.chrony_median_ns $c"
	python3 -c "print('BENCH $name %.3f' % (max($o, 500) / max($c, 500)))"
}

if [ "${1:-}" = --guest ]; then
	ntp_setup && ntp_start_chronyd && ntp_wait_server || exit 1
	# 300 us +- 300 us each way (uniform-ish), so single samples are asymmetric.
	in_srv tc qdisc add dev "v$NTP_TAG" root netem delay 300us 300us
	in_cli tc qdisc add dev "w$NTP_TAG" root netem delay 300us 300us
	trials ntp.error_vs_chrony_jitter | sed 's/ntp.error_vs_chrony_jitter\./ntp.jitter./'
	in_srv tc qdisc del dev "v$NTP_TAG" root
	in_cli tc qdisc del dev "w$NTP_TAG" root
	[ -c /dev/lclk0 ] || insmod kmod/lclk.ko || exit 1
	times=$NTP_DIR/times
	for i in 1 2 3; do
		# 5 s behind and unsynchronised: sync has to step it forward.
		"$LCLKCTL" set --realtime --unsync --allow-backward &&
			"$LCLKCTL" step --allow-backward -- -5s || exit 1
		t0=$(date +%s%N)
		in_cli "$LCLKCTL" sync "ntp://$NTP_V4" > /dev/null || exit 1
		t1=$(date +%s%N)
		"$LCLKCTL" status --json | jget 'd["status"]' | grep -qx synced ||
			{ echo "ntp bench: not synced after sync" >&2; exit 1; }
		echo $(( t1 - t0 )) >> "$times"
	done
	python3 -c "import statistics; print('BENCH ntp.time_to_sync_s %.3f' % (statistics.median([int(x) for x in open('$times')]) / 1e9))"
	exit 0
fi

ntp_setup && ntp_start_chronyd && ntp_wait_server || { echo "ntp bench: no server" >&2; exit 1; }
trials ntp.error_vs_chrony | sed 's/ntp.error_vs_chrony\./ntp.plain./'
ntp_cleanup
trap - EXIT
if [ -x tests/vm/vm-run ] && [ -f kmod/lclk.ko ]; then
	tests/vm/vm-run -s 2 -t 900 -- "TRIALS=$TRIALS tests/bench/ntp.sh --guest" | grep '^BENCH'
else
	echo "ntp bench: no VM test bed or module: jitter and time to sync not measured" >&2
fi
