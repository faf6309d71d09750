#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flows.sh NAME MERGED [INPUT...]: Perfetto's schema on a merged trace and
# its inputs (check_trace.py), for the guest's cluster tests. Prints
# "BENCH_flows_lost NAME FLOWS LOST" (tests/bench/cluster_vm.sh sums them
# into BENCH perfetto.flows_lost) and exits 0 when every trace decodes and
# checks out and no flow is lost.
set -u
cd "$(dirname "$0")/../.."
name=$1 merged=$2
shift 2
rc=0
if [ $# -gt 0 ]; then
	python3 tests/perfetto/check_trace.py "$@" >/dev/null || rc=1
fi
json=$(python3 tests/perfetto/check_trace.py --merged --json "$merged") || rc=1
read -r flows lost < <(python3 -c 'import json, sys
r = json.loads(sys.argv[1] or "{}")
print(r.get("flows", "-"), r.get("flows_lost", "-"))' "${json:-}")
echo "BENCH_flows_lost $name ${flows:--} ${lost:--}"
[ "${lost:--}" = 0 ] && [ $rc -eq 0 ]
