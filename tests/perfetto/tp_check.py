#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Load traces in Perfetto's own trace_processor_shell and check them in SQL.

check_trace.py reads a trace the way trace_processor should; this asks
trace_processor itself (scripts/trace-processor builds it once per machine,
outside the repository). For each trace:

- flows: ``select count(*) from flow``, trace_processor's own arrows,
  against the arrows the trace declares: counted in protoc's decode (not
  by lclk's reader), one between each two consecutive events carrying the
  same id in flow_ids or terminating_flow_ids. The difference is the arrows
  lost (``tp_flows_lost``), whatever the cause: at most --max-lost (default
  0); check_trace.py asks instead that it equal the loss its own model of
  the importer predicts, and bounds it with its --max-lost;
- names: every thread of the ``thread`` table and every process of the
  ``process`` table has a name (utid/upid 0 is trace_processor's own
  placeholder, not the trace's, and so is the main thread it adds to each
  process, tid = pid, when the trace has no thread track for it);
- import errors: no row of ``stats`` with severity 'error' or 'data_loss'
  and a value, nor of the informational ones that mean an event was
  misread (track_event_parser_errors, track_event_tokenizer_errors); the
  flows' own (flow_end_without_start...) are reported (``tp_flow_stats``),
  their loss counted above;
- something was imported: as many slices as the decode has slice and
  instant events (a trace whose events trace_processor drops still
  "loads").

The binary: $LCLK_TRACE_PROCESSOR if it is a path; else the one
scripts/trace-processor built (``--path``). LCLK_TRACE_PROCESSOR=0 turns
these checks off; LCLK_TRACE_PROCESSOR=require makes a missing binary an
error (make bench) instead of a skip.

Usage: tp_check.py [--flows N] [--max-lost N] [--json] FILE...
Prints "FILE: trace_processor flows F declared D lost L threads T processes
P slices S" per file (or a JSON object) and exits 1 on any failure, with the
reasons on stderr; if the binary is not built, one "# SKIP" line and exit 0
(2 when required).
"""
import argparse
import json
import os
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
BUILD_SCRIPT = os.path.join(TOP, "scripts", "trace-processor")

# Informational stats that still mean an event was misread.
BAD_INFO_STATS = ("track_event_parser_errors", "track_event_tokenizer_errors")
# The flows' stats: what trace_processor did with ids it could not join.
FLOW_STATS = ("flow_end_without_start", "flow_step_without_start", "flow_duplicate_id",
              "flow_no_enclosing_slice", "flow_invalid_id", "flow_without_direction")

# trace_processor makes a thread row for each process's main thread
# (tid = pid) when it meets the process: a thread the trace never mentions
# when its process track holds the events, as in a merge. Unnamed and
# trackless, it is not one of the trace's threads.
IMPLICIT_MAIN = """t.upid is not null
    and t.tid = (select p.pid from process p where p.upid = t.upid)
    and t.utid not in (select utid from thread_track where utid is not null)"""

# One statement, one result set of (key, value) rows: values are plain
# numbers, or lists joined by '|' in the last column (the shell's CSV does
# not escape strings).
QUERY = """
select 'flows' as k, count(*) as v from flow
union all select 'threads', count(*) from thread where utid != 0
union all select 'processes', count(*) from process where upid != 0
union all select 'slices', count(*) from slice
union all select 'thread_unnamed', ifnull(group_concat(ifnull(tid, '?'), '|'), '')
  from thread t where utid != 0 and (name is null or name = '') and not (IMPLICIT)
union all select 'main_unnamed', count(*)
  from thread t where utid != 0 and (name is null or name = '') and (IMPLICIT)
union all select 'process_unnamed', ifnull(group_concat(ifnull(pid, '?'), '|'), '')
  from process where upid != 0 and (name is null or name = '')
union all select 'bad_stats', ifnull(group_concat(
    name || ifnull('[' || idx || ']', '') || ' ' || severity || ' ' || value, '|'), '')
  from stats where value > 0 and (severity in ('error', 'data_loss') or name in (BAD))
union all select 'flow_stats', ifnull(group_concat(name || ' ' || value, '|'), '')
  from stats where value > 0 and name in (FLOWS)
""".replace("IMPLICIT", IMPLICIT_MAIN).replace(
    "BAD", ", ".join("'%s'" % s for s in BAD_INFO_STATS)).replace(
    "FLOWS", ", ".join("'%s'" % s for s in FLOW_STATS))


def binary() -> Tuple[Optional[str], str]:
    """(path, why not): the trace_processor_shell to use, or None."""
    env = os.environ.get("LCLK_TRACE_PROCESSOR", "")
    if env == "0":
        return None, "LCLK_TRACE_PROCESSOR=0"
    if env not in ("", "require"):
        if os.access(env, os.X_OK):
            return env, ""
        return None, "LCLK_TRACE_PROCESSOR=%s is not executable" % env
    try:
        r = subprocess.run([BUILD_SCRIPT, "--path"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    except OSError as e:
        return None, "%s: %s" % (BUILD_SCRIPT, e)
    path = r.stdout.decode().strip()
    if r.returncode == 0 and path and os.access(path, os.X_OK):
        return path, ""
    return None, "trace_processor_shell is not built (scripts/trace-processor, about an hour)"


def required() -> bool:
    return os.environ.get("LCLK_TRACE_PROCESSOR") == "require"


def declared(tree: Dict[str, Any]) -> Tuple[int, int]:
    """(arrows, slices) the decoded trace declares: an arrow joins each two
    consecutive events of a flow id; slices are its begin and instant events
    (trace_processor's slice rows)."""
    carriers: Dict[int, int] = {}
    slices = 0
    for p in tree.get("packet", []):
        for ev in p.get("track_event", []):
            if ev.get("type", ["TYPE_UNSPECIFIED"])[0] in ("TYPE_SLICE_BEGIN", "TYPE_INSTANT"):
                slices += 1
            for f in set(ev.get("flow_ids", [])) | set(ev.get("terminating_flow_ids", [])):
                carriers[f] = carriers.get(f, 0) + 1
    return sum(n - 1 for n in carriers.values() if n > 1), slices


def query(tp: str, path: str) -> Dict[str, str]:
    r = subprocess.run([tp, "query", path, QUERY], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if r.returncode:
        raise ValueError("trace_processor_shell query failed (%d): %s"
                         % (r.returncode, r.stderr.decode(errors="replace").strip()[-2000:]))
    out: Dict[str, str] = {}
    lines = r.stdout.decode(errors="replace").splitlines()
    if '"k","v"' not in lines:
        raise ValueError("trace_processor_shell printed %r" % lines[:3])
    for line in lines[lines.index('"k","v"') + 1:]:
        if not line:
            break
        k, _, v = line.partition(",")
        out[k.strip('"')] = v[1:-1] if v.startswith('"') else v
    missing = {"flows", "bad_stats", "flow_stats"} - set(out)
    if missing:
        raise ValueError("trace_processor_shell's answer lacks %s" % ", ".join(sorted(missing)))
    return out


def check(tp: str, path: str, tree: Dict[str, Any]) -> Tuple[Dict[str, Any], List[str]]:
    """trace_processor's figures for path, and what is wrong but the arrows
    lost (tp_flows_lost: for the caller to bound)."""
    errors: List[str] = []
    arrows, slices = declared(tree)
    got = query(tp, path)
    flows = int(got["flows"])
    res: Dict[str, Any] = {
           "tp_flows": flows, "tp_declared_flows": arrows, "tp_flows_lost": arrows - flows,
           "tp_threads": int(got["threads"]), "tp_processes": int(got["processes"]),
           "tp_slices": int(got["slices"]), "tp_implicit_main_threads": int(got["main_unnamed"]),
           "tp_flow_stats": got["flow_stats"].replace("|", ", ")}
    if flows > arrows:
        errors.append("trace_processor: %d arrows in its flow table, the trace declares %d"
                      % (flows, arrows))
    if got["thread_unnamed"]:
        errors.append("trace_processor: threads without a name, tid %s"
                      % got["thread_unnamed"].replace("|", ", "))
    if got["process_unnamed"]:
        errors.append("trace_processor: processes without a name, pid %s"
                      % got["process_unnamed"].replace("|", ", "))
    if got["bad_stats"]:
        errors.append("trace_processor: import stats: %s" % got["bad_stats"].replace("|", ", "))
    if res["tp_slices"] != slices:
        errors.append("trace_processor: %d slices, the trace has %d slice and instant events"
                      % (res["tp_slices"], slices))
    return res, errors


def lost_message(res: Dict[str, Any]) -> str:
    return ("trace_processor: %d of the %d arrows the trace declares are not in its flow table (%s)"
            % (res["tp_flows_lost"], res["tp_declared_flows"], res["tp_flow_stats"] or "no flow stats"))


def main() -> int:
    sys.path.insert(0, HERE)
    import check_trace  # noqa: E402 (beside this file)
    ap = argparse.ArgumentParser()
    ap.add_argument("--flows", type=int, help="the arrows expected in the flow table")
    ap.add_argument("--max-lost", type=int, default=0, help="arrows that may be lost (0)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    tp, why = binary()
    if tp is None:
        if required():
            print("tp_check: %s" % why, file=sys.stderr)
            return 2
        print("# SKIP Perfetto's trace_processor checks: %s" % why)
        return 0
    bad = False
    for path in a.files:
        try:
            res, errors = check(tp, path, check_trace.parse(check_trace.decode(path)))
        except (OSError, ValueError, subprocess.TimeoutExpired) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            bad = True
            continue
        if res["tp_flows_lost"] > a.max_lost:
            errors.append(lost_message(res))
        if a.flows is not None and res["tp_flows"] != a.flows:
            errors.append("trace_processor: %d arrows, not %d" % (res["tp_flows"], a.flows))
        if a.json:
            print(json.dumps(dict(file=path, errors=errors, **res)))
        else:
            print("%s: trace_processor flows %d declared %d lost %d threads %d processes %d slices %d"
                  % (path, res["tp_flows"], res["tp_declared_flows"], res["tp_flows_lost"],
                     res["tp_threads"], res["tp_processes"], res["tp_slices"]))
        for why in errors:
            print("%s: %s" % (path, why), file=sys.stderr)
        bad = bad or bool(errors)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
