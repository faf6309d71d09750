#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: one message of unknown bound (sent while its host was unsynced)
#   on every pair of a three-host trace that lclkctl trace merge checks
#   (issue 30 #10); node02's clock is 3 ms off under a 10 us bound.
# truth: the generator's (cluster_lying.c): node02's two pairs lie, the
#   node00-node01 pair does not, and no honest message contradicts its
#   bounds.
# why the fault cannot move it: the truth is how the trace was made; the
#   fault is in what the trace says.
. tests/faults/lib.bash
rounds=50
[ "${LCLK_FAULT_LONG:-0}" = 1 ] && rounds=2000
build/tests/faults/cluster_lying "$dir" "$rounds" || die "cluster_lying"
$lclkctl trace merge "$dir"/node0*.pftrace -o "$dir/merged.pftrace" --json >"$dir/merge.json" ||
	die "trace merge"
python3 - "$dir/merge.json" >"$dir/readers.merge" <<'EOP'
import json, sys
j = json.load(open(sys.argv[1]))
n = v = 0
for p in j["pairs"]:
    liar = "node02" in (p["a"], p["b"])
    n += 1
    if p["lying"] != liar:
        v += 1
        print(f"VIOLATION cluster_lying pair {p['a']}-{p['b']} lying={p['lying']} truly {liar}")
    if not liar:
        for d in ("a_to_b", "b_to_a"):
            n += 1
            if p[d]["violations"]:
                v += 1
                print(f"VIOLATION cluster_lying {p['a']}-{p['b']} {d}: {p[d]['violations']} violations, none true")
print("START cluster_lying verdicts")
print(f"READER cluster_lying verdicts readings {n} synced {n} violations {v} "
      f"max_err_over_bound 0 max_err_ns 0")
EOP
finish
