#!/bin/sh
# Init error path: when instance k of N cannot be created, lclk keeps
# instances 0..k-1 (once /dev/lclk0 exists it may be open or mapped, and a
# failed init would free the module under it) and says so; when instance 0
# cannot, the load fails and leaves no node, device or class behind. Either
# way the module loads whole afterwards. The instance fails for real:
# tests/guest/clash/lclk_clash.c takes its dev_t first. TAP.
module=${LCLK_MODULE:-kmod/lclk.ko}
args=${LCLK_MODULE_ARGS:-instances=2}
name=$(basename "$module" .ko)
clash=$(dirname "$module")/lclk_clash.ko
n=0 failed=0

check() {
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3: got '$1', want '$2'"
		failed=1
	fi
}

# What the module left: its nodes, its class's devices, its class.
nodes() { find /dev -maxdepth 1 -name "${name}[0-9]*" -printf '%f\n' | sort | paste -sd ' '; }
class() {
	if [ -d "/sys/class/$name" ]; then
		find "/sys/class/$name" -mindepth 1 -printf '%f\n' | sort | paste -sd ' '
	else
		echo none
	fi
}

echo "1..12"
if [ ! -e "$clash" ]; then
	for i in $(seq 12); do echo "ok $i # SKIP no $clash (make matrix builds it)"; done
	exit 0
fi
rmmod "$name" || { echo "not ok 1 - rmmod $name before the test"; exit 1; }

insmod "$clash" minor=2
dmesg -c >/dev/null
tests/guest/lib/insmod.sh "$module" instances=4
check $? 0 "insmod instances=4 succeeds when instance 2 cannot be created"
check "$(nodes)" "${name}0 ${name}1" "instances 0 and 1 have their nodes, 2 and 3 none"
check "$(class)" "${name}0 ${name}1" "the class holds instances 0 and 1"
check "$(dmesg | grep -c "instance 2 failed (-17): 2 of 4 instances")" 1 \
	"the kernel log says instance 2 failed and 2 of 4 remain"
check "$(head -c 5 "/dev/${name}1" | wc -c)" 5 "instance 1 reads"
rmmod "$name"
check $? 0 "rmmod after a partial load"
rmmod lclk_clash

insmod "$clash" minor=0
tests/guest/lib/insmod.sh "$module" instances=2 2>/dev/null
check $? 1 "insmod fails when instance 0 cannot be created"
check "$(grep -c "^$name " /proc/modules)" 0 "the module is not loaded"
check "$(nodes) $(class)" " none" "no node, device or class is left"
rmmod lclk_clash

tests/guest/lib/insmod.sh "$module" instances=4
check $? 0 "insmod instances=4 succeeds with no clash"
check "$(nodes)" "${name}0 ${name}1 ${name}2 ${name}3" "all 4 instances have their nodes"
check "$(class)" "${name}0 ${name}1 ${name}2 ${name}3" "the class holds all 4"
rmmod "$name"

# tests/guest/run.sh unloads what it loaded after each test.
# shellcheck disable=SC2086
tests/guest/lib/insmod.sh "$module" $args || failed=1
exit "$failed"
