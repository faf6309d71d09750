#!/bin/sh
# The guest suite, run inside the VM (tests/vm/vm-run) from the repo root:
# load the module, then run every guest test as TAP, in name order:
# build/tests/guest/* (kselftest harness binaries) and tests/guest/*.sh.
#
#   LCLK_MODULE        module to load (default kmod/lclk.ko; "none": no module)
#   LCLK_MODULE_ARGS   its parameters (default instances=2)
#   LCLK_GUEST_TESTS   run these instead of every test (space-separated)
#   LCLK_TEST_TIMEOUT  seconds one test may take (default 300)
module=${LCLK_MODULE:-kmod/lclk.ko}
args=${LCLK_MODULE_ARGS:-instances=2}
limit=${LCLK_TEST_TIMEOUT:-300}

tests=${LCLK_GUEST_TESTS:-$(ls build/tests/guest/* tests/guest/*.sh 2>/dev/null |
	grep -v '^tests/guest/run.sh$' | sort -t/ -k3)}

echo "# guest: $(uname -r), $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
if [ "$module" != none ]; then
	# shellcheck disable=SC2086
	if ! insmod "$module" $args; then
		echo "not ok - insmod $module $args"
		exit 1
	fi
	echo "ok - insmod $module $args"
fi

failed=0
for t in $tests; do
	echo "# test: $t"
	out=$(mktemp)
	case $t in
	/*) cmd=$t ;;
	*) cmd=./$t ;;
	esac
	timeout -k 5 "$limit" "$cmd" >"$out" 2>&1
	rc=$?
	cat "$out"
	if [ "$rc" -ne 0 ]; then
		failed=1
		grep -q '^not ok' "$out" ||
			echo "not ok - $t exited with status $rc$([ "$rc" -eq 124 ] && echo ' (timeout)')"
	fi
	rm -f "$out"
done

if [ "$module" != none ]; then
	name=$(basename "$module" .ko)
	if ! rmmod "$name"; then
		echo "not ok - rmmod $name after the suite"
		exit 1
	fi
	echo "ok - rmmod $name after the suite"
fi
exit "$failed"
