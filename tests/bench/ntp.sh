#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# NTP accuracy against chrony, on the same link in the same run: a chronyd
# (-x) serves this machine's clock in one network namespace; from another,
# "lclkctl query" (no module: it measures the system clock) and
# "chronyd -Q" measure it in alternating trials. Both clocks are one, so
# |offset| is the error. chronyd -Q prints microseconds, so medians below
# 0.5 us count as 0.5 us on both sides.
#
# lclkctl asks chronyd in interleaved mode (ntp_client.c); chronyd -Q as
# configured by default does not. Its "xleave" option does, so the same
# trials also run chronyd -Q with xleave: the like-for-like figure.
#
#   BENCH ntp.error_vs_chrony         median |error| ratio, plain veth (host)
#   BENCH ntp.error_vs_chrony_xleave  the same against chronyd -Q with xleave
#   BENCH ntp.error_vs_chrony_jitter  the same with netem jitter on both
#                                     directions, in a router between the two
#                                     (in the VM: the host has no netem); in
#                                     either end's qdisc, kernel timestamps
#                                     would see through it
#   BENCH ntp.error_vs_chrony_jitter_xleave
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

# chrony_q [OPTION]: one chronyd -Q measurement of $SERVER, in ns.
chrony_q() {
	local c
	c=$(in_cli timeout 30 chronyd -Q -t 10 -f /dev/null \
		"server $SERVER iburst maxsamples 4 $*" 2>&1 |
		sed -n 's/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p')
	[ -n "$c" ] && python3 -c "print($c * 1e9)"
}

# ratio NAME OURS THEIRS: the BENCH line of two medians.
ratio() { python3 -c "print('BENCH $1 %.3f' % (max($2, 500) / max($3, 500)))"; }

# SERVER=ADDR trials NAME: TRIALS alternating measurements of ADDR; prints the medians and ratios.
trials() {
	local name=$1 ours=$NTP_DIR/ours theirs=$NTP_DIR/theirs xl=$NTP_DIR/xleave i o c x
	: > "$ours"
	: > "$theirs"
	: > "$xl"
	for i in $(seq "$TRIALS"); do
		in_cli "$LCLKCTL" query --json "ntp://$SERVER" 2>/dev/null |
			jget 'd["combined"]["offset_ns"]' >> "$ours" 2>/dev/null
		chrony_q >> "$theirs"
		chrony_q xleave >> "$xl"
	done
	o=$(median_abs < "$ours")
	c=$(median_abs < "$theirs")
	x=$(median_abs < "$xl")
	echo "BENCH $name.lclkctl_median_ns $o"
	echo "BENCH $name.chrony_median_ns $c"
	echo "BENCH $name.chrony_xleave_median_ns $x"
	ratio "$name" "$o" "$c"
	ratio "${name}_xleave" "$o" "$x"
}

if [ "${1:-}" = --guest ]; then
	ntp_setup && ntp_start_chronyd && ntp_wait_server || exit 1
	# 300 us +- 300 us each way (uniform-ish), so single samples are asymmetric.
	ntp_setup_router || exit 1
	in_rtr tc qdisc add dev "$NTP_RTR_TO_SRV" root netem delay 300us 300us
	in_rtr tc qdisc add dev "$NTP_RTR_TO_CLI" root netem delay 300us 300us
	SERVER=$NTP_V4_ROUTED trials ntp.error_vs_chrony_jitter |
		sed 's/ntp.error_vs_chrony_jitter\./ntp.jitter./'
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
SERVER=$NTP_V4 trials ntp.error_vs_chrony | sed 's/ntp.error_vs_chrony\./ntp.plain./'
ntp_cleanup
trap - EXIT
if [ -x tests/vm/vm-run ] && [ -f kmod/lclk.ko ]; then
	tests/vm/vm-run -s 2 -t 900 -- "TRIALS=$TRIALS tests/bench/ntp.sh --guest" | grep '^BENCH'
else
	echo "ntp bench: no VM test bed or module: jitter and time to sync not measured" >&2
fi
