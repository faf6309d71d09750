#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl sync against a real chronyd serving this (guest) machine's own
# CLOCK_REALTIME, so the true offset of a synced logical clock to
# CLOCK_REALTIME is zero and the module's bound can be checked on thousands
# of reads (build/tests/bench/ntp_bound_check). Then the same with netem
# delaying one direction by 5 ms with jitter (the bound must still hold,
# the error is about half the asymmetry), and a hostile responder that must
# change nothing. Runs in the VM with the module loaded; prints TAP.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
CHECK=$PWD/build/tests/bench/ntp_bound_check
NTP_TAG=gs$$
. tests/integration/ntp_lib.sh
trap ntp_cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
# check NAME CONDITION: CONDITION is evaluated by the shell.
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }

echo "1..12"
[ -c /dev/lclk0 ] || { echo "Bail out! no /dev/lclk0"; exit 1; }
ntp_setup && ntp_start_chronyd
check "chronyd answers" ntp_wait_server
srv=ntp://$NTP_V4

model() { "$LCLKCTL" status --json | jget '(d["model"]["offset_ns"], d["model"]["rate_ppt"], d["model"]["bound0_ns"], d["model"]["last_update_ns"], d["stats"]["updates"])'; }

# Put logical time 50 ms ahead: sync must refuse the backward step.
"$LCLKCTL" set --realtime --unsync --allow-backward && "$LCLKCTL" step 50ms
before=$(model)
in_cli "$LCLKCTL" sync "$srv" > "$NTP_DIR/out" 2>&1
rc=$?
check "sync refuses a backward step without --allow-backward (exit 2)" "[ $rc = 2 ]"
check "... and changes nothing" '[ "$before" = "$(model)" ]'

sent=$(srv_udp_in)
in_cli "$LCLKCTL" sync --allow-backward "$srv" > "$NTP_DIR/out" 2>&1
rc=$?
sent=$(($(srv_udp_in) - sent))
cat "$NTP_DIR/out" | sed 's/^/# /'
check "sync --allow-backward steps" '[ $rc = 0 ] && grep -q "sync: step" "$NTP_DIR/out"'
check "... with a burst of 8 requests, as asked (chronyd got $sent)" '[ $sent = 8 ]'
r=$("$CHECK" -n 5000 -i 100); rc=$?
echo "# after step: $r"
check "bound holds on 5000 reads after a step" "[ $rc = 0 ]"

# 300 us ahead (and a bound that says so): a slew; the bound must hold
# before, during and after it.
"$LCLKCTL" step 300us && "$LCLKCTL" set --bound 2ms
"$CHECK" -n 5000 -i 100 > "$NTP_DIR/during" &
cpid=$!
in_cli "$LCLKCTL" sync "$srv" > "$NTP_DIR/out" 2>&1
rc=$?
wait $cpid; rc_during=$?
sed 's/^/# /' "$NTP_DIR/out" "$NTP_DIR/during"
check "sync slews a small offset" '[ $rc = 0 ] && grep -q "sync: slew" "$NTP_DIR/out"'
r=$("$CHECK" -n 5000 -i 100); rc=$?
echo "# after slew: $r"
check "bound holds during and after the slew" '[ $rc = 0 ] && [ $rc_during = 0 ]'

# 5 ms (+-1 ms jitter) on the way back from the server only, in a router
# between the two: a path asymmetry no timestamp can see. (A delay in
# either end's own qdisc would not do: the kernel stamps a packet when
# the driver takes it, after the qdisc, and chronyd hands its transmit
# stamps over in interleaved mode.)
ntp_setup_router
in_rtr tc qdisc add dev "$NTP_RTR_TO_CLI" root netem delay 5ms 1ms
in_cli "$LCLKCTL" sync --allow-backward "ntp://$NTP_V4_ROUTED" > "$NTP_DIR/out" 2>&1
rc=$?
sed 's/^/# /' "$NTP_DIR/out"
r=$("$CHECK" -n 5000 -i 100); rc2=$?
echo "# asymmetric 5ms+-1ms: $r"
err=$(echo "$r" | awk '{print $6}')
check "with netem asymmetry the bound still holds" '[ $rc = 0 ] && [ $rc2 = 0 ]'
check "... and the error is about half the asymmetry (1.5..3.5 ms: $err ns)" \
	'[ "${err:-0}" -ge 1500000 ] && [ "${err:-0}" -le 3500000 ]'

# Every kind of bad reply; the module must not notice.
ntp_start_responder 1123 spoof otherport mode3 version2 stratum0 stratum16 leap3 \
	zerots root order short long odd kod=DENY
before=$(model)
in_cli "$LCLKCTL" sync --samples 16 --interval 10ms --timeout 300ms --allow-backward \
	"ntp://$NTP_V4:1123" > "$NTP_DIR/out" 2>&1
rc=$?
sed 's/^/# /' "$NTP_DIR/out"
check "hostile responder: sync fails with exit 5" "[ $rc = 5 ]"
check "hostile responder: the model and counters are unchanged" '[ "$before" = "$(model)" ]'

[ $failed = 0 ]
