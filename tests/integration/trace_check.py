#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of lclkctl trace's outputs, for tests/integration/trace*.sh and
tests/guest/trace*.sh. Each subcommand exits 0 when the output is as
expected, else prints why and exits 1.

  series JSONL PID SYSCALL OUTCOME CALLS [--low NS --high NS [--log LOG]]
         [--bytes N] [--device DEV]
                               a series' exact count (less at most the
                               probes the kernel skipped, reported as
                               recursion losses) and bytes; with a bucket
                               (LOW-1, HIGH]: 90% in it, none more than one
                               bucket below it (a caller preempted between
                               its send and its receive waits less) and the
                               rest late: the scheduler of a loaded host;
                               LOW-1 and HIGH may span several buckets.
                               With the ping-pong's LOG, a receive whose
                               answer was waiting may be below (answered())
  absent JSONL PID SYSCALL OUTCOME
                               no such series
  pids JSONL PID...            the traced processes are exactly these
  outliers JSONL LOG PID CLOCK THRESHOLD_NS
                               one recvfrom outlier inside each logged round
                               but those whose answer was waiting; any
                               other, a sendto inside one
  spins JSONL LOG PID MIN_NS   each outlier with data lies in a logged round
                               and counts exactly the round's empty calls;
                               half the rounds, at least, spun MIN_NS
  invariant JSONL [--calls N] [--min-lost N]
                               outliers + lost events = traced calls (= N),
                               at least N of them lost
  prom FILE PID SYSCALL OUTCOME CALLS EDGE_NS [--log LOG]
                               cumulative buckets (0 below EDGE/2, 90% at
                               EDGE), +Inf = _count = CALLS, _sum; with the
                               ping-pong's LOG, as series --log
  perfetto TRACE JSONL         the Perfetto file holds the outliers
  ranks JSONL TRACE N          N processes blocked, one track per thread
  lost JSONL KIND MIN          at least MIN losses of KIND reported (recursion,
                               events, starts, hist, messages)
  accounted JSONL MADE SYSCALL...
                               MADE calls of SYSCALLs: each counted in the
                               histogram or reported lost (starts, exits,
                               recursion)
  longest JSONL PID SYSCALL MIN_NS MAX_NS
                               the longest outlier of SYSCALL in process PID
                               lasted MIN_NS to MAX_NS
  serve                        the checks above, one a line on stdin (the
                               arguments separated by tabs), each answered
                               with what it printed and a last line
                               "@@trace_check@@ STATUS": one interpreter for
                               a test's many checks (python's start takes
                               0.7 s in a TCG guest)
"""
import json
import re
import sys


def fail(msg):
    print("trace_check: " + msg)
    sys.exit(1)


def load(path):
    """Interval reports merged into {(pid, sys, outcome, dev): series}."""
    series, outliers, lost, reported_outliers = {}, [], {}, 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            doc = json.loads(line)
            if doc["type"] == "outlier":
                outliers.append(doc)
                continue
            reported_outliers += doc["outliers"]
            for k, v in doc["lost"].items():
                lost[k] = lost.get(k, 0) + v
            for p in doc["processes"]:
                for s in p["series"]:
                    key = (p["pid"], s["syscall"], s["outcome"], s.get("device"))
                    acc = series.setdefault(key, {"calls": 0, "sum_ns": 0,
                                                  "bytes": 0, "buckets": {},
                                                  "comm": p["comm"]})
                    acc["calls"] += s["calls"]
                    acc["sum_ns"] += s["sum_ns"]
                    acc["bytes"] += s["bytes"]
                    for b in s["buckets"]:
                        edge = (b["low_ns"], b["high_ns"])
                        acc["buckets"][edge] = acc["buckets"].get(edge, 0) + b["count"]
    return series, outliers, lost, reported_outliers


def opt(args, name, conv=int):
    if name in args:
        i = args.index(name)
        val = conv(args[i + 1])
        del args[i:i + 2]
        return val
    return None


def load_rounds(log):
    """The ping-pong's rounds: (SEND_BEFORE, RECV_AFTER, EMPTY, RECV_BEFORE)."""
    return [tuple(map(int, l.split())) for l in open(log)]


def receive_ns(r):
    """How long the round's receive took at most: RECV_AFTER - RECV_BEFORE."""
    return r[1] - r[3]


def answered(log, ns):
    """Rounds whose receive began less than ns before it returned: the
    initiator was off the CPU between its send and its receive for the
    peer's delay (a TCG vCPU the host did not run), so the answer was
    waiting and the receive did not wait. Without a LOG, none."""
    return 0 if log is None else sum(1 for r in load_rounds(log) if receive_ns(r) < ns)


def cmd_series(args):
    low, high, log = opt(args, "--low"), opt(args, "--high"), opt(args, "--log", str)
    nbytes, dev = opt(args, "--bytes"), opt(args, "--device", str)
    path, pid, sysname, outcome, calls = args
    series, _, lost, _ = load(path)
    s = series.get((int(pid), sysname, outcome, dev))
    if not s:
        fail("no series %s %s %s %s; have %s (lost %s)" % (pid, sysname, outcome, dev,
                                                             sorted(series), lost))
    # A probe the kernel skipped (the CPU was in it already, for a task
    # preempted there) is a call not counted, and counted as lost.
    short = int(calls) - s["calls"]
    if short < 0 or short > lost.get("recursion", 0):
        fail("%s %s: %d calls, expected %s (lost %s)" % (sysname, outcome, s["calls"], calls,
                                                        lost))
    if low is not None:
        waiting = answered(log, low // 2)
        below = sum(c for (l, h), c in s["buckets"].items() if h is not None and h < low // 2)
        inside = sum(c for (l, h), c in s["buckets"].items()
                     if l >= low and h is not None and h <= high)
        if below > waiting or inside < 0.9 * (int(calls) - waiting):
            fail("%s %s buckets %s, expected %d below (%d, %d] (answers waiting) and "
                 "90%% of the rest in (%d, %d]" %
                 (sysname, outcome, s["buckets"], waiting, low // 2, low - 1, low - 1, high))
    if short:       # calls of equal size, in these tests
        nbytes = None if nbytes is None else nbytes * s["calls"] // int(calls)
    if nbytes is not None and s["bytes"] != nbytes:
        fail("%s %s: %d bytes, expected %d" % (sysname, outcome, s["bytes"], nbytes))


def cmd_absent(args):
    path, pid, sysname, outcome = args
    s = load(path)[0].get((int(pid), sysname, outcome, None))
    if s is not None:
        fail("%s %s has %d calls, expected none" % (sysname, outcome, s["calls"]))


def cmd_pids(args):
    series = load(args[0])[0]
    got = sorted({k[0] for k in series})
    want = sorted(int(p) for p in args[1:])
    if got != want:
        fail("traced pids %s, expected %s" % (got, want))


def rounds_holding(rounds, o):
    """The logged rounds an outlier lies in."""
    return [r for r in rounds if r[0] <= o["start_ns"] <= o["end_ns"] <= r[1]]


def cmd_outliers(args):
    path, log, pid, clock, threshold = args
    _, outliers, lost, _ = load(path)
    rounds = load_rounds(log)
    with open(path) as f:
        clocks = {json.loads(l).get("clock") for l in f if '"interval"' in l}
    if clocks != {clock}:
        fail("report clock %s, expected %s" % (clocks, clock))
    if lost.get("events"):
        fail("%d outliers lost" % lost["events"])
    # Each round's receive waits for the peer: one outlier, but where the
    # answer was waiting (answered()). A send can be one too, preempted on
    # a loaded host (a TCG vCPU stopped under it).
    waited = set()
    for o in (o for o in outliers if o["syscall"] == "recvfrom"):
        if o["pid"] != int(pid) or o["bytes"] != 8:
            fail("unexpected outlier %s" % o)
        inside = rounds_holding(rounds, o)
        if len(inside) != 1 or inside[0] in waited:
            fail("outlier [%d, %d] not alone inside one round" % (o["start_ns"], o["end_ns"]))
        waited.add(inside[0])
    for r in rounds:
        if r not in waited and receive_ns(r) >= int(threshold):
            fail("no recvfrom outlier in the round [%d, %d], its receive %d ns" %
                 (r[0], r[1], receive_ns(r)))
    for o in outliers:
        if o["syscall"] != "recvfrom" and (o["pid"] != int(pid) or o["syscall"] != "sendto" or
                                           not rounds_holding(rounds, o)):
            fail("unexpected outlier %s" % o)
        if abs(o["end_ns"] - o["start_ns"] - o["latency_ns"]) > 1000:
            fail("outlier duration %d vs latency %d" %
                 (o["end_ns"] - o["start_ns"], o["latency_ns"]))


def cmd_spins(args):
    path, log, pid, min_ns = args
    _, outliers, lost, _ = load(path)
    rounds = load_rounds(log)
    # An empty call, or a send, can be an outlier of its own (preempted on
    # a loaded CPU): the receives that got data are the waits.
    spins = [o for o in outliers if o["outcome"] == "data" and o["syscall"] == "recvfrom"]
    if lost.get("events"):
        fail("%d outliers lost" % lost["events"])
    # Each wait belongs to the round it lies in, and counts exactly the
    # empty calls the ping-pong made that round: the whole run is one wait.
    # A round without one spun for less than the threshold (a TCG vCPU
    # that stopped after the send for most of the peer's delay); one with
    # no empty call was not busy polling, and its wait counts none.
    long_waits, waited = 0, set()
    for o in spins:
        inside = rounds_holding(rounds, o)
        if o["pid"] != int(pid) or o["bytes"] != 8 or len(inside) != 1:
            fail("a wait outside the rounds: %s" % o)
        if inside[0] in waited:
            fail("two waits in the round %s" % (inside[0],))
        waited.add(inside[0])
        before, after, empty, _ = inside[0]
        if o["empty_calls"] != empty:
            fail("a wait of %d empty calls in a round of %d [%d, %d]: %s" %
                 (o["empty_calls"], empty, before, after, o))
        if empty and o["latency_ns"] >= int(min_ns):
            long_waits += 1
    # Most rounds must have been waited by busy polling for most of the
    # peer's delay, or the case shows nothing.
    if long_waits * 2 < len(rounds):
        fail("%d of %d rounds waited %s ns or more by busy polling" % (long_waits, len(rounds), min_ns))
    print("%d waits, %d of %d rounds spun %s ns or more, %d empty calls in all" %
          (len(spins), long_waits, len(rounds), min_ns, sum(o["empty_calls"] for o in spins)))


def cmd_invariant(args):
    series, outliers, lost, reported = load(args[0])
    calls = sum(s["calls"] for s in series.values())
    if reported != len(outliers):
        fail("reports count %d outliers, %d printed" % (reported, len(outliers)))
    if len(outliers) + lost.get("events", 0) != calls:
        fail("%d outliers + %d lost != %d calls" %
             (len(outliers), lost.get("events", 0), calls))
    print("calls %d outliers %d lost %d" % (calls, len(outliers), lost.get("events", 0)))
    opts = dict(zip(args[1::2], (int(v) for v in args[2::2])))
    if "--calls" in opts and calls != opts["--calls"]:
        fail("%d calls traced, %d made" % (calls, opts["--calls"]))
    if lost.get("events", 0) < opts.get("--min-lost", 0):
        fail("%d outliers lost, at least %d expected" % (lost.get("events", 0), opts["--min-lost"]))


def parse_prom(path):
    samples = {}
    for line in open(path):
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'^([a-z_]+)(?:\{(.*)\})? (\S+)$', line)
        if not m:
            fail("bad prometheus line %r" % line)
        labels = tuple(sorted(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))
        samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def cmd_prom(args):
    log = opt(args, "--log", str)
    path, pid, sysname, outcome, calls, edge = args
    name = "lclk_trace_syscall_duration_seconds"
    samples = parse_prom(path)
    base = {"pid": pid, "syscall": sysname, "outcome": outcome}
    mine = {}
    for (metric, labels), v in samples.items():
        d = dict(labels)
        if all(d.get(k) == v2 for k, v2 in base.items()):
            mine[(metric, d.get("le"))] = v
    buckets = sorted(((float(le), v) for (m, le), v in mine.items()
                      if m == name + "_bucket" and le != "+Inf"))
    if len(buckets) != 39:
        fail("%d finite buckets, expected 39" % len(buckets))
    for (le1, c1), (le2, c2) in zip(buckets, buckets[1:]):
        if c2 < c1 or le2 <= le1:
            fail("buckets not cumulative: le %g=%g then le %g=%g" % (le1, c1, le2, c2))
    edge_s = int(edge) / 1e9
    waiting = answered(log, int(edge) // 2)
    for le, c in buckets:
        if abs(le - edge_s) < 1e-12 and c < 0.9 * (int(calls) - waiting):
            fail("le=%g has %g, expected 90%% of %s" % (le, c, calls))
        if le < edge_s / 2 - 1e-12 and c > waiting:
            fail("le=%g has %g, expected at most %d (answers waiting)" % (le, c, waiting))
    inf = mine.get((name + "_bucket", "+Inf"))
    count = mine.get((name + "_count", None))
    total = mine.get((name + "_sum", None))
    if inf != int(calls) or count != int(calls):
        fail("+Inf %s, _count %s, expected %s" % (inf, count, calls))
    if not edge_s / 2 * int(calls) < total:
        fail("_sum %s below the bucket" % total)
    if ("lclk_trace_lost_total", (("what", "events"),)) not in samples:
        fail("no lclk_trace_lost_total{what=\"events\"}")


def varint(buf, i):
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def fields(buf):
    """Decode one protobuf message: [(field, value)], value bytes or int."""
    out, i = [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(buf, i)
        elif wire == 2:
            n, i = varint(buf, i)
            v = buf[i:i + n]
            if len(v) != n:
                fail("truncated field %d" % field)
            i += n
        else:
            fail("unexpected wire type %d" % wire)
        out.append((field, v))
    return out


def one(msg, field, default=None):
    for f, v in msg:
        if f == field:
            return v
    return default


def parse_perfetto(path):
    """Tracks {uuid: (kind, pid, tid, name)} and events [(ts, type, uuid, name)].

    Tracks are named: a host's has no parent, a process's is "COMM (pid N)"
    under its host's, a thread's "NAME (tid N)" under its process's. Every
    sequence's first packet declares its clock (trace_packet_defaults).
    """
    tracks, events, seqs, clocks = {}, [], set(), set()
    named = {}
    data = open(path, "rb").read()
    first = True
    for f, pkt in fields(data):
        if f != 1:
            fail("top-level field %d is not Trace.packet" % f)
        p = fields(pkt)
        seqs.add(one(p, 10))
        defaults = one(p, 59)
        if first:
            if defaults is None or one(p, 6) is None:
                fail("first packet declares no clock")
            clocks.add(one(fields(defaults), 58))
            first = False
        td, te = one(p, 60), one(p, 11)
        if td is not None:
            td = fields(td)
            named[one(td, 1)] = (one(td, 5), one(td, 2, b"").decode())
        if te is not None:
            te = fields(te)
            events.append((one(p, 8), one(te, 9), one(te, 11),
                           one(te, 23, b"").decode()))
    for uuid, (parent, name) in named.items():
        m = re.search(r"\((pid|tid) (\d+)\)$", name)
        if m and m.group(1) == "pid":
            tracks[uuid] = ("process", int(m.group(2)), None, name)
        elif m:
            pname = named.get(parent, (None, ""))[1]
            pm = re.search(r"\(pid (\d+)\)$", pname)
            if not pm:
                fail("thread track %r not under a process track" % name)
            tracks[uuid] = ("thread", int(pm.group(1)), int(m.group(2)), name)
    if None in seqs or len(seqs) != 1:
        fail("trusted_packet_sequence_id %s" % seqs)
    if len(clocks) != 1 or not clocks <= {3, 64}:
        fail("timestamp clocks %s" % clocks)
    return tracks, events


def check_events(tracks, events):
    """Begin/end pairs on declared thread tracks; returns slices per track."""
    open_slices, slices = {}, {}
    for ts, typ, uuid, name in events:
        if uuid not in tracks or tracks[uuid][0] != "thread":
            fail("event on undeclared track %s" % uuid)
        if typ == 1:
            if uuid in open_slices:
                fail("nested begin on track %s" % uuid)
            open_slices[uuid] = (ts, name)
        elif typ == 2:
            if uuid not in open_slices:
                fail("end without begin on track %s" % uuid)
            start, name = open_slices.pop(uuid)
            if ts < start:
                fail("slice ends before it starts")
            slices.setdefault(uuid, []).append((start, ts, name))
        else:
            fail("event type %s" % typ)
    if open_slices:
        fail("%d slices never end" % len(open_slices))
    return slices


def cmd_perfetto(args):
    path, jsonl = args
    tracks, events = parse_perfetto(path)
    slices = check_events(tracks, events)
    outliers = load(jsonl)[1]
    got = sorted((s, e) for v in slices.values() for s, e, _ in v)
    want = sorted((o["start_ns"], o["end_ns"]) for o in outliers)
    if got != want:
        fail("%d slices in the trace, %d outliers printed, or times differ" %
             (len(got), len(want)))
    tids = {o["tid"] for o in outliers}
    threads = [t for t in tracks.values() if t[0] == "thread"]
    if len(threads) != len(tids) or len({t[2] for t in threads}) != len(tids):
        fail("%d thread tracks for %d threads" % (len(threads), len(tids)))
    if any(t[2] not in tids for t in threads):
        fail("thread tracks %s vs tids %s" % (threads, tids))


def cmd_ranks(args):
    jsonl, trace, n = args[0], args[1], int(args[2])
    series, outliers, _, _ = load(jsonl)
    blocked = {}
    for (pid, _, _, _), s in series.items():
        blocked[pid] = blocked.get(pid, 0) + s["sum_ns"]
    busy = [p for p, b in blocked.items() if b > 0]
    if len(busy) != n:
        fail("%d processes with blocked time (%s), expected %d" % (len(busy), blocked, n))
    tracks, events = parse_perfetto(trace)
    slices = check_events(tracks, events)
    threads = {t[2]: u for u, t in tracks.items() if t[0] == "thread"}
    pids = {t[1] for t in tracks.values() if t[0] == "thread"}
    if set(busy) - pids:
        fail("ranks %s have no track (tracks for %s)" % (busy, pids))
    if len(threads) != len({o["tid"] for o in outliers}):
        fail("%d thread tracks, outliers from %d threads" %
             (len(threads), len({o["tid"] for o in outliers})))
    for o in outliers:
        if o["tid"] not in threads:
            fail("outlier of thread %d has no track" % o["tid"])
    print("ranks %s: blocked %s ms; %d thread tracks, %d slices" %
          (sorted(busy), [round(blocked[p] / 1e6) for p in sorted(busy)],
           len(threads), sum(len(v) for v in slices.values())))


def cmd_accounted(args):
    """Every call of SYSCALLs made is counted or reported lost."""
    path, made = args[0], int(args[1])
    names = args[2:]
    series, _, lost, _ = load(path)
    calls = sum(s["calls"] for k, s in series.items() if k[1] in names)
    reported = sum(lost.get(k, 0) for k in ("starts", "exits", "recursion"))
    if calls > made:
        fail("%d calls counted, only %d made" % (calls, made))
    if made > calls + reported:
        fail("%d calls made, %d counted and %d reported lost: %d lost unreported (lost: %s)" %
             (made, calls, reported, made - calls - reported, lost))
    print("%d calls made, %d counted, %d reported lost (lost: %s)" % (made, calls, reported, lost))


def cmd_lost(args):
    path, kind, least = args
    lost = load(path)[2]
    if lost.get(kind, 0) < int(least):
        fail("%s losses %d, expected at least %s (all: %s)" % (kind, lost.get(kind, 0), least, lost))
    print("lost: %s" % lost)


def cmd_longest(args):
    path, pid, sysname, lo, hi = args
    mine = [o for o in load(path)[1] if o["pid"] == int(pid) and o["syscall"] == sysname]
    if not mine:
        fail("no %s outlier of %s" % (sysname, pid))
    ns = max(o["latency_ns"] for o in mine)
    if not int(lo) <= ns <= int(hi):
        fail("longest %s of %s: %d ns, expected %s to %s (all: %s)" %
             (sysname, pid, ns, lo, hi, sorted(o["latency_ns"] for o in mine)))


CMDS = {"series": cmd_series, "absent": cmd_absent, "pids": cmd_pids,
        "outliers": cmd_outliers, "spins": cmd_spins,
        "invariant": cmd_invariant, "prom": cmd_prom,
        "perfetto": cmd_perfetto, "ranks": cmd_ranks, "longest": cmd_longest,
        "lost": cmd_lost, "accounted": cmd_accounted}
SERVE_END = "@@trace_check@@"


def run(argv):
    if not argv or argv[0] not in CMDS:
        print(__doc__)
        sys.exit(2)
    CMDS[argv[0]](argv[1:])


def serve():
    """Each line of stdin a check, answered as if it had run alone: its
    output (stdout and stderr), then its exit status."""
    import contextlib
    import io
    import traceback
    for line in sys.stdin:
        buf, rc = io.StringIO(), 0
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
            try:
                run(line.rstrip("\n").split("\t"))
            except SystemExit as e:
                if isinstance(e.code, str):
                    print(e.code)
                rc = e.code if isinstance(e.code, int) else int(e.code is not None)
            except Exception:
                traceback.print_exc()
                rc = 1
        out = buf.getvalue()
        if out and not out.endswith("\n"):
            out += "\n"
        sys.stdout.write("%s%s %d\n" % (out, SERVE_END, rc))
        sys.stdout.flush()


def main():
    if sys.argv[1:] == ["serve"]:
        serve()
    else:
        run(sys.argv[1:])


if __name__ == "__main__":
    main()
