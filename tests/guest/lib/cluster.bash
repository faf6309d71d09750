# SPDX-License-Identifier: GPL-2.0
# Sourced by the cluster view's guest tests (tests/guest/cluster_*.sh): N
# network namespaces lclk-cl0..N-1 on a bridge are N hosts, host i at
# 10.77.0.(i+1) with its own cgroup /sys/fs/cgroup/lclk-cli, stamping with
# /dev/lclki. A test calls cluster_test first; sourcing alone (as an rsh
# agent does) defines the functions and nothing else.

CLUSTER_BR=lclkbr$$
CLUSTER_NET=10.77.0
cluster_module_args=""

# cluster_instances N: the module with N instances, reloaded with them if it
# has fewer (cluster_down loads it back as tests/guest/run.sh loaded it, so
# that the runner can unload it). Fails if it cannot.
cluster_instances() {
	local module=${LCLK_MODULE:-kmod/lclk.ko}
	local name
	[ -e "/dev/lclk$(($1 - 1))" ] && return 0
	name=$(basename "$module" .ko)
	rmmod "$name" || return 1
	cluster_module_args=${LCLK_MODULE_ARGS:-instances=2}
	tests/guest/lib/insmod.sh "$module" "instances=$1"
}

# cluster_leftovers N: what a cluster test killed by its timeout (SIGKILL:
# no cluster_down) left: its processes, namespaces and bridge, which would
# make the next test's cluster_up fail ("File exists").
cluster_leftovers() {
	local i p br
	for i in $(seq 0 $(($1 - 1))); do
		for p in $(cat "/sys/fs/cgroup/lclk-cl$i/cgroup.procs" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
		ip netns del "lclk-cl$i" 2>/dev/null
	done
	for br in $(ip -o link show type bridge | awk -F': ' '$2 ~ /^lclkbr/ { print $2 }'); do
		ip link del "$br"
	done
	return 0
}

# cluster_up N: the bridge (with 10.77.0.254 in this namespace, for
# mpirun's own connections), the namespaces, their veths and cgroups.
cluster_up() {
	local i
	cluster_leftovers "$1"
	ip link add "$CLUSTER_BR" type bridge &&
		ip addr add "$CLUSTER_NET.254/24" dev "$CLUSTER_BR" &&
		ip link set "$CLUSTER_BR" up || return 1
	for i in $(seq 0 $(($1 - 1))); do
		ip netns add "lclk-cl$i" &&
			ip link add "veth$i-$$" type veth peer name eth0 netns "lclk-cl$i" &&
			ip link set "veth$i-$$" master "$CLUSTER_BR" up &&
			ip -n "lclk-cl$i" addr add "$CLUSTER_NET.$((i + 1))/24" dev eth0 &&
			ip -n "lclk-cl$i" link set eth0 up &&
			ip -n "lclk-cl$i" link set lo up &&
			mkdir -p "/sys/fs/cgroup/lclk-cl$i" || return 1
	done
}

# cluster_exec I CMD...: exec CMD on host I, in its cgroup (joined first:
# ip netns exec mounts a /sys of its own). In a subshell, ( ... ) &, to
# start it in the background.
cluster_exec() {
	local i=$1
	shift
	echo "$BASHPID" >"/sys/fs/cgroup/lclk-cl$i/cgroup.procs" &&
		exec ip netns exec "lclk-cl$i" "$@"
}

# cluster_ready DIR N: all N ranks have said they are ready in DIR, each
# with a file ready.RANK (tests/integration/mpi_allreduce.c's GO_DIR,
# tests/guest/torch_ddp.py --go-dir); they start once DIR/go exists.
cluster_ready() {
	[ "$(find "$1" -name 'ready.*' | wc -l)" -ge "$2" ]
}

# cluster_down N: every process left in the hosts' cgroups killed, the
# namespaces, bridge and cgroups gone, the module as the runner loaded it.
cluster_down() {
	local i p module=${LCLK_MODULE:-kmod/lclk.ko}
	for i in $(seq 0 $(($1 - 1))); do
		for p in $(cat "/sys/fs/cgroup/lclk-cl$i/cgroup.procs" 2>/dev/null); do
			kill -KILL "$p" 2>/dev/null
		done
	done
	wait 2>/dev/null
	for i in $(seq 0 $(($1 - 1))); do
		ip netns del "lclk-cl$i" 2>/dev/null
		rmdir "/sys/fs/cgroup/lclk-cl$i" 2>/dev/null
	done
	ip link del "$CLUSTER_BR" 2>/dev/null
	if [ -n "$cluster_module_args" ]; then
		rmmod "$(basename "$module" .ko)"
		# shellcheck disable=SC2086
		tests/guest/lib/insmod.sh "$module" $cluster_module_args
	fi
}

# ---- the tests' frame: TAP, waits, cleanup --------------------------------

# cluster_test N DIR: N hosts and the test's temporary directory; what the
# test starts in the background goes into the array pids, killed at exit,
# when the hosts are torn down and DIR removed.
cluster_test() {
	cluster_n=$1 dir=$2 pids=() n=0
	trap cluster_cleanup EXIT
}

cluster_cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	cluster_down "$cluster_n"
	rm -rf "$dir"
}

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }
# A known shortfall (TAP TODO): reported, not counted as a failure.
todo() { local name=$1 why=$2; shift 2; n=$((n + 1)); if "$@"; then echo "ok $n - $name"; else echo "not ok $n - $name # TODO $why"; fi; }

# wait_for SECONDS CMD...: until CMD succeeds, SECONDS times LCLK_TIME_SCALE.
wait_for() {
	local end=$((SECONDS + $1 * ${LCLK_TIME_SCALE:-1}))
	shift
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.5
	done
}

# check_perfetto LABEL MERGED HOST_TRACE...: Perfetto's schema (protoc) on
# the hosts' traces and their merge, and with synced clocks every arrow
# kept; one check, named after LABEL, and the BENCH_flows_lost line that
# tests/bench/cluster_vm.sh sums.
check_perfetto() {
	local label=$1 rc flows lost
	shift
	tests/perfetto/flows.sh "$label" "$@" >"$dir/flows" 2>&1
	rc=$?
	sed 's/^[^B]/# &/' "$dir/flows"
	read -r _ _ flows lost < <(grep '^BENCH_flows_lost' "$dir/flows")
	check "$label: the traces decode with Perfetto's schema and Perfetto keeps every arrow (${lost:-?} of ${flows:-?} lost)" \
		test "$rc" -eq 0
}

# cluster_need_messages: a whole TAP skip, and exit, unless lclkctl trace
# --messages works on this kernel.
# It asks up to the load of the programs, which the shim makes fail: the
# load, attach and detach of fentry's programs take 12 s under TCG, and the
# test starts its tracers next.
cluster_need_messages() {
	local why
	LD_PRELOAD=build/tests/shim/fail_bpf_prog.so LCLK_FAIL_BPF_PROG='fentry_*,fexit_*,tp_*,msg_*' \
		build/lclkctl trace --messages --trace-out "$dir/probe.pftrace" --duration 100ms \
		>/dev/null 2>"$dir/probe.err"
	grep -q '^lclkctl trace: cannot load the BPF programs' "$dir/probe.err" && return 0
	why=$(sed -n 's/^lclkctl trace: --messages needs //p' "$dir/probe.err")
	echo "1..0 # SKIP --messages needs ${why:-$(cat "$dir/probe.err")}"
	exit 0
}
