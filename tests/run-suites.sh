#!/bin/bash
# Run every test suite, host and VM, and sum their TAP:
#   unit         build/tests/host/**, python/tests/test_*.py  (this machine;
#                the torch tests also with Debian sid's torch 2.x, in its root)
#   fuzz         build/tests/fuzz/*          (libFuzzer, briefly)
#   integration  tests/integration/*.sh      (this machine, as root)
#   vm           tests/guest/run.sh in the VM, on every kernel of the matrix
#   deb          tests/deb/run.sh: make deb, lintian, the packages installed
#                (DKMS) and purged in each kernel's release root, modprobe in
#                a VM of each kernel
#   selftest     tests/vm/selftest.sh        (the test bed catches failures)
#   demo         tests/vm/demo.sh            ("make demo" runs and shows a synced clock)
# Usage: tests/run-suites.sh [SUITE...]   (default: all, in that order)
# LCLK_VM_PLAN=1: the vm suite lists its VMs (in the order they start, with
# the seconds each is expected to take) and their tests, boots none.
# The last line is "N passed, N failed, N skipped" (skipped: skips, and
# known shortfalls, TAP's "not ok ... # TODO"); the exit status is non-zero
# when anything failed.
set -uo pipefail

cd "$(dirname "$0")/.."
logs=${LCLK_LOG_DIR:-build/test-logs}
mkdir -p "$logs"
passed=0 failed=0 skipped=0
# Every failure again just above the last line: CI keeps only the tail.
failures=$logs/failures
: >"$failures"
fuzz_seconds=${LCLK_FUZZ_SECONDS:-10}
vm_timeout=${LCLK_VM_TIMEOUT:-2400}

# run_tap NAME CMD...: run CMD, show and log its output, count its TAP lines.
# A command that fails without a "not ok" line counts as one failure.
run_tap() {
	local name=$1 log=$logs/$1.log rc p f s t wholly
	shift
	echo "# ---- $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -cE '^ok( |$)' "$log" | head -n 1)
	s=$(grep -cE '^ok( |$).*# *(SKIP|skip)' "$log" | head -n 1)
	# A test that skips whole says so in its plan ("1..0 # SKIP why"):
	# one skip, so that it is never silently absent from the count.
	wholly=$(grep -cE '^1\.\.0 *# *(SKIP|skip)' "$log" | head -n 1)
	# "not ok ... # TODO why": a known shortfall, shown with the skips.
	t=$(grep -cE '^not ok( |$).*# *TODO' "$log" | head -n 1)
	f=$(grep -E '^not ok( |$)' "$log" | grep -cvE '# *TODO' | head -n 1)
	grep -E '^not ok( |$)' "$log" | grep -vE '# *TODO' | sed "s|^|$name: |" >>"$failures"
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		echo "$name: exited with status $rc" >>"$failures"
		f=1
	fi
	passed=$((passed + p - s))
	skipped=$((skipped + s + wholly + t))
	failed=$((failed + f))
}

# The suites that write Perfetto traces check each with
# tests/perfetto/check_trace.py, which loads it in Perfetto's own
# trace_processor_shell too once scripts/trace-processor has built it (about
# an hour, once per machine; make bench does). Said once per suite: which
# binary, or one skip when there is none.
trace_processor_note() {
	local suite=$1 tp='' why="trace_processor_shell not built (make trace-processor)"
	case ${LCLK_TRACE_PROCESSOR:-} in
	0) why="LCLK_TRACE_PROCESSOR=0" ;;
	/*) [ -x "$LCLK_TRACE_PROCESSOR" ] && tp=$LCLK_TRACE_PROCESSOR ;;
	*) tp=$(scripts/trace-processor --path 2>/dev/null) ;;
	esac
	if [ -n "$tp" ]; then
		echo "# $suite: traces also checked in $tp (tests/perfetto/tp_check.py)"
	else
		run_tap "$suite-trace-processor" echo "1..0 # SKIP Perfetto's trace_processor checks of the $suite suite's traces: $why"
	fi
}

suite_unit() {
	local t
	trace_processor_note unit
	for t in $(find build/tests/host -type f -perm -u+x | sort); do
		run_tap "unit-$(basename "$t")" "$t"
	done
	# The Python package as "make python" built it, with Debian's interpreter.
	run_tap unit-python env PYTHONPATH=build/python/lib /usr/bin/python3 \
		python/tests/tap.py python/tests/test_*.py
	run_tap unit-python-torch2 python_torch2
}

# torch as people train today (2.x; Debian 12's is 1.13): Debian sid's
# python3-torch and Python, in sid's root (scripts/release-root), the
# package built there for that Python. The packaging and typing tests need
# Debian 12's pip and mypy; they run above.
python_torch2() {
	local lib=build/python-sid
	scripts/release-root sid python3-torch python3-dev python3-setuptools gcc libc6-dev \
		protobuf-compiler >/dev/null || { echo "not ok - sid's root with python3-torch"; return 1; }
	scripts/in-root sid sh -c "python3 -c 'import torch; print(\"# torch\", torch.__version__)' &&
		cd python && python3 setup.py -q build --build-base ../$lib/tmp --build-lib ../$lib/lib \
			2>&1 | { grep -v 'byte-compiling is disabled' || true; } &&
		cd .. && PYTHONPATH=$lib/lib python3 python/tests/tap.py \
			python/tests/test_host.py python/tests/test_torch.py"
}

fuzz_one() {
	local bin=$1 name corpus dict=()
	name=$(basename "$bin")
	corpus=build/fuzz-corpus/$name
	mkdir -p "$corpus"
	[ -d "tests/fuzz/$name" ] && cp -n tests/fuzz/"$name"/* "$corpus"/ 2>/dev/null
	[ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
	if "$bin" "${dict[@]}" -max_total_time="$fuzz_seconds" -timeout=5 \
		-print_final_stats=1 "$corpus" >"$logs/fuzz-$name.out" 2>&1; then
		echo "ok - fuzz $name: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$logs/fuzz-$name.out" | grep -o '[0-9]*$') runs, no crash"
	else
		tail -n 40 "$logs/fuzz-$name.out"
		echo "not ok - fuzz $name: crash or leak (see $logs/fuzz-$name.out)"
		return 1
	fi
}

suite_fuzz() {
	local t
	for t in build/tests/fuzz/*; do
		[ -x "$t" ] && run_tap "fuzz-$(basename "$t")" fuzz_one "$t"
	done
}

# A test that hangs fails alone instead of holding up the run.
suite_integration() {
	local t
	trace_processor_note integration
	for t in tests/integration/*.sh; do
		[ -x "$t" ] && run_tap "integration-$(basename "$t" .sh)" \
			timeout -k 10 "${LCLK_INTEGRATION_TIMEOUT:-900}" "$t"
	done
}

# The guest suite on every kernel of the matrix (tests/vm/kernels), and the
# module's part of it on the debug kernel once that is built, each with the
# module "make matrix" built for it. LCLK_VM_KERNELS narrows the list and
# LCLK_MODULE replaces the module (the test bed's self-test boots one
# kernel with a module of its own).
#
# Each kernel's suite runs in two VMs, so that the VMs take similar times:
# the kernel-level tests, and the daemon's, protocols' and PyTorch's tests,
# which exercise lclkctl and the Python package more than the kernel, and
# the cluster view's (four hosts in network namespaces).
#
# Tests that suspend the guest must not touch the host root after it: each
# runs alone in a VM of its own, from a root in memory (tests/vm/ram-root.sh),
# in the full suite and when LCLK_GUEST_TESTS names it.
#
# A VM runs on one host thread (tests/vm/vm-run), so LCLK_VM_JOBS of them
# (default: one per CPU) run side by side; their results are shown and
# counted in a fixed order once all are done.
userspace_tests='^tests/guest/(cluster_gloo|cluster_mpi|daemon|lclkctl_cli|daemon_leap|daemon_ptp|daemon_kill|daemon_priv|daemon_stall|ntp_sync|ptp_phc|ptp_realtime_steps|python_install|torch_ddp|torch2_ddp)\.sh$'
# Of those, the ones that reach the module only through its ABI (the
# command line's, the daemon's, the protocols', PyTorch's, the
# installation's) run on one kernel of the matrix, the host's own release's
# (abi_kernel): what the module does on each kernel is for the kernel-level
# tests and the fault campaign to check, and these took 10 of the 13
# minutes of each lclkctl-level VM (lclkctl_cli.sh another 2.5 minutes of
# each kernel's VM). The cluster view's jobs run on every kernel but those
# tests/vm/kernels marks "no-cluster": their tracers attach to each
# kernel's functions (the kernel-level suite's trace tests do that too).
abi_only_tests='^tests/guest/(daemon|lclkctl_cli|daemon_leap|daemon_ptp|daemon_kill|daemon_priv|daemon_stall|ntp_sync|ptp_phc|ptp_realtime_steps|python_install|torch_ddp|torch2_ddp)\.sh$'
ram_root_tests='^build/tests/guest/lclk_suspend$'
# tests/guest/trace_counters.sh needs an interrupt between two instructions,
# which TCG gives only under -icount (it says why): it runs alone in a VM of
# its own, on one kernel (Debian 12's 6.1, switched to full preemption),
# one vCPU, -icount shift=0. About 1 minute, most of it the boot.
counters_test='^tests/guest/trace_counters\.sh$'
counters_kernel=6.1

# On the debug kernel, "make check" runs the tests that drive the module:
# KASAN and lockdep are there for its code, and the whole suite under them
# and TCG takes about 70 VM-minutes, most of a CI run's budget. The trace
# tests never load it; the lclkctl-level tests reach it through the ioctls
# the kernel-level ones and the fuzzer cover. LCLK_DEBUG_SUITE=full ("make
# check-debug") runs everything.
trace_tests='^tests/guest/trace'
# The fault campaign (tests/guest/faults.sh) checks readings against truth
# on every kernel of the matrix; under KASAN and TCG its three minutes
# would be ten, for the module's code it drives little of.
faults_test='^tests/guest/faults\.sh$'
debug_module_only() {
	[ "$1" = debug ] && [ "${LCLK_DEBUG_SUITE:-module}" != full ]
}

# abi_kernel KERNEL...: the one of KERNELs that runs the ABI-only tests: the
# host's own release's if it is one of them, else the first.
abi_kernel() {
	local host k
	host=$(. /etc/os-release && echo "$VERSION_CODENAME")
	for k in "$@"; do
		if awk -v k="$k" -v r="$host" '!/^#/ && $1 == k && $2 == r { f = 1 } END { exit !f }' \
			tests/vm/kernels; then
			echo "$k"
			return
		fi
	done
	echo "$1"
}

# no_cluster KERNEL: whether tests/vm/kernels marks KERNEL "no-cluster" or
# "bench-cluster": its cluster jobs run only when LCLK_VM_KERNELS names it
# (tests/bench/cluster_kernels.sh does for "bench-cluster").
no_cluster() {
	awk -v k="$1" '!/^#/ && $1 == k && ($3 == "no-cluster" || $3 == "bench-cluster") { f = 1 }
		END { exit !f }' \
		tests/vm/kernels
}

# userspace_only TESTS: whether TESTS are some, and all lclkctl-level ones.
userspace_only() {
	[ -n "${1// /}" ] && ! tr ' ' '\n' <<<"$1" | sed '/^$/d' | grep -qvE "$userspace_tests"
}

# vm_job NAME KERNEL SKIP TESTS [RAM_TEST [ICOUNT]]: the guest suite in a
# VM, or RAM_TEST alone from a root in memory, into $logs/NAME.out; ICOUNT
# non-empty: one vCPU whose clock counts instructions (-icount shift=0).
vm_job() {
	local name=$1 k=$2 start=$SECONDS module cmd=(tests/guest/run.sh) timeout=$vm_timeout
	local kargs=() smp=4 icount=${LCLK_VM_ICOUNT:-}
	[ -z "${6:-}" ] || smp=1 icount=shift=0,sleep=on
	module=${LCLK_MODULE:-build/kernels/$k/lclk.ko}
	# KASAN and lockdep make every test slower, some (trace.sh) many times.
	if [ "$k" = debug ]; then
		export LCLK_TEST_TIMEOUT=${LCLK_TEST_TIMEOUT:-1800}
		export LCLK_TIME_SCALE=${LCLK_TIME_SCALE:-4}
		timeout=$((timeout * 3))
		# The lclkctl-level tests trace jobs across hosts: on Debian's
		# preemption model (tests/vm/debug-kernel.config says why).
		! userspace_only "$4" || kargs=(-a preempt=voluntary)
	fi
	# One short test: a hung resume should not hold up the run for long.
	[ -z "${5:-}" ] || cmd=(tests/vm/ram-root.sh "$module" "$5") timeout=600
	env LCLK_MODULE="$module" LCLK_GUEST_SKIP="$3" LCLK_GUEST_TESTS="$4" LCLK_VM_ICOUNT="$icount" \
		tests/vm/vm-run -k "$k" -s "$smp" -t "$timeout" "${kargs[@]}" -- "${cmd[@]}" \
		>"$logs/$name.out" 2>&1
	echo $? >"$logs/$name.rc"
	echo "# $name: finished in $((SECONDS - start)) s"
}

# vm_tests SKIP TESTS RAM_TEST: the tests a VM job runs.
vm_tests() {
	if [ -n "$3" ]; then
		echo "$3"
	else
		LCLK_GUEST_SKIP=$1 LCLK_GUEST_TESTS=$2 tests/guest/run.sh --list | paste -sd " "
	fi
}

vm_result() {
	cat "$logs/$1.out"
	return "$(cat "$logs/$1.rc")"
}

# vm_seconds NAME: about what VM job NAME takes, in seconds, on a 2-core
# machine with another VM beside it: the jobs' "finished in" lines of the
# clean-clone make check of 2ca1f60; a job not listed, by its kind. Only
# the order of the jobs comes from these.
vm_seconds() {
	case $1 in
	vm-6.1-lclkctl) echo 1460 ;;
	vm-6.1) echo 762 ;;
	vm-5.10) echo 727 ;;
	vm-6.12) echo 688 ;;
	vm-7.2) echo 647 ;;
	vm-debug) echo 260 ;;
	vm-6.1-counters) echo 46 ;;
	vm-debug-lclk_suspend) echo 35 ;;
	vm-5.10-cluster) echo 25 ;;
	vm-*-lclk_suspend) echo 13 ;;
	vm-*-lclkctl) echo 1460 ;;
	vm-*-cluster) echo 430 ;;
	vm-*-counters) echo 46 ;;
	*) echo 650 ;;
	esac
}

# vm_order NAME...: the indexes of the jobs NAMEs, longest first (ties in
# the given order): each lane takes the next job when it is free, so the
# long ones cannot be left for the end, when one lane would run alone
# (Graham's longest-processing-time rule).
vm_order() {
	local i=0 name
	for name in "$@"; do
		echo "$(vm_seconds "$name") $i"
		i=$((i + 1))
	done | sort -k1,1nr -k2,2n | cut -d' ' -f2
}

suite_vm() {
	local k t kernels_=() lclkctl_tests cluster_tests abi picked ram_tests chosen= names=()
	local kernels=() skips=() tests=() ram=() icount=() i skip
	[ "${LCLK_VM_PLAN:-}" = 1 ] || trace_processor_note vm
	read -ra kernels_ <<<"${LCLK_VM_KERNELS:-$(scripts/kernel-cache --list | tr '\n' ' ')}"
	lclkctl_tests=$(printf '%s\n' tests/guest/*.sh | grep -E "$userspace_tests" | tr '\n' ' ')
	cluster_tests=$(tr ' ' '\n' <<<"$lclkctl_tests" | grep -vE "$abi_only_tests" | paste -sd ' ')
	abi=$(abi_kernel "${kernels_[@]}")
	if [ -n "${LCLK_GUEST_TESTS:-}" ]; then
		picked=$(tr ' ' '\n' <<<"$LCLK_GUEST_TESTS")
		chosen=$(grep -vE "$ram_root_tests|$counters_test" <<<"$picked" | tr '\n' ' ')
	else
		picked=$(printf '%s\n' build/tests/guest/*)
	fi
	ram_tests=$(grep -E "$ram_root_tests" <<<"$picked" | tr '\n' ' ')
	# The jobs by kind: the lclkctl-level one (about 20 min under TCG), the
	# kernel-level ones (9 to 11), the other kernels' cluster jobs (under
	# 1 to 6), the debug kernel's module-only one (4), the per-CPU
	# counters' -icount one (1.5), the suspend ones (under 1); they start
	# longest first (vm_order), so that the short ones fill in at the end.
	# With the debug job before the cluster ones, one lane sat idle for 5
	# minutes at the end (make check of 51d14a0), and in kind order the
	# lanes of b087188's ended 330 s apart. The debug kernel's full suite
	# runs everything.
	for k in "${kernels_[@]}"; do
		[ -z "${LCLK_GUEST_TESTS:-}" ] && ! debug_module_only "$k" &&
			{ [ "$k" = "$abi" ] || [ "$k" = debug ]; } &&
			names+=("vm-$k-lclkctl") kernels+=("$k") skips+=("") tests+=("$lclkctl_tests") ram+=("")
	done
	kernel_job() {
		if [ -z "${LCLK_GUEST_TESTS:-}" ]; then
			skip="$userspace_tests|$ram_root_tests|$counters_test"
			! debug_module_only "$1" || skip+="|$trace_tests|$faults_test"
			names+=("vm-$1") kernels+=("$1") skips+=("$skip") tests+=("") ram+=("")
		elif [ -n "$chosen" ]; then
			names+=("vm-$1") kernels+=("$1") skips+=("") tests+=("$chosen") ram+=("")
		fi
	}
	for k in "${kernels_[@]}"; do
		debug_module_only "$k" || kernel_job "$k"
	done
	for k in "${kernels_[@]}"; do
		[ -z "${LCLK_GUEST_TESTS:-}" ] && [ "$k" != "$abi" ] && [ "$k" != debug ] &&
			{ [ -n "${LCLK_VM_KERNELS:-}" ] || ! no_cluster "$k"; } &&
			names+=("vm-$k-cluster") kernels+=("$k") skips+=("") tests+=("$cluster_tests") ram+=("")
	done
	for k in "${kernels_[@]}"; do
		! debug_module_only "$k" || kernel_job "$k"
	done
	for k in "${kernels_[@]}"; do
		if [ "$k" = "$counters_kernel" ] &&
			{ [ -z "${LCLK_GUEST_TESTS:-}" ] || grep -qE "$counters_test" <<<"$picked"; }; then
			icount[${#names[@]}]=1
			names+=("vm-$k-counters") kernels+=("$k") skips+=("") ram+=("")
			tests+=("$(printf '%s\n' tests/guest/*.sh | grep -E "$counters_test")")
		fi
	done
	for k in "${kernels_[@]}"; do
		for t in $ram_tests; do
			names+=("vm-$k-$(basename "$t")") kernels+=("$k") skips+=("") tests+=("") ram+=("$t")
		done
	done
	if [ -n "${LCLK_VM_PLAN:-}" ]; then
		for i in $(vm_order "${names[@]}"); do
			echo "# plan: ${names[$i]} ${kernels[$i]} ~$(vm_seconds "${names[$i]}") s: $(vm_tests "${skips[$i]}" "${tests[$i]}" "${ram[$i]}")"
		done
		return
	fi
	for i in $(vm_order "${names[@]}"); do
		while [ "$(jobs -rp | wc -l)" -ge "${LCLK_VM_JOBS:-$(nproc)}" ]; do
			wait -n
		done
		echo "# ${names[$i]}: started on ${kernels[$i]}"
		vm_job "${names[$i]}" "${kernels[$i]}" "${skips[$i]}" "${tests[$i]}" "${ram[$i]}" "${icount[$i]:-}" &
	done
	wait
	for i in "${!names[@]}"; do
		run_tap "${names[$i]}" vm_result "${names[$i]}"
	done
}

# The Debian packages on every kernel of the matrix (tests/deb/run.sh): each
# release's make deb and lintian side by side (about 30 CPU-seconds each;
# once per machine, its build dependencies and lintian into trixie's and
# sid's roots first), per kernel 10-25 s on this host and a short VM of
# 10-30 s. On 2 cores shared with other work (load 15), warm: 13 minutes;
# the timeout is for a cold run on such a machine.
suite_deb() {
	run_tap deb timeout -k 10 "${LCLK_DEB_TIMEOUT:-1800}" tests/deb/run.sh
}

suite_selftest() {
	run_tap selftest tests/vm/selftest.sh
}

# "make demo", the README's first command: it must run to the end, sync the
# clock and trace. Its output is in the log, not on the console.
demo_tap() {
	local out=$logs/demo.out
	tests/vm/demo.sh >"$out" 2>&1
	local rc=$?
	echo "1..1"
	if [ $rc = 0 ] && grep -q '^status: *synced' "$out" && grep -q '^Tracing ' "$out"; then
		echo "ok 1 - make demo: synced and traced (output in $out)"
	else
		echo "not ok 1 - make demo: exit $rc (output in $out)"
		tail -20 "$out" | sed 's/^/# /'
	fi
}

suite_demo() {
	run_tap demo demo_tap
}

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(unit fuzz integration vm deb selftest demo)
# Each suite's elapsed seconds, shown above the last line: CI keeps only
# the tail, and the time budget of make check is read from it.
timing=()
for s in "${suites[@]}"; do
	case $s in
	unit|fuzz|integration|vm|deb|selftest|demo)
		t0=$SECONDS
		"suite_$s"
		timing+=("$(printf '# %-12s %5d s' "$s" $((SECONDS - t0)))") ;;
	*) echo "run-suites: unknown suite '$s'" >&2; exit 2 ;;
	esac
done

if [ -s "$failures" ]; then
	echo "# ---- failures (logs in $logs)"
	sed 's/^/# /' "$failures"
fi
echo "# ---- time per suite"
printf '%s\n' "${timing[@]}"
printf '# %-12s %5d s\n' total "$SECONDS"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
