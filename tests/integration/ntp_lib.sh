# SPDX-License-Identifier: GPL-2.0
# Shared by the NTP tests and benchmark (sourced, bash): a server and a
# client network namespace joined by a veth pair, a chronyd serving the
# machine's own clock (-x: it never touches it) in the server namespace,
# and cleanup of all of it. Set NTP_TAG (unique per test run) first.
#
#   ntp_setup          namespaces, veth, IPv4 10.$NTP_NET.0.{1,2}/24,
#                      IPv6 fd00:$NTP_NET::{1,2}/64; $NTP_DIR is a temp dir
#   ntp_setup_router   a third namespace routing between the other two over
#                      two more veth pairs: the server is also
#                      $NTP_V4_ROUTED, reached through it, so a delay can be
#                      put in the middle of the path (on the router's devices
#                      $NTP_RTR_TO_SRV and $NTP_RTR_TO_CLI), where neither
#                      end's kernel timestamps see it
#   ntp_start_chronyd  chronyd in the server namespace, on all its addresses
#   ntp_wait_server    wait (bounded) until it answers
#   ntp_cleanup        kill what we started, delete namespaces and files
#   in_srv/in_cli/in_rtr CMD  run CMD in a namespace
#   srv_udp_in         UDP datagrams the server namespace has received (IPv4)

NTP_SRV=ntpsrv-$NTP_TAG
NTP_CLI=ntpcli-$NTP_TAG
NTP_RTR=ntprtr-$NTP_TAG
NTP_NET=${NTP_NET:-$((100 + $$ % 100))}
NTP_V4=10.$NTP_NET.0.1
NTP_V4_CLI=10.$NTP_NET.0.2
NTP_V6=fd00:$NTP_NET::1
NTP_V4_ROUTED=10.$NTP_NET.2.1
NTP_RTR_TO_SRV=b$NTP_TAG
NTP_RTR_TO_CLI=c$NTP_TAG
NTP_DIR=
NTP_PIDS=()

in_srv() { ip netns exec "$NTP_SRV" "$@"; }
in_cli() { ip netns exec "$NTP_CLI" "$@"; }
in_rtr() { ip netns exec "$NTP_RTR" "$@"; }

# The server namespace's own counter: every request that reached a server
# there, whatever the client says about its burst.
srv_udp_in() { in_srv awk '/^Udp:/ { if (seen) print $2; seen = 1 }' /proc/net/snmp; }

ntp_setup() {
	NTP_DIR=$(mktemp -d /tmp/ntp-test.XXXXXX)
	ip netns add "$NTP_SRV"
	ip netns add "$NTP_CLI"
	ip link add "v$NTP_TAG" type veth peer name "w$NTP_TAG"
	ip link set "v$NTP_TAG" netns "$NTP_SRV"
	ip link set "w$NTP_TAG" netns "$NTP_CLI"
	in_srv ip link set lo up
	in_cli ip link set lo up
	in_srv ip addr add "$NTP_V4/24" dev "v$NTP_TAG"
	in_cli ip addr add "$NTP_V4_CLI/24" dev "w$NTP_TAG"
	in_srv ip addr add "$NTP_V6/64" dev "v$NTP_TAG" nodad
	in_cli ip addr add "fd00:$NTP_NET::2/64" dev "w$NTP_TAG" nodad
	in_srv ip link set "v$NTP_TAG" up
	in_cli ip link set "w$NTP_TAG" up
	# Host names for the server, seen only in the client namespace; the
	# IPv6 address of dual.test has no route.
	mkdir -p "/etc/netns/$NTP_CLI" 2>/dev/null &&
		printf '%s\n' "$NTP_V4 ntp-server.test" "fd00:1:$NTP_NET::1 dual.test" \
			"$NTP_V4 dual.test" > "/etc/netns/$NTP_CLI/hosts" || true
}

ntp_setup_router() {
	local n=10.$NTP_NET
	ip netns add "$NTP_RTR" &&
	ip link add "a$NTP_TAG" type veth peer name "$NTP_RTR_TO_SRV" &&
	ip link add "$NTP_RTR_TO_CLI" type veth peer name "d$NTP_TAG" &&
	ip link set "a$NTP_TAG" netns "$NTP_SRV" &&
	ip link set "$NTP_RTR_TO_SRV" netns "$NTP_RTR" &&
	ip link set "$NTP_RTR_TO_CLI" netns "$NTP_RTR" &&
	ip link set "d$NTP_TAG" netns "$NTP_CLI" &&
	in_srv ip addr add "$NTP_V4_ROUTED/24" dev "a$NTP_TAG" &&
	in_rtr ip addr add "$n.2.254/24" dev "$NTP_RTR_TO_SRV" &&
	in_rtr ip addr add "$n.3.254/24" dev "$NTP_RTR_TO_CLI" &&
	in_cli ip addr add "$n.3.2/24" dev "d$NTP_TAG" &&
	in_srv ip link set "a$NTP_TAG" up &&
	in_rtr ip link set "$NTP_RTR_TO_SRV" up &&
	in_rtr ip link set "$NTP_RTR_TO_CLI" up &&
	in_cli ip link set "d$NTP_TAG" up &&
	in_rtr sysctl -qw net.ipv4.ip_forward=1 &&
	in_srv ip route add "$n.3.0/24" via "$n.2.254" &&
	in_cli ip route add "$n.2.0/24" via "$n.3.254"
}

ntp_start_chronyd() {
	cat > "$NTP_DIR/chrony.conf" <<EOC
local stratum 1
allow
cmdport 0
bindcmdaddress /
pidfile $NTP_DIR/chronyd.pid
driftfile $NTP_DIR/chrony.drift
EOC
	in_srv chronyd -x -f "$NTP_DIR/chrony.conf" -l "$NTP_DIR/chronyd.log"
	for _ in $(seq 50); do
		[ -s "$NTP_DIR/chronyd.pid" ] && break
		sleep 0.1
	done
}

# Start the test responder (tests/integration/ntp_responder.py) in the
# server namespace: ntp_start_responder PORT KIND..., on $NTP_RESPONDER_ADDR
# (default $NTP_V4).
ntp_start_responder() {
	local port=$1
	shift
	# Not through in_srv: $! must be the responder itself (ip execs it).
	ip netns exec "$NTP_SRV" python3 "$(dirname "${BASH_SOURCE[0]}")/ntp_responder.py" \
		"${NTP_RESPONDER_ADDR:-$NTP_V4}" "$port" "$@" &
	NTP_PIDS+=($!)
	for _ in $(seq 100); do
		in_srv ss -Huln "sport = :$port" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

ntp_wait_server() {
	for _ in $(seq 50); do
		in_cli "$LCLKCTL" query --samples 1 --timeout 200ms "ntp://$NTP_V4" \
			>/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

ntp_cleanup() {
	local p
	for p in "${NTP_PIDS[@]}"; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	NTP_PIDS=()
	if [ -n "$NTP_DIR" ] && [ -s "$NTP_DIR/chronyd.pid" ]; then
		kill "$(cat "$NTP_DIR/chronyd.pid")" 2>/dev/null
	fi
	ip netns del "$NTP_SRV" 2>/dev/null
	ip netns del "$NTP_CLI" 2>/dev/null
	ip netns del "$NTP_RTR" 2>/dev/null || true	# only if ntp_setup_router ran
	rm -rf "/etc/netns/$NTP_CLI" 2>/dev/null
	[ -n "$NTP_DIR" ] && rm -rf "$NTP_DIR"
	return 0
}

# JSON field of stdin: jget EXPR (python expression over d)
jget() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
