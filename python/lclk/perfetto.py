# SPDX-License-Identifier: GPL-2.0
"""Perfetto protobuf traces, written and read by hand.

The writer follows tools/perfetto/perfetto.c (what ``lclkctl trace --trace-out``
writes) so that files of both open together and a later merge puts them on
one timeline: timestamps are logical ns, in the sequence's own clock (id
64) that the first packet declares (a ClockSnapshot relates it to BOOTTIME
one to one); tracks carry names, not pids, as lclkctl's do, because hosts
have equal pids and Perfetto merges processes by pid: a track per host (the
host's name), the process's under it ("COMM (pid P)"), with the uuids
lclkctl gives them, so slices written here land under the same process as
that process's traced system calls, and files of any number of hosts open
together. ``lclkctl trace merge`` gives each process of each host a pid of
its own, with thread and process descriptors.

Slices go on named tracks under the process (TrackDescriptor.name with
parent_uuid), one per kind of record; slices that overlap in time (async
collectives in flight together) are spread over lanes, "collectives",
"collectives 1"..., because slices of one track must nest.

:func:`read_slices` reads these, lclkctl's and merged traces (interned
names, thread and process descriptors).

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
PKT_CLOCK_SNAPSHOT = 6
PKT_TIMESTAMP = 8
PKT_SEQUENCE_ID = 10
PKT_TRACK_EVENT = 11
PKT_INTERNED_DATA = 12
PKT_SEQUENCE_FLAGS = 13
PKT_DEFAULTS = 59
PKT_TRACK_DESCRIPTOR = 60
SEQ_INCREMENTAL_STATE_CLEARED = 1
DEF_TIMESTAMP_CLOCK_ID = 58
CS_CLOCKS = 1
CLK_ID = 1
CLK_TIMESTAMP = 2
CLOCK_ID_BOOTTIME = 6
CLOCK_ID_LOGICAL = 64       # 64-127: the sequence's own
ID_EVENT_CATEGORIES = 1
ID_EVENT_NAMES = 2
IE_IID = 1
IE_NAME = 2
TD_UUID = 1
TD_NAME = 2
TD_PROCESS = 3
TD_THREAD = 4
TD_PARENT_UUID = 5
PD_PID = 1
PD_PROCESS_NAME = 6
THD_PID = 1
THD_TID = 2
THD_THREAD_NAME = 5
TE_CATEGORY_IIDS = 3
TE_DEBUG_ANNOTATIONS = 4
TE_TYPE = 9
TE_NAME_IID = 10
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
        # Distinct from lclkctl's sequence for the same pid (it uses its own).
        self._seq_id = (mix64(self._hash ^ self.pid ^ 0x6c636c6b << 32) & 0xffffffff) | 1
        self._started = False
        self._tracks: Dict[str, int] = {}
        self._lanes: Dict[str, List[int]] = {}  # kind -> last end of each lane
        self._lock = threading.Lock()
        self._f: Optional[BinaryIO] = open(path, "wb")
        self._declare_clock()

    def _declare_clock(self) -> None:
        """The first packet: timestamps are in the logical clock (the
        sequence's id 64), BOOTTIME's equal (one snapshot, both at 0)."""
        snap = b"".join(_bytes(CS_CLOCKS, _uint(CLK_ID, c) + _uint(CLK_TIMESTAMP, 0))
                        for c in (CLOCK_ID_LOGICAL, CLOCK_ID_BOOTTIME))
        self._put(_bytes(PKT_CLOCK_SNAPSHOT, snap) +
                  _bytes(PKT_DEFAULTS, _uint(DEF_TIMESTAMP_CLOCK_ID, CLOCK_ID_LOGICAL)))

    def _host_uuid(self) -> int:
        # tools/perfetto/perfetto.c's track_uuid(p, 0, 0): the host's track.
        return mix64(self._hash) | 1

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
                comm = "?"
            # As lclkctl names them (tools/perfetto/perfetto.c's declare_tracks).
            self._put(_bytes(PKT_TRACK_DESCRIPTOR, _uint(TD_UUID, self._host_uuid()) +
                             _str(TD_NAME, self.host)))
            self._put(_bytes(PKT_TRACK_DESCRIPTOR, _uint(TD_UUID, self._process_uuid()) +
                             _str(TD_NAME, "%s (pid %d)" % (comm or "?", self.pid)) +
                             _uint(TD_PARENT_UUID, self._host_uuid())))
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
    and root: the name of the track's outermost ancestor (a host in a
    file of lclkctl trace or of the recorder, a process, "HOST: COMM (pid
    P)", in a merged trace). A thread's track (ThreadDescriptor) is named
    "PROCESS / THREAD" after its process and itself."""
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


Interned = Dict[int, Dict[int, str]]     # field of InternedData -> iid -> string


def _event(ev: bytes, interned: Interned) -> Tuple[int, int, str, str, Dict[str, Value]]:
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
        elif f == TE_CATEGORY_IIDS and isinstance(v, int):
            cat = interned.get(ID_EVENT_CATEGORIES, {}).get(v, "")
        elif f == TE_NAME and isinstance(v, bytes):
            name = v.decode(errors="replace")
        elif f == TE_NAME_IID and isinstance(v, int):
            name = interned.get(ID_EVENT_NAMES, {}).get(v, "")
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


def _intern(data: bytes, into: Interned) -> None:
    for kind, _, entry in fields(data):
        if kind in (ID_EVENT_CATEGORIES, ID_EVENT_NAMES) and isinstance(entry, bytes):
            iid, text = 0, ""
            for f, _, v in fields(entry):
                if f == IE_IID and isinstance(v, int):
                    iid = v
                elif f == IE_NAME and isinstance(v, bytes):
                    text = v.decode(errors="replace")
            into.setdefault(kind, {})[iid] = text


def read_slices(data: bytes) -> List[Slice]:
    """Every complete slice and instant of a trace (files may be concatenated:
    a trace is a sequence of packets). Begin and end pair up per sequence
    and track, as nested slices do."""
    names: Dict[int, str] = {}
    parents: Dict[int, int] = {}
    process_of_pid: Dict[int, int] = {}
    interned: Dict[int, Interned] = {}          # per sequence
    open_: Dict[Tuple[int, int], List[Slice]] = {}

    def root(uuid: int) -> str:
        seen = 0
        while uuid in parents and seen < 16:
            uuid, seen = parents[uuid], seen + 1
        return names.get(uuid, "")

    def descriptor(td: bytes) -> None:
        uuid, tname, parent = 0, "", None
        pid = tid = None
        for tf, _, v in fields(td):
            if tf == TD_UUID:
                uuid = int(v)
            elif tf == TD_NAME and isinstance(v, bytes):
                tname = v.decode(errors="replace")
            elif tf == TD_PARENT_UUID:
                parent = int(v)
            elif tf in (TD_PROCESS, TD_THREAD) and isinstance(v, bytes):
                want = PD_PROCESS_NAME if tf == TD_PROCESS else THD_THREAD_NAME
                for df, _, dv in fields(v):
                    if df == want and isinstance(dv, bytes) and not tname:
                        tname = dv.decode(errors="replace")
                    elif df == PD_PID and isinstance(dv, int):
                        pid = dv
                    elif tf == TD_THREAD and df == THD_TID and isinstance(dv, int):
                        tid = dv
                if tf == TD_PROCESS and pid is not None:
                    process_of_pid.setdefault(pid, uuid)
        if tid is not None and pid in process_of_pid and parent is None:
            parent = process_of_pid[pid]
            tname = "%s / %s" % (names.get(parent, "?"), tname)
        names.setdefault(uuid, tname)
        if parent is not None:
            parents.setdefault(uuid, parent)

    out: List[Slice] = []
    for f, _, pkt in fields(data):
        if f != TRACE_PACKET or not isinstance(pkt, bytes):
            continue
        ts = seq = flags = 0
        ev = td = idata = None
        for pf, _, v in fields(pkt):
            if pf == PKT_TIMESTAMP:
                ts = int(v)
            elif pf == PKT_SEQUENCE_ID:
                seq = int(v)
            elif pf == PKT_SEQUENCE_FLAGS:
                flags = int(v)
            elif pf == PKT_TRACK_EVENT:
                ev = v
            elif pf == PKT_TRACK_DESCRIPTOR:
                td = v
            elif pf == PKT_INTERNED_DATA:
                idata = v
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            interned[seq] = {}
        if isinstance(idata, bytes):
            _intern(idata, interned.setdefault(seq, {}))
        if isinstance(td, bytes):
            descriptor(td)
        if not isinstance(ev, bytes):
            continue
        typ, uuid, cat, name, args = _event(ev, interned.get(seq, {}))
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
