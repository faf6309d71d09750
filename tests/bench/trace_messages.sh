#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# What lclkctl trace --messages adds: a TCP ping-pong over loopback
# (tests/bench/pingpong -T, ROUNDS rounds of 8 bytes each way), the
# initiator's CPU ns per round, traced by lclkctl trace --comm without and
# with --messages (REPS runs each, interleaved; medians), and untraced:
#   BENCH trace.pairs_overhead_vs_plain   with message records / without (goal <= 1.2)
#   BENCH trace.pairs_overhead_vs_untraced  with message records / untraced
#   BENCH trace.pairs_elapsed_vs_plain    the same in elapsed time per round,
#         which on one vCPU holds the reader's work too
#   BENCH trace.pairs_records_lost_share  message records the ring buffer
#         could not take / all, over the runs (a cheap tracer that loses
#         records is no bargain: the ratio is read beside this)
# Needs fentry (Linux 5.12+ where BPF trampolines are allowed): where
# lclkctl refuses --messages the script says why and prints no figures
# (this build machine's kernel; tests/bench/trace_vm.sh runs it in the VM).
set -u
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
PINGPONG=${PINGPONG:-build/tests/bench/pingpong}
ROUNDS=${ROUNDS:-5000}
REPS=${REPS:-9}
COMM=lclk-pp-msg

for b in "$LCLKCTL" "$PINGPONG"; do
	[ -x "$b" ] || { echo "trace_messages bench: $b is not built (make)" >&2; exit 1; }
done
TMP=$(mktemp -d /tmp/lclk-bench-msg.XXXXXX)
TRACER=""
cleanup() {
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# Start lclkctl trace with the options given; wait for its "Tracing" line.
start_tracer() {
	"$LCLKCTL" trace --comm "$COMM" --trace-out "$TMP/t.pftrace" "$@" \
		>"$TMP/tracer.out" 2>"$TMP/tracer.err" &
	TRACER=$!
	for _ in $(seq 100); do
		grep -q '^Tracing' "$TMP/tracer.err" && return 0
		kill -0 "$TRACER" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/# /' "$TMP/tracer.err" >&2
	TRACER=""
	return 1
}

stop_tracer() {
	kill -TERM "$TRACER"
	wait "$TRACER"
	TRACER=""
}

# The initiator's CPU ns per round, and the elapsed ns per round.
run_pp() {
	"$PINGPONG" -T -n "$ROUNDS" -c "$COMM" |
		awk -v n="$ROUNDS" '/^done/ { printf "%d %d\n", $6 / n, $5 / n }'
}

# The median of column COL of FILE.
median() { cut -d' ' -f"$2" "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

if ! start_tracer --messages; then
	echo "trace_messages bench: lclkctl trace --messages is not available here" >&2
	exit 0
fi
stop_tracer
for _ in $(seq "$REPS"); do
	run_pp >>"$TMP/plain"
	start_tracer && { run_pp >>"$TMP/traced"; stop_tracer; }
	start_tracer --messages && { run_pp >>"$TMP/messages"; stop_tracer; }
	recorded=$(sed -n 's/^lclkctl trace: \([0-9]*\) message records$/\1/p' "$TMP/tracer.err")
	# one warning per period that lost some
	lost=$(awk '/^lclkctl trace: warning: [0-9]+ message records lost/ { n += $4 } END { print n + 0 }' \
		"$TMP/tracer.err")
	echo "# CPU and elapsed ns per round: untraced $(tail -1 "$TMP/plain")," \
	     "traced $(tail -1 "$TMP/traced"), with message records $(tail -1 "$TMP/messages"):" \
	     "${recorded:-0} recorded, $lost lost"
	echo "${recorded:-0} $lost" >>"$TMP/records"
done
plain=$(median "$TMP/plain" 1)
traced=$(median "$TMP/traced" 1)
messages=$(median "$TMP/messages" 1)
echo "# CPU ns per round (medians): untraced $plain, traced $traced, traced with message records $messages"
echo "BENCH trace.pairs_overhead_vs_plain $(echo "scale=3; $messages / $traced" | bc)"
# The spread: each run's ratio, from that run's two traced ping-pongs
# (column 1 of each file: CPU ns per round).
paste -d' ' "$TMP/messages" "$TMP/traced" | awk '{ print $1 / $3 }' | sort -g |
	awk '{ v[NR] = $1 } END { printf "# trace.pairs_overhead_vs_plain: run by run, min %.3f, max %.3f over %d runs\n", v[1], v[NR], NR }'
echo "BENCH trace.pairs_overhead_vs_untraced $(echo "scale=3; $messages / $plain" | bc)"
echo "BENCH trace.pairs_elapsed_vs_plain $(echo "scale=3; $(median "$TMP/messages" 2) / $(median "$TMP/traced" 2)" | bc)"
awk '{ r += $1; l += $2 } END { printf "BENCH trace.pairs_records_lost_share %.3f\n", r + l ? l / (r + l) : 0 }' "$TMP/records"
