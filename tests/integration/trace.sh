#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace against a deterministic socket ping-pong (tests/bench/pingpong.c):
# exact per-syscall counts and buckets, filters by pid, comm and cgroup, EAGAIN
# accounting, ioctl devices, outliers timed against the workload's own clock
# readings, Prometheus and Perfetto outputs, bad input.
#
# On the host the outliers are in CLOCK_MONOTONIC (no module); tests/guest/trace.sh
# runs this with TRACE_CLOCK=logical and the module loaded. ROUNDS and DELAY_US
# (the peer's delay) and BUSY_ROUNDS may be changed; TRACE_ATTACH=fentry|tp_btf forces
# lclkctl trace's attach mode (default: its own choice); TRACE_PARTS picks
# "core", "more" or both (default), or "contention" (core's counters under
# contention alone).
set -u
cd "$(dirname "$0")/../.."

LCLKCTL=${LCLKCTL:-build/lclkctl}
PINGPONG=${PINGPONG:-build/tests/bench/pingpong}
CHECK=tests/integration/trace_check.py
SHIM=${SHIM:-build/tests/shim/fail_bpf_prog.so}
TRACE_CLOCK=${TRACE_CLOCK:-monotonic}
TRACE_ATTACH=${TRACE_ATTACH:-auto}
# The checks come in two parts, so that a slow guest can run them apart.
TRACE_PARTS=${TRACE_PARTS:-core more}
part() { case " $TRACE_PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
ROUNDS=${ROUNDS:-100}
DELAY_US=${DELAY_US:-5000}
# The delay's bucket, (2^(k-1), 2^k] ns with k = ceil(log2(delay)): 5 ms is
# in (4.19 ms, 8.39 ms], leaving 3.39 ms for the wake-ups.
k=0; while [ $((1 << k)) -lt $((DELAY_US * 1000)) ]; do k=$((k + 1)); done
LOW=$(((1 << (k - 1)) + 1)) HIGH=$((1 << k))

TMP=$(mktemp -d /tmp/lclk-trace-test.XXXXXX)
CG="" CGM=""
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$CG" ] && [ -d "$CG" ] && rmdir "$CG"
	[ -n "$CGM" ] && [ -d "$CGM" ] && rmdir "$CGM"
	rm -rf "$TMP"
}
trap cleanup EXIT

# One trace_check.py answers all the checks (its "serve"): a python start
# takes 0.7 s in a TCG guest, and a run makes 20 to 30 checks. The checks
# are the same; where the server is gone, each runs alone as before.
CHECK_PY=$CHECK
mkfifo "$TMP/check.in" "$TMP/check.out"
python3 "$CHECK_PY" serve <"$TMP/check.in" >"$TMP/check.out" 2>&1 &
CHECK_SERVER=$!
PIDS+=("$CHECK_SERVER")
exec {check_w}>"$TMP/check.in" {check_r}<"$TMP/check.out"
trace_check() {
	local line rc=""
	if ! kill -0 "$CHECK_SERVER" 2>/dev/null; then
		"$CHECK_PY" "$@"
		return
	fi
	(IFS=$'\t'; printf '%s\n' "$*") >&"$check_w"
	while IFS= read -r -u "$check_r" line; do
		case $line in "@@trace_check@@ "*) rc=${line#* }; break ;; esac
		printf '%s\n' "$line"
	done
	[ -n "$rc" ] || { echo "trace_check.py serve: no answer to $*"; return 2; }
	return "$rc"
}
CHECK=trace_check

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
check() { local name=$1; shift; if "$@" >"$TMP/why" 2>&1; then ok "$name"; else not_ok "$name"; sed 's/^/# /' "$TMP/why"; fi; }

# Where the time goes (a slow guest's budget): "# time: SECTION N.N s" as
# each section ends, and in the end the share spent starting and stopping
# lclkctl trace (loading and attaching its programs, detaching them).
now_ms() { local up; read -r up _ </proc/uptime; echo $((${up%.*} * 1000 + 10#${up#*.} * 10)); }
SECTION="" SECTION_MS=$(now_ms) TRACER_MS=0 TRACERS=0
section() {
	local t
	t=$(now_ms)
	[ -z "$SECTION" ] || printf '# time: %s %d.%d s\n' "$SECTION" $(((t - SECTION_MS) / 1000)) $(((t - SECTION_MS) % 1000 / 100))
	SECTION=$1 SECTION_MS=$t
}

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
# A busy ping-pong under a traced, single-threaded TCG guest takes tens of
# seconds: wait up to PP_WAIT_S (a limit on a hang, not a timed check).
# Seconds, not loop turns: a loaded TCG guest takes tens of ms to fork grep.
# pp_done NAME SECONDS: whether it finished in time (not if it exited
# without finishing: there is nothing to wait for then).
pp_done() {
	local end=$((SECONDS + $2)) pid
	read -r _ pid _ <"$TMP/$1.out"
	while [ $SECONDS -lt $end ]; do
		grep -qs '^done' "$TMP/$1.out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	grep -qs '^done' "$TMP/$1.out"
}
# pp_show NAME: what a ping-pong that did not finish printed, and its state.
pp_show() {
	local p
	sed "s/^/#   $1 printed: /" "$TMP/$1.out"
	for p in $PP_PID $PP_PEER; do
		if [ -d "/proc/$p" ]; then
			echo "#   $p: $(grep -h '^State' "/proc/$p/status") $(tr '\0' ' ' <"/proc/$p/cmdline")"
			sed "s/^/#   $p stack: /" "/proc/$p/stack" 2>/dev/null
		else
			echo "#   $p: gone"
		fi
	done
}
pp_wait() {
	pp_done "$1" "${PP_WAIT_S:-300}" && return 0
	not_ok "ping-pong $1 finishes within ${PP_WAIT_S:-300} s"
	pp_show "$1"
	return 1
}

# start_trace NAME ARGS...: lclkctl trace --json -v in the background, attached.
start_trace() {
	local name=$1 i t0; shift
	t0=$(now_ms) TRACERS=$((TRACERS + 1))
	TRACE_ERR=$TMP/$name.err
	"$LCLKCTL" trace --attach "$TRACE_ATTACH" --json -v "$@" >"$TMP/$name.jsonl" 2>"$TRACE_ERR" &
	TRACE_PID=$!
	PIDS+=($TRACE_PID)
	for i in $(seq 1200); do
		grep -qs '^Tracing' "$TMP/$name.err" && { TRACER_MS=$((TRACER_MS + $(now_ms) - t0)); return 0; }
		kill -0 $TRACE_PID 2>/dev/null || break
		sleep 0.05
	done
	cat "$TMP/$name.err" >&2
	return 1
}
# stop_trace: SIGTERM, and lclkctl trace must be gone within STOP_WAIT_S;
# if not, where it is stuck, then SIGKILL (a hang fails here, not at the
# suite's timeout, which shows nothing).
stop_trace() {
	local i t0
	t0=$(now_ms)
	kill -TERM "$TRACE_PID"
	for i in $(seq $((${STOP_WAIT_S:-60} * 20))); do
		kill -0 "$TRACE_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$TRACE_PID" 2>/dev/null; then
		not_ok "lclkctl trace exits within ${STOP_WAIT_S:-60} s of SIGTERM"
		grep -h '^State' "/proc/$TRACE_PID/status" | sed 's/^/#   /'
		cat "/proc/$TRACE_PID/stack" 2>/dev/null | sed 's/^/#   /'
		sed 's/^/#   stderr: /' "$TRACE_ERR" | tail -n 5
		kill -KILL "$TRACE_PID"
		wait "$TRACE_PID" 2>/dev/null
		return 1
	fi
	wait "$TRACE_PID"
	TRACER_MS=$((TRACER_MS + $(now_ms) - t0))
}

echo "TAP version 13"
echo "# attach: $TRACE_ATTACH"

# ==== TRACE_PARTS "core": the filters, outputs and accounting ====
if part core; then

section "bad input"
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
check "a duration too short names its option: exit 2" \
	expect_exit 2 "^lclkctl trace: --spin-gap: '0' is too short" "$LCLKCTL" trace --spin-gap 0
check "trace merge: the same" \
	expect_exit 2 "^lclkctl trace merge: --min-wait: '0' is too short" "$LCLKCTL" trace merge --min-wait 0 x
check "no CAP_BPF: exit 3" expect_exit 3 "CAP_BPF" \
	setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$LCLKCTL" trace
# A verifier rejection in the chosen mode is an error, never a quiet switch
# to another mode (build/tests/shim/fail_bpf_prog.so fails the loads).
check "a program the kernel rejects: exit 1, no fallback" \
	expect_exit 1 "cannot load the BPF programs" \
	env LD_PRELOAD="$SHIM" LCLK_FAIL_BPF_PROG=sys_enter_btf,tp_sys_enter,fentry_recvfrom \
	"$LCLKCTL" trace --duration 1s

section "--pid"
# ---- --pid: exact counts and buckets ---------------------------------------
start_pp pid -n "$ROUNDS" -d $DELAY_US -l "$TMP/pid.log"
start_trace pid --pid "$PP_PID" --threshold $((DELAY_US / 2))us --prom-out "$TMP/pid.prom" \
	--trace-out "$TMP/pid.pftrace" --interval 500ms
go pid; pp_wait pid; stop_trace
check "pid: initiator's recvfrom: $ROUNDS calls in ($((LOW - 1)), $HIGH] ns (90%), none more than a bucket earlier, 8 bytes each" \
	$CHECK series "$TMP/pid.jsonl" "$PP_PID" recvfrom data "$ROUNDS" --low $LOW --high $HIGH \
		--log "$TMP/pid.log" --bytes $((8 * ROUNDS))
check "pid: initiator's sendto: $ROUNDS calls" \
	$CHECK series "$TMP/pid.jsonl" "$PP_PID" sendto data "$ROUNDS" --bytes $((8 * ROUNDS))
check "pid: the peer and every other process filtered out" $CHECK pids "$TMP/pid.jsonl" "$PP_PID"
check "pid: $ROUNDS outliers, each inside its round ($TRACE_CLOCK time)" \
	$CHECK outliers "$TMP/pid.jsonl" "$TMP/pid.log" "$PP_PID" "$TRACE_CLOCK" $((DELAY_US / 2 * 1000))
check "mode: the first line names the attach mode ($TRACE_ATTACH)" \
	grep -q "^Tracing .* with \(fentry/fexit on [0-9]* syscalls\|tp_btf on raw_syscalls\), starts in" "$TMP/pid.err"
case $TRACE_ATTACH in
fentry)	check "mode: fentry as asked" grep -q "with fentry/fexit" "$TMP/pid.err" ;;
tp_btf)	check "mode: tp_btf as asked" grep -q "with tp_btf" "$TMP/pid.err" ;;
auto)	if grep -q "^lclkctl trace: not using fentry: " "$TMP/pid.err"; then
		why=$(sed -n 's/^lclkctl trace: not using fentry: //p' "$TMP/pid.err")
		check "mode: --attach fentry refused where auto did not take it" \
			expect_exit 1 "attach fentry: $why" "$LCLKCTL" trace --attach fentry
	fi ;;
esac
if [ "$TRACE_CLOCK" = monotonic ]; then
	check "no module: warning about CLOCK_MONOTONIC" grep -q "CLOCK_MONOTONIC" "$TMP/pid.err"
else
	check "module: no CLOCK_MONOTONIC warning" bash -c "! grep -q CLOCK_MONOTONIC '$TMP/pid.err'"
fi
check "prom: cumulative buckets, +Inf, _sum, _count" \
	$CHECK prom "$TMP/pid.prom" "$PP_PID" recvfrom data "$ROUNDS" $HIGH --log "$TMP/pid.log"
check "perfetto: one thread track, a slice per outlier" \
	$CHECK perfetto "$TMP/pid.pftrace" "$TMP/pid.jsonl"
check "perfetto: Perfetto's schema reads it (protoc --decode, tests/perfetto/check_trace.py)" \
	python3 tests/perfetto/check_trace.py "$TMP/pid.pftrace"

section "--comm"
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

section "--cgroup, busy polling, ioctl devices"
# ---- --cgroup, and in it busy polling and ioctl devices ---------------------
# One tracer on a cgroup serves the three, one after the other (starting
# and stopping lclkctl trace takes 12 s in a TCG guest): the cgroup's
# ping-pong and one outside it, then the busy ping-pong and the ioctls, in
# the cgroup too. Without cgroup v2, each of the last two has a --pid tracer.
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG_ROOT" ]; then
	start_pp cg -n "$ROUNDS"
	CG_PID=$PP_PID CG_PEER=$PP_PEER
	start_pp cgo -n "$ROUNDS"
fi
# busy polling: EAGAIN calls counted exactly. BUSY_ROUNDS (default ROUNDS),
# or as many as BUSY_LIMIT_S (default 60) allow: two spinners on a
# single-threaded TCG guest meet once per vCPU time slice, a round takes a
# second there, several with another VM beside it.
start_pp busy -n "${BUSY_ROUNDS:-$ROUNDS}" -b -t $((${BUSY_LIMIT_S:-60} * 1000))
BUSY_PID=$PP_PID BUSY_PEER=$PP_PEER
# ioctl devices, by file name
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

if [ -z "$CG_ROOT" ]; then
	echo "ok $((n += 1)) # SKIP no cgroup v2 mounted"
	busy_out=busy io_out=io
	start_trace busy --pid "$BUSY_PID"
else
	CG="$CG_ROOT/lclk-trace-test-$$"
	mkdir "$CG"
	for p in "$CG_PID" "$CG_PEER" "$BUSY_PID" "$BUSY_PEER" "$IO"; do echo "$p" >"$CG/cgroup.procs"; done
	busy_out=cg io_out=cg
	start_trace cg --cgroup "$CG"
	go cg; go cgo; pp_wait cg; pp_wait cgo
fi
go busy; PP_WAIT_S=$((${BUSY_LIMIT_S:-60} + 120)) pp_wait busy
[ -n "$CG_ROOT" ] || { stop_trace; start_trace io --pid $IO; }
echo go >&$io_fd; exec {io_fd}>&-; wait $IO; stop_trace
if [ -n "$CG_ROOT" ]; then
	check "cgroup: exactly the five processes in it (two ping-pongs, the ioctls)" \
		$CHECK pids "$TMP/cg.jsonl" "$CG_PID" "$CG_PEER" "$BUSY_PID" "$BUSY_PEER" "$IO"
	check "cgroup: peer $ROUNDS sendto" $CHECK series "$TMP/cg.jsonl" "$CG_PEER" sendto data "$ROUNDS"
fi
read -r _ busy calls _ _ <<<"$(grep '^done' "$TMP/busy.out")"
check "busy: $busy rounds, at least one" test "${busy:-0}" -gt 0
check "busy: $busy recvfrom with data" $CHECK series "$TMP/$busy_out.jsonl" "$BUSY_PID" recvfrom data "$busy"
check "busy: the other $((calls - 2 * busy)) recvfrom are EAGAIN" \
	$CHECK series "$TMP/$busy_out.jsonl" "$BUSY_PID" recvfrom eagain $((calls - 2 * busy)) --bytes 0
check "ioctl: 3 on nvidia0" $CHECK series "$TMP/$io_out.jsonl" $IO ioctl error 3 --device nvidia
check "ioctl: 5 on infiniband/uverbs0" $CHECK series "$TMP/$io_out.jsonl" $IO ioctl error 5 --device infiniband
check "ioctl: 7 on /dev/null (other)" $CHECK series "$TMP/$io_out.jsonl" $IO ioctl error 7 --device other

section "busy polling is waiting"
# ---- busy polling is waiting: a run of EAGAIN calls, one outlier ----------
# The peer answers 20 ms late; the initiator spins on recv(MSG_DONTWAIT) the
# while. Each round's wait is one outlier from its first empty call to the
# call that got the answer, as the merge needs to see an MPI rank's wait:
# it counts exactly the empty calls the ping-pong made that round.
# --spin-gap 1s: a TCG guest's vCPUs take turns on one host thread, with
# other VMs beside it, so a spinner's vCPU stops for tens of ms, unseen by
# the guest. Half the rounds, at least, must spin 10 ms of the peer's 20.
start_pp spin -n 20 -b -d 20000 -l "$TMP/spin.log"
start_trace spin --pid "$PP_PID" --spin-gap 1s
go spin; pp_wait spin; stop_trace
check "busy polling: each round's run of EAGAIN calls is one wait of the peer's 20 ms" \
	$CHECK spins "$TMP/spin.jsonl" "$TMP/spin.log" "$PP_PID" 10000000

section "every call an outlier"
# ---- every call an outlier: streamed or counted as lost, never silent ------
# Many calls, not a number of rounds: at most 10 s of them (busy spinners in a
# single-threaded TCG guest make a round a second, 3000 would take an hour).
start_pp all -n $((ROUNDS * 100)) -b -t 10000
start_trace all --pid "$PP_PID" --threshold 1ns
go all; pp_wait all; stop_trace
check "threshold 1ns: outliers + lost events = calls" $CHECK invariant "$TMP/all.jsonl"

section "a reader that stalls"
# ---- a reader that stalls: the ring buffer fills, and what it cannot take -
# is counted. The tracer is stopped while the initiator makes 2 x 10000
# calls, each an outlier: the 1 MiB ring holds 10922 records of 96 bytes
# (88 and the ring's header), so at least 9078 are lost, however fast the
# reader is once continued.
start_pp drop -n 10000 -d 0
start_trace drop --pid "$PP_PID" --threshold 1ns
kill -STOP "$TRACE_PID"; go drop; pp_wait drop; kill -CONT "$TRACE_PID"; stop_trace
check "stalled reader: at least 9078 of 20000 outliers lost, and counted" \
	$CHECK invariant "$TMP/drop.jsonl" --calls 20000 --min-lost 9078
check "stalled reader: lclkctl warns of the loss" grep -q "warning: [0-9]* outliers lost" "$TMP/drop.err"

fi

# ==== TRACE_PARTS "core" or "contention": counters under contention ====
if part core || part contention; then

# atomic_adds PID NAME: the atomic adds in the kernel's code of program NAME
# of lclkctl PID (found through its fds); nothing if it has none so named.
atomic_adds() {
	local id
	for id in $(sed -n 's/^prog_id:\s*//p' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool prog show id "$id" | grep -q " name $2 " || continue
		bpftool prog dump xlated id "$id" | grep -c 'lock '
		return
	done
}

section "per-CPU counters"
# ---- per-CPU counters: exact under contention --------------------------------
# HAMMER_THREADS threads (default 8, 4 per CPU here) make HAMMER_CALLS sendto
# and recvfrom each at once: the histogram's calls and bytes are exactly the
# calls made (less only what the kernel reports as recursion misses, probes
# it skipped). An update of a counter interleaved with another program's on
# the same CPU (fentry programs are preemptible) would show as fewer.
#
# Under full preemption a thread preempted inside an fentry program makes
# the kernel skip the next run of that program on the CPU (a recursion
# miss): those calls are not counted, and must be reported as lost (calls
# counted + misses >= calls made). TRACE_FULL_PREEMPT=1 (tests/guest/trace.sh:
# in the VM only, never on a shared host) switches the kernel to full
# preemption for this test where it can (PREEMPT_DYNAMIC, through debugfs),
# and back.
HT=${HAMMER_THREADS:-8} HC=${HAMMER_CALLS:-20000}
PREEMPT_CTL=/sys/kernel/debug/sched/preempt
preempt_mode() {
	if [ -r $PREEMPT_CTL ]; then
		sed -n 's/.*(\([a-z]*\)).*/\1/p' $PREEMPT_CTL
	else
		grep -o 'preempt=[a-z]*' /proc/cmdline | cut -d= -f2
	fi
}
prev_preempt=""
if [ -n "${TRACE_FULL_PREEMPT:-}" ]; then
	[ -e /sys/kernel/debug/sched ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -w $PREEMPT_CTL ]; then
		prev_preempt=$(preempt_mode)
		echo full >$PREEMPT_CTL
	fi
fi
echo "# contention: preemption $(preempt_mode)"
if cc -O2 -pthread -o "$TMP/hammer" tests/integration/trace_hammer.c 2>"$TMP/cc.err"; then
	mkfifo "$TMP/ham.ctl"
	"$TMP/hammer" "$HT" "$HC" <"$TMP/ham.ctl" >"$TMP/ham.out" 2>&1 &
	HAM=$!; PIDS+=($HAM)
	exec {ham_fd}>"$TMP/ham.ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/ham.out" && break; sleep 0.05; done
	start_trace ham --pid $HAM
	# fentry programs can be preempted mid-update: their counters must be
	# added to with atomic instructions ("lock ... +=" in the kernel's
	# code); tp_btf's run with preemption off, where a plain add is exact.
	if grep -q "with fentry/fexit" "$TMP/ham.err"; then
		adds=$(atomic_adds $TRACE_PID fexit_sendto)
		check "contention: fexit_sendto adds to its counters atomically (${adds:-no} atomic adds, 3 wanted: slot, time, bytes)" \
			test "${adds:-0}" -ge 3
	else
		adds=$(atomic_adds $TRACE_PID tp_sys_exit)
		check "contention: tp_btf's exit program adds without atomics (${adds:-no program}; preemption is off)" \
			test "${adds:-x}" = 0
	fi
	echo go >&$ham_fd; exec {ham_fd}>&-; wait $HAM; stop_trace
	check "contention: $HT threads' $((HT * HC)) sendto counted, less only the losses reported, and their bytes" \
		$CHECK series "$TMP/ham.jsonl" $HAM sendto data $((HT * HC)) --bytes $((HT * HC))
	check "contention: $HT threads' $((HT * HC)) recvfrom counted, less only the losses reported, and their bytes" \
		$CHECK series "$TMP/ham.jsonl" $HAM recvfrom data $((HT * HC)) --bytes $((HT * HC))
	if [ "$(preempt_mode)" = full ] && grep -q "with fentry/fexit" "$TMP/ham.err"; then
		check "contention: full preemption, fentry: recursion misses happen and are reported as lost" \
			$CHECK lost "$TMP/ham.jsonl" recursion 1
		echo "# contention: $($CHECK lost "$TMP/ham.jsonl" recursion 0)"
	else
		echo "ok $((n += 1)) # SKIP recursion misses: forced only by fentry under full preemption"
	fi
else
	echo "ok $((n += 1)) # SKIP no compiler: $(head -1 "$TMP/cc.err")"
fi
[ -z "$prev_preempt" ] || echo "$prev_preempt" >$PREEMPT_CTL

fi

# ==== TRACE_PARTS "more": threads, containers, exits, interruptions, ia32 ====
if part more; then

section "threads"
# A process's name, not its threads': a thread that renamed itself (as
# NCCL's and PyTorch's do) still belongs to the process --comm selects.
mkfifo "$TMP/thr.ctl"
python3 -c '
import ctypes, socket, sys, threading
prctl = ctypes.CDLL(None).prctl
prctl(15, b"lclk_pp_proc", 0, 0, 0)
a, b = socket.socketpair()
def worker():
    prctl(15, b"lclk_pp_thread", 0, 0, 0)
    for _ in range(int(sys.argv[1])):
        a.send(b"x")
        b.recv(1)
print("ready", flush=True)
sys.stdin.readline()
t = threading.Thread(target=worker)
t.start()
t.join()
' "$ROUNDS" <"$TMP/thr.ctl" >"$TMP/thr.out" &
THR=$!; PIDS+=($THR)
exec {thr_fd}>"$TMP/thr.ctl"
for i in $(seq 100); do grep -qs ready "$TMP/thr.out" && break; sleep 0.05; done

# A start is used by the exit of its own call only. The process's recv
# begins while it is selected and ends after a thread renamed it, and it is
# named back before a futex wake (a futex call the probe does not time):
# the recv is one call of ~0.35 s, not one that ends at the wake 1.5 s later.
# It has the name of the process above, and the same tracer, after it
# (starting and stopping lclkctl trace takes 12 s in a TCG guest).
mkfifo "$TMP/stale.ctl"
python3 -c '
import ctypes, socket, sys, threading, time
libc = ctypes.CDLL(None)
libc.prctl(15, b"lclk_pp_proc", 0, 0, 0)
a, b = socket.socketpair()
main = threading.get_native_id()
def renamer():
    time.sleep(0.35)
    with open("/proc/self/task/%d/comm" % main, "w") as f:
        f.write("lclk_pp_other")
    a.send(b"x")
print("ready", flush=True)
sys.stdin.readline()
t = threading.Thread(target=renamer)
t.start()
b.recv(1)
t.join()
time.sleep(1.5)
libc.prctl(15, b"lclk_pp_proc", 0, 0, 0)
word = ctypes.c_int(0)
libc.syscall(202, ctypes.byref(word), 1, 1, 0, 0, 0)   # futex(FUTEX_WAKE)
' <"$TMP/stale.ctl" >"$TMP/stale.out" &
STALE=$!; PIDS+=($STALE)
exec {stale_fd}>"$TMP/stale.ctl"
for i in $(seq 100); do grep -qs ready "$TMP/stale.out" && break; sleep 0.05; done
start_trace thr --comm lclk_pp_proc
echo go >&$thr_fd; exec {thr_fd}>&-; wait $THR
echo go >&$stale_fd; exec {stale_fd}>&-; wait $STALE; stop_trace
check "comm: a renamed thread's $ROUNDS sendto count for its process" \
	$CHECK series "$TMP/thr.jsonl" $THR sendto data "$ROUNDS" --bytes "$ROUNDS"
check "stale start: the recv renamed mid-call is 1 call in (268, 537] ms, not one ending at a later futex" \
	$CHECK series "$TMP/thr.jsonl" $STALE recvfrom data 1 --low 268435457 --high 536870912

section "pid namespaces"
# ---- pid namespaces: a container's processes, and lclkctl in a container ----
# A ping-pong in its own pid namespace, traced from here: pids as seen here.
mkfifo "$TMP/nsp.ctl"
unshare --pid --fork --mount-proc "$PINGPONG" -w -n "$ROUNDS" -c lclk_pp_nsp \
	<"$TMP/nsp.ctl" >"$TMP/nsp.out" 2>&1 &
NSP_UNSHARE=$!; PIDS+=($NSP_UNSHARE)
exec {nsp_fd}>"$TMP/nsp.ctl"
for i in $(seq 100); do grep -qs ready "$TMP/nsp.out" && break; sleep 0.05; done
NSP=$(pgrep -P $NSP_UNSHARE); NSP_PEER=$(pgrep -P "$NSP")
start_trace nsp --comm lclk_pp_nsp
echo go >&$nsp_fd; exec {nsp_fd}>&-; pp_wait nsp; stop_trace
check "pidns: a containerised ping-pong's two processes, by their pids here" \
	$CHECK pids "$TMP/nsp.jsonl" "$NSP" "$NSP_PEER"
check "pidns: its initiator's $ROUNDS sendto" $CHECK series "$TMP/nsp.jsonl" "$NSP" sendto data "$ROUNDS"
# lclkctl and a ping-pong in one container without the host's pids: --pid
# takes, and reports give, the container's pids; other processes are not seen.
for filter in pid comm; do
	unshare --pid --fork --mount-proc bash -c '
		mkfifo "$1/ctl"; "$2" -w -n "$4" -c lclk_pp_inns <"$1/ctl" >"$1/inns.out" 2>&1 &
		exec 3>"$1/ctl"
		for i in $(seq 100); do grep -qs ready "$1/inns.out" && break; sleep 0.05; done
		read -r _ pid peer <"$1/inns.out"
		echo "$pid $peer" >"$1/inns.pids"
		if [ "$5" = pid ]; then sel="--pid $pid"; else sel="--comm lclk_pp_inns"; fi
		"$3" trace --attach "$6" --json -v $sel >"$1/inns.jsonl" 2>"$1/inns.err" &
		tr=$!
		for i in $(seq 1200); do grep -qs ^Tracing "$1/inns.err" && break; sleep 0.05; done
		echo go >&3; exec 3>&-
		for i in $(seq 600); do grep -qs ^done "$1/inns.out" && break; sleep 0.05; done
		kill -TERM $tr; wait $tr; rm -f "$1/ctl"
	' _ "$TMP" "$PINGPONG" "$LCLKCTL" "$ROUNDS" $filter "$TRACE_ATTACH"
	read -r IN IN_PEER <"$TMP/inns.pids"
	if [ $filter = pid ]; then
		check "lclkctl in a pidns: --pid $IN (its pid there) traces it" \
			$CHECK series "$TMP/inns.jsonl" "$IN" sendto data "$ROUNDS"
	else
		check "lclkctl in a pidns: --comm finds both processes, by their pids there" \
			$CHECK pids "$TMP/inns.jsonl" "$IN" "$IN_PEER"
	fi
done

section "processes that exit"
# ---- processes that exit ------------------------------------------------------
# Their series leave the kernel's map (which would fill up and cost per-CPU
# memory forever) and stay in the counts: 20 one-round ping-pongs, 40
# processes that exit, 40 sendto in the cumulative Prometheus counts.
# The number of keys in lclkctl PID's histogram map (found through its fds).
hists_keys() {
	local id
	for id in $(sed -n 's/^map_id:\s*//p' /proc/"$1"/fdinfo/* 2>/dev/null); do
		bpftool map show id "$id" | grep -q " name hists " || continue
		bpftool map dump id "$id" -j | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))'
		return
	done
	echo "no hists map of pid $1"
}
start_trace reap --comm lclk_pp_short --prom-out "$TMP/reap.prom" --interval 500ms
for i in $(seq 20); do "$PINGPONG" -n 1 -c lclk_pp_short >/dev/null 2>&1; done
sleep 2.5
keys=$(hists_keys $TRACE_PID)
sleep 0.6
stop_trace
check "exited processes: none of their series left in the kernel's map ($keys)" test "$keys" = 0
check "exited processes: their 40 sendto still counted" awk '
	/^lclk_trace_syscall_duration_seconds_count/ && /syscall="sendto"/ { n += $2 }
	END { if (n != 40) { print "sendto count " n; exit 1 } }' "$TMP/reap.prom"

section "interrupted calls"
# ---- interrupted calls ---------------------------------------------------------
# A recv and a futex wait with a timeout, each stopped and continued twice
# (no handler: the kernel restarts the recv, and continues the futex wait
# in restart_syscall), are one call each from first entry to last exit; an
# epoll_wait ended by a handled signal is "intr", not an error; a futex
# wait whose word has changed (EAGAIN) is not busy polling. A child drives
# each phase, told by a pipe when it begins: 1.5 s long, signals at 0.2 s
# and 0.5 s, leaving a slow guest room.
mkfifo "$TMP/intr.ctl"
python3 -c '
import ctypes, os, select, signal, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
class timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
a, b = socket.socketpair()
r, w = os.pipe()
print("ready", flush=True)
sys.stdin.readline()
parent = os.getpid()
if os.fork() == 0:
    def stop_cont():
        os.kill(parent, signal.SIGSTOP)
        time.sleep(0.05)
        os.kill(parent, signal.SIGCONT)
    os.read(r, 1)                       # recv
    t = time.monotonic()
    for at in (0.2, 0.5):
        time.sleep(max(0, t + at - time.monotonic()))
        stop_cont()
    time.sleep(max(0, t + 1.5 - time.monotonic()))
    a.send(b"x")
    os.read(r, 1)                       # futex wait
    t = time.monotonic()
    for at in (0.2, 0.5):
        time.sleep(max(0, t + at - time.monotonic()))
        stop_cont()
    os.read(r, 1)                       # epoll_wait
    time.sleep(0.2)
    os.kill(parent, signal.SIGUSR1)
    os._exit(0)
signal.signal(signal.SIGUSR1, lambda s, f: None)
os.write(w, b"r")
b.recv(1)
word = ctypes.c_int(0)
end = time.clock_gettime(time.CLOCK_MONOTONIC) + 1.5
ts = timespec(int(end), int((end % 1) * 1e9))
os.write(w, b"f")
# FUTEX_WAIT_BITSET (absolute CLOCK_MONOTONIC timeout), private
libc.syscall(202, ctypes.byref(word), 9 | 128, 0, ctypes.byref(ts), None, 0xffffffff)
ep = select.epoll()
os.write(w, b"e")
ep.poll(1.5)                            # -EINTR at 0.2 s, then a new call
for _ in range(5):                      # the word is not 1: EAGAIN at once
    libc.syscall(202, ctypes.byref(word), 0 | 128, 1, None, None, 0)
os.wait()
' <"$TMP/intr.ctl" >"$TMP/intr.out" 2>&1 &
INTR=$!; PIDS+=($INTR)
exec {intr_fd}>"$TMP/intr.ctl"
for i in $(seq 100); do grep -qs ready "$TMP/intr.out" && break; sleep 0.05; done

# A signal handler (SA_RESTART) that makes traced calls, a sendto and a recv,
# while the recv it interrupted waits to be restarted: the interrupted recv
# is one call from its first entry to its data, the handler's time
# included, as long as the program's own CLOCK_MONOTONIC reading around it
# (less at most half the signal's delay, the reading's slack on a slow
# guest), not one timed from after the handler.
SIG_MS=${SIG_DELAY_MS:-200}
SIGR=""
if cc -O2 -pthread -o "$TMP/sigr" tests/integration/trace_sigrestart.c 2>"$TMP/cc.err"; then
	mkfifo "$TMP/sigr.ctl"
	"$TMP/sigr" "$SIG_MS" <"$TMP/sigr.ctl" >"$TMP/sigr.out" 2>&1 &
	SIGR=$!; PIDS+=($SIGR)
	exec {sigr_fd}>"$TMP/sigr.ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/sigr.out" && break; sleep 0.05; done
fi

# Both in one cgroup, one tracer (starting and stopping lclkctl trace takes
# 12 s in a TCG guest), the one after the other, with the signal handler's
# threshold (the checks of the interrupted calls read no outlier); without
# cgroup v2, a --pid tracer each.
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG_ROOT" ]; then
	CGM="$CG_ROOT/lclk-trace-more-$$"
	mkdir "$CGM"
	for p in $INTR $SIGR; do echo "$p" >"$CGM/cgroup.procs"; done
	start_trace intr --cgroup "$CGM" --threshold $((SIG_MS / 4))ms
	sigr_out=intr
else
	start_trace intr --pid $INTR
	sigr_out=sigr
fi
echo go >&$intr_fd; exec {intr_fd}>&-; wait $INTR
if [ -n "$SIGR" ]; then
	if [ -z "$CG_ROOT" ]; then
		stop_trace
		start_trace sigr --pid $SIGR --threshold $((SIG_MS / 4))ms
	fi
	echo go >&"$sigr_fd"; exec {sigr_fd}>&-; wait "$SIGR"
fi
stop_trace
# One call from before the first stop to the data at 1.5 s: over 1.07 s.
check "interrupted: a restarted recv is 1 call of (1.07, 4.3] s" \
	$CHECK series "$TMP/intr.jsonl" $INTR recvfrom data 1 --low 1073741825 --high 4294967296
check "interrupted: the recv's interruptions are not calls of their own" \
	$CHECK absent "$TMP/intr.jsonl" $INTR recvfrom error
check "interrupted: a futex wait continued by restart_syscall is 1 call of (1.07, 4.3] s" \
	$CHECK series "$TMP/intr.jsonl" $INTR futex_wait error 1 --low 1073741825 --high 4294967296
check "interrupted: an epoll_wait ended by a handled signal is intr" \
	$CHECK series "$TMP/intr.jsonl" $INTR epoll_wait intr 1
check "interrupted: futex EAGAIN (word changed) is zero, not busy polling" \
	$CHECK series "$TMP/intr.jsonl" $INTR futex_wait zero 5

if [ -n "$SIGR" ]; then
	recv_ns=$(sed -n 's/^recv_ns //p' "$TMP/sigr.out")
	check "signal handler: ran once, during the recv ($(grep -h handler_ran "$TMP/sigr.out"))" \
		grep -q '^handler_ran 1$' "$TMP/sigr.out"
	check "signal handler: the restarted recv is one call as long as the program saw (${recv_ns:-?} ns)" \
		$CHECK longest "$TMP/$sigr_out.jsonl" $SIGR recvfrom $((${recv_ns:-0} - SIG_MS * 500000)) "${recv_ns:-0}"
	check "signal handler: the handler's recv and the restarted one, 2 recvfrom" \
		$CHECK series "$TMP/$sigr_out.jsonl" $SIGR recvfrom data 2
	check "signal handler: the handler's sendto counted" \
		$CHECK series "$TMP/$sigr_out.jsonl" $SIGR sendto data 1
	check "signal handler: the interruption is no call of its own" \
		$CHECK absent "$TMP/$sigr_out.jsonl" $SIGR recvfrom error
else
	echo "ok $((n += 1)) # SKIP no compiler: $(head -1 "$TMP/cc.err")"
fi

section "32-bit calls"
# ---- 32-bit calls ------------------------------------------------------------
# ia32 numbers are not x86_64 ones: 45 is brk there, recvfrom here.
if cc -O2 -o "$TMP/int80" tests/integration/trace_int80.c 2>"$TMP/cc.err" &&
   echo go | "$TMP/int80" 1 >/dev/null 2>&1; then
	mkfifo "$TMP/i80.ctl"
	"$TMP/int80" "$ROUNDS" <"$TMP/i80.ctl" >"$TMP/i80.out" &
	I80=$!; PIDS+=($I80)
	exec {i80_fd}>"$TMP/i80.ctl"
	for i in $(seq 100); do grep -qs ready "$TMP/i80.out" && break; sleep 0.05; done
	start_trace i80 --pid $I80
	echo go >&$i80_fd; exec {i80_fd}>&-; wait $I80; stop_trace
	check "ia32: $ROUNDS int \$0x80 brk calls are not x86_64 recvfrom" $CHECK pids "$TMP/i80.jsonl"
else
	echo "ok $((n += 1)) # SKIP no ia32 emulation or no compiler: $(head -1 "$TMP/cc.err")"
fi

fi

section ""
echo "# time: starting and stopping lclkctl trace $TRACERS times: $((TRACER_MS / 1000)).$((TRACER_MS % 1000 / 100)) s"
echo "1..$n"
[ $failed -eq 0 ]
