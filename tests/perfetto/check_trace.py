#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check Perfetto traces with Perfetto's own schema, not with lclk's reader.

Each file is decoded by ``protoc --decode=perfetto.protos.Trace`` against
Perfetto's merged perfetto_trace.proto (this directory): a decode error
fails. The decoded text is then checked the way trace_processor reads it:

- interning: every name_iid / category_iid is defined in the interned_data
  of an earlier packet of its sequence (or its own), after a packet with
  SEQ_INCREMENTAL_STATE_CLEARED; packets that use interned data say
  SEQ_NEEDS_INCREMENTAL_STATE;
- descriptors: every ThreadDescriptor has a thread_name and its pid has a
  ProcessDescriptor with a process_name; no two process tracks share a pid;
- the clock: packets with timestamps name a clock, through
  timestamp_clock_id or trace_packet_defaults, that a ClockSnapshot of the
  trace relates to BOOTTIME (6), trace_processor's trace time: any other
  clock, builtin ones such as CLOCK_MONOTONIC (3) included, without one
  ("clock_sync_failure_unknown_source_clock") loses its packets;
- flows: trace_processor sorts events by timestamp and then attaches a
  flow id in flow_ids to a slice (starting the flow) and a terminating id
  to a slice only if its flow has started, dropping it otherwise. A flow
  is lost when its terminating event comes before its start in that
  order, or it is never terminated, or never started.

Usage: check_trace.py [--merged] [--flows N] [--max-lost N] [--clock ID] [--json] FILE...
  --merged      the trace is a merge: every track event sits on a thread
                track or a track below a process (as trace merge writes them)
  --flows N     the flows expected
  --clock ID    every event's timestamp is in clock ID
  --max-lost N  at most N flows lost (an arrow between hosts whose clocks
                disagree by more than the message's delay goes back in time,
                and is lost whatever the encoding: only honest clocks can
                ask for 0)
Prints "FILE: flows F lost L threads T processes P" per file and exits 1 on
any failure (decode, or a check above), with the reasons on stderr.

Once trace_processor_shell is built (scripts/trace-processor), each file is
also loaded in it and checked in SQL (tp_check.py: its flow table against
the arrows the trace declares, every thread and process named, no import
errors in its stats); the line then ends with "tp_flows F tp_lost L", the
JSON has tp_* fields, trace_processor's own count of lost arrows must be
the one predicted above, and --max-lost bounds it as well. Without the
binary those checks are left out silently (tests/run-suites.sh says so once
per suite); LCLK_TRACE_PROCESSOR=require makes that an error.
"""
import argparse
import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tp_check  # noqa: E402 (beside this file)
PROTO = "perfetto_trace.proto"
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
BOOTTIME = 6                    # BuiltinClocks: trace_processor's trace time
BOOTTIME = 6

Node = Dict[str, list]


def decode(path: str) -> str:
    with open(path, "rb") as f:
        r = subprocess.run(["protoc", "--decode=perfetto.protos.Trace", "-I", HERE, PROTO],
                           stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        raise ValueError("protoc --decode=perfetto.protos.Trace failed: %s"
                         % r.stderr.decode(errors="replace").strip())
    return r.stdout.decode(errors="replace")


_FIELD = re.compile(r'^([A-Za-z0-9_]+): (.*)$')


def parse(text: str) -> Node:
    """protoc's text format into nested dicts of lists of values."""
    root: Node = {}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line == "}":
            stack.pop()
            continue
        if line.endswith(" {"):
            child: Node = {}
            stack[-1].setdefault(line[:-2], []).append(child)
            stack.append(child)
            continue
        m = _FIELD.match(line)
        if not m:
            raise ValueError("protoc output: %r" % line)
        v = m.group(2)
        if v.startswith('"'):
            val: object = v[1:-1]
        elif re.fullmatch(r"-?[0-9]+", v):
            val = int(v)
        else:
            val = v
        stack[-1].setdefault(m.group(1), []).append(val)
    return root


def one(n: Node, key: str, default=None):
    v = n.get(key)
    return v[0] if v else default


class Report:
    def __init__(self) -> None:
        self.errors: List[str] = []
        self.flows = self.lost = self.threads = self.processes = 0
        self.clocks: set = set()     # the clocks of the track events' timestamps

    def fail(self, msg: str) -> None:
        if len(self.errors) < 20:
            self.errors.append(msg)


def check(tree: Node, merged: bool) -> Report:
    rep = Report()
    packets = tree.get("packet", [])
    interned: Dict[int, Dict[str, set]] = {}     # seq -> kind -> iids
    cleared: Dict[int, bool] = {}
    defaults: Dict[int, int] = {}                # seq -> timestamp_clock_id
    snap_clocks = set()                          # clocks a snapshot relates to BOOTTIME
    proc_pids: Dict[int, str] = {}
    thread_pids: List[Tuple[int, int]] = []
    track_kind: Dict[int, str] = {}              # uuid -> process/thread/track
    track_parent: Dict[int, int] = {}
    events: List[Tuple[int, int, Node]] = []     # (ts, order, event)
    for i, p in enumerate(packets):
        seq = one(p, "trusted_packet_sequence_id", 0)
        flags = one(p, "sequence_flags", 0)
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            cleared[seq] = True
            interned[seq] = {}
        for cs in p.get("clock_snapshot", []):
            ids = {one(c, "clock_id") for c in cs.get("clocks", [])}
            if BOOTTIME in ids:
                snap_clocks |= ids
        for d in p.get("trace_packet_defaults", []):
            if "timestamp_clock_id" in d:
                defaults[seq] = one(d, "timestamp_clock_id")
        for idata in p.get("interned_data", []):
            if not cleared.get(seq):
                rep.fail("packet %d: interned data before SEQ_INCREMENTAL_STATE_CLEARED" % i)
            for kind in ("event_names", "event_categories"):
                for e in idata.get(kind, []):
                    interned.setdefault(seq, {}).setdefault(kind, set()).add(one(e, "iid"))
        for td in p.get("track_descriptor", []):
            uuid = one(td, "uuid", 0)
            track_parent[uuid] = one(td, "parent_uuid", 0)
            for pd in td.get("process", []):
                track_kind[uuid] = "process"
                pid = one(pd, "pid")
                if pid is None or not one(pd, "process_name"):
                    rep.fail("packet %d: a process without pid or name" % i)
                    continue
                if pid in proc_pids and proc_pids[pid] != one(pd, "process_name"):
                    rep.fail("pid %d: two processes, %r and %r"
                             % (pid, proc_pids[pid], one(pd, "process_name")))
                proc_pids[pid] = one(pd, "process_name")
            for thd in td.get("thread", []):
                track_kind[uuid] = "thread"
                if not one(thd, "thread_name"):
                    rep.fail("packet %d: thread %s has no name" % (i, one(thd, "tid")))
                thread_pids.append((one(thd, "pid"), one(thd, "tid")))
            track_kind.setdefault(uuid, "track")
        for ev in p.get("track_event", []):
            uses = "name_iid" in ev or "category_iids" in ev
            if uses and not flags & SEQ_NEEDS_INCREMENTAL_STATE:
                rep.fail("packet %d: interned ids without SEQ_NEEDS_INCREMENTAL_STATE" % i)
            got = interned.get(seq, {})
            if "name_iid" in ev and one(ev, "name_iid") not in got.get("event_names", ()):
                rep.fail("packet %d: name_iid %d not interned" % (i, one(ev, "name_iid")))
            for c in ev.get("category_iids", []):
                if c not in got.get("event_categories", ()):
                    rep.fail("packet %d: category_iid %d not interned" % (i, c))
            if "timestamp" not in p:
                rep.fail("packet %d: a track event without a timestamp" % i)
            clock = one(p, "timestamp_clock_id", defaults.get(seq))
            if clock is None:
                rep.fail("packet %d: timestamp in no declared clock (BOOTTIME by default)" % i)
            elif clock != BOOTTIME and clock not in snap_clocks:
                rep.fail("packet %d: clock %d has no ClockSnapshot relating it to BOOTTIME" % (i, clock))
            if clock is not None:
                rep.clocks.add(clock)
            events.append((one(p, "timestamp", 0), i, ev))
    for pid, tid in thread_pids:
        if pid not in proc_pids:
            rep.fail("thread %s: its pid %s has no process descriptor" % (tid, pid))
    rep.threads = len(thread_pids)
    rep.processes = len(proc_pids)
    if merged:
        for _, i, ev in events:
            t = one(ev, "track_uuid", 0)
            ok = track_kind.get(t) == "thread"
            seen = 0
            while not ok and t in track_parent and seen < 8:
                t, seen = track_parent[t], seen + 1
                ok = track_kind.get(t) == "process"
            if not ok:
                rep.fail("packet %d: an event on a track of no thread or process" % i)
                break
    # trace_processor's order: by timestamp, ties in file order.
    events.sort(key=lambda e: (e[0], e[1]))
    started, ended = set(), set()
    all_ids = set()
    for _, _, ev in events:
        for f in ev.get("flow_ids", []):
            all_ids.add(f)
            started.add(f)
        for f in ev.get("terminating_flow_ids", []):
            all_ids.add(f)
            if f in started:
                ended.add(f)
    rep.flows = len(all_ids)
    rep.lost = len(all_ids - ended)
    return rep


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--merged", action="store_true")
    ap.add_argument("--flows", type=int)
    ap.add_argument("--max-lost", type=int)
    ap.add_argument("--clock", type=int, help="the events' timestamps are all in this clock")
    ap.add_argument("--json", action="store_true", help="print one JSON object per file")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    bad = False
    tp, why = tp_check.binary()
    if tp is None and tp_check.required():
        print("check_trace: %s" % why, file=sys.stderr)
        return 1
    for path in a.files:
        tpres: Dict[str, Any] = {}
        try:
            tree = parse(decode(path))
            rep = check(tree, a.merged)
            if tp is not None:
                tpres, tperrors = tp_check.check(tp, path, tree)
                for why_tp in tperrors:
                    rep.fail(why_tp)
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            bad = True
            continue
        if a.max_lost is not None and rep.lost > a.max_lost:
            rep.fail("%d of %d flows lost" % (rep.lost, rep.flows))
        # trace_processor's own count: within --max-lost, and what the
        # model above predicts.
        if tpres and (a.max_lost is not None and tpres["tp_flows_lost"] > a.max_lost or
                      tpres["tp_flows_lost"] != rep.lost):
            rep.fail(tp_check.lost_message(tpres) + "; check_trace.py's model: %d lost" % rep.lost)
        if a.flows is not None and rep.flows != a.flows:
            rep.fail("%d flows, not %d" % (rep.flows, a.flows))
        if a.clock is not None and rep.clocks != {a.clock}:
            rep.fail("timestamps in clocks %s, not %d" % (sorted(rep.clocks), a.clock))
        if a.json:
            print(json.dumps(dict({"file": path, "flows": rep.flows, "flows_lost": rep.lost,
                                   "threads": rep.threads, "processes": rep.processes,
                                   "errors": rep.errors}, **tpres)))
        else:
            print("%s: flows %d lost %d threads %d processes %d%s"
                  % (path, rep.flows, rep.lost, rep.threads, rep.processes,
                     " tp_flows %d tp_lost %d" % (tpres["tp_flows"], tpres["tp_flows_lost"])
                     if tpres else ""))
        for e in rep.errors:
            print("%s: %s" % (path, e), file=sys.stderr)
        bad = bad or bool(rep.errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
