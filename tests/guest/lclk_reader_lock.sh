#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Readers never take the writer's lock: GET_MODEL and read() of /dev/lclkN,
# open to every user, copy the page under its seqcount, so that no reader
# can hold off a writer (a raw spinlock with interrupts off) by calling
# them in a loop. bpftrace counts the raw_spin_lock_irqsave() calls (the
# only lock function the module calls) made directly by lclk code while an
# unprivileged user hammers the read paths. TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1

echo "1..2"
if ! command -v bpftrace >/dev/null 2>&1; then
	echo "ok 1 # SKIP no bpftrace"
	echo "ok 2 # SKIP no bpftrace"
	exit 0
fi
out=$(mktemp)
# nobody runs its own copy of lclkctl: the checkout may lie under a
# directory only root can search (CI clones into mktemp -d, mode 0700).
dir=$(mktemp -d)
trap 'rm -rf "$out" "$dir"' EXIT
chmod 755 "$dir"
cp build/lclkctl "$dir/lclkctl"
lclkctl=$dir/lclkctl
reader=$dir/reader

# The reader: 20 x (read() of the text, GET_MODEL through lclkctl status),
# as nobody. lclkctl status also reads GET_TIME and the page. bpftrace -c
# splits its command at blanks, without a shell: the loop is a script.
cat >"$reader" <<READER
for i in \$(seq 20); do
	cat /dev/lclk0 >/dev/null || { echo "reader failed: cat /dev/lclk0"; exit 1; }
	$lclkctl status >/dev/null || { echo "reader failed: lclkctl status"; exit 1; }
done
echo "reader done"
READER
chmod 644 "$reader"
# Two frames: the lock and its caller. Deeper stacks also catch interrupts
# that arrive while lclk code runs (hrtimer_interrupt takes its own lock).
# Every lock of the guest hits the probe: on the debug kernel, under
# lockdep, that is slow (LCLK_TIME_SCALE).
timeout $((240 * ${LCLK_TIME_SCALE:-1})) bpftrace -e '
kprobe:_raw_spin_lock_irqsave
/uid == 65534/ { @[kstack(2)] = count(); }' \
	-c "$(command -v setpriv) --reuid=65534 --regid=65534 --clear-groups /bin/sh $reader" >"$out" 2>&1
rc=$?
if grep -qE '^[[:space:]]+lclk_' "$out"; then
	grep -B2 -A2 -E '^[[:space:]]+lclk_' "$out" | head -40 | sed 's/^/# /'
	echo "not ok 1 - an unprivileged reader took a spinlock in the lclk module"
	failed=1
elif [ "$rc" -ne 0 ]; then
	tail -20 "$out" | sed 's/^/# /'
	echo "not ok 1 - bpftrace failed ($rc)"
	failed=1
else
	echo "ok 1 - 20 read() and GET_MODEL as nobody took no spinlock in lclk"
	failed=0
fi
# The reader ran to its end and the probe saw it at all: otherwise the
# check proves nothing.
if grep -q '^reader done$' "$out" && grep -q '^@\[' "$out"; then
	echo "ok 2 - the reader finished and the probe saw its spinlocks"
else
	{ grep -v -e '^@\[' -e '^    ' -e '^\]' "$out" | tail -5; tail -3 "$out"; } | sed 's/^/# /'
	echo "not ok 2 - the reader did not finish, or the probe saw none of its spinlocks"
	failed=1
fi
exit "$failed"
