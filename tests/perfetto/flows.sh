#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# flows.sh NAME MERGED [INPUT...]: Perfetto's schema on a merged trace and
# its inputs (check_trace.py), for the guest's cluster tests. Prints
# "BENCH_flows_lost NAME FLOWS LOST COUNTER" (tests/bench/cluster_vm.sh sums
# them into BENCH perfetto.flows_lost) and exits 0 when every trace decodes
# and checks out and no flow is lost. COUNTER says whose count it is:
# "trace_processor" (Perfetto's own, once scripts/trace-processor has built
# it: the arrows the trace declares and those missing from its flow table,
# tests/perfetto/tp_check.py) or "check_trace" (the flow ids, and those
# check_trace.py's model of Perfetto's importer drops).
set -u
cd "$(dirname "$0")/../.." || exit 2
name=$1 merged=$2
shift 2
rc=0
if [ $# -gt 0 ]; then
	python3 tests/perfetto/check_trace.py "$@" >/dev/null || rc=1
fi
json=$(python3 tests/perfetto/check_trace.py --merged --json "$merged") || rc=1
read -r flows lost counter < <(python3 -c 'import json, sys
r = json.loads(sys.argv[1] or "{}")
if "tp_flows_lost" in r:
    print(r["tp_declared_flows"], r["tp_flows_lost"], "trace_processor")
else:
    print(r.get("flows", "-"), r.get("flows_lost", "-"), "check_trace")' "${json:-}")
echo "BENCH_flows_lost $name ${flows:--} ${lost:--} ${counter:--}"
[ "${lost:--}" = 0 ] && [ $rc -eq 0 ]
