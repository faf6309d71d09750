#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A deliberately misbehaving NTP server for lclkctl's tests.

    ntp_responder.py ADDR PORT KIND [KIND...]

Answers each request with the reply of the next KIND, in turn:
  good        a correct reply from this host's CLOCK_REALTIME (stratum 2)
  plain       the same with the lowest bit of the receive timestamp clear
              (chronyd's interleave marker absent); a request naming an
              earlier exchange gets no answer at all
  offset=S    a correct-looking reply S seconds off
  dup         a correct reply, sent twice
  spoof       origin timestamp not ours
  otherport   a correct reply, but sent from another port
  mode3       mode 3 (client) instead of 4
  version2    version 2
  stratum0    stratum 0 without a kiss code
  stratum16   stratum 16 (unsynchronised)
  leap3       leap indicator 3
  zerots      zero receive and transmit timestamps
  root        root dispersion of 20 s
  order       transmit timestamp before receive timestamp
  short       a 40-byte packet
  long        a 2000-byte packet
  odd         a 49-byte packet
  precision=N a correct reply claiming a precision of 2^N s
  kod=CODE    Kiss-o'-Death with CODE (RATE, DENY, RSTR, ...)
  xorder      to an interleaved request: an interleaved reply whose transmit
              timestamp precedes the exchange the request names
  xspoof      to an interleaved request: an interleaved reply carrying the
              request's origin (the server's own timestamp) instead of its
              cookie
Receive timestamps (but plain's) have the lowest bit set, as chronyd marks
them, so clients ask in interleaved mode after a good reply. Runs until
killed.
"""
import socket
import struct
import sys
import time

NTP_UNIX = 2208988800


def ntp_now(shift=0.0):
    ns = time.time_ns() + int(shift * 1e9)
    sec, rem = divmod(ns, 1_000_000_000)
    return ((sec + NTP_UNIX) & 0xFFFFFFFF) << 32 | (rem << 32) // 1_000_000_000


def reply(req, kind, t2):
    """The reply bytes for one request, or None."""
    req_org, req_rec, origin = struct.unpack("!QQQ", req[24:48])
    interleaved = req_org != 0 and req_rec != 0
    li, vn, mode, stratum, refid = 0, 4, 4, 2, 0x7F000001
    root_disp = 0x00000010
    precision = -20
    rx = tx = None
    shift = 0.0
    if kind.startswith("offset="):
        shift = float(kind.split("=", 1)[1])
    elif kind == "spoof":
        origin ^= 0x5A5A5A5A
    elif kind == "mode3":
        mode = 3
    elif kind == "version2":
        vn = 2
    elif kind == "stratum0":
        stratum, refid = 0, 0
    elif kind == "stratum16":
        stratum = 16
    elif kind == "leap3":
        li = 3
    elif kind == "zerots":
        rx = tx = 0
    elif kind == "root":
        root_disp = 20 << 16
    elif kind.startswith("precision="):
        precision = int(kind.split("=", 1)[1])
    elif kind.startswith("kod="):
        code = kind.split("=", 1)[1].encode().ljust(4, b"\0")[:4]
        stratum, refid = 0, struct.unpack("!I", code)[0]
    rx = ntp_now(shift) if rx is None else rx
    if kind == "order":
        rx += 1 << 32
    tx = ntp_now(shift) if tx is None else tx
    if t2 is not None and kind not in ("zerots", "order"):
        rx = t2 + (int(shift * (1 << 32)) if shift else 0)
    if kind == "plain" and req_org:
        return None
    if rx and kind != "plain":
        rx |= 1
    elif kind == "plain":
        rx &= ~1
    if kind == "xorder" and interleaved:
        origin, tx = req_rec, req_org - (1 << 32)
    elif kind == "xspoof" and interleaved:
        origin = req_org
    pkt = struct.pack("!BBbbIII", li << 6 | vn << 3 | mode, stratum, 4, precision, 0,
                      root_disp, refid)
    # Clock set a second ago, as chronyd's "local" reference says.
    pkt += struct.pack("!QQQQ", ntp_now(shift - 1), origin, rx, tx)
    if kind == "short":
        return pkt[:40]
    if kind == "long":
        return pkt + bytes(2000 - len(pkt))
    if kind == "odd":
        return pkt + b"\0"
    return pkt


def main():
    addr, port, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.bind((addr, port))
    other = socket.socket(family, socket.SOCK_DGRAM)
    other.bind((addr, 0))
    n = 0
    while True:
        req, peer = sock.recvfrom(2048)
        t2 = ntp_now()
        if len(req) < 48:
            continue
        kind = kinds[n % len(kinds)]
        n += 1
        pkt = reply(req, kind, None if kind.startswith("offset=") else t2)
        if pkt is None:
            continue
        (other if kind == "otherport" else sock).sendto(pkt, peer)
        if kind == "dup":
            sock.sendto(pkt, peer)


if __name__ == "__main__":
    main()
