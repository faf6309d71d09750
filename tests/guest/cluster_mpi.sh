#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cluster view on Open MPI, in the VM: four network namespaces on a
# bridge are four hosts (tests/guest/lib/cluster.bash), host N stamping
# with /dev/lclkN (the module is reloaded with instances=4 if it has
# fewer). Host 0's clock is the reference, served by lclkctl serve; hosts
# 1-3 follow it with lclkctl daemon (peer 10.77.0.1). mpirun, in the root
# namespace, starts one rank per host through an rsh agent that enters the
# host's namespace and cgroup; the ranks run MPI_Allreduce over Open MPI's
# TCP transport (recursive doubling: every pair's traffic goes both ways),
# rank 3 arriving LATE_MS late to each. Each host's lclkctl trace
# --messages follows the ranks in its cgroup (not orted), started once
# their first collective has connected them: that one also waits for
# whichever rank mpirun started last, a straggler of another kind. The ranks
# busy-poll, which the trace turns into waits (--spin-gap 1s: under TCG
# the host takes a vCPU away for tens of ms at a time, unseen by the
# guest's scheduler, and a run cut there loses its wait; the ranks do no
# work between polls to mistake for waiting). Then trace merge, with the
# times TCG needs: a rank released forwards up to tens of ms later (--link
# 50ms), and waits under 200 ms, half the lateness, are the emulator's
# stalls, not the job's (--min-wait 200ms):
#  - synced by the daemons: rank 3 is the straggler in >= 95 % of rounds,
#    certain, no causality violation, no pair flagged;
#  - /dev/lclk3 (its daemon stopped) stepped 3 ms ahead, claiming 10 us:
#    host 3's pairs' intervals hold the 3 ms, host 3's pairs flagged LYING
#    (those its traffic can tell) and no other, with violations;
#  - 3 ms ahead with an honest 5 ms bound: no violation, no pair flagged,
#    and messages to and from host 3 ordered ambiguous.
# Also chronyd's bound on the same link, for tests/bench/cluster_vm.sh.
# Under TCG a rank sometimes stalls for want of a CPU: QEMU runs the vCPUs
# in turn, up to 100 ms each, and four busy-polling ranks keep theirs busy.
# That is a straggler too, and the merge blames it: with LATE_MS 200 and
# --min-wait 50ms, 5 to 8 % of the rounds (stalls of 57 to 270 ms, most
# under 100) and the share fell below 95 % in three runs of ten. So the slowed
# one is slowed by much more (LATE_MS 400); with --min-wait 100ms the share
# still fell to 0.935 once (host 0 last in 6 rounds of 124), on a CI run
# beside other work on the host, hence half the lateness. On a slower test bed
# (LCLK_TIME_SCALE, 4 on the debug kernel) every delay grows, and with it
# the lateness, the merge's times, the offset (OFF_MS, 3) and the honest
# bound (5 ms): all are multiplied by the scale. Runs as root; TAP.
set -uo pipefail
cd "${LCLK_REPO:-.}"

lclkctl=build/lclkctl
scale=${LCLK_TIME_SCALE:-1}
N=4 ROUNDS=${ROUNDS:-40} LATE_MS=${LATE_MS:-$((400 * scale))} COUNT=${COUNT:-64}
OFF_MS=$((3 * scale)) LOOSE_MS=$((5 * scale))
dir=$(mktemp -d /tmp/lclk-cluster-mpi.XXXXXX)
# shellcheck source=tests/guest/lib/cluster.bash
. tests/guest/lib/cluster.bash
cluster_test $N "$dir"

echo "TAP version 13"
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
	echo "1..0 # SKIP Open MPI is not installed (make deps)"
	exit 0
fi
cluster_need_messages
cluster_instances $N || { echo "not ok 1 - the module reloaded with instances=$N"; exit 1; }
cluster_up $N || { echo "not ok 1 - $N hosts on a bridge"; exit 1; }
mpicc -O2 -Wall -Wextra -Werror tests/integration/mpi_allreduce.c -o "$dir/lclk_allreduce" ||
	{ echo "not ok 1 - mpicc builds the allreduce loop"; exit 1; }

# mpirun's rsh agent: "HOST CMD..." runs CMD on the host with that address.
cat >"$dir/agent" <<EOA
#!/bin/bash
host=\$1
shift
. $PWD/tests/guest/lib/cluster.bash
cluster_exec \$((\${host##*.} - 1)) sh -c "\$*"
EOA
chmod +x "$dir/agent"

# ---- the clocks: host 0 the reference, served; the others follow it -------
$lclkctl -d /dev/lclk0 set --realtime --bound 10us --max-drift 0 --holdover 1h \
	--allow-backward >/dev/null || exit 1
(cluster_exec 0 $lclkctl -d /dev/lclk0 serve -a "$CLUSTER_NET.1" -p 123 -u root \
	--allow "$CLUSTER_NET.0/24" --rate 100 --burst 50 >"$dir/serve.log" 2>&1) &
pids+=($!)
daemons=()
for i in 1 2 3; do
	cat >"$dir/lclk$i.conf" <<-EOC
	device /dev/lclk$i
	peer $CLUSTER_NET.1
	poll 500ms 1s
	fastpolls 4
	samples 4 50ms 300ms
	holdover 1h
	maxdrift 100ppm
	control $dir/ctl$i.sock
	metrics off
	log info
	EOC
	(cluster_exec "$i" $lclkctl daemon -c "$dir/lclk$i.conf" >"$dir/daemon$i.log" 2>&1) &
	daemons[i]=$!
	pids+=($!)
done
bound_ns() { $lclkctl -d "/dev/lclk$1" --json status | grep -oE '"bound_ns":[0-9]+' | head -1 | cut -d: -f2; }
synced() { $lclkctl -d "/dev/lclk$1" --json status 2>/dev/null | grep -q '"status":"synced"'; }
all_synced() { synced 1 && synced 2 && synced 3; }
check "hosts 1-3 synchronised by their daemons to host 0's lclkctl serve" wait_for 90 all_synced
# The daemons' bounds, for tests/bench/cluster_vm.sh: their median.
for i in 1 2 3; do bound_ns $i; done | sort -n | sed -n 2p | awk '{ printf "# the daemons: median bound %.1f us\nBENCH_lclk_bound_us %.1f\n", $1 / 1e3, $1 / 1e3 }'

# chronyd's bound on the same link, beside the daemons': chronyd -x (it
# never touches the clock) on host 2 as a client of host 0's serve; its
# tracking log's last column is its maximum error (root delay / 2 + root
# dispersion), the median of its last 5 updates.
cat >"$dir/chrony.conf" <<EOC
server $CLUSTER_NET.1 minpoll 0 maxpoll 0 iburst
port 0
cmdport 0
pidfile $dir/chronyd.pid
logdir $dir
log tracking
EOC
(cluster_exec 2 chronyd -x -d -u root -f "$dir/chrony.conf" >"$dir/chronyd.log" 2>&1) &
pids+=($!)
tracked() { [ -s "$dir/tracking.log" ] && [ "$(grep -cE '^[0-9]{4}-' "$dir/tracking.log")" -ge 8 ]; }
if wait_for 90 tracked; then
	chrony_us=$(grep -E '^[0-9]{4}-' "$dir/tracking.log" | tail -5 | awk '{ print $NF * 1e6 }' |
		sort -g | sed -n 3p)
	echo "# chronyd on host 2's link: max error ${chrony_us} us (median of its last 5 updates)"
	echo "BENCH_chronyd_bound_us $chrony_us"
else
	echo "# chronyd on host 2's link: no clock update in time"
	sed 's/^/# chronyd: /' "$dir/chronyd.log" | tail -5
fi
kill -TERM "${pids[-1]}"

# mpirun_ranks OUT ONCE_READY: the allreduce job, its output into OUT. Its
# ranks connect first (mpi_allreduce.c, GO_DIR): once all four are ready,
# ONCE_READY runs (it starts the traces), and then they begin their rounds;
# if it fails, the job is ended: status 125. A job takes under a minute;
# twice (CI on 6.12, a loaded 6.1 guest), both times in the third job, its
# ranks sent no byte and mpirun printed nothing until killed 300 s later
# (cause not known). So after MPI_LIMIT_S (default 180 s, times
# LCLK_TIME_SCALE) the job's processes are shown, with where each sleeps,
# and it is ended: status 124.
mpirun_ranks() {
	local out=$1 once_ready=$2 job p limit=$((${MPI_LIMIT_S:-180} * ${LCLK_TIME_SCALE:-1})) end
	rm -rf "$dir/go.d"
	mkdir "$dir/go.d"
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np $N \
		--host "$CLUSTER_NET.1,$CLUSTER_NET.2,$CLUSTER_NET.3,$CLUSTER_NET.4" \
		--mca plm_rsh_agent "$dir/agent" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include "$CLUSTER_NET.0/24" \
		--mca oob_tcp_if_include "$CLUSTER_NET.0/24" \
		--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm 3 \
		"$dir/lclk_allreduce" "$ROUNDS" 3 "$LATE_MS" "$COUNT" "$dir/go.d" >"$out" 2>&1 &
	job=$!
	end=$((SECONDS + limit))
	while kill -0 $job 2>/dev/null && [ $SECONDS -lt $end ] && ! cluster_ready "$dir/go.d" $N; do
		sleep 1
	done
	if kill -0 $job 2>/dev/null && [ $SECONDS -lt $end ]; then
		if ! $once_ready; then
			mpirun_end $job
			return 125
		fi
		touch "$dir/go.d/go"
	fi
	while kill -0 $job 2>/dev/null && [ $SECONDS -lt $end ]; do sleep 1; done
	if kill -0 $job 2>/dev/null; then
		echo "# mpirun still running after $limit s:"
		for p in $(pgrep -x mpirun; pgrep -x orted; pgrep -x lclk_allreduce); do
			echo "#   $p: $(grep -sh '^State' "/proc/$p/status")" \
				"$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-60)"
			sed "s/^/#     $p stack: /" "/proc/$p/stack" 2>/dev/null | head -8
		done
		mpirun_end $job
		return 124
	fi
	wait $job
}

# mpirun_end PID: the job of mpirun PID killed, ranks and all.
mpirun_end() {
	pkill -KILL -x orted
	pkill -KILL -x lclk_allreduce
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# start_traces CASE: lclkctl trace on the four hosts, their pids added to
# tracers (trace_job empties it).
start_traces() {
	local c=$1 i
	for i in $(seq 0 $((N - 1))); do
		$lclkctl -d "/dev/lclk$i" trace --cgroup "/sys/fs/cgroup/lclk-cl$i" \
			--comm lclk_allreduce --messages --threshold 500us --spin-gap 1s --trace-out "$dir/$c/host$i.pftrace" \
			>"$dir/$c/trace$i.out" 2>"$dir/$c/trace$i.err" &
		tracers+=($!)
		pids+=($!)
	done
	for i in $(seq 0 $((N - 1))); do
		wait_for 300 grep -q '^Tracing' "$dir/$c/trace$i.err" ||
			{ echo "# host $i's trace did not start:"; sed 's/^/#   /' "$dir/$c/trace$i.err"; return 1; }
	done
}

# trace_job CASE: the job, traced on the four hosts from the end of its
# first collective: mpirun_ranks' status.
trace_job() {
	local c=$1 rc
	rm -rf "${dir:?}/$c"
	mkdir -p "$dir/$c"
	tracers=()
	mpirun_ranks "$dir/$c/mpirun.out" "start_traces $c"
	rc=$?
	if [ ${#tracers[@]} -gt 0 ]; then
		kill -TERM "${tracers[@]}"
		wait "${tracers[@]}"
	fi
	sed 's/^/# mpirun: /' "$dir/$c/mpirun.out" | head -20
	grep -hsv '^Tracing' "$dir/$c"/trace*.err | sed 's/^/# trace: /'
	return $rc
}

# run CASE [OFFSET_NS SLACK_NS]: the traced job (once more, traces and
# all, if it hung); its traces merged into CASE.json, the verdicts
# (cluster_verdict.py, given the rest) into CASE.v.
run() {
	local c=$1 rc
	shift
	trace_job "$c"
	rc=$?
	if [ $rc -eq 124 ]; then
		echo "# $c: the job once more"
		trace_job "$c"
		rc=$?
	fi
	if [ $rc -ne 0 ]; then
		echo "# mpirun exited with status $rc"
		return 1
	fi
	$lclkctl --json trace merge --link $((50 * scale))ms --min-wait $((LATE_MS / 2))ms \
		"$dir/$c"/host*.pftrace \
		-o "$dir/$c/cluster.pftrace" >"$dir/$c.json" &&
		python3 tests/guest/lib/cluster_verdict.py "$dir/$c.json" "$c" host3 "$@" |
		tee "$dir/$c.v"
}

# bench CASE: "SHARE CERTAIN VIOLATIONS AMBIGUOUS FLAGGED MATCHED".
bench() { grep "^BENCH_$1 " "$dir/$1.v" | cut -d' ' -f2-; }
# offset CASE: "PAIRS HELD", host 3's pairs and those whose interval held its offset.
offset() { grep "^OFFSET_$1 " "$dir/$1.v" | cut -d' ' -f2-; }

# run_lying SLACK_NS: the lying case, once more (up to twice) when its
# traffic could not tell. A pair is caught only when its interval clears the
# bounds: when the fastest message from host 3 took under OFF_MS minus them.
# Under TCG a message waits for its reader's vCPU to have its turn, and in
# one run of ten no message of either of host 3's pairs took under
# 3 ms (intervals 8 to 10 ms wide, host 0 and 1's too). Once more only when
# no pair is flagged and every interval holds the offset: the check could
# not tell, it was not wrong.
run_lying() {
	local try pairs held
	for try in 1 2 3; do
		run lying $((OFF_MS * 1000000)) "$1" || return 1
		read -r pairs held < <(offset lying)
		[ "$(bench lying | cut -d' ' -f5)" = - ] && [ "${pairs:-0}" -gt 0 ] &&
			[ "$held" = "$pairs" ] || return 0
		echo "# lying: no message of host 3's fast enough to tell $OFF_MS ms from its claim (run $try)"
	done
}

check "synced: $ROUNDS allreduce rounds across $N hosts, correct sums" run honest
read -r share certain viol _ flagged matched < <(bench honest)
check "synced: the hosts' TCP messages recorded and matched (${matched:-0})" test "${matched:-0}" -gt 0
check "synced: rank 3 is the straggler in >= 95% of rounds (${share:-})" \
	python3 -c "import sys; sys.exit(not ${share:-0} >= 0.95)"
check "synced: its orderings are certain (${certain:-})" \
	python3 -c "import sys; sys.exit(not ${certain:-0} >= 0.95)"
check "synced: no causality violation (${viol:-}), no pair flagged (${flagged:-})" \
	test "${viol:-1}" -eq 0 -a "${flagged:-}" = -
check_perfetto mpi "$dir/honest/cluster.pftrace" "$dir/honest"/host*.pftrace

# Host 3 on its own from here: its daemon stopped, its clock set by hand.
kill -TERM "${daemons[3]}"
wait "${daemons[3]}" 2>/dev/null
# Its error before the step, within its bound: the slack of the offset check.
slack=$(bound_ns 3)
$lclkctl -d /dev/lclk3 step -- ${OFF_MS}ms >/dev/null &&
	$lclkctl -d /dev/lclk3 set --bound 10us --max-drift 0 >/dev/null &&
	check "$OFF_MS ms off claiming 10 us: the allreduce runs" run_lying "${slack:-0}"
read -r _ _ viol _ flagged _ < <(bench lying)
read -r pairs held < <(offset lying)
check "$OFF_MS ms off claiming 10 us: host3's pairs' intervals hold its offset (${held:-0} of ${pairs:-0})" \
	test "${pairs:-0}" -gt 0 -a "${held:-}" = "${pairs:-}"
check "$OFF_MS ms off claiming 10 us: host3's pairs flagged and no other (${flagged:-}), violations (${viol:-})" \
	python3 -c "import sys; f = '${flagged:--}'.split(','); sys.exit(not (f != ['-'] and
		all(p.endswith('-host3') for p in f) and ${viol:-0} > 0))"
# A pair is caught only when the traffic's interval clears the bounds: the
# fastest message from host 3 must take under OFF_MS minus the bounds.
todo "$OFF_MS ms off claiming 10 us: both of host3's pairs flagged (${flagged:-})" \
	"under TCG the fastest message of a pair can take $OFF_MS ms, and then $OFF_MS ms cannot be told apart" \
	test "${flagged:-}" = "host1-host3,host2-host3"
$lclkctl -d /dev/lclk3 set --bound ${LOOSE_MS}ms --max-drift 0 >/dev/null &&
	check "$OFF_MS ms off with a $LOOSE_MS ms bound: the allreduce runs" run loose
read -r _ _ viol ambiguous flagged _ < <(bench loose)
check "$OFF_MS ms off with a $LOOSE_MS ms bound: no violation (${viol:-}), no pair flagged (${flagged:-})" \
	test "${viol:-1}" -eq 0 -a "${flagged:-}" = -
check "$OFF_MS ms off with a $LOOSE_MS ms bound: host3's messages ordered ambiguous (${ambiguous:-})" \
	test "${ambiguous:-0}" -gt 0
echo "1..$n"
