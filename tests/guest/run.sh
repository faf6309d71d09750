#!/bin/sh
# The guest suite, run inside the VM (tests/vm/vm-run) from the repo root:
# every guest test as TAP, in name order: build/tests/guest/* (kselftest
# harness binaries) and tests/guest/*.sh. Each test gets a freshly loaded
# module, so no test sees the clock another one left behind, and the module
# must unload after it: a test that leaves a file open, a mapping or a
# daemon behind fails.
#
#   LCLK_MODULE        module to load (default kmod/lclk.ko; "none": no module)
#   LCLK_MODULE_ARGS   its parameters (default instances=2)
#   LCLK_GUEST_TESTS   run these instead of every test (space-separated)
#   LCLK_GUEST_SKIP    leave out the tests this extended regex matches
#   LCLK_TEST_TIMEOUT  seconds one test may take (default 600)
#   LCLK_TIME_SCALE    how much longer the tests' waits may be (default 1;
#                      tests/run-suites.sh sets it for the debug kernel)
module=${LCLK_MODULE:-kmod/lclk.ko}
args=${LCLK_MODULE_ARGS:-instances=2}
limit=${LCLK_TEST_TIMEOUT:-600}
name=$(basename "$module" .ko)

tests=${LCLK_GUEST_TESTS:-$(ls build/tests/guest/* tests/guest/*.sh 2>/dev/null |
	grep -v '^tests/guest/run.sh$' | grep -vE "${LCLK_GUEST_SKIP:-^$}" | sort -t/ -k3)}
# --list: which tests, without running them (the host plans VMs with it).
if [ "${1:-}" = --list ]; then
	# shellcheck disable=SC2086 # one test per word
	printf '%s\n' $tests
	exit 0
fi

echo "# guest: $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)$(grep -o ' preempt=[a-z]*' /proc/cmdline)"

load() {
	[ "$module" = none ] && return 0
	# shellcheck disable=SC2086
	tests/guest/lib/insmod.sh "$module" $args && return 0
	echo "not ok - insmod $module $args before $1"
	return 1
}

unload() {
	[ "$module" = none ] && return 0
	rmmod "$name" && return 0
	echo "not ok - rmmod $name after $1 (a file, mapping or process left behind?)"
	fuser -k /dev/lclk* >/dev/null 2>&1
	sleep 1
	rmmod "$name" 2>/dev/null
	return 1
}

failed=0 cycles=0
for t in $tests; do
	echo "# test: $t"
	load "$t" || { failed=1; continue; }
	out=$(mktemp)
	case $t in
	/*) cmd=$t ;;
	*) cmd=./$t ;;
	esac
	start=$(cut -d' ' -f1 /proc/uptime)
	timeout -k 5 "$limit" "$cmd" >"$out" 2>&1
	rc=$?
	cat "$out"
	# What each test costs, for the time budget of make check.
	echo "# time: $t $(awk -v s="$start" '{ printf "%.0f", $1 - s }' /proc/uptime) s"
	if [ "$rc" -ne 0 ]; then
		failed=1
		grep -q '^not ok' "$out" ||
			echo "not ok - $t exited with status $rc$([ "$rc" -eq 124 ] && echo ' (timeout)')"
	fi
	rm -f "$out"
	unload "$t" || failed=1
	cycles=$((cycles + 1))
done

[ "$module" = none ] || [ "$failed" -ne 0 ] ||
	echo "ok - $name loaded before and unloaded after each of $cycles tests"
exit "$failed"
