# SPDX-License-Identifier: GPL-2.0
# Sourced by the cluster view's guest tests (tests/guest/cluster_*.sh): N
# network namespaces lclk-cl0..N-1 on a bridge are N hosts, host i at
# 10.77.0.(i+1) with its own cgroup /sys/fs/cgroup/lclk-cli, stamping with
# /dev/lclki. The test sets $dir (its temporary directory) first and calls
# cluster_down when it exits.

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

# cluster_up N: the bridge (with 10.77.0.254 in this namespace, for
# mpirun's own connections), the namespaces, their veths and cgroups.
cluster_up() {
	local i
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
