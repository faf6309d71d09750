#!/bin/bash
# Self-test of the test bed: a module whose init oopses, a guest test that
# fails and a guest that hangs must each make the VM suite - the one
# "make check" runs - exit non-zero. TAP.
set -u
cd "$(dirname "$0")/../.."
kdir=/lib/modules/$(scripts/test-kernel)/build
# The oopsing module is built for the host release's kernel: every case
# boots that one only.
export LCLK_VM_KERNELS
LCLK_VM_KERNELS=$(scripts/kernel-cache "$(. /etc/os-release && echo "$VERSION_CODENAME")" |
	sed -n 's/^KALIAS=//p')
echo "1..7"

n=0
# expect_failure DESCRIPTION PATTERN ENV... : the vm suite must fail under
# ENV, for the reason PATTERN matches in its output.
expect_failure() {
	local what=$1 why=$2 out rc
	shift 2
	n=$((n + 1))
	out=$(env LCLK_LOG_DIR=build/test-logs/selftest "$@" tests/run-suites.sh vm 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && printf '%s\n' "$out" | tail -n 1 | grep -qE '[1-9][0-9]* failed' &&
	   printf '%s\n' "$out" | grep -qE "$why"; then
		echo "ok $n - $what fails the run (exit $rc: $(printf '%s\n' "$out" | grep -m1 -E "$why"))"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		echo "not ok $n - $what did not fail the run (exit $rc)"
	fi
}

# What "make check" boots on a machine where the debug kernel is built: the
# tests that drive the module run under it, not the whole suite (KASAN x TCG
# makes that about 70 VM-minutes; CI's budget is 90 for everything), which
# "make check-debug" runs. Plans only: nothing boots.
plan() {
	env LCLK_LOG_DIR=build/test-logs/selftest LCLK_VM_PLAN=1 \
		LCLK_VM_KERNELS="$LCLK_VM_KERNELS debug" "$@" tests/run-suites.sh vm 2>&1
}
n=$((n + 1))
out=$(plan)
if printf '%s\n' "$out" | grep -q '^# plan: vm-debug debug .*build/tests/guest/lclk_kfuzz' &&
   ! printf '%s\n' "$out" | grep -E '^# plan: vm-debug' | grep -qE 'tests/guest/(trace|daemon|cluster)'; then
	echo "ok $n - make check runs the module's tests on the debug kernel, and only those"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok $n - make check's plan for the debug kernel is not the module's tests"
fi
n=$((n + 1))
out=$(plan LCLK_DEBUG_SUITE=full)
if printf '%s\n' "$out" | grep -q '^# plan: vm-debug debug .*tests/guest/trace_messages.sh' &&
   printf '%s\n' "$out" | grep -q '^# plan: vm-debug-lclkctl debug .*tests/guest/cluster_mpi.sh'; then
	echo "ok $n - make check-debug runs the whole suite on the debug kernel"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "not ok $n - make check-debug's plan is not the whole suite"
fi

n=$((n + 1))
if make -s -C "$kdir" M="$PWD/tests/vm/selftest/oops" modules >/dev/null 2>&1; then
	echo "ok $n - built the oopsing module"
else
	echo "not ok $n - could not build the oopsing module"
fi
expect_failure "a module whose init oopses" 'Oops' \
	LCLK_MODULE=tests/vm/selftest/oops/lclk_oops.ko LCLK_MODULE_ARGS= LCLK_GUEST_TESTS=/bin/true
expect_failure "a failing guest test" '^not ok 2 - this one fails on purpose' \
	LCLK_MODULE=none LCLK_GUEST_TESTS=tests/vm/selftest/fail.sh
expect_failure "a hung guest" 'timed out' \
	LCLK_MODULE=none LCLK_GUEST_TESTS=tests/vm/selftest/hang.sh \
	LCLK_TEST_TIMEOUT=600 LCLK_VM_TIMEOUT=30

# Two VMs of one kernel, started together when its initramfs is to be made
# (as the suite's side-by-side VMs are on a fresh machine): both boot.
n=$((n + 1))
rm -f build/vm/initramfs-*
tests/vm/vm-run -k "$LCLK_VM_KERNELS" -t 300 -- true >build/test-logs/selftest-pair1.out 2>&1 &
first=$!
tests/vm/vm-run -k "$LCLK_VM_KERNELS" -t 300 -- true >build/test-logs/selftest-pair2.out 2>&1
second=$?
wait $first
if [ $? -eq 0 ] && [ $second -eq 0 ]; then
	echo "ok $n - two VMs started together on one kernel both boot"
else
	sed 's/^/# /' build/test-logs/selftest-pair*.out | tail -n 20
	echo "not ok $n - two VMs started together on one kernel did not both boot"
fi
make -s -C "$kdir" M="$PWD/tests/vm/selftest/oops" clean >/dev/null 2>&1
exit 0
