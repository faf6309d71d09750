#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""PTP peers for the integration tests, over UDP/IPv4 on one interface.

  ptp_peer.py onestep IFACE SECONDS   a one-step master (ptp4l cannot be one
                                      with software timestamps): Announce,
                                      Sync carrying its own origin time,
                                      Delay_Resp from receive timestamps.
  ptp_peer.py hostile IFACE SECONDS   malformed or out-of-context messages
                                      that a slave must reject: truncated,
                                      oversized, wrong version or domain, a
                                      TLV past messageLength, bad
                                      nanoseconds, Follow_Up
                                      and Delay_Resp that match nothing.
                                      Uses the real master's identity (from
                                      its Announce) where that matters.
"""
import select
import socket
import struct
import sys
import time

MCAST = "224.0.1.129"
SO_TIMESTAMPNS = 35
SYNC, DELAY_REQ, FOLLOW_UP, DELAY_RESP, ANNOUNCE = 0x0, 0x1, 0x8, 0x9, 0xB


def sock(iface, port, stamp=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
    s.bind(("", port))
    addr = socket.inet_aton(MCAST)
    ifaddr = socket.inet_aton(iface_addr(iface))
    s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, addr + ifaddr)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, ifaddr)
    s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 0)
    if stamp:
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    return s


def iface_addr(iface):
    import fcntl
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    req = struct.pack("256s", iface.encode()[:15])
    return socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, req)[20:24])  # SIOCGIFADDR


def header(mtype, length, seq, src, domain=0, flags=0, version=2, log=0, corr=0):
    return struct.pack(">BBHBBHq4s10sHBb", mtype, version, length, domain, 0, flags,
                       corr, b"\0" * 4, src, seq, 0, log)


def ts(ns):
    sec, nsec = divmod(ns, 10**9)
    return struct.pack(">HIL", sec >> 32, sec & 0xffffffff, nsec)


def announce(src, seq, gm, prio1, domain=0, steps=0, tlv=b"", length=None, log=0):
    body = ts(0) + struct.pack(">hBBBBHB8sHB", 0, 0, prio1, 248, 0xfe, 0xffff, 128, gm,
                               steps, 0xa0)
    n = 34 + len(body) + len(tlv)
    return header(ANNOUNCE, n if length is None else length, seq, src, domain,
                  log=log) + body + tlv


def onestep(iface, secs):
    ev, gen = sock(iface, 319, stamp=True), sock(iface, 320)
    clock = b"\x02\x00\x00\xff\xfe\x00\x00\x01"
    src = clock + b"\x00\x01"
    end = time.monotonic() + secs
    seq = 0
    next_tx = 0.0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_tx:
            seq = (seq + 1) & 0xffff
            gen.sendto(announce(src, seq, clock, 64, log=-2), (MCAST, 320))
            # The origin timestamp is read just before sending: the real
            # send is later, which only lengthens the apparent path.
            t1 = time.clock_gettime_ns(time.CLOCK_REALTIME)
            ev.sendto(header(SYNC, 44, seq, src, log=-2) + ts(t1), (MCAST, 319))
            next_tx = now + 0.25
        r, _, _ = select.select([ev], [], [], max(0.0, next_tx - time.monotonic()))
        if not r:
            continue
        data, anc, _, _ = ev.recvmsg(1500, 256)
        if len(data) < 44 or data[0] & 0x0f != DELAY_REQ:
            continue
        t4 = None
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS:
                sec, nsec = struct.unpack("qq", val[:16])
                t4 = sec * 10**9 + nsec
        if t4 is None:
            continue
        rseq = struct.unpack(">H", data[30:32])[0]
        resp = header(DELAY_RESP, 54, rseq, src, log=-2) + ts(t4) + data[20:30]
        gen.sendto(resp, (MCAST, 320))


def hostile(iface, secs):
    ev, gen = sock(iface, 319), sock(iface, 320)
    me = b"\x0b\xad\x00\xff\xfe\x00\xba\xd1"
    bad = me + b"\x00\x01"
    gm_src = None
    slave_req = None
    end = time.monotonic() + secs
    seq = 0
    while time.monotonic() < end:
        # Learn the real master's port and a slave's Delay_Req, to forge
        # messages that look like theirs.
        r, _, _ = select.select([ev, gen], [], [], 0.05)
        for s in r:
            data = s.recv(1500)
            if len(data) >= 44 and data[0] & 0x0f == ANNOUNCE and data[20:28] != me:
                gm_src = data[20:30]
            if len(data) >= 44 and data[0] & 0x0f == DELAY_REQ:
                slave_req = data
        seq = (seq + 1) & 0xffff
        msgs = [
            (ev, header(SYNC, 44, seq, bad)[:20]),                        # truncated header
            (ev, header(SYNC, 44, seq, bad, version=1) + ts(1)),          # wrong version
            (ev, header(SYNC, 44, seq, bad) + ts(1) + b"\0" * 16),        # oversized
            (gen, announce(bad, seq, me, 0, domain=7)),                   # wrong domain
            # A TLV longer than the message: malformed (an unknown but
            # well-formed TLV is skipped, so no priority1 0 with it).
            (gen, announce(bad, seq, me, 0, tlv=b"\x77\x77\x00\x10xx")),
            (gen, announce(bad, seq, me, 0, length=200)),                 # length > data
            (gen, announce(bad, seq, me, 0, steps=255)),                  # stepsRemoved 255
            (gen, header(FOLLOW_UP, 44, seq, bad) + struct.pack(">HII", 0, 5, 2 * 10**9)),
        ]
        if gm_src:
            msgs += [
                # Follow_Up without a matching two-step Sync, far in the future.
                (gen, header(FOLLOW_UP, 44, (seq + 20000) & 0xffff, gm_src) + ts(10**18)),
                # Sync with nanoseconds out of range.
                (ev, header(SYNC, 44, seq, gm_src) + struct.pack(">HII", 0, 5, 10**9)),
            ]
        if gm_src and slave_req:
            rseq = (struct.unpack(">H", slave_req[30:32])[0] + 500) & 0xffff
            msgs.append((gen, header(DELAY_RESP, 54, rseq, gm_src) + ts(10**18) +
                         slave_req[20:30]))
        for s, m in msgs:
            s.sendto(m, (MCAST, 319 if s is ev else 320))


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("onestep", "hostile"):
        sys.exit(__doc__)
    {"onestep": onestep, "hostile": hostile}[sys.argv[1]](sys.argv[2], float(sys.argv[3]))


if __name__ == "__main__":
    main()
