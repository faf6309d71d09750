# SPDX-License-Identifier: GPL-2.0
"""Perfetto protobuf traces, written and read by hand.

The writer follows tools/perfetto/perfetto.c (what ``lclkctl trace --trace-out``
writes) so that files of both open together and a later merge puts them on
one timeline: timestamps are logical ns; pids are mapped into a range
chosen by a hash of the host name, ``(1 + fnv1a64(host) % 511) << 22 | pid``;
the process track of a pid has the uuid lclkctl gives it, so slices written
here land under the same process as that process's traced system calls.

Slices go on named tracks under the process (TrackDescriptor.name with
parent_uuid), one per kind of record; slices that overlap in time (async
collectives in flight together) are spread over lanes, "collectives",
"collectives 1"..., because slices of one track must nest.

Every slice carries its own facts as debug annotations (rank, sequence
number, bound at begin and end...), so a reader needs no descriptor to
interpret it; :func:`read_slices` returns them.
"""
import os
import socket
import threading
from typing import BinaryIO, Dict, Iterator, List, Optional, Sequence, Tuple, Union

# Field numbers of perfetto/trace/trace_packet.proto and track_event/*.proto,
# as in tools/perfetto/perfetto.c.
PKT_TIMESTAMP = 8
PKT_SEQUENCE_ID = 10
PKT_TRACK_EVENT = 11
PKT_SEQUENCE_FLAGS = 13
PKT_TRACK_DESCRIPTOR = 60
SEQ_INCREMENTAL_STATE_CLEARED = 1
TD_UUID = 1
TD_NAME = 2
TD_PROCESS = 3
TD_PARENT_UUID = 5
PD_PID = 1
PD_PROCESS_NAME = 6
TE_DEBUG_ANNOTATIONS = 4
TE_TYPE = 9
TE_TRACK_UUID = 11
TE_CATEGORIES = 22
TE_NAME = 23
TYPE_SLICE_BEGIN = 1
TYPE_SLICE_END = 2
TYPE_INSTANT = 3
DA_INT_VALUE = 4
DA_STRING_VALUE = 6
DA_NAME = 10
TRACE_PACKET = 1

WIRE_VARINT = 0
WIRE_I64 = 1
WIRE_LEN = 2
WIRE_I32 = 5

PID_BITS = 22
HOST_SLOTS = 511
U64 = (1 << 64) - 1

Value = Union[int, str]


def fnv1a64(s: str) -> int:
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & U64
    return h


def mix64(x: int) -> int:
    """splitmix64's finaliser, as tools/perfetto/perfetto.c."""
    x &= U64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & U64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & U64
    return x ^ (x >> 31)


def _varint(v: int) -> bytes:
    v &= U64        # int64: two's complement, as protobuf's int64
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _uint(field: int, v: int) -> bytes:
    return _varint(field << 3 | WIRE_VARINT) + _varint(v)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | WIRE_LEN) + _varint(len(data)) + data


def _str(field: int, s: str) -> bytes:
    return _bytes(field, s.encode())


def _annotation(name: str, value: Value) -> bytes:
    if isinstance(value, str):
        body = _str(DA_NAME, name) + _str(DA_STRING_VALUE, value)
    else:
        body = _str(DA_NAME, name) + _uint(DA_INT_VALUE, int(value))
    return _bytes(TE_DEBUG_ANNOTATIONS, body)


class Writer:
    """Slices of one process into one file. Thread-safe."""

    def __init__(self, path: str, host: Optional[str] = None,
                 pid: Optional[int] = None) -> None:
        self.host = host if host is not None else socket.gethostname()
        self.pid = pid if pid is not None else os.getpid()
        self._hash = fnv1a64(self.host)
        self._slot = 1 + self._hash % HOST_SLOTS
        # Distinct from lclkctl's sequence for the same pid (it uses its own).
        self._seq_id = (mix64(self._hash ^ self.pid ^ 0x6c636c6b << 32) & 0xffffffff) | 1
        self._started = False
        self._tracks: Dict[str, int] = {}
        self._lanes: Dict[str, List[int]] = {}  # kind -> last end of each lane
        self._lock = threading.Lock()
        self._f: Optional[BinaryIO] = open(path, "wb")

    def host_pid(self, pid: int) -> int:
        return self._slot << PID_BITS | (pid & ((1 << PID_BITS) - 1))

    def _process_uuid(self) -> int:
        # tools/perfetto/perfetto.c's track_uuid(p, 1, pid): shared with lclkctl.
        return mix64(self._hash + (1 << 32 | self.pid)) | 1

    def _put(self, body: bytes) -> None:
        assert self._f is not None, "lclk.perfetto.Writer: closed"
        body += _uint(PKT_SEQUENCE_ID, self._seq_id)
        if not self._started:
            body += _uint(PKT_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED)
            self._started = True
        self._f.write(_bytes(TRACE_PACKET, body))

    def _track(self, name: str) -> int:
        uuid = self._tracks.get(name)
        if uuid is not None:
            return uuid
        if not self._tracks:
            try:
                with open("/proc/self/comm") as f:
                    comm = f.read().strip()
            except OSError:
                comm = "pid %d" % self.pid
            pd = _uint(PD_PID, self.host_pid(self.pid)) + \
                _str(PD_PROCESS_NAME, "%s: %s" % (self.host, comm))
            self._put(_bytes(PKT_TRACK_DESCRIPTOR, _uint(TD_UUID, self._process_uuid())
                             + _bytes(TD_PROCESS, pd)))
        uuid = mix64(mix64(self._hash + (3 << 32 | self.pid)) + fnv1a64(name)) | 1
        td = _uint(TD_UUID, uuid) + _str(TD_NAME, name) + \
            _uint(TD_PARENT_UUID, self._process_uuid())
        self._put(_bytes(PKT_TRACK_DESCRIPTOR, td))
        self._tracks[name] = uuid
        return uuid

    def _lane(self, kind: str, start: int, end: int) -> str:
        lanes = self._lanes.setdefault(kind, [])
        for i, last in enumerate(lanes):
            if last <= start:
                lanes[i] = end
                break
        else:
            i = len(lanes)
            lanes.append(end)
        return kind if i == 0 else "%s %d" % (kind, i)

    def slice(self, track: str, category: str, name: str, start_ns: int,
              end_ns: int, args: Sequence[Tuple[str, Value]] = ()) -> None:
        """A slice [start_ns, end_ns] on a lane of track (created on first use)."""
        ann = b"".join(_annotation(k, v) for k, v in args)
        with self._lock:
            uuid = self._track(self._lane(track, start_ns, end_ns))
            ev = _uint(TE_TYPE, TYPE_SLICE_BEGIN) + _uint(TE_TRACK_UUID, uuid) + \
                _str(TE_CATEGORIES, category) + _str(TE_NAME, name) + ann
            self._put(_uint(PKT_TIMESTAMP, start_ns) + _bytes(PKT_TRACK_EVENT, ev))
            ev = _uint(TE_TYPE, TYPE_SLICE_END) + _uint(TE_TRACK_UUID, uuid)
            self._put(_uint(PKT_TIMESTAMP, end_ns) + _bytes(PKT_TRACK_EVENT, ev))

    def instant(self, track: str, category: str, name: str, ts_ns: int,
                args: Sequence[Tuple[str, Value]] = ()) -> None:
        ann = b"".join(_annotation(k, v) for k, v in args)
        with self._lock:
            ev = _uint(TE_TYPE, TYPE_INSTANT) + _uint(TE_TRACK_UUID, self._track(track)) + \
                _str(TE_CATEGORIES, category) + _str(TE_NAME, name) + ann
            self._put(_uint(PKT_TIMESTAMP, ts_ns) + _bytes(PKT_TRACK_EVENT, ev))

    def flush(self) -> None:
        with self._lock:
            if self._f:
                self._f.flush()

    def close(self) -> None:
        with self._lock:
            if self._f:
                self._f.close()
                self._f = None


# ---- reading --------------------------------------------------------------

class DecodeError(ValueError):
    pass


def _read_varint(buf: bytes, i: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise DecodeError("truncated or overlong varint at byte %d" % i)
        b = buf[i]
        i += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, i


def fields(buf: bytes) -> Iterator[Tuple[int, int, Union[int, bytes]]]:
    """(field, wire type, value) of a message; value is an int or bytes."""
    i = 0
    while i < len(buf):
        key, i = _read_varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == WIRE_VARINT:
            v, i = _read_varint(buf, i)
            yield field, wire, v
        elif wire == WIRE_LEN:
            n, i = _read_varint(buf, i)
            if i + n > len(buf):
                raise DecodeError("field %d: %d bytes past the end" % (field, n))
            yield field, wire, buf[i:i + n]
            i += n
        elif wire == WIRE_I64:
            yield field, wire, int.from_bytes(buf[i:i + 8], "little")
            i += 8
        elif wire == WIRE_I32:
            yield field, wire, int.from_bytes(buf[i:i + 4], "little")
            i += 4
        else:
            raise DecodeError("wire type %d at byte %d" % (wire, i))


def _s64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


class Slice:
    """A slice read back: track, category, name, begin/end ns, annotations,
    and root: the name of the track's outermost ancestor (a merged trace's
    host, a recorder's process)."""
    __slots__ = ("track", "root", "category", "name", "start_ns", "end_ns", "args")

    def __init__(self, track: str, category: str, name: str, start_ns: int,
                 args: Dict[str, Value], root: str = "") -> None:
        self.track = track
        self.root = root
        self.category = category
        self.name = name
        self.start_ns = start_ns
        self.end_ns: Optional[int] = None
        self.args = args

    def __repr__(self) -> str:
        return "Slice(%r, %r, %d..%s, %r)" % (self.category, self.name, self.start_ns,
                                              self.end_ns, self.args)


def _event(ev: bytes) -> Tuple[int, int, str, str, Dict[str, Value]]:
    typ = uuid = 0
    cat = name = ""
    args: Dict[str, Value] = {}
    for f, _, v in fields(ev):
        if f == TE_TYPE:
            typ = int(v)
        elif f == TE_TRACK_UUID:
            uuid = int(v)
        elif f == TE_CATEGORIES and isinstance(v, bytes):
            cat = v.decode(errors="replace")
        elif f == TE_NAME and isinstance(v, bytes):
            name = v.decode(errors="replace")
        elif f == TE_DEBUG_ANNOTATIONS and isinstance(v, bytes):
            key = ""
            val: Value = 0
            for af, _, av in fields(v):
                if af == DA_NAME and isinstance(av, bytes):
                    key = av.decode(errors="replace")
                elif af == DA_INT_VALUE and isinstance(av, int):
                    val = _s64(av)
                elif af == DA_STRING_VALUE and isinstance(av, bytes):
                    val = av.decode(errors="replace")
            args[key] = val
    return typ, uuid, cat, name, args


def read_slices(data: bytes) -> List[Slice]:
    """Every complete slice and instant of a trace (files may be concatenated:
    a trace is a sequence of packets). Begin and end pair up per sequence
    and track, as nested slices do."""
    names: Dict[int, str] = {}
    parents: Dict[int, int] = {}
    open_: Dict[Tuple[int, int], List[Slice]] = {}

    def root(uuid: int) -> str:
        seen = 0
        while uuid in parents and seen < 16:
            uuid, seen = parents[uuid], seen + 1
        return names.get(uuid, "")

    out: List[Slice] = []
    for f, _, pkt in fields(data):
        if f != TRACE_PACKET or not isinstance(pkt, bytes):
            continue
        ts = seq = 0
        ev = td = None
        for pf, _, v in fields(pkt):
            if pf == PKT_TIMESTAMP:
                ts = int(v)
            elif pf == PKT_SEQUENCE_ID:
                seq = int(v)
            elif pf == PKT_TRACK_EVENT:
                ev = v
            elif pf == PKT_TRACK_DESCRIPTOR:
                td = v
        if isinstance(td, bytes):
            uuid, tname, parent = 0, "", None
            for tf, _, v in fields(td):
                if tf == TD_UUID:
                    uuid = int(v)
                elif tf == TD_NAME and isinstance(v, bytes):
                    tname = v.decode(errors="replace")
                elif tf == TD_PARENT_UUID:
                    parent = int(v)
                elif tf == TD_PROCESS and isinstance(v, bytes) and not tname:
                    for pf2, _, pv in fields(v):
                        if pf2 == PD_PROCESS_NAME and isinstance(pv, bytes):
                            tname = pv.decode(errors="replace")
            names.setdefault(uuid, tname)
            if parent is not None:
                parents.setdefault(uuid, parent)
        if not isinstance(ev, bytes):
            continue
        typ, uuid, cat, name, args = _event(ev)
        stack = open_.setdefault((seq, uuid), [])
        if typ == TYPE_SLICE_BEGIN:
            s = Slice(names.get(uuid, ""), cat, name, ts, args, root(uuid))
            stack.append(s)
            out.append(s)
        elif typ == TYPE_SLICE_END and stack:
            s = stack.pop()
            s.end_ns = ts
            s.args.update(args)
        elif typ == TYPE_INSTANT:
            s = Slice(names.get(uuid, ""), cat, name, ts, args, root(uuid))
            s.end_ns = ts
            out.append(s)
    return [s for s in out if s.end_ns is not None]
