#!/bin/bash
# Run every test suite, host and VM, and sum their TAP:
#   unit         build/tests/host/*          (this machine)
#   fuzz         build/tests/fuzz/*          (libFuzzer, briefly)
#   integration  tests/integration/*.sh      (this machine, as root)
#   vm           tests/guest/run.sh in the VM (module loaded)
#   selftest     tests/vm/selftest.sh        (the test bed catches failures)
#   demo         tests/vm/demo.sh            ("make demo" runs and shows a synced clock)
# Usage: tests/run-suites.sh [SUITE...]   (default: all, in that order)
# The last line is "N passed, N failed, N skipped"; the exit status is
# non-zero when anything failed.
set -uo pipefail

cd "$(dirname "$0")/.."
logs=${LCLK_LOG_DIR:-build/test-logs}
mkdir -p "$logs"
passed=0 failed=0 skipped=0
fuzz_seconds=${LCLK_FUZZ_SECONDS:-10}
vm_timeout=${LCLK_VM_TIMEOUT:-1500}

# run_tap NAME CMD...: run CMD, show and log its output, count its TAP lines.
# A command that fails without a "not ok" line counts as one failure.
run_tap() {
	local name=$1 log=$logs/$1.log rc p f s
	shift
	echo "# ---- $name: $*"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	p=$(grep -cE '^ok( |$)' "$log" | head -n 1)
	s=$(grep -cE '^ok( |$).*# *(SKIP|skip)' "$log" | head -n 1)
	f=$(grep -cE '^not ok( |$)' "$log" | head -n 1)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		f=1
	fi
	passed=$((passed + p - s))
	skipped=$((skipped + s))
	failed=$((failed + f))
}

suite_unit() {
	local t
	for t in build/tests/host/*; do
		[ -x "$t" ] && run_tap "unit-$(basename "$t")" "$t"
	done
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

suite_integration() {
	local t
	for t in tests/integration/*.sh; do
		[ -x "$t" ] && run_tap "integration-$(basename "$t" .sh)" "$t"
	done
}

suite_vm() {
	run_tap vm tests/vm/vm-run -s 4 -t "$vm_timeout" -- tests/guest/run.sh
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
[ ${#suites[@]} -gt 0 ] || suites=(unit fuzz integration vm selftest demo)
for s in "${suites[@]}"; do
	case $s in
	unit|fuzz|integration|vm|selftest|demo) "suite_$s" ;;
	*) echo "run-suites: unknown suite '$s'" >&2; exit 2 ;;
	esac
done

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
