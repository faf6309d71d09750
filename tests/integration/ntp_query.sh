#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl query against a real chronyd (Debian's, -x: it never touches the
# clock) serving this machine's clock in one network namespace, measured
# from another over veth. Without the module, query measures the system
# clock, which the server shares: the true offset is 0, so |offset| must be
# within the reported bound. chronyd -Q measures the same server for
# comparison. Then IPv6, a host name, unreachable and silent servers, a
# hostile responder (every malformed reply rejected for its reason), a
# falseticker among three sources, and bad command lines. Prints TAP.
set -u
cd "$(dirname "$0")/../.."
LCLKCTL=$PWD/build/lclkctl
NTP_TAG=iq$$
. tests/integration/ntp_lib.sh
trap ntp_cleanup EXIT

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n $1"; }
# check NAME CONDITION: CONDITION is evaluated by the shell.
check() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
# q OUT ARGS...: query from the client namespace; stdout to OUT, stderr to OUT.err
q() { local out=$1; shift; in_cli "$LCLKCTL" query "$@" > "$out" 2> "$out.err"; }
within() { jget 'abs(d["combined"]["offset_ns"]) <= d["combined"]["bound_ns"]' < "$1"; }

echo "1..46"
[ -x "$LCLKCTL" ] || { echo "Bail out! build lclkctl first"; exit 1; }
[ -e /dev/lclk0 ] && { echo "Bail out! /dev/lclk0 exists: this test needs the module-less host"; exit 1; }
ntp_setup && ntp_start_chronyd
check "chronyd answers" ntp_wait_server
d=$NTP_DIR

q "$d/v4" --json "ntp://$NTP_V4"; rc=$?
check "IPv4 query succeeds" "[ $rc = 0 ]"
check "... |offset| <= bound (true offset 0)" '[ "$(within "$d/v4")" = True ]'
check "... no reply rejected" '[ "$(jget "d[\"sources\"][0][\"rejected\"]" < "$d/v4")" = 0 ]'
sent=$(srv_udp_in)
q "$d/xleave" --json -vv "ntp://$NTP_V4"; rc=$?
sent=$(($(srv_udp_in) - sent))
check "a burst of 8 is 8 requests, no more (chronyd got $sent)" '[ $sent = 8 ]'
# chronyd interleaves from its third reply to a new client on.
check "chronyd answers in interleaved mode: 6 or 7 of 8 samples" \
	'[ $rc = 0 ] && [ "$(grep -c " interleaved$" "$d/xleave.err")" -ge 6 ]'
check "... |offset| <= bound" '[ "$(within "$d/xleave")" = True ]'
echo "# lclkctl: $(jget '"offset %d ns, bound %d ns, delay %d ns" % (d["combined"]["offset_ns"], d["combined"]["bound_ns"], d["sources"][0]["delay_ns"])' < "$d/v4")"
chrony=$(in_cli timeout 30 chronyd -Q -t 10 -f /dev/null "server $NTP_V4 iburst maxsamples 4" 2>&1 |
	sed -n 's/.*System clock wrong by \([-0-9.]*\) seconds.*/\1/p')
echo "# chronyd -Q: offset ${chrony:-?} s"
check "chronyd -Q measured the same server" '[ -n "$chrony" ]'

q "$d/v6" --json "ntp://[$NTP_V6]:123"; rc=$?
check "IPv6 query succeeds" "[ $rc = 0 ]"
check "... |offset| <= bound" '[ "$(within "$d/v6")" = True ]'
q "$d/name" --json --samples 2 --interval 0 ntp://ntp-server.test; rc=$?
check "host name resolved" "[ $rc = 0 ]"
q "$d/dual" --json --samples 2 --interval 0 ntp://dual.test; rc=$?
check "a name whose IPv6 address has no route: IPv4 is used" "[ $rc = 0 ]"
q "$d/text" --samples 2 --interval 0 "ntp://$NTP_V4"; rc=$?
check "text output says it measures the system clock" \
	'[ $rc = 0 ] && grep -q "measuring the system clock" "$d/text" && grep -q survivor "$d/text"'

q "$d/unreach" --samples 2 "ntp://$NTP_V4:124"; rc=$?
check "closed port: exit 5, 'port unreachable'" \
	'[ $rc = 5 ] && grep -q "port unreachable" "$d/unreach"'
q "$d/silent" --samples 3 --timeout 200ms "ntp://10.$NTP_NET.0.3"; rc=$?
check "silent host: exit 5, timeout or unreachable" \
	'[ $rc = 5 ] && grep -Eq "timeout|unreachable" "$d/silent"'
q "$d/noname" --samples 1 ntp://no-such-host.invalid; rc=$?
check "unknown host: exit 5, 'cannot resolve'" \
	'[ $rc = 5 ] && grep -q "cannot resolve" "$d/noname"'

# One request for each kind of bad reply; then DENY.
ntp_start_responder 1123 spoof otherport mode3 version2 stratum0 stratum16 leap3 \
	zerots root order short long odd precision=40 kod=DENY
q "$d/hostile" --samples 16 --interval 0 --timeout 300ms "ntp://$NTP_V4:1123"; rc=$?
sed 's/^/# /' "$d/hostile.err"
check "hostile responder: exit 5" "[ $rc = 5 ]"
for reason in "origin timestamp does not match" "address or port we did not query" \
	"mode is not 4" "not 3 or 4" "stratum not in 1..15" "leap indicator 3" \
	"zero receive or transmit" "root delay or dispersion" "transmit time before" \
	"truncated packet" "oversized packet" "precision out of range" "KoD DENY"; do
	check "... rejected: $reason" 'grep -q "$reason" "$d/hostile.err"'
done

# KoD RATE ends the burst: one request, answered at once.
ntp_start_responder 1129 kod=RATE
sent=$(srv_udp_in)
t0=$(date +%s%N)
q "$d/rate" --samples 8 --interval 0 --timeout 300ms "ntp://$NTP_V4:1129"; rc=$?
t1=$(date +%s%N)
sent=$(($(srv_udp_in) - sent))
check "KoD RATE: exit 5, 'KoD RATE'" '[ $rc = 5 ] && grep -q "KoD RATE" "$d/rate.err"'
check "... after one request, within 1 s (sent $sent, $(( (t1 - t0) / 1000000 )) ms)" \
	'[ $sent = 1 ] && [ $(( t1 - t0 )) -lt 1000000000 ]'

ntp_start_responder 1124 dup
q "$d/dup" --json --samples 4 --interval 50ms "ntp://$NTP_V4:1124"; rc=$?
check "duplicate replies: rejected as such, the measurement stands" \
	'[ $rc = 0 ] && grep -q "duplicate reply" "$d/dup.err" && [ "$(within "$d/dup")" = True ]'

# Interleaved replies that lie: each rejected, the good replies stand.
ntp_start_responder 1127 good xorder good xspoof
q "$d/xbad" --json --samples 4 --interval 0 --timeout 300ms "ntp://$NTP_V4:1127"; rc=$?
check "interleaved reply sent before the exchange it names: rejected" \
	'[ $rc = 0 ] && grep -q "transmit time before" "$d/xbad.err"'
check "interleaved reply without our cookie: rejected as bogus" \
	'grep -q "origin timestamp does not match" "$d/xbad.err" && [ "$(jget "d[\"sources\"][0][\"samples\"]" < "$d/xbad")" = 2 ]'

# A server that does not mark its receive timestamps is asked the basic way
# only (this one ignores anything else).
ntp_start_responder 1128 plain
q "$d/plain" --json -vv --samples 4 --interval 0 --timeout 300ms "ntp://$NTP_V4:1128"; rc=$?
check "server without the interleave marker: basic requests, all 4 answered" \
	'[ $rc = 0 ] && [ "$(grep -c " offset .* delay " "$d/plain.err")" = 4 ] && ! grep -q interleaved "$d/plain.err"'

ntp_start_responder 1125 good
ntp_start_responder 1126 offset=1.5
q "$d/three" --json "ntp://$NTP_V4" "ntp://$NTP_V4:1125" "ntp://$NTP_V4:1126"; rc=$?
check "three sources, one 1.5 s off: it is the falseticker" \
	'[ $rc = 0 ] && [ "$(jget "\",\".join(s[\"state\"] for s in d[\"sources\"])" < "$d/three")" = survivor,survivor,falseticker ]'
check "... and the combined offset is within its bound" '[ "$(within "$d/three")" = True ]'

# Bad command lines: a message and the documented exit code, nothing done.
bad() { local want=$1; shift; "$LCLKCTL" "$@" > /dev/null 2> "$d/bad.err"; local rc=$?
	check "lclkctl $* -> exit $want with a message" "[ $rc = $want ] && [ -s '$d/bad.err' ]"; }
bad 2 frobnicate
bad 2 query ntp://
bad 2 query foo://x
bad 2 query ntp://host:99999
bad 2 query --samples zero "ntp://$NTP_V4"
bad 2 query --interval -1s "ntp://$NTP_V4"
bad 2 step -- -1ms
bad 4 sync "ntp://$NTP_V4"

[ $failed = 0 ]
