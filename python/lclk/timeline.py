# SPDX-License-Identifier: GPL-2.0
"""A picture of a merged trace (lclkctl trace merge -o) as SVG, for a report
or a README, where the Perfetto UI is not at hand: a lane per thread,
grouped by host; waits (calls that got data, busy-polling runs) as bars;
TCP sends and receives as ticks; an arrow from each send to the receive
that took its last byte.

    python3 -m lclk.timeline cluster.pftrace -o cluster.svg --start 1s --span 500ms [--main-threads]
"""
import argparse
import html
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

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


def main_thread(track: str) -> bool:
    """A merged trace's "COMM (pid P) / NAME (tid T)" with T == P."""
    m = re.search(r"\(pid (\d+)\) / .*\(tid (\d+)\)$", track)
    return not m or m.group(1) == m.group(2)


def render(slices: Sequence[Slice], start_ns: int, span_ns: int,
           main_only: bool = False) -> str:
    end_ns = start_ns + span_ns
    shown = [s for s in slices if s.end_ns is not None and s.end_ns >= start_ns
             and s.start_ns <= end_ns and (not main_only or main_thread(s.track))]
    lanes = sorted({(s.root, s.track) for s in shown})
    row = {lane: i for i, lane in enumerate(lanes)}
    height = TOP + LANE_H * len(lanes) + 20

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
                   % (x(start_ns + t), TOP - 6, x(start_ns + t), height - 20,
                      x(start_ns + t) + 2, TOP - 10, t / 1e6))
    for (root, track), i in row.items():
        label = "%s: %s" % (root, track.split(" / ")[-1]) if root else track
        out.append('<text x="4" y="%d">%s</text>' % (TOP + LANE_H * i + 15, html.escape(label)))
    colour = {"wait": "#4a7fc1", "call": "#bbb", "send": "#3a9a4a", "recv": "#d9822b"}
    for s in sorted(shown, key=lambda s: kind(s) in ("send", "recv")):
        k, x0 = kind(s), x(s.start_ns)
        w = max(x(s.end_ns or s.start_ns) - x0, 1.5)
        top, h = (y(s) + 3, 14) if k in ("wait", "call") else (y(s) + 7, 6)
        tip = "%s %s %.3f ms" % (s.name, s.args.get("outcome", ""),
                                 ((s.end_ns or s.start_ns) - s.start_ns) / 1e6)
        out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s">'
                   '<title>%s</title></rect>' % (x0, top, w, h, colour[k], html.escape(tip)))
    for snd, rcv in arrows(shown):
        out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" '
                   'stroke-width="0.8" marker-end="url(#a)"/>'
                   % (x(snd.start_ns), y(snd) + 10, x(rcv.end_ns or rcv.start_ns), y(rcv) + 10))
    legend = [("wait (got data; a busy-polling run)", "wait"), ("other call", "call"),
              ("TCP send", "send"), ("TCP receive", "recv")]
    for i, (text, k) in enumerate(legend):
        out.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                   '<text x="%d" y="%d">%s</text>' % (LABEL_W + 220 * i, height - 14, colour[k],
                                                     LABEL_W + 220 * i + 14, height - 5, text))
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
    a = ap.parse_args(argv)
    try:
        with open(a.trace, "rb") as f:
            slices = read_slices(f.read())
    except (OSError, DecodeError) as e:
        print("lclk.timeline: %s: %s" % (a.trace, e), file=sys.stderr)
        return 1
    if not slices:
        print("lclk.timeline: %s: no slices" % a.trace, file=sys.stderr)
        return 1
    first = min(s.start_ns for s in slices)
    with open(a.output, "w") as f:
        f.write(render(slices, first + a.start, a.span, a.main_threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
