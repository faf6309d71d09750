#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The fault campaign's long version (tests/faults/run.sh --long: every
# scenario six times longer than in make check) in the VM:
#   BENCH bound.violations  readings beyond their bound while SYNCED or
#                           HOLDOVER, all scenarios (goal 0)
#   BENCH bound.readings    readings checked against a truth (goal >= 10^6)
#   BENCH bound.scenarios   scenarios that ran (goal >= 16)
#   BENCH bound.max_err_over_bound  the worst |error| / bound seen
#   BENCH bound.SCENARIO.violations N  # readings N, max_err_over_bound X
#                           one line per scenario
# Known failures (tests/faults/known-failures) count here as they are.
# KERNELS="5.10 6.1 6.12" runs it on each (default 6.1, the host's); the
# totals are over all of them.
set -u
cd "$(dirname "$0")/../.." || exit 1
LOG=$(mktemp /tmp/lclk-bench-faults.XXXXXX)
trap 'rm -f "$LOG"' EXIT
for k in ${KERNELS:-6.1}; do
	LCLK_MODULE=build/kernels/$k/lclk.ko LCLK_FAULT_TIMEOUT=900 \
		tests/vm/vm-run -k "$k" -s 4 -t 3600 -- tests/faults/run.sh --long >"$LOG.$k" 2>&1
	grep -aE '^(not )?ok|^FAULT' "$LOG.$k" | sed "s/^/# $k: /"
	grep -a '^BENCH bound\.[a-z0-9_]*\.violations' "$LOG.$k"
	cat "$LOG.$k" >>"$LOG"
	rm -f "$LOG.$k"
done
grep -aq '^BENCH bound.readings' "$LOG" || { echo "faults bench: no summary from the guest" >&2; exit 1; }
awk '$1 == "BENCH" && $2 ~ /^bound\.(violations|readings|scenarios)$/ { s[$2] += $3 }
	$1 == "BENCH" && $2 == "bound.max_err_over_bound" && $3 > m { m = $3 }
	END {
		printf "BENCH bound.violations %d\n", s["bound.violations"]
		printf "BENCH bound.readings %d\n", s["bound.readings"]
		printf "BENCH bound.scenarios %d\n", s["bound.scenarios"]
		printf "BENCH bound.max_err_over_bound %s\n", m + 0
	}' "$LOG"
