#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The fault campaign's reader through the Python package (lclk.Clock):
fault_reader.c's "read", its truth bracketed the same way, its READER and
VIOLATION lines the same.

    fault_reader.py -n NAME [-d DEV] [-T raw|realtime|DEV] [-c C] [-e ERR]
                    [-s SECONDS] [-i USEC] [-r BURST]
"""
import argparse
import os
import time

import lclk

MAX_PRINTED = 20


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", default="?")
    ap.add_argument("-d", default="/dev/lclk0")
    ap.add_argument("-T", default="raw")
    ap.add_argument("-c", type=int, default=0)
    ap.add_argument("-e", type=int, default=0)
    ap.add_argument("-s", type=float, default=2.0)
    ap.add_argument("-i", type=int, default=100)
    ap.add_argument("-r", type=int, default=1)
    a = ap.parse_args()
    if a.T in ("raw", "realtime"):
        cid = time.CLOCK_MONOTONIC_RAW if a.T == "raw" else time.CLOCK_REALTIME
        def truth() -> int:
            return time.clock_gettime_ns(cid)
    else:
        ref = lclk.Clock(a.T)
        def truth() -> int:
            return ref.now().time_ns
    # UTC on a continuous line, as fault_reader.c's leap_truth()
    leap_at = int(os.environ.get("LCLK_FAULT_LEAP_AT", "0"))
    readings = synced = violations = 0
    max_ratio = 0.0
    max_err = 0
    with lclk.Clock(a.d) as clock:
        start = truth()
        end = start + int(a.s * 1e9)
        while True:
            before = truth()
            n = clock.now()
            after = truth()
            lo, hi = before + a.c - a.e, after + a.c + a.e
            if leap_at:
                lo, hi = sorted(x - (10**9 if x >= leap_at else 0)
                                for x in (lo, hi))
            err = lo - n.time_ns if n.time_ns < lo else max(n.time_ns - hi, 0)
            if not readings:
                print(f"START {a.n} python", flush=True)
            readings += 1
            if n.status in (lclk.STATUS_SYNCED, lclk.STATUS_HOLDOVER):
                synced += 1
                ratio = err / n.bound_ns if n.bound_ns > 0 else (
                    float("inf") if err else 0.0)
                max_ratio = max(max_ratio, ratio)
                max_err = max(max_err, err)
                if err > n.bound_ns:
                    if violations < MAX_PRINTED:
                        print(f"VIOLATION {a.n} python at={(lo - start) / 1e9:.3f} "
                              f"logical={n.time_ns} bound={n.bound_ns} "
                              f"status={n.status} truth=[{lo},{hi}] err={err}",
                              flush=True)
                    violations += 1
            if after >= end:
                break
            if a.i and readings % max(a.r, 1) == 0:
                time.sleep(a.i / 1e6)
    print(f"READER {a.n} python readings {readings} synced {synced} "
          f"violations {violations} max_err_over_bound {max_ratio:.6f} "
          f"max_err_ns {max_err}", flush=True)


if __name__ == "__main__":
    main()
