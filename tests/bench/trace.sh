#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Cost of lclkctl trace per syscall, in one run, on a busy-polling socket
# ping-pong (tests/bench/pingpong.c -b: send, recv and EAGAIN recvs, the calls
# trace times) of DURATION_MS, measured as the initiator's CPU ns per call (CPU
# time, so that waiting for a CPU on a loaded host does not count):
#   untraced
#   traced by lclkctl trace --pid
#   traced by the equivalent bpftrace script (same calls, per-(pid, call,
#     outcome) log2 histograms, bytes, an outlier printf above 1 ms)
#   excluded by lclkctl trace's filter (--pid of another process)
#   floor: empty tp_btf programs on sys_enter and sys_exit (tests/bench/tp_floor),
#     what any probe on raw_syscalls costs every process before it does anything
# What an excluded process pays is a few tens of ns, below the ping-pong's
# swings: its mix of EAGAIN spins and wake-ups follows the scheduler. So
# untraced, excluded and floor also time a loop of identical EAGAIN recvs
# (tests/bench/eagain_loop.c, fastest of its batches) while the probes are
# attached, and the excluded figures come from it. The same loop, traced by
# lclkctl and by bpftrace in turn, prices a traced call without the
# ping-pong's swings: the EAGAIN recv is the call busy-polling transports
# make most.
# The same loop of getppid() (eagain_loop -g), a call lclkctl trace never
# times, prices what every other syscall of every process pays: nothing
# with fentry, the raw_syscalls slow path with tp_btf.
# TRACE_ATTACH=fentry|tp_btf|auto (default) is passed to lclkctl trace --attach.
# Each configuration runs REPS times, interleaved; medians are compared.
#   BENCH trace.overhead_vs_bpftrace         lclkctl's added ns / bpftrace's (goal <= 0.5)
#   BENCH trace.overhead_vs_bpftrace_eagain  the same on the EAGAIN loop
#   BENCH trace.untraced_syscall_ns          added ns per getppid() of any process while
#                                            lclkctl trace runs (goal <= 5)
#   BENCH trace.filtered_out_ns              added ns per call of an excluded process (goal <= 30)
#   BENCH trace.tracepoint_floor_ns          added ns per call with the empty programs
#   BENCH trace.filtered_out_above_floor_ns  what lclkctl's filter adds to that floor
set -u
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
PINGPONG=${PINGPONG:-build/tests/bench/pingpong}
TP_FLOOR=${TP_FLOOR:-build/tests/bench/tp_floor}
EAGAIN_LOOP=${EAGAIN_LOOP:-build/tests/bench/eagain_loop}
REPS=${REPS:-5}
TRACE_ATTACH=${TRACE_ATTACH:-auto}
DURATION_MS=${DURATION_MS:-500}
TRACEFS=/sys/kernel/tracing

TMP=$(mktemp -d /tmp/lclk-bench-trace.XXXXXX)
TRACER="" IDLE="" MOUNTED="" PP=""
cleanup() {
	[ -n "$PP" ] && kill -KILL "$PP" 2>/dev/null
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	[ -n "$IDLE" ] && kill -KILL "$IDLE" 2>/dev/null
	wait 2>/dev/null
	[ -n "$MOUNTED" ] && umount "$TRACEFS"
	rm -rf "$TMP"
}
trap cleanup EXIT

for b in "$LCLKCTL" "$PINGPONG" "$TP_FLOOR" "$EAGAIN_LOOP"; do
	[ -x "$b" ] || { echo "trace bench: $b is not built (make)" >&2; exit 1; }
done
command -v bpftrace >/dev/null || { echo "trace bench: bpftrace is not installed (make deps)" >&2; exit 1; }
# bpftrace's tracepoints need tracefs; mount it for the run if it is not.
if [ ! -e "$TRACEFS/events" ]; then
	mount -t tracefs nodev "$TRACEFS" && MOUNTED=1
fi

# The calls lclkctl trace times, by x86_64 number (tools/trace/trace_sys.c).
NRS="44 45 46 47 307 299 0 1 19 20 7 271 23 270 232 281 441 202 449 16"
bt_script() {
	local pred="" nr
	for nr in $NRS; do pred="$pred${pred:+ || }\$id == $nr"; done
	# BEGIN fires once every probe is attached.
	cat <<EOF
BEGIN { printf("Attached\n"); }
tracepoint:raw_syscalls:sys_enter /pid == $1/ {
	\$id = args->id;
	if ($pred) { @start[tid] = nsecs; }
}
tracepoint:raw_syscalls:sys_exit /@start[tid]/ {
	\$lat = nsecs - @start[tid];
	\$out = args->ret > 0 ? 0 : (args->ret == 0 ? 1 : (args->ret == -11 ? 2 : 3));
	@lat[pid, args->id, \$out] = hist(\$lat);
	@bytes[pid, args->id, \$out] = sum(args->ret > 0 ? args->ret : 0);
	if (\$lat > 1000000) { printf("%d %d %d %d\n", pid, tid, args->id, \$lat); }
	delete(@start[tid]);
}
EOF
}

# start_tracer MODE PID: attach MODE's probes (tracing PID where MODE traces
# one process) and wait until they are; sets TRACER.
start_tracer() {
	local mode=$1 pid=$2 i
	case $mode in
	lclkctl)	"$LCLKCTL" trace --attach "$TRACE_ATTACH" --pid "$pid" >/dev/null 2>"$TMP/tracer.err" & ;;
	filtered)	"$LCLKCTL" trace --attach "$TRACE_ATTACH" --pid "$IDLE" >/dev/null 2>"$TMP/tracer.err" & ;;
	bpftrace)	bt_script "$pid" >"$TMP/bt.bt"
			bpftrace "$TMP/bt.bt" >"$TMP/tracer.err" 2>&1 & ;;
	floor)		"$TP_FLOOR" 2>"$TMP/tracer.err" & ;;
	esac
	TRACER=$!
	# Attaching took over 20 s once on this loaded host: wait up to 60.
	for i in $(seq 1200); do
		grep -qs '^Tracing\|^Attached$' "$TMP/tracer.err" && break
		kill -0 $TRACER 2>/dev/null || break
		sleep 0.05
	done
	grep -qs '^Tracing\|^Attached$' "$TMP/tracer.err" ||
		{ echo "trace bench: $mode did not start:" >&2; cat "$TMP/tracer.err" >&2; exit 1; }
	[ "$mode" = filtered ] && grep -h '^Tracing\|not using fentry' "$TMP/tracer.err" >"$TMP/how"
}

stop_tracer() {
	[ -n "$TRACER" ] || return 0
	kill -TERM $TRACER
	wait $TRACER
	TRACER=""
}

# run MODE: one ping-pong, traced as MODE says, appending the initiator's CPU
# ns/call to $TMP/MODE; then, but for traced modes, the EAGAIN loop's to $TMP/MODE.loop.
run() {
	local mode=$1 pid i
	mkfifo "$TMP/ctl"
	"$PINGPONG" -w -b -n 100000000 -t "$DURATION_MS" <"$TMP/ctl" >"$TMP/pp.out" &
	PP=$!
	exec {ctl}>"$TMP/ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/pp.out" && break; sleep 0.05; done
	read -r _ pid _ <"$TMP/pp.out"
	TRACER=""
	[ "$mode" != untraced ] && start_tracer "$mode" "$pid"
	echo go >&$ctl
	exec {ctl}>&-
	wait $PP; PP=""
	case $mode in
	untraced|filtered|floor)
		"$EAGAIN_LOOP" | sort -g | head -1 >>"$TMP/$mode.loop"
		"$EAGAIN_LOOP" -g | sort -g | head -1 >>"$TMP/$mode.ppid" ;;
	esac
	stop_tracer
	rm -f "$TMP/ctl"
	awk '/^done/ { printf "%.2f\n", $6 / $3 }' "$TMP/pp.out" >>"$TMP/$mode"
}

# run_loop MODE: the EAGAIN loop traced by MODE (lclkctl or bpftrace), its
# fastest batch appended to $TMP/MODE.loop.
run_loop() {
	local mode=$1 pid i
	mkfifo "$TMP/ctl"
	"$EAGAIN_LOOP" -w <"$TMP/ctl" >"$TMP/loop.out" &
	PP=$!
	exec {ctl}>"$TMP/ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/loop.out" && break; sleep 0.05; done
	read -r _ pid <"$TMP/loop.out"
	start_tracer "$mode" "$pid"
	echo go >&$ctl
	exec {ctl}>&-
	wait $PP; PP=""
	stop_tracer
	rm -f "$TMP/ctl"
	sed 1d "$TMP/loop.out" | sort -g | head -1 >>"$TMP/$mode.loop"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

sleep 1000 &
IDLE=$!
for r in $(seq "$REPS"); do
	for mode in untraced lclkctl bpftrace filtered floor; do
		run $mode
	done
	run_loop lclkctl
	run_loop bpftrace
done

base=$(median <"$TMP/untraced")
lclk=$(median <"$TMP/lclkctl")
bt=$(median <"$TMP/bpftrace")
filt=$(median <"$TMP/filtered")
floor=$(median <"$TMP/floor")
loop_base=$(median <"$TMP/untraced.loop")
loop_filt=$(median <"$TMP/filtered.loop")
loop_floor=$(median <"$TMP/floor.loop")
loop_lclk=$(median <"$TMP/lclkctl.loop")
loop_bt=$(median <"$TMP/bpftrace.loop")
ppid_base=$(median <"$TMP/untraced.ppid")
ppid_filt=$(median <"$TMP/filtered.ppid")
ppid_floor=$(median <"$TMP/floor.ppid")
echo "# lclkctl trace: $(tr '\n' ' ' <"$TMP/how")"
for mode in untraced lclkctl bpftrace filtered floor; do
	echo "# ping-pong $mode, CPU ns per call, run by run: $(tr '\n' ' ' <"$TMP/$mode")"
done
for mode in untraced lclkctl bpftrace filtered floor; do
	echo "# EAGAIN loop $mode, CPU ns per call, run by run: $(tr '\n' ' ' <"$TMP/$mode.loop")"
done
echo "# ping-pong, CPU ns per call (median of $REPS): untraced $base, lclkctl $lclk, bpftrace $bt, excluded by the filter $filt, empty probes $floor"
echo "# EAGAIN loop, CPU ns per call (median of $REPS): untraced $loop_base, lclkctl $loop_lclk, bpftrace $loop_bt, excluded by the filter $loop_filt, empty probes $loop_floor"
for mode in untraced filtered floor; do
	echo "# getppid loop $mode, CPU ns per call, run by run: $(tr '\n' ' ' <"$TMP/$mode.ppid")"
done
echo "# getppid loop, CPU ns per call (median of $REPS): untraced $ppid_base, while lclkctl trace runs $ppid_filt, empty raw_syscalls probes $ppid_floor"
awk -v b="$base" -v l="$lclk" -v t="$bt" -v lb="$loop_base" -v f="$loop_filt" -v e="$loop_floor" \
    -v ll="$loop_lclk" -v lt="$loop_bt" -v pb="$ppid_base" -v pf="$ppid_filt" 'BEGIN {
	printf "BENCH trace.untraced_syscall_ns %.1f\n", pf - pb
	printf "BENCH trace.overhead_vs_bpftrace %.3f\n", (t > b) ? (l - b) / (t - b) : 0
	printf "BENCH trace.overhead_vs_bpftrace_eagain %.3f\n", (lt > lb) ? (ll - lb) / (lt - lb) : 0
	printf "BENCH trace.filtered_out_ns %.1f\n", f - lb
	printf "BENCH trace.tracepoint_floor_ns %.1f\n", e - lb
	printf "BENCH trace.filtered_out_above_floor_ns %.1f\n", f - e
}'
