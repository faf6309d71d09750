#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The cost of lclkctl trace in instructions. Run in a guest whose clock
# counts them (QEMU -icount shift=0: 1 ns of guest time per instruction;
# tests/bench/trace_vm.sh), where a process's CPU ns per call are its
# instructions per call and no pause of the emulator reaches them. On any
# other clock the figures are ns, not instructions.
#
# Two tight loops of one syscall (tests/bench/eagain_loop, fastest of its
# batches): recv(MSG_DONTWAIT) on an empty socket, which lclkctl trace
# times (recvfrom), and getppid(), which it never does. "Extra" is per call
# with a tracer attached minus without; ratios are extra over extra.
# Each run times, side by side:
#   untraced                  both loops, no tracer
#   lclkctl trace --pid IDLE  (fentry; then --attach tp_btf): both loops of a
#                             process outside the filter
#   bpftrace, pid IDLE        the same function (__x64_sys_recvfrom), entry
#                             and exit, with the same pid predicate
#   floor                     empty fentry and fexit programs on the same
#                             function (tests/bench/tp_floor -f): the
#                             trampoline, which any fentry tracer pays
#   lclkctl trace --pid LOOP  fentry: the recv loop traced
#   bpftrace, pid LOOP        the equivalent script on the same calls (see
#                             bt_script); and a bare histogram by pid
#   BENCH trace.untraced_syscall_insns          fentry: extra insns of getppid (goal 0)
#   BENCH trace.untraced_syscall_insns.tp_btf   the same with the tp_btf fallback
#   BENCH trace.filtered_out_insns_vs_bpftrace  extra of a filtered-out recv,
#         lclkctl / bpftrace (goal <= 0.5; the floor alone is most of both)
#   BENCH trace.overhead_vs_bpftrace_insns      extra of a traced recv,
#         lclkctl / bpftrace's equivalent script (goal <= 0.5)
#   BENCH trace.overhead_vs_bpftrace_insns.bpftrace_hist  the same against
#         the bare histogram
# and the extras themselves (trace.*_insns), and what each tracer adds to
# the floor. Each figure is the median of REPS runs (each run's figure from
# that run's own untraced loops), with min and max on the line after it;
# then each program's instructions per run, from the kernel's BPF
# statistics.
# Needs fentry: where lclkctl trace --attach fentry is refused (this build
# machine's kernel), the script says so and prints no figures.
set -u
cd "$(dirname "$0")/../.." || exit 1

LCLKCTL=${LCLKCTL:-build/lclkctl}
EAGAIN_LOOP=${EAGAIN_LOOP:-build/tests/bench/eagain_loop}
TP_FLOOR=${TP_FLOOR:-build/tests/bench/tp_floor}
REPS=${REPS:-5}
CALLS=${CALLS:-20000}
BATCHES=${BATCHES:-5}
FN=__x64_sys_recvfrom

TMP=$(mktemp -d /tmp/lclk-bench-insns.XXXXXX)
TRACER="" IDLE="" LOOP=""
cleanup() {
	[ -n "$LOOP" ] && kill -KILL "$LOOP" 2>/dev/null
	[ -n "$TRACER" ] && kill -KILL "$TRACER" 2>/dev/null
	[ -n "$IDLE" ] && kill -KILL "$IDLE" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

for b in "$LCLKCTL" "$EAGAIN_LOOP" "$TP_FLOOR"; do
	[ -x "$b" ] || { echo "trace_insns bench: $b is not built (make)" >&2; exit 1; }
done
command -v bpftrace >/dev/null || { echo "trace_insns bench: bpftrace is not installed (make deps)" >&2; exit 1; }

# bpftrace's equivalent of what lclkctl keeps per traced call, as
# tests/bench/trace.sh's script on raw_syscalls: the start by thread at
# entry; at exit a log2 histogram of the latency and the bytes, by (pid,
# call, outcome), and an outlier line above 1 ms. The pid predicate on
# both probes, as lclkctl's programs test the pid first.
bt_script() {
	cat <<EOF
BEGIN { printf("Attached\n"); }
kfunc:$FN /pid == $1/ { @start[tid] = nsecs; }
kretfunc:$FN /pid == $1/ {
	\$s = @start[tid];
	if (\$s) {
		\$lat = nsecs - \$s;
		\$out = retval > 0 ? 0 : (retval == 0 ? 1 : (retval == -11 ? 2 : 3));
		@lat[pid, 45, \$out] = hist(\$lat);
		@bytes[pid, 45, \$out] = sum(retval > 0 ? retval : 0);
		if (\$lat > 1000000) { printf("%d %d 45 %d\n", pid, tid, \$lat); }
		delete(@start[tid]);
	}
}
EOF
}

# The least a latency histogram takes: the start by thread, one histogram
# by pid, no bytes, no outcome. Priced beside the equivalent script, to
# show what the goal's ratio owes to the equivalent script's extra maps.
bt_script_hist() {
	cat <<EOF
BEGIN { printf("Attached\n"); }
kfunc:$FN /pid == $1/ { @start[tid] = nsecs; }
kretfunc:$FN /pid == $1/ {
	\$s = @start[tid];
	if (\$s) {
		@lat[pid] = hist(nsecs - \$s);
		delete(@start[tid]);
	}
}
EOF
}

# start_tracer KIND PID: attach and wait until attached; sets TRACER.
start_tracer() {
	local kind=$1 pid=$2
	: >"$TMP/tracer.err"
	case $kind in
	fentry|tp_btf)
		"$LCLKCTL" trace --attach "$kind" --pid "$pid" >/dev/null 2>"$TMP/tracer.err" & ;;
	bpftrace)
		bt_script "$pid" >"$TMP/bt.bt"
		bpftrace "$TMP/bt.bt" >"$TMP/tracer.err" 2>&1 & ;;
	bpftrace_hist)
		bt_script_hist "$pid" >"$TMP/bt.bt"
		bpftrace "$TMP/bt.bt" >"$TMP/tracer.err" 2>&1 & ;;
	floor)	"$TP_FLOOR" -f 2>"$TMP/tracer.err" & ;;
	esac
	TRACER=$!
	for _ in $(seq 6000); do
		grep -qs '^Tracing\|^Attached$' "$TMP/tracer.err" && return 0
		kill -0 "$TRACER" 2>/dev/null || break
		sleep 0.05
	done
	echo "trace_insns bench: $kind did not start:" >&2
	sed 's/^/# /' "$TMP/tracer.err" >&2
	kill -KILL "$TRACER" 2>/dev/null
	wait "$TRACER" 2>/dev/null
	TRACER=""
	return 1
}

stop_tracer() {
	kill -TERM "$TRACER"
	wait "$TRACER"
	TRACER=""
}

# loop [-g]: the fastest batch's ns (instructions) per call, of a loop
# started ahead (its pid in LOOP) and released now.
start_loop() {
	mkfifo "$TMP/ctl"
	"$EAGAIN_LOOP" -w -n "$CALLS" -b "$BATCHES" "$@" <"$TMP/ctl" >"$TMP/loop.out" &
	LOOP=$!
	exec {ctl}>"$TMP/ctl"
	for _ in $(seq 200); do grep -qs ready "$TMP/loop.out" && break; sleep 0.05; done
	read -r _ LOOP_PID <"$TMP/loop.out"
}
finish_loop() {
	echo go >&$ctl
	exec {ctl}>&-
	wait "$LOOP"
	LOOP=""
	rm -f "$TMP/ctl"
	sed 1d "$TMP/loop.out" | sort -g | head -1
}
loop() {
	start_loop "$@"
	finish_loop
}

# Both loops of a process the tracer KIND does not trace, into FILE.{recv,ppid}.
outside() {
	local kind=$1 out=$2
	start_tracer "$kind" "$IDLE" || return 1
	loop >>"$TMP/$out.recv"
	loop -g >>"$TMP/$out.ppid"
	stop_tracer
}

# The recv loop traced by KIND, into FILE.recv.
traced() {
	local kind=$1 out=$2
	start_loop
	start_tracer "$kind" "$LOOP_PID" || return 1
	finish_loop >>"$TMP/$out.recv"
	stop_tracer
}

if ! start_tracer fentry $$; then
	echo "trace_insns bench: lclkctl trace --attach fentry is not available here" >&2
	exit 0
fi
stop_tracer
echo "# kernel $(uname -r), loops of $BATCHES x $CALLS calls, $REPS runs"
sleep 100000 &
IDLE=$!
for r in $(seq "$REPS"); do
	loop >>"$TMP/untraced.recv"
	loop -g >>"$TMP/untraced.ppid"
	outside fentry out_fentry || exit 1
	outside tp_btf out_tp_btf || exit 1
	outside bpftrace out_bpftrace || exit 1
	outside floor out_floor || exit 1
	traced fentry in_fentry || exit 1
	traced bpftrace in_bpftrace || exit 1
	traced bpftrace_hist in_bpftrace_hist || exit 1
	echo "# run $r, per call: untraced recv $(tail -1 "$TMP/untraced.recv") getppid $(tail -1 "$TMP/untraced.ppid");" \
	     "outside the filter: fentry recv $(tail -1 "$TMP/out_fentry.recv") getppid $(tail -1 "$TMP/out_fentry.ppid")," \
	     "tp_btf recv $(tail -1 "$TMP/out_tp_btf.recv") getppid $(tail -1 "$TMP/out_tp_btf.ppid")," \
	     "bpftrace recv $(tail -1 "$TMP/out_bpftrace.recv") getppid $(tail -1 "$TMP/out_bpftrace.ppid")," \
	     "empty fentry/fexit recv $(tail -1 "$TMP/out_floor.recv");" \
	     "traced: lclkctl recv $(tail -1 "$TMP/in_fentry.recv"), bpftrace recv $(tail -1 "$TMP/in_bpftrace.recv")," \
	     "bpftrace histogram alone recv $(tail -1 "$TMP/in_bpftrace_hist.recv")"
done

# Per run: each figure from that run's lines of the files, one column each.
NAMES="untraced_syscall_insns untraced_syscall_insns.tp_btf filtered_out_insns filtered_out_insns.tp_btf
filtered_out_insns.bpftrace filtered_out_insns_vs_bpftrace traced_insns traced_insns.bpftrace
overhead_vs_bpftrace_insns fentry_floor_insns filtered_out_above_floor_insns
filtered_out_above_floor_insns.bpftrace traced_above_floor_insns traced_above_floor_insns.bpftrace
traced_insns.bpftrace_hist overhead_vs_bpftrace_insns.bpftrace_hist"
paste -d' ' "$TMP/untraced.recv" "$TMP/untraced.ppid" "$TMP/out_fentry.recv" "$TMP/out_fentry.ppid" \
	"$TMP/out_tp_btf.recv" "$TMP/out_tp_btf.ppid" "$TMP/out_bpftrace.recv" "$TMP/in_fentry.recv" \
	"$TMP/in_bpftrace.recv" "$TMP/out_floor.recv" "$TMP/in_bpftrace_hist.recv" |
awk 'function ratio(a, b) { return b > 0 ? a / b : -1 }
{
	ur = $1; up = $2; fl = $10
	print $4 - up, $6 - up, $3 - ur, $5 - ur, $7 - ur, ratio($3 - ur, $7 - ur),
	      $8 - ur, $9 - ur, ratio($8 - ur, $9 - ur), fl - ur, $3 - fl, $7 - fl, $8 - fl, $9 - fl,
	      $11 - ur, ratio($8 - ur, $11 - ur)
}' >"$TMP/figures"
col=0
for name in $NAMES; do
	col=$((col + 1))
	cut -d' ' -f$col "$TMP/figures" | sort -g | awk -v name="$name" '{ v[NR] = $1 } END {
		printf "BENCH trace.%s %.3f\n", name, (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "# trace.%s: median of %d runs, min %.3f, max %.3f\n", name, NR, v[1], v[NR]
	}'
done

# Where the instructions go: one more pass of each tracer with the
# kernel's BPF statistics on (they cost every run a clock read, so not
# while measuring): each program's runs, instructions per run (the run time
# under this clock) and size. The rest of a tracer's extra is the
# trampoline's.
# profile KIND WHO: WHO is "outside" (the loop is not traced) or "traced".
profile() {
	local kind=$1 who=$2
	sysctl -qw kernel.bpf_stats_enabled=1
	start_loop
	start_tracer "$kind" "$([ "$who" = traced ] && echo "$LOOP_PID" || echo "$IDLE")" || return 1
	finish_loop >/dev/null
	bpftool -j prog show | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    if p.get("run_cnt", 0) >= '"$((CALLS * BATCHES))"':
        print("#   %-20s %8d runs, %7.1f insns a run, %4d BPF insns, %5d bytes jited" % (
              p.get("name", "?"), p["run_cnt"], p["run_time_ns"] / p["run_cnt"],
              p["bytes_xlated"] // 8, p["bytes_jited"]))'
	stop_tracer
	sysctl -qw kernel.bpf_stats_enabled=0
}
for kind in fentry bpftrace; do
	for who in outside traced; do
		echo "# BPF statistics, $kind, recv loop $who:"
		profile "$kind" "$who"
	done
done
