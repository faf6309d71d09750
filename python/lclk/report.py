# SPDX-License-Identifier: GPL-2.0
"""What the ranks' lclk.torch traces say about a training run.

    python3 -m lclk.report rank*.pftrace [--json FILE] [--steps]

Reads the traces (each rank's, or one merged file), and prints:

- the step time of each rank and, per step, its standard deviation across
  the ranks (σ: the step-time jitter skew and stragglers cause);
- the share of each step a rank spent in collectives (the union of its
  collective slices inside the step, over the step's length);
- per collective (process group, sequence number) the rank that arrived
  last: it issued the collective latest. That is certain only when its
  start is later than every other rank's by more than the sum of their
  bounds (each start lies within its bound of the reference time: the
  runner-up by the stamps is not always the closest call);
  otherwise the order is ambiguous and counted as such. A slice that
  records no bound (or lclk's "unknown") has an unknown one: any order
  involving it is ambiguous;
- causality violations: a rank finished a collective before another rank
  (the root, for a broadcast) had started it, beyond both bounds. A
  collective cannot complete before all its inputs exist, so any count
  other than 0 means a clock lied about its bound. An unknown bound
  proves nothing impossible: never a violation.
"""
import argparse
import json
import statistics
import sys
from collections import Counter, defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from lclk.perfetto import DecodeError, Slice, read_slices

STEP = "lclk.step"
COLLECTIVE = "lclk.collective"
BOUND_UNKNOWN = 2**63 - 1       # lclk.BOUND_UNKNOWN: an unsynced clock's bound


def bound(args: Dict[str, Any], key: str) -> Optional[int]:
    """The bound recorded under key, None when unknown: missing, lclk's
    BOUND_UNKNOWN, negative or not a number. Never 0 for want of one."""
    try:
        v = int(args[key])
    except (KeyError, TypeError, ValueError):
        return None
    return v if 0 <= v < BOUND_UNKNOWN else None


class Interval:
    __slots__ = ("rank", "start", "end", "bound_begin", "bound_end", "args", "name")

    def __init__(self, s: Slice) -> None:
        self.rank = int(s.args["rank"])
        self.start = s.start_ns
        self.end = s.end_ns if s.end_ns is not None else s.start_ns
        self.bound_begin = bound(s.args, "bound_begin_ns")
        self.bound_end = bound(s.args, "bound_end_ns")
        self.args = s.args
        self.name = s.name


def load(paths: Iterable[str]) -> List[Slice]:
    out: List[Slice] = []
    for p in paths:
        with open(p, "rb") as f:
            try:
                out.extend(read_slices(f.read()))
            except DecodeError as e:
                raise DecodeError("%s: %s" % (p, e)) from None
    return out


def union_inside(spans: Sequence[Tuple[int, int]], lo: int, hi: int) -> int:
    """Length of the union of spans, clipped to [lo, hi]."""
    total = 0
    cur: Optional[Tuple[int, int]] = None      # the union's current run
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in spans):
        if e <= s:
            continue
        if cur is None or s > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = (s, e)
        else:
            cur = (cur[0], max(cur[1], e))
    if cur is not None:
        total += cur[1] - cur[0]
    return total


def last_arrival(ivs: Sequence[Interval]) -> Dict[str, Any]:
    """The rank that started a collective last, and whether that is certain."""
    by_start = sorted(ivs, key=lambda iv: iv.start)
    last = by_start[-1]
    out: Dict[str, Any] = {"last": last.rank, "certain": len(by_start) == 1, "gap_ns": None}
    if len(by_start) > 1:
        second = by_start[-2]
        out["gap_ns"] = last.start - second.start
        out["runner_up"] = second.rank
        # After each of the others beyond both bounds: one with a wide bound
        # may have started after it though stamped before the runner-up.
        out["certain"] = last.bound_begin is not None and all(
            iv.bound_begin is not None and last.start - iv.start > last.bound_begin + iv.bound_begin
            for iv in by_start[:-1])
    return out


def violations(op: str, ivs: Sequence[Interval]) -> List[Tuple[int, int]]:
    """(finisher, starter) pairs where the finisher certainly completed before
    the starter began. For a broadcast only the root's start counts."""
    starters = ivs
    if op == "broadcast":
        starters = [iv for iv in ivs if "root" in iv.args and iv.rank == int(iv.args["root"])]
    out = []
    for f in ivs:
        for s in starters:
            if f.bound_end is None or s.bound_begin is None:
                continue        # either end anywhere: nothing proven
            if f.end + f.bound_end < s.start - s.bound_begin:
                out.append((f.rank, s.rank))
    return out


def analyse(slices: Iterable[Slice]) -> Dict[str, Any]:
    steps: Dict[int, Dict[int, Interval]] = defaultdict(dict)
    colls: Dict[Tuple[str, int], List[Interval]] = defaultdict(list)
    by_rank: Dict[int, List[Interval]] = defaultdict(list)
    for s in slices:
        if "rank" not in s.args:
            continue
        if s.category == STEP:
            iv = Interval(s)
            steps[int(s.args["step"])][iv.rank] = iv
        elif s.category == COLLECTIVE and "error" not in s.args:
            iv = Interval(s)
            colls[(str(s.args["group"]), int(s.args["seq"]))].append(iv)
            by_rank[iv.rank].append(iv)
    ranks = sorted({r for st in steps.values() for r in st} | set(by_rank))

    # Steps: σ across ranks, per rank the share spent in collectives.
    step_rows = []
    share: Dict[int, List[float]] = defaultdict(list)
    spans = {r: [(iv.start, iv.end) for iv in by_rank[r]] for r in ranks}
    for k in sorted(steps):
        st = steps[k]
        durs = {r: st[r].end - st[r].start for r in st}
        row: Dict[str, Any] = {"step": k, "ns": durs,
                               "sigma_ns": statistics.pstdev(durs.values()) if len(durs) > 1 else 0.0}
        waits = {}
        for r, iv in st.items():
            if iv.end > iv.start:
                waits[r] = union_inside(spans.get(r, []), iv.start, iv.end) / (iv.end - iv.start)
                share[r].append(waits[r])
        row["collective_share"] = waits
        step_rows.append(row)
    complete = [row for row in step_rows if len(row["ns"]) == len(ranks)]
    sigmas = [row["sigma_ns"] for row in complete]

    # Collectives: who came last, mismatches, causality.
    coll_rows = []
    last_count: Counter[int] = Counter()
    certain_count: Counter[int] = Counter()
    ambiguous = mismatched = 0
    bad: List[Dict[str, Any]] = []
    for (group, seq), ivs in sorted(colls.items()):
        ops = {iv.name for iv in ivs}
        if len(ops) > 1 or len({iv.rank for iv in ivs}) != len(ivs):
            mismatched += 1
            continue
        op = ops.pop()
        la = last_arrival(ivs)
        last_count[la["last"]] += 1
        if la["certain"]:
            certain_count[la["last"]] += 1
        else:
            ambiguous += 1
        v = violations(op, ivs)
        for finisher, starter in v:
            bad.append({"group": group, "seq": seq, "op": op, "finished": finisher,
                        "not_started": starter})
        coll_rows.append({"group": group, "seq": seq, "op": op, "ranks": len(ivs), **la})

    slowest = None
    if certain_count:
        r, n = certain_count.most_common(1)[0]
        slowest = {"rank": r, "certain": n, "last": last_count[r], "of": len(coll_rows)}
    return {
        "ranks": ranks,
        "steps": {
            "count": len(complete),
            "mean_ns": {r: statistics.fmean(row["ns"][r] for row in complete) for r in ranks}
            if complete else {},
            "sigma_ns": {"mean": statistics.fmean(sigmas), "median": statistics.median(sigmas),
                         "max": max(sigmas)} if sigmas else None,
            "collective_share": {r: statistics.fmean(share[r]) for r in ranks if share[r]},
        },
        "collectives": {
            "count": len(coll_rows),
            "mismatched": mismatched,
            "ambiguous": ambiguous,
            "last": {r: {"last": last_count[r], "certain": certain_count[r]} for r in ranks},
            "slowest": slowest,
            "causality_violations": len(bad),
            "violations": bad[:20],
        },
        "per_step": step_rows,
        "per_collective": coll_rows,
    }


def ms(ns: float) -> str:
    return "%.3f ms" % (ns / 1e6)


def print_report(a: Dict[str, Any], per_step: bool = False, out: Any = None) -> None:
    out = out or sys.stdout
    st, co = a["steps"], a["collectives"]

    def p(line: str) -> None:
        print(line, file=out)
    p("ranks: %s" % " ".join(map(str, a["ranks"])))
    p("steps: %d on every rank" % st["count"])
    for r in a["ranks"]:
        if r in st["mean_ns"]:
            p("  rank %d: step %s mean, %.1f%% of it in collectives" % (
                r, ms(st["mean_ns"][r]), 100 * st["collective_share"].get(r, 0.0)))
    if st["sigma_ns"]:
        s = st["sigma_ns"]
        p("step time sigma across ranks: mean %s, median %s, max %s" % (
            ms(s["mean"]), ms(s["median"]), ms(s["max"])))
    if per_step:
        for row in a["per_step"]:
            p("  step %d: sigma %s, %s" % (row["step"], ms(row["sigma_ns"]), " ".join(
                "r%d %s (%.0f%% coll)" % (r, ms(row["ns"][r]), 100 * row["collective_share"].get(r, 0))
                for r in sorted(row["ns"]))))
    p("collectives: %d (by process group and sequence number), %d ambiguous, %d mismatched" % (
        co["count"], co["ambiguous"], co["mismatched"]))
    for r in a["ranks"]:
        c = co["last"][r]
        p("  rank %d arrived last at %d (certain at %d)" % (r, c["last"], c["certain"]))
    if co["slowest"]:
        s = co["slowest"]
        p("last to arrive: rank %d, certainly at %d of %d collectives" % (s["rank"], s["certain"], s["of"]))
    p("causality violations: %d" % co["causality_violations"])
    for v in co["violations"]:
        p("  %s seq %d (%s): rank %d finished before rank %d started" % (
            v["group"], v["seq"], v["op"], v["finished"], v["not_started"]))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lclk.report", description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="Perfetto traces written by lclk.torch")
    ap.add_argument("--json", metavar="FILE", help="also write the analysis as JSON ('-': stdout only)")
    ap.add_argument("--steps", action="store_true", help="print every step")
    args = ap.parse_args(argv)
    try:
        a = analyse(load(args.traces))
    except (OSError, DecodeError) as e:
        print("lclk.report: %s" % e, file=sys.stderr)
        return 1
    if args.json == "-":
        json.dump(a, sys.stdout, indent=1)
        print()
        return 0
    print_report(a, args.steps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(a, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
