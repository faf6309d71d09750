#!/bin/sh
# insmod.sh MODULE [PARAM...]: load what modprobe would load before MODULE
# (ptp is a module on some kernels of the matrix), then MODULE itself.
module=$1
shift
deps=$(modinfo -F depends "$module" | tr , ' ')
# shellcheck disable=SC2086
if [ -n "$deps" ] && ! modprobe -a $deps; then
	echo "insmod.sh: modprobe $deps (needed by $module) failed" >&2
	exit 1
fi
exec insmod "$module" "$@"
