#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cluster view's verdicts, from tests/guest/cluster_mpi.sh in the VM
# (4 network namespaces as 4 hosts, /dev/lclk0..3, hosts 1-3 synced by
# lclkctl daemons to host 0's lclkctl serve, Open MPI rank 3 slowed):
#   BENCH cluster.straggler_precision  share of rounds charged to the slowed
#                                      rank, synced clocks (goal >= 0.95)
#   BENCH cluster.false_violations     violations with synced clocks (goal 0)
#   BENCH cluster.detected_lying_pairs pairs flagged with /dev/lclk3 3 ms off
#                                      claiming 10 us (goal: 2, host3's pairs
#                                      with traffic both ways, and no other)
#   BENCH cluster.lying_runs           the runs of that case it took: once more
#                                      when no message was fast enough to tell
#                                      (tests/guest/cluster_mpi.sh, run_lying)
#   BENCH cluster.passive_width_us     median width of the interval the
#                                      traffic certifies per pair (veth), synced
#   BENCH cluster.lclk_claimed_bound_us  the sum of the pair's bounds beside it,
#                                      as the daemons publish them on that link
#   BENCH cluster.lclk_bound_us        a daemon's own bound on that link (median
#                                      of hosts 1-3)
#   BENCH cluster.chronyd_bound_us     chronyd's maximum error on the same link
#                                      (a client of host 0's serve)
#   BENCH cluster.gloo_straggler_precision  the same share for the 4-rank
#                                      torch DDP job over gloo, rank 3 slowed
#                                      (tests/guest/cluster_gloo.sh; goal >= 0.95)
#   BENCH perfetto.flows_lost          arrows of the synced MPI job's merged trace
#                                      and of the gloo job's (tests/guest/
#                                      cluster_gloo.sh, run after it) that
#                                      Perfetto drops: those the traces declare
#                                      and Perfetto's own trace_processor_shell
#                                      leaves out of its flow table
#                                      (tests/perfetto/tp_check.py); goal 0.
#                                      make bench builds the binary first
#                                      (scripts/trace-processor) and requires it
#                                      (LCLK_TRACE_PROCESSOR=require, seen by
#                                      the guest); without it, no such line
# KERNEL=ALIAS boots that kernel (default: the host's, 6.1). The guest has
# 4 vCPUs, as in the suite: on 2, four ranks spinning in poll wait for a
# CPU, their reads come late, and a pair's fastest message can take the
# whole 3 ms that the lying host is off (one of its two pairs flagged).
set -u
cd "$(dirname "$0")/../.."
KERNEL=${KERNEL:-}
LOG=$(mktemp /tmp/lclk-bench-cluster-vm.XXXXXX)
trap 'rm -f "$LOG"' EXIT

tests/vm/vm-run ${KERNEL:+-k "$KERNEL"} -s 4 -t 2700 -- \
	'LCLK_TEST_TIMEOUT=1400 LCLK_GUEST_TESTS="tests/guest/cluster_mpi.sh tests/guest/cluster_gloo.sh" tests/guest/run.sh' \
	>"$LOG" 2>&1
grep -E '^(not )?ok|^# (honest|lying|loose)' "$LOG" | sed 's/^/# /'
read -r _ share _ viol _ _ _ < <(grep -a '^BENCH_honest' "$LOG")
read -r _ _ _ _ _ flagged _ < <(grep -a '^BENCH_lying' "$LOG" | tail -1)
[ -n "${share:-}" ] || { echo "cluster_vm bench: no verdict from the guest" >&2; exit 1; }
echo "BENCH cluster.straggler_precision $share"
echo "BENCH cluster.false_violations $viol"
echo "BENCH cluster.detected_lying_pairs $([ "$flagged" = - ] && echo 0 || echo "$flagged" | tr , '\n' | wc -l)"
echo "BENCH cluster.lying_runs $(grep -ac '^BENCH_lying' "$LOG")"
read -r _ gloo_share _ < <(grep -a '^BENCH_gloo ' "$LOG")
[ -n "${gloo_share:-}" ] && echo "BENCH cluster.gloo_straggler_precision $gloo_share"
# The honest case's pair lines: "#   hostA-hostB: [lo, hi] ns, width W ns, claim C ns, ...";
# the medians of W and of C (plain awk and sort: mawk has no asort).
pair_field() {
	awk -v f="$1" '/^# honest:/ { h = 1; next } /^# (lying|loose):/ { h = 0 }
		h && / width / { for (i = 1; i <= NF; i++) if ($i == f) print $(i + 1) + 0 }' "$LOG" |
		sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f\n", v[int((NR + 1) / 2)] / 1000 }'
}
width=$(pair_field width)
claim=$(pair_field claim)
[ -n "$width" ] && echo "BENCH cluster.passive_width_us $width"
[ -n "$claim" ] && echo "BENCH cluster.lclk_claimed_bound_us $claim"
read -r _ ours < <(grep -a '^BENCH_lclk_bound_us' "$LOG")
read -r _ chrony < <(grep -a '^BENCH_chronyd_bound_us' "$LOG")
[ -n "${ours:-}" ] && echo "BENCH cluster.lclk_bound_us $ours"
[ -n "${chrony:-}" ] && echo "BENCH cluster.chronyd_bound_us $chrony"
# "BENCH_flows_lost JOB FLOWS LOST COUNTER" per job (tests/perfetto/flows.sh);
# "-" where the trace could not be read. Only trace_processor's own counts
# make the figure: check_trace.py's are a model of it.
grep -a '^BENCH_flows_lost' "$LOG" | awk '{ print "# " $2 ": " $3 " flows, " $4 " lost (" $5 ")" }
	$5 == "trace_processor" && $4 ~ /^[0-9]+$/ { lost += $4; n++ }
	END { if (n) print "BENCH perfetto.flows_lost " lost
	      else print "# perfetto.flows_lost: no count from trace_processor_shell (scripts/trace-processor)" }'
