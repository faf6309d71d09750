# SPDX-License-Identifier: GPL-2.0
"""A picture of a merged trace (lclkctl trace merge -o) as SVG, for a report
or a README, where the Perfetto UI is not at hand: a lane per thread,
grouped by host; waits (calls that got data, busy-polling runs) as bars;
TCP sends and receives as ticks; an arrow from each send to the receive
that took its last byte.

What the bounds say is drawn too: each stamp's bound as a whisker (where
wider than half a pixel); each wait ended by a message (a receive of its
rank within 1 ms of its end) coloured by the ordering of that message's
send after the wait's start: certain when the send's earliest time is
after the wait start's latest (the gap beyond both bounds), ambiguous
within them, "sent before" when it provably left before the wait began
(it did not hold it up), its arrow solid, dashed or dotted alike. This is
the one hop, as drawn: the report's verdict of a wait charged through a
chain is certain only when every hop is. With --report (the merge's
--json), each collective of the rounds by collective: a band on a lane of
its own, named by its straggler and verdict, and the straggler's lanes
outlined over it.

    python3 -m lclk.timeline cluster.pftrace -o cluster.svg --start 1s --span 500ms \
            [--main-threads] [--report merge.json]
"""
import argparse
import html
import json
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .perfetto import DecodeError, Slice, read_slices

WAITS = {"recvfrom", "recvmsg", "recvmmsg", "read", "readv", "poll", "ppoll", "select",
         "pselect6", "epoll_wait", "epoll_pwait", "epoll_pwait2", "futex_wait", "futex_waitv"}
LABEL_W, PLOT_W, LANE_H, TOP = 260, 900, 22, 36
UNITS = {"ns": 1, "us": 1000, "ms": 1000000, "s": 1000000000}


def duration(s: str) -> int:
    m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", s)
    if not m:
        raise argparse.ArgumentTypeError("%r: a duration like 250ms" % s)
    return int(float(m.group(1)) * UNITS[m.group(2)])


def kind(s: Slice) -> str:
    if s.category == "tcp":
        return "send" if s.name == "tcp_send" else "recv"
    if s.name in WAITS and s.args.get("outcome") == "data":
        return "wait"
    return "call"


def arrows(slices: Sequence[Slice]) -> List[Tuple[Slice, Slice]]:
    """(send, receive) pairs: same direction, the receive's last byte in the send."""
    sends: Dict[Tuple[object, object], List[Slice]] = {}
    for s in slices:
        if kind(s) == "send":
            sends.setdefault((s.args.get("src"), s.args.get("dst")), []).append(s)
    out = []
    for r in slices:
        if kind(r) != "recv" or not isinstance(r.args.get("seq"), int):
            continue
        last = (int(r.args["seq"]) + int(r.args.get("len", 1)) - 1) & 0xffffffff
        for s in sends.get((r.args.get("src"), r.args.get("dst")), []):
            lo = int(s.args.get("seq", 0))
            if (last - lo) & 0xffffffff < int(s.args.get("len", 0)):
                out.append((s, r))
                break
    return out


LINK_NS = 1000000


def bound_at(s: Slice, end: bool) -> Optional[int]:
    """The bound of s's clock at its start (or end): from the merge's
    earliest_ns/latest_ns, else its own bound annotations; None: unknown."""
    t = s.end_ns if end else s.start_ns
    edge = s.args.get("latest_ns" if end else "earliest_ns")
    b: object
    if isinstance(edge, int) and t is not None:
        b = edge - t if end else t - edge
    else:
        b = s.args.get("bound_end_ns" if end else "bound_begin_ns")
        if b is None:
            b = s.args.get("bound_ns")
    return b if isinstance(b, int) and 0 <= b < 2**62 else None


def ordering(snd: Slice, wait: Slice) -> str:
    """Whether snd left after wait began: "certain" beyond both bounds,
    "before" if it left before it began beyond them, else "ambiguous"."""
    bs, bw = bound_at(snd, False), bound_at(wait, False)
    if bs is None or bw is None:
        return "ambiguous"
    gap = snd.start_ns - wait.start_ns
    if gap > bs + bw:
        return "certain"
    if gap < -(bs + bw):
        return "before"
    return "ambiguous"


def wait_verdicts(slices: Sequence[Slice]) -> Dict[int, Tuple[str, Slice]]:
    """id(wait) -> (its ordering, the send of the message that ended it):
    the first matched receive of the wait's process ending within LINK_NS
    after it (or the receive itself, when the receive is the wait)."""
    by_root: Dict[str, List[Tuple[Slice, Slice]]] = {}
    for snd, rcv in arrows(slices):
        by_root.setdefault(rcv.root, []).append((snd, rcv))
    out: Dict[int, Tuple[str, Slice]] = {}
    for w in slices:
        # a wait, or a TCP receive that blocked (lasted LINK_NS or more)
        if w.end_ns is None or not (kind(w) == "wait" or (
                kind(w) == "recv" and w.end_ns - w.start_ns >= LINK_NS)):
            continue
        ends = [(rcv.end_ns, snd) for snd, rcv in by_root.get(w.root, [])
                if rcv.end_ns is not None and w.end_ns <= rcv.end_ns <= w.end_ns + LINK_NS]
        if ends:
            snd = min(ends, key=lambda e: e[0])[1]
            out[id(w)] = (ordering(snd, w), snd)
    return out


def main_thread(track: str) -> bool:
    """A merged trace's "COMM (pid P) / NAME (tid T)" with T == P."""
    m = re.search(r"\(pid (\d+)\) / .*\(tid (\d+)\)$", track)
    return not m or m.group(1) == m.group(2)


def render(slices: Sequence[Slice], start_ns: int, span_ns: int,
           main_only: bool = False, report: Optional[Dict[str, Any]] = None) -> str:
    end_ns = start_ns + span_ns
    shown = [s for s in slices if s.end_ns is not None and s.end_ns >= start_ns
             and s.start_ns <= end_ns and (not main_only or main_thread(s.track))]
    rounds = [r for r in ((report or {}).get("collectives") or {}).get("by_round", [])
              if r["end_ns"] >= start_ns and r["begin_ns"] <= end_ns]
    lanes = sorted({(s.root, s.track) for s in shown})
    # a lane of its own for the collectives, on top
    first = 1 if rounds else 0
    row = {lane: i + first for i, lane in enumerate(lanes)}
    bottom = TOP + LANE_H * (len(lanes) + first)   # of the lanes; the legend below
    height = bottom + 44

    def x(t: int) -> float:
        return LABEL_W + PLOT_W * (min(max(t, start_ns), end_ns) - start_ns) / span_ns

    def y(s: Slice) -> float:
        return TOP + LANE_H * row[(s.root, s.track)]

    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="11">' % (LABEL_W + PLOT_W + 10, height),
           '<defs><marker id="a" markerWidth="6" markerHeight="6" refX="5" refY="3" '
           'orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#555"/></marker></defs>',
           '<rect width="100%" height="100%" fill="white"/>']
    step = 10 ** max(len(str(span_ns // 5)) - 1, 0)
    for t in range(0, span_ns + 1, step * max(span_ns // (5 * step), 1)):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                   '<text x="%.1f" y="%d" fill="#666">+%g ms</text>'
                   % (x(start_ns + t), TOP - 6, x(start_ns + t), bottom,
                      x(start_ns + t) + 2, TOP - 10, t / 1e6))
    for (root, track), i in row.items():
        label = "%s: %s" % (root, track.split(" / ")[-1]) if root else track
        out.append('<text x="4" y="%d">%s</text>' % (TOP + LANE_H * i + 15, html.escape(label)))
    if rounds:
        out.append('<text x="4" y="%d">collectives: straggler, verdict</text>' % (TOP + 15))
    colour = {"wait": "#4a7fc1", "call": "#bbb", "send": "#3a9a4a", "recv": "#d9822b",
              "certain": "#1f3f7a", "ambiguous": "#9db8e0", "before": "#bbb"}
    verdict = wait_verdicts(shown)
    dash = {"certain": "", "ambiguous": ' stroke-dasharray="4,2"',
            "before": ' stroke-dasharray="1,2"'}
    for s in sorted(shown, key=lambda s: kind(s) in ("send", "recv")):
        k, x0 = kind(s), x(s.start_ns)
        w = max(x(s.end_ns or s.start_ns) - x0, 1.5)
        top, h = (y(s) + 3, 14) if k in ("wait", "call") else (y(s) + 7, 6)
        tip = "%s %s %.3f ms" % (s.name, s.args.get("outcome", ""),
                                 ((s.end_ns or s.start_ns) - s.start_ns) / 1e6)
        fill = colour[k]
        if id(s) in verdict and k == "recv":
            tip += "; a wait: the message that ended it left after it began: %s" % (
                verdict[id(s)][0])
        elif id(s) in verdict:
            v = verdict[id(s)][0]
            fill = colour[v]
            tip += "; the message that ended it left after it began: %s" % (
                v if v != "before" else "no, before it (beyond the bounds)")
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s">'
                   '<title>%s</title></rect>' % (x0, top, w, h, fill, html.escape(tip)))
        # the bound around each stamp, where it is wider than half a pixel
        stamps: List[Tuple[Optional[int], Optional[int], bool]] = [
            (s.start_ns, bound_at(s, False), False), (s.end_ns, bound_at(s, True), True)]
        for at, b, end in stamps:
            if b is None or at is None or PLOT_W * b / span_ns < 0.5:
                continue
            xa, xb = (x(at), x(at + b)) if end else (x(at - b), x(at))
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#c33" '
                       'stroke-width="1"><title>bound %.3f us</title></line>'
                       % (xa, top + h / 2, xb, top + h / 2, b / 1e3))
    # a send that ended two waits (a poll and the receive after it): the
    # weaker ordering
    ended: Dict[int, str] = {}
    for v, snd in verdict.values():
        if ended.get(id(snd)) != "ambiguous":
            ended[id(snd)] = v
    for snd, rcv in arrows(shown):
        style = dash[ended[id(snd)]] if id(snd) in ended else ""
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" '
                   'stroke-width="0.8" marker-end="url(#a)"%s/>'
                   % (x(snd.start_ns), y(snd) + 10, x(rcv.end_ns or rcv.start_ns), y(rcv) + 10,
                      style))
    band = {"certain": "#b22", "ambiguous": "#e8a33c", "no wait": "#ccc"}
    for r in rounds:
        x0 = x(r["begin_ns"])
        w = max(x(r["end_ns"]) - x0, 1.5)
        who = r["straggler"] or "nobody waited"
        text = "#%d %s: %s" % (r["seq"], who.split()[0], r["verdict"])
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="14" fill="%s" opacity="0.8">'
                   '<title>%s #%d %s: straggler %s, %s, %d waits</title></rect>'
                   % (x0, TOP + 3, w, band.get(r["verdict"], "#ccc"),
                      html.escape(r["group"]), r["seq"], html.escape(r["op"]),
                      html.escape(who), r["verdict"], r["waits"]))
        if w > 7 * len(text):
            out.append('<text x="%.1f" y="%d" fill="white">%s</text>'
                       % (x0 + 3, TOP + 14, html.escape(text)))
        if r["straggler"]:
            # "host rest" names the rank; its lanes' root is "host: rest"
            root = r["straggler"].replace(" ", ": ", 1)
            for (lroot, _), i in row.items():
                if lroot == root:
                    out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="none" '
                               'stroke="%s" stroke-width="1.5"/>'
                               % (x0, TOP + LANE_H * i + 1, w, LANE_H - 2,
                                  band.get(r["verdict"], "#ccc")))
    legend = [("wait, no message seen", "wait"), ("wait on a message sent after it began: certain",
                                                   "certain"),
              ("... ambiguous (within the bounds)", "ambiguous"), ("other call", "call"),
              ("TCP send", "send"), ("TCP receive", "recv")]
    for i, (text, k) in enumerate(legend):
        lx, ly = LABEL_W + 300 * (i % 3), bottom + 8 + 16 * (i // 3)
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   '<text x="%d" y="%d">%s</text>' % (lx, ly, colour[k], lx + 14, ly + 9,
                                                     html.escape(text)))
    out.append('<line x1="4" y1="%d" x2="24" y2="%d" stroke="#c33"/><text x="28" y="%d">'
               'bound of a stamp</text>' % (bottom + 13, bottom + 13, bottom + 17))
    if rounds:
        out.append('<rect x="4" y="%d" width="10" height="10" fill="#b22"/><text x="18" y="%d">'
                   'straggler certain</text><rect x="130" y="%d" width="10" height="10" '
                   'fill="#e8a33c"/><text x="144" y="%d">ambiguous</text>'
                   % (bottom + 24, bottom + 33, bottom + 24, bottom + 33))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lclk.timeline", description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="a merged trace (lclkctl trace merge -o)")
    ap.add_argument("-o", "--output", required=True, help="the SVG to write")
    ap.add_argument("--start", type=duration, default=0, help="from the first event (default 0)")
    ap.add_argument("--span", type=duration, default=duration("500ms"), help="default 500ms")
    ap.add_argument("--main-threads", action="store_true",
                    help="only each process's main thread (not its helpers' lanes)")
    ap.add_argument("--report", help="the merge's --json report: draw its rounds by collective")
    a = ap.parse_args(argv)
    report = None
    try:
        with open(a.trace, "rb") as f:
            slices = read_slices(f.read())
    except (OSError, DecodeError) as e:
        print("lclk.timeline: %s: %s" % (a.trace, e), file=sys.stderr)
        return 1
    if a.report:
        try:
            with open(a.report) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print("lclk.timeline: %s: %s" % (a.report, e), file=sys.stderr)
            return 1
    if not slices:
        print("lclk.timeline: %s: no slices" % a.trace, file=sys.stderr)
        return 1
    first = min(s.start_ns for s in slices)
    with open(a.output, "w") as f:
        f.write(render(slices, first + a.start, a.span, a.main_threads, report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
