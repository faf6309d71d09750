#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace merge on synthetic traces of HOSTS hosts (tests/bench/
# cluster_gen.c: a ring allreduce, ROUNDS rounds, 7 events per host and
# round: message records, polls, collectives), single-threaded:
#   BENCH cluster.merge_events_per_s   events merged per CPU second (user +
#                                      system: the host is shared, so wall time
#                                      says more about the neighbours), writing
#                                      the merged trace, the median of RUNS
#                                      runs; goal >= 1M
#   BENCH cluster.merge_events_per_s_best  the same, the least disturbed run
#   BENCH cluster.merge_peak_rss_mib   peak memory of the merge: it streams, so
#                                      this stays flat as the traces grow
#   BENCH cluster.merge_input_mib      the inputs' size, for scale
#   BENCH cluster.merge_instructions_per_event
#                                      counted by callgrind: exact, where
#                                      the CPU seconds of one run on a
#                                      shared host vary by a quarter
# The VM figures (straggler precision, violations, lying pairs, passive
# width) come from tests/guest/cluster_*.sh.
set -eu
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
GEN=${GEN:-build/tests/bench/cluster_gen}
HOSTS=${HOSTS:-64}
ROUNDS=${ROUNDS:-3000}
RUNS=${RUNS:-3}

for b in "$LCLKCTL" "$GEN"; do
	[ -x "$b" ] || { echo "cluster bench: $b is not built (make)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/lclk-bench-cluster.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

"$GEN" "$TMP" "$HOSTS" "$ROUNDS"
# Read once so that the page cache, not the disk, feeds the timed run.
cat "$TMP"/*.pftrace >/dev/null
# The CPU seconds of one run vary by a quarter with the neighbours' load
# of the shared cache: RUNS runs, sorted.
for _ in $(seq "$RUNS"); do
	/usr/bin/time -f '%U %S %e %M' -o "$TMP/time" "$LCLKCTL" --json trace merge \
		"$TMP"/node*.pftrace -o "$TMP/cluster.out" >"$TMP/report.json"
	read -r user sys wall rss_kib <"$TMP/time"
	echo "$(echo "$user + $sys" | bc) $user $sys $wall $rss_kib"
done | sort -n >"$TMP/runs"
read -r best _ <"$TMP/runs"
read -r cpu user sys wall rss_kib < <(sed -n "$(((RUNS + 1) / 2))p" "$TMP/runs")
events=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["events"])' "$TMP/report.json")
python3 - "$TMP/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["messages"]
print("# %d events, %d sends, %d matched, %d arrows, %d lying pairs, %d violations"
      % (r["events"], m["sends"], m["matched"], r["flows"], r["lying_pairs"], r["violations"]))
PY
echo "# merge, the median of $RUNS runs: ${user}s user, ${sys}s system, ${wall}s wall"
echo "BENCH cluster.merge_events_per_s $(echo "$events / $cpu" | bc)"
echo "BENCH cluster.merge_events_per_s_best $(echo "$events / $best" | bc)"
echo "BENCH cluster.merge_peak_rss_mib $(echo "scale=1; $rss_kib / 1024" | bc)"
echo "BENCH cluster.merge_input_mib $(du -cm "$TMP"/node*.pftrace | tail -1 | cut -f1)"

# The same merge under callgrind (about 50 s), for the exact count.
valgrind --tool=callgrind --callgrind-out-file=/dev/null "$LCLKCTL" --json trace merge \
	"$TMP"/node*.pftrace -o "$TMP/cluster.out" >/dev/null 2>"$TMP/callgrind"
refs=$(sed -n 's/.*refs: *//p' "$TMP/callgrind" | tr -d ,)
echo "BENCH cluster.merge_instructions_per_event $((refs / events))"
