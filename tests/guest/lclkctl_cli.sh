#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl's manual control of a loaded module: status (text and JSON), set,
# step, cpu-offset, cpu-skew --apply; refusals (backward without
# --allow-backward, out-of-range values, no CAP_SYS_TIME) with their exit
# codes and nothing applied; a query from a time namespace that shifts
# CLOCK_MONOTONIC (no page there: the ioctls). Runs in the VM with the module loaded; TAP.
set -u
cd "$(dirname "$0")/../.."
L=$PWD/build/lclkctl
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
# check NAME CONDITION: CONDITION is evaluated by the shell.
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
j() { "$L" status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
updates() { j 'd["stats"]["updates"]'; }
# rc WANT ARGS...: lclkctl's exit status is WANT, a message was printed.
rc() { local want=$1; shift; "$L" "$@" > /dev/null 2> /tmp/lclkctl_cli.err; local r=$?
	check "lclkctl $* -> exit $want" "[ $r = $want ] && { [ $want = 0 ] || [ -s /tmp/lclkctl_cli.err ]; }"; }
trap 'rm -f /tmp/lclkctl_cli.err' EXIT

echo "1..25"
[ -c /dev/lclk0 ] || { echo "Bail out! no /dev/lclk0"; exit 1; }
ncpu=$(nproc)

rc 0 status
check "status --json has model, stats, per-CPU offsets" \
	'[ "$(j "len(d[\"cpu_offset_ns\"]) >= 1 and \"rate_ppt\" in d[\"model\"] and \"updates\" in d[\"stats\"]")" = True ]'
rc 0 set --realtime --bound 5ms --allow-backward
check "set --bound: synced" '[ "$(j "d[\"status\"]")" = synced ]'
rc 0 set --rate 1.5 --max-drift 20000 --holdover 30s
check "rate, max drift, holdover as set" \
	'[ "$(j "(d[\"model\"][\"rate_ppt\"], d[\"model\"][\"max_drift_ppb\"], d[\"model\"][\"holdover_ns\"])")" = "(1500000, 20000, 30000000000)" ]'
before=$(j 'd["time_ns"]')
rc 0 step 2s
check "step 2s moved logical time forward by 2 s" \
	'[ $(( $(j "d[\"time_ns\"]") - before )) -ge 2000000000 ]'
u=$(updates)
rc 2 step -- -1s
rc 2 set --offset 0
check "a refused backward change changes nothing" '[ "$(updates)" = "$u" ]'
rc 0 step --allow-backward -- -2s
rc 2 set --rate 2000
rc 2 cpu-offset 0 2ms
rc 2 set
rc 0 cpu-offset 0 100ns
check "cpu-offset 0 reads back 100ns" '[ "$(j "d[\"cpu_offset_ns\"][0]")" = 100 ]'
rc 2 cpu-offset 0 50ns
rc 0 cpu-offset --allow-backward -- 0 -50ns
if [ "$ncpu" -ge 2 ]; then
	rc 0 cpu-skew --apply --allow-backward --rounds 2000
	check "cpu-skew --apply: CPU 0 back to 0" '[ "$(j "d[\"cpu_offset_ns\"][0]")" = 0 ]'
	# A write failing midway (a race with another writer, injected here):
	# the CPUs already set get their old offsets back.
	"$L" cpu-offset 0 300ns && "$L" cpu-offset 1 200ns
	before=$(j 'd["cpu_offset_ns"]')
	u=$(updates)
	LCLK_FAIL_IOCTL=SET_CPU_OFFSET LCLK_FAIL_IOCTL_NTH=2 LD_PRELOAD=$PWD/build/tests/shim/fail_ioctl.so \
		"$L" cpu-skew --apply --allow-backward --rounds 2000 2> /tmp/lclkctl_cli.err
	r=$?
	sed 's/^/# /' /tmp/lclkctl_cli.err
	check "cpu-skew --apply failing at the second CPU: exit $r, the first restored" \
		'[ $r != 0 ] && grep -q "were restored: nothing applied" /tmp/lclkctl_cli.err && [ "$(j "d[\"cpu_offset_ns\"]")" = "$before" ]'
	check "... set, then restored: two updates" '[ $(( $(updates) - u )) = 2 ]'
else
	ok "# SKIP one CPU: cpu-skew needs two"
	ok "# SKIP one CPU"
	ok "# SKIP one CPU"
	ok "# SKIP one CPU"
fi
# Without CAP_SYS_TIME (as nobody): reading works or is denied, changing is denied.
u=$(updates)
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$L" step 1ms 2> /tmp/lclkctl_cli.err
r=$?
check "step without CAP_SYS_TIME: exit 3, says so, nothing applied" \
	'[ $r = 3 ] && grep -q CAP_SYS_TIME /tmp/lclkctl_cli.err && [ "$(updates)" = "$u" ]'
# The same measurement from a time namespace 1000 s ahead: the same offset
# (reference - lclk0 does not depend on whose CLOCK_MONOTONIC reads it;
# with no rate it does not change either), within the two bounds.
# combined [PREFIX...]: "offset_ns bound_ns" of a query of lclk1's PHC.
combined() { "$@" "$L" query --json "phc:/dev/ptp$phc" 2>/dev/null | python3 -c \
	'import json,sys; c=json.load(sys.stdin)["combined"]; print(c["offset_ns"], c["bound_ns"])'; }
phc=$("$L" -d /dev/lclk1 status --json | sed -n 's/.*"phc_index": *\([0-9]*\).*/\1/p')
"$L" set --rate 0
host=$(combined)
shifted=$(combined unshare --time --monotonic 1000 --fork)
echo "# query of /dev/ptp$phc, offset and bound in ns: ${host:-none} here, ${shifted:-none} from the shifted namespace"
check "query from a shifted time namespace: the offset measured here" \
	'[ -n "$host" ] && [ -n "$shifted" ] && python3 -c "import sys; (o1, b1), (o2, b2) = map(int, \"$host\".split()), map(int, \"$shifted\".split()); sys.exit(abs(o1 - o2) > b1 + b2)"'
"$L" set --unsync
[ $failed = 0 ]
