#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lclkctl trace --messages in the VM's kernel: a TCP ping-pong over
# loopback is recorded, and trace merge matches every receive to its send
# by sequence range, with no receive before its send. Its cost is make
# bench's (tests/bench/trace_messages.sh, in the VM by
# tests/bench/trace_vm.sh): nothing here asserts it. Where the kernel refuses
# fentry (before 5.12) the test is skipped with lclkctl's reason.
# Runs in the VM as root from the repository root; TAP.
cd "$(dirname "$0")/../.." || exit 1
ROUNDS=200
TMP=$(mktemp -d /tmp/lclk-msg.XXXXXX)
TRACER=""
trap '[ -n "$TRACER" ] && kill -KILL $TRACER 2>/dev/null; rm -rf "$TMP"' EXIT

echo "1..5"
build/lclkctl trace --comm lclk-msg --messages --trace-out "$TMP/host.pftrace" \
	2>"$TMP/err" &
TRACER=$!
for _ in $(seq 300); do
	grep -q '^Tracing' "$TMP/err" && break
	kill -0 $TRACER 2>/dev/null || break
	sleep 0.1
done
if ! grep -q '^Tracing' "$TMP/err"; then
	why=$(sed -n 's/^lclkctl trace: --messages needs //p' "$TMP/err")
	if [ -n "$why" ]; then
		for i in 1 2 3 4 5; do echo "ok $i # SKIP --messages needs $why"; done
		exit 0
	fi
	sed 's/^/# /' "$TMP/err"
	echo "not ok 1 - lclkctl trace --messages starts"
	exit 1
fi
echo "ok 1 - lclkctl trace --messages starts"
build/tests/bench/pingpong -T -n $ROUNDS -d 2000 -c lclk-msg >"$TMP/pp"
kill -TERM $TRACER
wait $TRACER
TRACER=""
sed 's/^/# /' "$TMP/err" | tail -3
build/lclkctl --json trace merge "$TMP/host.pftrace" -o "$TMP/merged.pftrace" >"$TMP/report.json"
python3 - "$TMP/report.json" $ROUNDS <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = 2 * int(sys.argv[2])
m = r["messages"]
print("# %s" % json.dumps(m))
ok = m["sends"] == n and m["recvs"] == n
print("%s 2 - %d sends and %d receives recorded (want %d each; the end-of-file read is none)"
      % ("ok" if ok else "not ok", m["sends"], m["recvs"], n))
ok = m["matched"] == n and m["unmatched_recvs"] == 0 and r["flows"] == n
print("%s 3 - every receive matched to its send by sequence range, with an arrow"
      % ("ok" if ok else "not ok"))
PY
# One host: its clock against itself can only be right.
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["violations"] != 0)' \
	"$TMP/report.json"; then
	echo "ok 4 - no receive before its send"
else
	echo "not ok 4 - no receive before its send"
fi
# Blocking receives: each began before its send. Perfetto keeps their
# arrows (they end on the receive's end), and both traces read with its schema.
if tests/perfetto/flows.sh messages "$TMP/merged.pftrace" "$TMP/host.pftrace" >"$TMP/flows" 2>&1; then
	echo "ok 5 - Perfetto's schema reads both traces and keeps every arrow"
else
	echo "not ok 5 - Perfetto's schema reads both traces and keeps every arrow"
fi
sed 's/^/# /' "$TMP/flows"
