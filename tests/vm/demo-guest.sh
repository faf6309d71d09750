#!/bin/bash
# The demo, inside the VM: load lclk, read the logical clock the ways a
# user would, align it to an NTP server (a real chronyd in a network
# namespace, serving this guest's clock), and trace a socket ping-pong in
# logical time.
set -eu
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

NTP_TAG=demo$$
. tests/integration/ntp_lib.sh
trap ntp_cleanup EXIT

run insmod kmod/lclk.ko
run ls -l /dev/lclk0
run cat /dev/lclk0
run "$LCLKCTL" status

say "# a chronyd (-x: it never touches the clock) in namespace $NTP_SRV at $NTP_V4"
ntp_setup
ntp_start_chronyd
ntp_wait_server
run ip netns exec "$NTP_CLI" "$LCLKCTL" query "ntp://$NTP_V4"
run ip netns exec "$NTP_CLI" "$LCLKCTL" sync "ntp://$NTP_V4"
run "$LCLKCTL" status

say "# a socket ping-pong, 200 rounds, 2 ms delay in the peer, traced for 3 s"
build/tests/bench/pingpong -n 200 -d 2000 -c demo-pingpong >/dev/null &
pp=$!
run "$LCLKCTL" trace --comm demo-pingpong --duration 3s --threshold 1ms
wait "$pp" || true
