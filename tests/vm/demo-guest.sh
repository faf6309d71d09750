#!/bin/sh
# The demo, inside the VM: load the module, read the logical clock the ways
# a user would, and steer it.
set -eu
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

run insmod kmod/lclk.ko
run ls -l /dev/lclk0
run cat /dev/lclk0
if [ -x build/lclkctl ] && build/lclkctl help 2>/dev/null | grep -q '^  status'; then
	run build/lclkctl status
fi
