#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The traced-syscall reader: lclkctl trace's stamps of fault_reader calls'
blocking reads, each checked against the truth interval the caller took
around it.

    trace_check.py NAME CALLS TRACE_JSON

CALLS: fault_reader calls' "CALL N LO HI" lines (N: the read's length,
distinct over a scenario); TRACE_JSON: lclkctl --json trace -v's outlier
lines. An outlier's start and end must each lie within their bound of
[LO, HI]; an unknown bound (unsynced) is not checked. Prints VIOLATION
lines and one READER line, as fault_reader does.
"""
import json
import sys

UNKNOWN = 2**62


def main() -> None:
    name, calls_path, trace_path = sys.argv[1:4]
    calls = {}
    with open(calls_path) as f:
        for line in f:
            p = line.split()
            if p and p[0] == "CALL":
                calls[int(p[1])] = (int(p[2]), int(p[3]))
    readings = synced = violations = 0
    max_ratio = 0.0
    max_err = 0
    with open(trace_path) as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("type") != "outlier" or o.get("syscall") != "read" or o["bytes"] not in calls:
                continue
            lo, hi = calls[o["bytes"]]
            for t, b in ((o["start_ns"], o["bound_start_ns"]), (o["end_ns"], o["bound_end_ns"])):
                readings += 1
                if b >= UNKNOWN:
                    continue
                synced += 1
                err = lo - t if t < lo else max(t - hi, 0)
                max_err = max(max_err, err)
                max_ratio = max(max_ratio, err / b if b > 0 else float(err > 0))
                if err > b:
                    violations += 1
                    if violations <= 20:
                        print(f"VIOLATION {name} trace stamp={t} bound={b} truth=[{lo},{hi}] "
                              f"err={err} ({o['bytes']} bytes)")
    print(f"START {name} trace")
    print(f"READER {name} trace readings {readings} synced {synced} violations {violations} "
          f"max_err_over_bound {max_ratio:.6f} max_err_ns {max_err}")


if __name__ == "__main__":
    main()
