#!/bin/sh
# Runs in the guest, chrooted into the (overlaid) host root: run the
# command file vm-run wrote, then report its status through isa-debug-exit.
run=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LC_ALL=C.UTF-8
hostname lclk-vm
ip link set lo up
. "$(dirname "$run")/env"
cd "$LCLK_REPO" || exit 1
/bin/sh "$run"
status=$?
sync
exec "$LCLK_REPO/build/vm/guest-exit" "$status"
