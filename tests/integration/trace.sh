#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace against a deterministic socket ping-pong (tests/bench/pingpong.c):
# exact per-syscall counts and buckets, filters by pid, comm and cgroup, EAGAIN
# accounting, ioctl devices, outliers timed against the workload's own clock
# readings, Prometheus and Perfetto outputs, bad input.
#
# On the host the outliers are in CLOCK_MONOTONIC (no module); tests/guest/trace.sh
# runs this with TRACE_CLOCK=logical and the module loaded. ROUNDS and DELAY_US
# (the peer's delay) may be changed.
set -u
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
PINGPONG=${PINGPONG:-build/tests/bench/pingpong}
CHECK=tests/integration/trace_check.py
TRACE_CLOCK=${TRACE_CLOCK:-monotonic}
ROUNDS=${ROUNDS:-100}
DELAY_US=${DELAY_US:-5000}
# The delay's bucket, (2^(k-1), 2^k] ns with k = ceil(log2(delay)): 5 ms is
# in (4.19 ms, 8.39 ms], leaving 3.39 ms for the wake-ups.
k=0; while [ $((1 << k)) -lt $((DELAY_US * 1000)) ]; do k=$((k + 1)); done
LOW=$(((1 << (k - 1)) + 1)) HIGH=$((1 << k))

TMP=$(mktemp -d /tmp/lclk-trace-test.XXXXXX)
CG=""
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG"
	rm -rf "$TMP"
}
trap cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
check() { local name=$1; shift; if "$@" >"$TMP/why" 2>&1; then ok "$name"; else not_ok "$name"; sed 's/^/# /' "$TMP/why"; fi; }

# start_pp NAME ARGS...: a ping-pong waiting for "go" on its fifo; sets
# PP_PID, PP_PEER. go NAME starts it, pp_wait NAME waits for it to finish.
start_pp() {
	local name=$1 i; shift
	mkfifo "$TMP/$name.ctl"
	"$PINGPONG" -w "$@" <"$TMP/$name.ctl" >"$TMP/$name.out" 2>&1 &
	PIDS+=($!)
	eval "exec {fd_$name}>$TMP/$name.ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/$name.out" && break; sleep 0.05; done
	read -r _ PP_PID PP_PEER <"$TMP/$name.out"
}
go() { local fd="fd_$1"; echo go >&"${!fd}"; eval "exec ${!fd}>&-"; }
pp_wait() {
	local i
	for i in $(seq 600); do grep -qs '^done' "$TMP/$1.out" && return 0; sleep 0.05; done
	return 1
}

# start_trace NAME ARGS...: lclkctl trace --json -v in the background, attached.
start_trace() {
	local name=$1 i; shift
	"$LCLKCTL" trace --json -v "$@" >"$TMP/$name.jsonl" 2>"$TMP/$name.err" &
	TRACE_PID=$!
	PIDS+=($TRACE_PID)
	for i in $(seq 200); do
		grep -qs '^Tracing' "$TMP/$name.err" && return 0
		kill -0 $TRACE_PID 2>/dev/null || break
		sleep 0.05
	done
	cat "$TMP/$name.err" >&2
	return 1
}
stop_trace() { kill -INT "$TRACE_PID"; wait "$TRACE_PID"; }

echo "TAP version 13"

# ---- bad input --------------------------------------------------------------
expect_exit() {
	local want=$1 pattern=$2 rc; shift 2
	"$@" >"$TMP/bad.out" 2>&1; rc=$?
	if [ $rc -ne "$want" ] || ! grep -q "$pattern" "$TMP/bad.out"; then
		echo "exit $rc (want $want):"; cat "$TMP/bad.out"; return 1
	fi
}
dead=$(sh -c 'echo $$')		# a pid that just exited
check "unknown pid: exit 2" expect_exit 2 "no such process" "$LCLKCTL" trace --pid $dead
check "missing cgroup: exit 2" expect_exit 2 "No such file" "$LCLKCTL" trace --cgroup "$TMP/none"
check "not a cgroup: exit 2" expect_exit 2 "not a cgroup v2" "$LCLKCTL" trace --cgroup "$TMP"
check "comm too long: exit 2" expect_exit 2 "1 to 15 characters" "$LCLKCTL" trace --comm 0123456789abcdef
check "no CAP_BPF: exit 3" expect_exit 3 "CAP_BPF" \
	setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$LCLKCTL" trace

# ---- --pid: exact counts and buckets ---------------------------------------
start_pp pid -n "$ROUNDS" -d $DELAY_US -l "$TMP/pid.log"
start_trace pid --pid "$PP_PID" --threshold $((DELAY_US / 2))us --prom-out "$TMP/pid.prom" \
	--trace-out "$TMP/pid.pftrace" --interval 500ms
go pid; pp_wait pid; stop_trace
check "pid: initiator's recvfrom: $ROUNDS calls in ($((LOW - 1)), $HIGH] ns (90%), none more than a bucket earlier, 8 bytes each" \
	$CHECK series "$TMP/pid.jsonl" "$PP_PID" recvfrom data "$ROUNDS" --low $LOW --high $HIGH --bytes $((8 * ROUNDS))
check "pid: initiator's sendto: $ROUNDS calls" \
	$CHECK series "$TMP/pid.jsonl" "$PP_PID" sendto data "$ROUNDS" --bytes $((8 * ROUNDS))
check "pid: the peer and every other process filtered out" $CHECK pids "$TMP/pid.jsonl" "$PP_PID"
check "pid: $ROUNDS outliers, each inside its round ($TRACE_CLOCK time)" \
	$CHECK outliers "$TMP/pid.jsonl" "$TMP/pid.log" "$PP_PID" "$TRACE_CLOCK"
if [ "$TRACE_CLOCK" = monotonic ]; then
	check "no module: warning about CLOCK_MONOTONIC" grep -q "CLOCK_MONOTONIC" "$TMP/pid.err"
else
	check "module: no CLOCK_MONOTONIC warning" bash -c "! grep -q CLOCK_MONOTONIC '$TMP/pid.err'"
fi
check "prom: cumulative buckets, +Inf, _sum, _count" \
	$CHECK prom "$TMP/pid.prom" "$PP_PID" recvfrom data "$ROUNDS" $HIGH
check "perfetto: one thread track, a slice per outlier" \
	$CHECK perfetto "$TMP/pid.pftrace" "$TMP/pid.jsonl"
if command -v protoc >/dev/null; then
	check "perfetto: protoc --decode_raw parses it" \
		bash -c "protoc --decode_raw <'$TMP/pid.pftrace' | grep -q 'recvfrom'"
fi

# ---- --comm: both processes of one ping-pong, not the others: a name that ---
# differs in its last character, one that extends it (the probe compares
# names a word at a time, up to the NUL)
start_pp ca -n "$ROUNDS" -c lclk_pp_a
start_pp cb -n "$ROUNDS" -c lclk_pp_b
start_pp cx -n "$ROUNDS" -c lclk_pp_ab
read -r _ A A_PEER <"$TMP/ca.out"
start_trace comm --comm lclk_pp_a
go ca; go cb; go cx; pp_wait ca; pp_wait cb; pp_wait cx; stop_trace
check "comm: exactly lclk_pp_a's two processes" $CHECK pids "$TMP/comm.jsonl" "$A" "$A_PEER"
check "comm: initiator $ROUNDS sendto" $CHECK series "$TMP/comm.jsonl" "$A" sendto data "$ROUNDS"
# The peer's first recvfrom was already blocked when tracing started: not timed.
check "comm: peer $((ROUNDS - 1)) recvfrom (the first began before tracing)" \
	$CHECK series "$TMP/comm.jsonl" "$A_PEER" recvfrom data $((ROUNDS - 1))
# The longest name, 15 characters, against one differing in the last.
start_pp cl -n "$ROUNDS" -c lclk_pp_fifteen
start_pp cm -n "$ROUNDS" -c lclk_pp_fifteex
read -r _ L L_PEER <"$TMP/cl.out"
start_trace comm15 --comm lclk_pp_fifteen
go cl; go cm; pp_wait cl; pp_wait cm; stop_trace
check "comm: a 15-character name, exactly its two processes" \
	$CHECK pids "$TMP/comm15.jsonl" "$L" "$L_PEER"

# ---- --cgroup ---------------------------------------------------------------
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$CG_ROOT" ]; then
	echo "ok $((n += 1)) # SKIP no cgroup v2 mounted"
else
	CG="$CG_ROOT/lclk-trace-test-$$"
	mkdir "$CG"
	start_pp cg -n "$ROUNDS"
	echo "$PP_PID" >"$CG/cgroup.procs"; echo "$PP_PEER" >"$CG/cgroup.procs"
	CG_PID=$PP_PID CG_PEER=$PP_PEER
	start_pp cgo -n "$ROUNDS"
	start_trace cg --cgroup "$CG"
	go cg; go cgo; pp_wait cg; pp_wait cgo; stop_trace
	check "cgroup: exactly the two processes in it" $CHECK pids "$TMP/cg.jsonl" "$CG_PID" "$CG_PEER"
	check "cgroup: peer $ROUNDS sendto" $CHECK series "$TMP/cg.jsonl" "$CG_PEER" sendto data "$ROUNDS"
fi

# ---- busy polling: EAGAIN calls counted exactly ----------------------------
start_pp busy -n "$ROUNDS" -b
start_trace busy --pid "$PP_PID"
go busy; pp_wait busy; stop_trace
read -r _ _ calls _ _ <<<"$(grep '^done' "$TMP/busy.out")"
check "busy: $ROUNDS recvfrom with data" $CHECK series "$TMP/busy.jsonl" "$PP_PID" recvfrom data "$ROUNDS"
check "busy: the other $((calls - 2 * ROUNDS)) recvfrom are EAGAIN" \
	$CHECK series "$TMP/busy.jsonl" "$PP_PID" recvfrom eagain $((calls - 2 * ROUNDS)) --bytes 0

# ---- ioctl devices, by file name --------------------------------------------
mkdir -p "$TMP/dev/infiniband"
mknod "$TMP/dev/nvidia0" c 1 3 && mknod "$TMP/dev/infiniband/uverbs0" c 1 3
mkfifo "$TMP/io.ctl"
python3 -c '
import fcntl, os, sys
fds = [os.open(p, os.O_RDWR) for p in sys.argv[1:]]
print("ready", flush=True)
sys.stdin.readline()
for fd, k in zip(fds, (3, 5, 7)):
    for _ in range(k):
        try:
            fcntl.ioctl(fd, 0x5401, bytes(64))
        except OSError:
            pass
' "$TMP/dev/nvidia0" "$TMP/dev/infiniband/uverbs0" /dev/null <"$TMP/io.ctl" >"$TMP/io.out" &
IO=$!; PIDS+=($IO)
exec {io_fd}>"$TMP/io.ctl"
for i in $(seq 100); do grep -qs ready "$TMP/io.out" && break; sleep 0.05; done
start_trace io --pid $IO
echo go >&$io_fd; exec {io_fd}>&-; wait $IO; stop_trace
check "ioctl: 3 on nvidia0" $CHECK series "$TMP/io.jsonl" $IO ioctl error 3 --device nvidia
check "ioctl: 5 on infiniband/uverbs0" $CHECK series "$TMP/io.jsonl" $IO ioctl error 5 --device infiniband
check "ioctl: 7 on /dev/null (other)" $CHECK series "$TMP/io.jsonl" $IO ioctl error 7 --device other

# ---- every call an outlier: streamed or counted as lost, never silent ------
start_pp all -n $((ROUNDS * 100)) -b
start_trace all --pid "$PP_PID" --threshold 1ns
go all; pp_wait all; stop_trace
check "threshold 1ns: outliers + lost events = calls" $CHECK invariant "$TMP/all.jsonl"

echo "1..$n"
[ $failed -eq 0 ]
