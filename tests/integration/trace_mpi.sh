#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace on a real collective library: Open MPI's TCP transport running
# an MPI_Allreduce loop (tests/integration/mpi_allreduce.c) on 4 ranks. Every
# rank's calls are attributed to it, with blocked time, and the Perfetto trace
# parses and has one track per rank thread. tests/guest/trace_mpi.sh runs it in
# the VM with TRACE_CLOCK=logical.
set -u
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
CHECK=tests/integration/trace_check.py
TRACE_CLOCK=${TRACE_CLOCK:-monotonic}
RANKS=4
ROUNDS=${ROUNDS:-40}

TMP=$(mktemp -d /tmp/lclk-trace-mpi.XXXXXX)
TRACE_PID=""
cleanup() {
	[ -n "$TRACE_PID" ] && kill -KILL "$TRACE_PID" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
check() { local name=$1; shift; if "$@" >"$TMP/why" 2>&1; then ok "$name"; sed 's/^/# /' "$TMP/why"; else not_ok "$name"; sed 's/^/# /' "$TMP/why"; fi; }

echo "TAP version 13"
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
	echo "1..0 # SKIP Open MPI is not installed (make deps)"
	exit 0
fi

# The binary's name is the command name the trace selects.
check "mpicc builds the allreduce loop" \
	mpicc -O2 -Wall -Wextra -Werror tests/integration/mpi_allreduce.c -o "$TMP/lclk_allreduce"

"$LCLKCTL" trace --comm lclk_allreduce --json -v --threshold 500us \
	--trace-out "$TMP/mpi.pftrace" >"$TMP/mpi.jsonl" 2>"$TMP/mpi.err" &
TRACE_PID=$!
for i in $(seq 1200); do grep -qs '^Tracing' "$TMP/mpi.err" && break; sleep 0.05; done

check "mpirun -np $RANKS, btl tcp: $ROUNDS allreduce rounds with correct sums" \
	timeout 120 mpirun --allow-run-as-root --oversubscribe -np $RANKS \
	--mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
	"$TMP/lclk_allreduce" "$ROUNDS"
kill -TERM $TRACE_PID; wait $TRACE_PID; rc=$?; TRACE_PID=""
check "trace exits 0" test $rc -eq 0

check "all $RANKS ranks traced and blocked; one track per rank thread" \
	$CHECK ranks "$TMP/mpi.jsonl" "$TMP/mpi.pftrace" $RANKS
check "reports in $TRACE_CLOCK time" grep -q "\"clock\":\"$TRACE_CLOCK\"" "$TMP/mpi.jsonl"
check "Perfetto's schema reads the trace (protoc --decode, tests/perfetto/check_trace.py)" \
	python3 tests/perfetto/check_trace.py "$TMP/mpi.pftrace"
"$LCLKCTL" trace merge "$TMP/mpi.pftrace" -o "$TMP/merged.pftrace" >/dev/null 2>"$TMP/merge.err"
check "the merged trace too: its ranks' threads and process declared, names interned, the clock" \
	python3 tests/perfetto/check_trace.py --merged "$TMP/merged.pftrace"

echo "1..$n"
[ $failed -eq 0 ]
