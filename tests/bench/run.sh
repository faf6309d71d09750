#!/bin/sh
# "make bench": run every tests/bench/*.sh; each prints "BENCH <name> <value>"
# lines (ratios as plain numbers) among its own detail. Not part of check.
cd "$(dirname "$0")/../.."
status=0
for b in tests/bench/*.sh; do
	[ "$b" = tests/bench/run.sh ] && continue
	echo "# bench: $b"
	"$b" || { echo "# bench $b failed" >&2; status=1; }
done
exit $status
