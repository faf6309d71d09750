#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PTP slave accuracy: lclkctl's ptp:// slave and a ptp4l slave (free_running)
# measure the same ptp4l master over one veth link, with software
# timestamps, for BENCH_PTP_SECONDS (default 60). Everything shares this
# machine's clock, so |offset| is each one's error. Prints the ratios of
# lclkctl's median and 99th percentile error to ptp4l's (<= 1 is as good).
# Both slaves obey the master's logMinDelayReqInterval: -3 by default,
# one Delay_Req per Sync; BENCH_PTP_DREQ_LOG=0 allows one a second, the
# default profile's rate, so that most Syncs take a filtered delay. The
# window opens only once ptp4l reports offsets from a measured delay.
# ptp4l's offsets are per Sync while each lclkctl measurement is a burst:
# ptp.error_vs_ptp4l_burst_* compare with the median of ptp4l's offsets
# over as many Syncs as lclkctl's bursts use.
# Then, in the VM if the module is built: PHC read window and cost of the
# phc: source on the module's PHC, and phc2sys's reported delay.
set -u
cd "$(dirname "$0")/../.."
PROBE=build/tests/bench/source_probe
SECS=${BENCH_PTP_SECONDS:-60}
DREQ_LOG=${BENCH_PTP_DREQ_LOG:--3}
P=bp$$
TMP=$(mktemp -d /tmp/lclk-bench-ptp.XXXXXX)
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	ip netns del "${P}m" 2>/dev/null
	ip netns del "${P}s" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
[ -x "$PROBE" ] && command -v ptp4l >/dev/null || { echo "# needs $PROBE and ptp4l" >&2; exit 1; }

ip netns add "${P}m" && ip netns add "${P}s"
ip link add "${P}m" type veth peer name "${P}s"
ip link set "${P}m" netns "${P}m"
ip link set "${P}s" netns "${P}s"
ip -n "${P}m" addr add 10.78.0.1/24 dev "${P}m"
ip -n "${P}s" addr add 10.78.0.2/24 dev "${P}s"
ip -n "${P}m" link set "${P}m" up
ip -n "${P}s" link set "${P}s" up

for r in m s; do
	printf '[global]\ntime_stamping software\nfree_running 1\nlogSyncInterval -3\nlogAnnounceInterval -2\nlogMinDelayReqInterval %s\nuds_address %s/%s.uds\n' \
		"$DREQ_LOG" "$TMP" "$r" >"$TMP/$r.conf"
done
echo 'slaveOnly 1' >>"$TMP/s.conf"
ip netns exec "${P}m" ptp4l -4 -i "${P}m" -m -f "$TMP/m.conf" >"$TMP/m.log" 2>&1 &
PIDS+=($!)
ip netns exec "${P}s" ptp4l -4 -i "${P}s" -m -f "$TMP/s.conf" >"$TMP/s.log" 2>&1 &
PIDS+=($!)
pmc_status() {
	ip netns exec "${P}s" pmc -u -b 0 -f "$TMP/s.conf" -s "$TMP/s.uds" 'GET TIME_STATUS_NP'
}
# master_offset stays 0 until ptp4l has a path delay; then let its delay
# filter (10 exchanges) fill.
for i in $(seq 100); do
	pmc_status 2>/dev/null | awk '$1 == "master_offset" && $2 != 0 { f = 1 } END { exit !f }' && break
	sleep 0.2
done
sleep 2
# A free_running ptp4l logs no offsets: read each Sync's from TIME_STATUS_NP.
(end=$((SECONDS + SECS)); while [ $SECONDS -lt $end ]; do
	pmc_status
	sleep 0.05
done) 2>/dev/null | awk '$1 == "master_offset" { o = $2 } $1 == "ingress_time" { print $2, o }' >"$TMP/pmc" &
PIDS+=($!)
ip netns exec "${P}s" "$PROBE" -t "$SECS" "ptp://${P}s?timescale=arb" >"$TMP/ours" 2>&1
wait "${PIDS[-1]}"

sort -u -k1,1 "$TMP/pmc" | awk '$2 != 0 || $1 != 0 { print $2 }' >"$TMP/theirs"
awk '{ print ($1 < 0 ? -$1 : $1) }' "$TMP/theirs" | sort -n >"$TMP/theirs.err"
awk '$1 == "ok" { print ($3 < 0 ? -$3 : $3) }' "$TMP/ours" | sort -n >"$TMP/ours.err"
pct() { awk -v p="$2" '{ v[NR] = $1 } END { i = int(NR * p); if (i < 1) i = 1; print v[i] }' "$1"; }
no=$(wc -l <"$TMP/ours.err")
nt=$(wc -l <"$TMP/theirs.err")
if [ "$no" -lt 10 ] || [ "$nt" -lt 10 ]; then
	echo "# too few samples: lclkctl $no, ptp4l $nt" >&2
	exit 1
fi
om=$(pct "$TMP/ours.err" 0.5); op=$(pct "$TMP/ours.err" 0.99)
tm=$(pct "$TMP/theirs.err" 0.5); tp=$(pct "$TMP/theirs.err" 0.99)
echo "# ${SECS}s: lclkctl $no measurements, |offset| median $om ns, p99 $op ns"
echo "# ${SECS}s: ptp4l $nt offsets, |master offset| median $tm ns, p99 $tp ns"
awk -v a="$om" -v b="$tm" 'BEGIN { printf "BENCH ptp.error_vs_ptp4l_median %.3f\n", a / (b > 0 ? b : 1) }'
awk -v a="$op" -v b="$tp" 'BEGIN { printf "BENCH ptp.error_vs_ptp4l_p99 %.3f\n", a / (b > 0 ? b : 1) }'
# ptp4l's offsets medianed over groups of as many Syncs as lclkctl's
# measurements used (the median of their exchange counts).
burst=$(awk '$1 == "ok" { print $9 }' "$TMP/ours" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
awk -v n="$burst" '{ g[++k] = $1 } k == n {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && g[j - 1] > g[j]; j--) { t = g[j]; g[j] = g[j - 1]; g[j - 1] = t }
	m = n % 2 ? g[(n + 1) / 2] : (g[n / 2] + g[n / 2 + 1]) / 2
	print (m < 0 ? -m : m); k = 0 }' "$TMP/theirs" | sort -n >"$TMP/theirs.burst"
if [ "$(wc -l <"$TMP/theirs.burst")" -ge 10 ]; then
	bm=$(pct "$TMP/theirs.burst" 0.5); bp=$(pct "$TMP/theirs.burst" 0.99)
	echo "# ${SECS}s: ptp4l medians of $burst offsets: |master offset| median $bm ns, p99 $bp ns"
	awk -v a="$om" -v b="$bm" 'BEGIN { printf "BENCH ptp.error_vs_ptp4l_burst_median %.3f\n", a / (b > 0 ? b : 1) }'
	awk -v a="$op" -v b="$bp" 'BEGIN { printf "BENCH ptp.error_vs_ptp4l_burst_p99 %.3f\n", a / (b > 0 ? b : 1) }'
fi

# PHC reads on the module's PHC in the VM, against phc2sys's delay.
if [ -x tests/vm/vm-run ] && [ -f kmod/lclk.ko ] && [ -x build/tests/bench/phc_read ]; then
	tests/vm/vm-run -s 2 -t 120 -- 'insmod kmod/lclk.ko instances=2 &&
		build/tests/bench/phc_read /dev/ptp1 2000 &&
		timeout 5 phc2sys -s /dev/ptp1 -c /dev/ptp0 -O 0 -R 4 -m 2>&1 |
		awk "/delay/ { d = \$NF } END { print \"BENCH ptp.phc2sys_delay_ns \" d }"' 2>&1 |
		grep -E '^(BENCH|# /dev)' | tr -d '\r'
fi
exit 0
