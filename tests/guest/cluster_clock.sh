#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cluster view end to end, in the VM: four network namespaces on a
# bridge are four hosts (tests/guest/lib/cluster.bash), host N stamping
# with /dev/lclkN (the module is reloaded with instances=4 if it has
# fewer). Each runs one rank of tests/guest/cluster_ring.py (a chunk to
# each ring neighbour a round, over TCP); rank 3 sleeps SLEEP_MS before
# each round. Each host's lclkctl trace --messages follows its own cgroup.
# Then trace merge:
#  - honest clocks (all four set from CLOCK_REALTIME, 10 us bounds): rank 3
#    is the straggler in >= 95 % of rounds, certain; no violation, no pair
#    flagged;
#  - /dev/lclk3 stepped 3 ms ahead, still claiming 10 us: exactly the pairs
#    with host 3 flagged LYING, with violations;
#  - 3 ms ahead with an honest 5 ms bound: no violation, no pair flagged,
#    messages to and from host 3 ordered ambiguous.
# The instances are set directly (lclkctl set), not by daemons (that is
# tests/guest/cluster_mpi.sh): the three cases need one clock wrong by a
# known amount. Runs as root; TAP.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
N=4 ROUNDS=${ROUNDS:-40} SLEEP_MS=${SLEEP_MS:-200}
dir=$(mktemp -d /tmp/lclk-cluster.XXXXXX)
# shellcheck source=tests/guest/lib/cluster.bash
. tests/guest/lib/cluster.bash
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	cluster_down $N
	rm -rf "$dir"
}
trap cleanup EXIT

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

echo "TAP version 13"
if ! $lclkctl trace --messages --trace-out "$dir/probe.pftrace" --duration 100ms \
	>/dev/null 2>"$dir/probe.err"; then
	why=$(sed -n 's/^lclkctl trace: --messages needs //p' "$dir/probe.err")
	echo "1..0 # SKIP --messages needs ${why:-$(cat "$dir/probe.err")}"
	exit 0
fi
cluster_instances $N || { echo "not ok 1 - the module reloaded with instances=$N"; exit 1; }
cluster_up $N || { echo "not ok 1 - $N hosts on a bridge"; exit 1; }

# set_clocks OFFSET3 BOUND3: all instances from CLOCK_REALTIME with a 10 us
# bound that does not grow, then /dev/lclk3 moved by OFFSET3 with BOUND3.
set_clocks() {
	local i
	for i in $(seq 0 $((N - 1))); do
		$lclkctl -d "/dev/lclk$i" set --realtime --bound 10us --max-drift 0 \
			--holdover 1h --allow-backward >/dev/null || return 1
	done
	$lclkctl -d /dev/lclk3 step --allow-backward -- "$1" >/dev/null &&
		$lclkctl -d /dev/lclk3 set --bound "$2" >/dev/null
}

# run CASE: trace the four hosts while the ranks run; merge into CASE.json.
run() {
	local c=$1 i t=() r=()
	for i in $(seq 0 $((N - 1))); do
		$lclkctl -d "/dev/lclk$i" trace --cgroup "/sys/fs/cgroup/lclk-cl$i" --messages \
			--threshold 500us --trace-out "$dir/$c/host$i.pftrace" \
			>"$dir/$c/trace$i.out" 2>"$dir/$c/trace$i.err" &
		t+=($!)
		pids+=($!)
	done
	for i in $(seq 0 $((N - 1))); do
		for _ in $(seq 600); do
			grep -q '^Tracing' "$dir/$c/trace$i.err" && break
			sleep 0.1
		done
	done
	for i in $(seq 0 $((N - 1))); do
		(cluster_exec "$i" python3 tests/guest/cluster_ring.py \
			"$i" $N "$ROUNDS" 3 "$SLEEP_MS" "$CLUSTER_NET") >"$dir/$c/rank$i.out" 2>&1 &
		r+=($!)
		pids+=($!)
	done
	wait "${r[@]}"
	kill -TERM "${t[@]}"
	wait "${t[@]}"
	grep -h 'message records\|lost' "$dir/$c"/trace*.err | sed 's/^/# /'
	grep -hv '^rank . done' "$dir/$c"/rank*.out | sed 's/^/# rank: /'
	grep -hv '^Tracing\|message records' "$dir/$c"/trace*.err | sed 's/^/# trace: /'
	# TCG: a rank forwards well over 1 ms after its wait ends.
	$lclkctl --json trace merge --link 20ms "$dir/$c"/host*.pftrace -o "$dir/$c/cluster.pftrace" \
		>"$dir/$c.json"
}

# verdict CASE: the report's verdicts, logged (tests/bench/cluster_vm.sh
# reads the BENCH_ lines) and kept in CASE.v for the checks.
verdict() {
	python3 tests/guest/lib/cluster_verdict.py "$dir/$1.json" "$1" host3 | tee "$dir/$1.v"
}
# bench CASE: "SHARE CERTAIN VIOLATIONS AMBIGUOUS FLAGGED MATCHED".
bench() { grep "^BENCH_$1 " "$dir/$1.v" | cut -d' ' -f2-; }

for c in honest lying loose; do mkdir -p "$dir/$c"; done
set_clocks 0 10us && run honest && verdict honest
read -r share certain viol _ flagged matched < <(bench honest)
set_clocks 3ms 10us && run lying && verdict lying
read -r _ _ lying_viol _ lying_flagged _ < <(bench lying)
set_clocks 3ms 5ms && run loose && verdict loose
read -r _ _ loose_viol ambiguous loose_flagged _ < <(bench loose)

check "honest: the hosts' TCP messages recorded and matched (${matched:-0})" test "${matched:-0}" -gt 0
check "honest: rank 3 is the straggler in >= 95% of rounds (${share:-})" \
	python3 -c "import sys; sys.exit(not ${share:-0} >= 0.95)"
check "honest: its orderings are certain (${certain:-})" \
	python3 -c "import sys; sys.exit(not ${certain:-0} >= 0.95)"
check "honest: no causality violation (${viol:-}), no pair flagged (${flagged:-})" \
	test "${viol:-1}" -eq 0 -a "${flagged:-}" = -
check "3 ms off claiming 10 us: exactly host3's pairs flagged (${lying_flagged:-}), violations (${lying_viol:-})" \
	test "${lying_flagged:-}" = "host0-host3,host2-host3" -a "${lying_viol:-0}" -gt 0
check "3 ms off with a 5 ms bound: no violation (${loose_viol:-}), no pair flagged (${loose_flagged:-})" \
	test "${loose_viol:-1}" -eq 0 -a "${loose_flagged:-}" = -
check "3 ms off with a 5 ms bound: host3's messages ordered ambiguous (${ambiguous:-})" \
	test "${ambiguous:-0}" -gt 0
echo "1..$n"
