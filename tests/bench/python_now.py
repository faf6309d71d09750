# SPDX-License-Identifier: GPL-2.0
"""Per-call cost of lclk.Clock.now() against time.monotonic_ns(), in the
interpreter (call, reading and result object included): best of ROUNDS
rounds of N calls each, the two interleaved so that a noisy neighbour
hits both. Prints "BENCH name value" lines (ns per call, and the ratio)."""
import os
import sys
import time
import timeit

import lclk

N = int(os.environ.get("LCLK_BENCH_CALLS", "200000"))
ROUNDS = int(os.environ.get("LCLK_BENCH_ROUNDS", "15"))

clock = lclk.Clock(sys.argv[1] if len(sys.argv) > 1 else "/dev/lclk0")
calls = {
    "monotonic_ns": time.monotonic_ns,
    "now": clock.now,
    "now_ns": clock.now_ns,
}
best = {name: float("inf") for name in calls}
for _ in range(ROUNDS):
    for name, fn in calls.items():
        t = timeit.Timer(fn).timeit(N)
        best[name] = min(best[name], t * 1e9 / N)
for name, ns in best.items():
    print("BENCH python.%s_ns %.1f" % (name, ns))
print("BENCH python.now_vs_monotonic_ns %.2f" % (best["now"] / best["monotonic_ns"]))
print("BENCH python.now_ns_vs_monotonic_ns %.2f" % (best["now_ns"] / best["monotonic_ns"]))
