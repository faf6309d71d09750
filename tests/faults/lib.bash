# SPDX-License-Identifier: GPL-2.0
# Sourced by every scenario of the fault campaign (tests/faults/*.sh), run
# as root in the guest from the repository root by tests/faults/run.sh.
# A scenario sets up /dev/lclk0, starts readers, applies its fault while
# they read, and ends with "finish": the readers' READER lines summed into
#
#	FAULT NAME readings N violations M max_err_over_bound X
#
# and exit status 0 (no violation), 1 (violations) or 2 (could not run).
#
# LCLK_FAULT_LONG=1 ("make bench") stretches every phase: the readings
# grow with the time, the scenario stays the same.

# Scenarios slew, step and steer the system clock: only in the test VM
# (tests/vm/vm-run boots it with lclk.session=), never on the host.
if ! grep -q ' lclk\.session=' /proc/cmdline; then
	echo "FAULT $(basename "$0" .sh) could not run: not in the test VM (tests/vm/vm-run)"
	exit 2
fi

lclkctl=build/lclkctl
reader=build/tests/faults/fault_reader
name=$(basename "$0" .sh)
dir=$(mktemp -d "/tmp/lclk-fault-$name.XXXXXX")
export LCLK_CONTROL=$dir/ctl.sock
pids=()
readers=()
cleanup() {
	local p
	for p in "${pids[@]}" "${readers[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT

# A reader takes $burst readings, then sleeps $interval us: in the short
# campaign the readers leave the VM's one host thread to the clock daemons
# and the faults; the long one reads more (a sleep in the VM lasts ms).
interval=1000 burst=1
[ "${LCLK_FAULT_LONG:-0}" = 1 ] && interval=500 burst=20

# dur SECONDS: a phase's length, stretched in the long campaign.
dur() {
	if [ "${LCLK_FAULT_LONG:-0}" = 1 ]; then
		awk -v s="$1" 'BEGIN { print s * 6 }'
	else
		echo "$1"
	fi
}

# die WHY: the scenario could not run.
die() {
	echo "# $name: $*"
	[ ! -s "$dir/daemon.log" ] || sed 's/^/#   daemon: /' "$dir/daemon.log" | tail -n 5
	echo "FAULT $name could not run: $*"
	exit 2
}

# calibrate TRUTH [DEV]: C and E, logical(DEV) - TRUTH now and its error.
calibrate() {
	local r
	r=$($reader calibrate -d "${2:-/dev/lclk0}" -T "$1") || die "calibrate against $1"
	C=${r% *} E=${r#* }
	echo "# truth $1 + $C ns (known within $E ns)"
}

# read_all SECONDS TRUTH [READER OPTION...]: the readers of /dev/lclk0
# (mmap page, GET_TIME ioctl, Python lclk.Clock) for SECONDS, against
# TRUTH + C within E, in the background. Python takes 2-3 s to start in
# the VM: the short campaign runs it where a scenario sets python=1, the
# long one everywhere.
read_all() {
	local s=$1 truth=$2 k
	shift 2
	# Python first: the others' SECONDS start once it reads
	if [ "${python:-0}" = 1 ] || [ "${LCLK_FAULT_LONG:-0}" = 1 ]; then
		PYTHONPATH=build/python/lib /usr/bin/python3 tests/faults/fault_reader.py -n "$name" \
			-T "$truth" -c "$C" -e "$E" -s "$s" -i "$interval" -r "$burst" >>"$dir/readers.python" 2>&1 &
		readers+=("$!")
		started
	fi
	for k in mmap ioctl; do
		$reader read -n "$name" -k "$k" -T "$truth" -c "$C" -e "$E" -s "$s" -i "$interval" -r "$burst" "$@" \
			>>"$dir/readers.$k" 2>&1 &
		readers+=("$!")
	done
	if [ -n "$tracer" ] && [ -z "$calls" ]; then
		$reader calls -T "$truth" -c "$C" -e "$E" -s "$s" >"$dir/calls" 2>&1 &
		calls=$!
		pids+=("$calls")
	fi
	started
}

# started: every reader has taken its first reading (Python takes a
# second or more to start in the VM), so that a fault applied next is seen
# by all of them; up to 20 s.
started() {
	local end=$((SECONDS + 20))
	until [ "$(cat "$dir"/readers.* 2>/dev/null | grep -c '^START')" -ge "${#readers[@]}" ]; do
		[ $SECONDS -ge $end ] && die "the readers did not start in 20 s"
		sleep 0.05
	done
}

# read_one KIND SECONDS TRUTH [READER OPTION...]: one reader more.
read_one() {
	local k=$1 s=$2 truth=$3
	shift 3
	$reader read -n "$name" -k "$k" -T "$truth" -c "$C" -e "$E" -s "$s" -i "$interval" -r "$burst" "$@" \
		>>"$dir/readers.$k.${#readers[@]}" 2>&1 &
	readers+=("$!")
	started
}

# trace_calls: the traced-syscall reader, in the long campaign (lclkctl
# trace takes 10 to 30 s to attach in the VM): lclkctl trace attaches to
# fault_reader processes, the next read_all runs fault_reader calls beside
# its readers (blocking reads of a socket, the only traced calls a
# fault_reader makes), and finish checks their stamps against the truth of
# each call (trace_check.py).
tracer='' calls=''
trace_calls() {
	local end=$((SECONDS + 60))
	[ "${LCLK_FAULT_LONG:-0}" = 1 ] || return 0
	$lclkctl --json trace -v --comm fault_reader --threshold 2ms --duration 600s \
		>"$dir/trace.json" 2>"$dir/trace.err" &
	tracer=$!
	pids+=("$tracer")
	until grep -q '^Tracing' "$dir/trace.err" 2>/dev/null; do
		[ $SECONDS -ge $end ] && die "lclkctl trace did not attach in 60 s: $(tail -n 2 "$dir/trace.err")"
		sleep 0.1
	done
}

# finish: wait for the readers, show their violations and sum their
# lines. A scenario with no synchronised reading could not run, unless
# may_unsync=1 says that is a correct outcome (a source refused).
finish() {
	local p need=1
	[ "${may_unsync:-0}" = 1 ] && need=0
	for p in "${readers[@]}"; do wait "$p"; done
	readers=()
	if [ -n "$tracer" ]; then
		wait "$calls"
		kill -INT "$tracer" 2>/dev/null
		wait "$tracer"
		PYTHONPATH=build/python/lib /usr/bin/python3 tests/faults/trace_check.py "$name" \
			"$dir/calls" "$dir/trace.json" >"$dir/readers.trace" 2>&1
	fi
	[ ! -s "$dir/daemon.log" ] || tail -n 3 "$dir/daemon.log" | sed 's/^/# daemon: /'
	cat "$dir"/readers.* | grep -vE '^(READER|START)' | head -n 30 | sed 's/^VIOLATION/# VIOLATION/'
	cat "$dir"/readers.* | grep '^READER' | sed 's/^/# /'
	cat "$dir"/readers.* | awk -v name="$name" -v need="$need" '
		/^READER/ { n++; r += $5; s += $7; v += $9; if ($11 > x) x = $11 }
		END {
			if (n == 0 || (need && s == 0)) {
				printf "FAULT %s could not run: %d readers, no synchronised reading\n", name, n
				exit 2
			}
			printf "FAULT %s readings %d violations %d max_err_over_bound %.3f\n", name, r, v, x
			exit v > 0
		}'
}

# serve_lclk1 PORT: /dev/lclk1 answers NTP on 127.0.0.1:PORT.
serve_lclk1() {
	LCLK_CONTROL=$dir/serve.sock $lclkctl -d /dev/lclk1 serve -a 127.0.0.1 -p "$1" \
		--rate 50 --burst 20 >"$dir/serve.log" 2>&1 &
	pids+=("$!")
}

# updates: the module's count of changes to /dev/lclk0's model.
updates() {
	$lclkctl --json status 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)['stats']['updates'])"
}

# wait_updates N SECONDS: until N more updates than now, or SECONDS pass.
wait_updates() {
	local want=$(($(updates) + $1)) end=$((SECONDS + $2))
	until [ "$(updates)" -ge "$want" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.2
	done
}

# start_daemon SOURCE [POLL]: "lclkctl daemon" steering /dev/lclk0 from
# SOURCE, polled every POLL (default 250ms, the short campaign's budget);
# its pid in $daemon. Returns once it has synchronised the clock and
# updated it twice more.
start_daemon() {
	cat >"$dir/lclk.conf" <<EOC
device /dev/lclk0
source $1
poll ${2:-250ms} ${2:-250ms}
samples 4 20ms 100ms
maxdrift 20ppm
maxslew 500ppm
control $dir/ctl.sock
metrics off
log info
EOC
	$lclkctl daemon -c "$dir/lclk.conf" >"$dir/daemon.log" 2>&1 &
	daemon=$!
	pids+=("$daemon")
	wait_updates 2 40 || die "the daemon did not synchronise /dev/lclk0 in 40 s"
	echo "# daemon synchronised: $($lclkctl status | grep -m1 -i bound)"
}

# Nothing before a scenario: the clock unsynchronised, lclk1 too.
$lclkctl set --unsync --allow-backward >/dev/null
$lclkctl -d /dev/lclk1 set --unsync --allow-backward >/dev/null 2>&1
