# SPDX-License-Identifier: GPL-2.0
# Sourced by the guest tests that need a PTP master to sync from
# (tests/guest/daemon_ptp.sh, ptp_realtime_steps.sh): a veth pair whose
# far end lives in a network namespace, and a ptp4l configuration for a
# master on the system clock there. The test deletes both when it exits.

# ptp_master_link NS VETH NET: namespace NS holds VETHg as NET.1/24, VETH
# here is NET.2/24 (NET: the first three octets, "10.78.0").
ptp_master_link() {
	local ns=$1 veth=$2 net=$3

	ip netns add "$ns" &&
		ip link add "$veth" type veth peer name "${veth}g" &&
		ip link set "${veth}g" netns "$ns" &&
		ip -n "$ns" addr add "$net.1/24" dev "${veth}g" &&
		ip -n "$ns" link set "${veth}g" up &&
		ip -n "$ns" link set lo up &&
		ip addr add "$net.2/24" dev "$veth" &&
		ip link set "$veth" up
}

# ptp_master_conf FILE DIR: ptp4l's configuration, its socket in DIR.
# A master adjusts no clock, and free_running keeps it from doing so should
# it ever become a slave. Fast Syncs and Announces, so that a master
# qualifies and expires in about a second.
ptp_master_conf() {
	cat >"$1" <<-EOC
	[global]
	time_stamping software
	free_running 1
	priority1 100
	logSyncInterval -3
	logAnnounceInterval -2
	uds_address $2/ptp4l.uds
	EOC
}
