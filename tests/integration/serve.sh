#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl serve's access policy, as chronyd's: only allowed clients are
# answered (by default only this host itself, over loopback), and once its
# port is bound it runs as an unprivileged user. Serve runs in one network
# namespace, a client asks from another over veth (10.N.0.2) and from the
# server's own loopback. Without the module every reply says
# unsynchronised, which is still a reply. Prints TAP.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
NTP_TAG=sv$$
. tests/integration/ntp_lib.sh
trap ntp_cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

echo "1..12"
[ -x "$LCLKCTL" ] || { echo "Bail out! build lclkctl first"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "Bail out! needs root (network namespaces, port 123)"; exit 1; }
ntp_setup
port=123

# asks NS ADDR: whether an NTP client request to ADDR:$port gets a reply
# within a second (from NS: cli or srv).
asks() {
	"in_$1" python3 - "$2" "$port" <<-'PY'
	import socket, sys
	s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
	s.settimeout(1)
	s.sendto(bytes([0x23]) + bytes(39) + (12345).to_bytes(8, "big"), (sys.argv[1], int(sys.argv[2])))
	try:
	    d = s.recv(100)
	    sys.exit(0 if len(d) >= 48 and d[0] & 7 == 4 else 1)
	except socket.timeout:
	    sys.exit(1)
	PY
}

# serve ARGS...: lclkctl serve in the server namespace, on all addresses.
serve() {
	ip netns exec "$NTP_SRV" "$LCLKCTL" serve -p $port "$@" >"$NTP_DIR/serve.log" 2>&1 &
	NTP_PIDS+=($!)
	for _ in $(seq 50); do
		in_srv ss -Huln "sport = :$port" | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
stop_serve() { kill "${NTP_PIDS[-1]}"; wait "${NTP_PIDS[-1]}" 2>/dev/null; unset 'NTP_PIDS[-1]'; }
# uid_of PID: "real effective saved fs" uids; caps_of PID: CapInh CapPrm
# CapEff CapBnd CapAmb, as /proc/PID/status has them.
uid_of() { awk '/^Uid:/ {print $2, $3, $4, $5}' "/proc/$1/status"; }
caps_of() { awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ {printf "%s%s", s, $2; s = " "}' "/proc/$1/status"; }
no_caps="0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000"

serve -u nobody
pid=${NTP_PIDS[-1]}
check "default: this host is answered over loopback" "asks srv 127.0.0.1"
check "default: a client on the network is not answered" "! asks cli $NTP_V4"
u=$(id -u nobody)
check "started as root, serve -u nobody runs as nobody once bound (Uid $(uid_of "$pid"))" \
	"[ \"$(uid_of "$pid")\" = \"$u $u $u $u\" ]"
check "... with no capability left, bounding set included (Cap* $(caps_of "$pid"))" \
	"[ \"$(caps_of "$pid")\" = \"$no_caps\" ]"
stop_serve

# A user that does not exist (the package creates lclk, the default):
# serve says so and keeps uid 0, but without any capability.
missing=lclk-no-such-user-$$
serve -u "$missing"
pid=${NTP_PIDS[-1]}
check "-u a missing user: serve still answers" "asks srv 127.0.0.1"
check "... says so on stderr ($(grep -m1 'no user' "$NTP_DIR/serve.log"))" \
	"grep -q 'no user $missing to run as' '$NTP_DIR/serve.log'"
check "... runs as uid 0 with no capability (Uid $(uid_of "$pid"), Cap* $(caps_of "$pid"))" \
	"[ \"$(uid_of "$pid")\" = '0 0 0 0' -a \"$(caps_of "$pid")\" = \"$no_caps\" ]"
stop_serve

serve --allow "10.$NTP_NET.0.0/24"
check "--allow NET: a client in NET is answered" "asks cli $NTP_V4"
check "--allow NET: loopback is not (only what is allowed)" "! asks srv 127.0.0.1"
stop_serve

# On "::", IPv4 clients come as IPv4-mapped addresses: matched all the same.
serve -a :: --allow "10.$NTP_NET.0.99" --allow "fd00:$NTP_NET::2"
check "--allow ADDR: another address is not answered" "! asks cli $NTP_V4"
check "--allow IPv6 ADDR: that client is answered" "asks cli $NTP_V6"
stop_serve

out=$("$LCLKCTL" serve -p $port --allow 10.0.0.0/33 2>&1)
check "a bad --allow is a usage error (exit $?: $out)" "echo \"\$out\" | grep -q 'allow 10.0.0.0/33'"
exit $((failed > 0))
