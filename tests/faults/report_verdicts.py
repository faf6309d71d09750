#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The report scenario's truth check (issue 30 #11): lclk.report's verdicts
on a generated run of four ranks whose true times are known.

Ranks 0-2 stamp their collectives within their bounds (200 us); rank 3's
slices record no bound, and its clock is up to 3 ms off (any error agrees
with an unknown bound). Every verdict the report calls certain is checked
against the true times: a "last arrival" that did not truly start last, and
any causality violation (none happened), are violations, printed.

    report_verdicts.py DIR COLLECTIVES

Prints VIOLATION lines and one READER line, as fault_reader does; its
max_err_over_bound is the stamps' (known bounds only): the trace's own
honesty, which the verdicts rely on.
"""
import os
import random
import sys

from lclk.perfetto import Writer
from lclk.report import analyse, load

RANKS = 4
BOUND = 200_000
NO_BOUND_ERR = 3_000_000


def main() -> None:
    d, n = sys.argv[1], int(sys.argv[2])
    rng = random.Random(30)
    writers = [Writer(os.path.join(d, f"rank{r}.pftrace"), host=f"h{r}", pid=100 + r)
               for r in range(RANKS)]
    truth = {}
    max_ratio = 0.0
    for seq in range(1, n + 1):
        base = seq * 50_000_000
        starts = [base + rng.randrange(0, 3_000_000) for _ in range(RANKS)]
        end = max(starts) + 1_000_000
        truth[seq] = starts
        for r in range(RANKS):
            known = r < RANKS - 1
            lim = BOUND if known else NO_BOUND_ERR
            e0, e1 = rng.randint(-lim, lim), rng.randint(-lim, lim)
            args = [("rank", r), ("group", "0"), ("seq", seq), ("step", seq)]
            if known:
                args += [("bound_begin_ns", BOUND), ("bound_end_ns", BOUND)]
                max_ratio = max(max_ratio, abs(e0) / BOUND, abs(e1) / BOUND)
            writers[r].slice("collectives", "lclk.collective", "all_reduce",
                             starts[r] + e0, end + e1, args)
    for w in writers:
        w.close()
    a = analyse(load(os.path.join(d, f"rank{r}.pftrace") for r in range(RANKS)))
    readings = violations = 0
    for row in a["per_collective"]:
        readings += 1
        starts = truth[row["seq"]]
        true_last = max(range(RANKS), key=lambda r: starts[r])
        if row["certain"] and row["last"] != true_last:
            violations += 1
            if violations <= 20:
                print(f"VIOLATION report_verdicts last-arrival seq={row['seq']} "
                      f"certain={row['last']} truly_last={true_last} true_starts={starts} "
                      f"gap_ns={row['gap_ns']}")
    for v in a["collectives"]["violations"]:
        violations += 1
        print(f"VIOLATION report_verdicts causality {v} (none happened)")
    readings += 1
    print("START report_verdicts verdicts")
    print(f"READER report_verdicts verdicts readings {readings} synced {readings} "
          f"violations {violations} max_err_over_bound {max_ratio:.6f} max_err_ns 0")


if __name__ == "__main__":
    main()
