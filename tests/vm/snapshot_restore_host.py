#!/usr/bin/env python3
"""The host half of tests/vm/snapshot-restore: the truth outside the guest.

Talks to tests/vm/snapshot_restore_guest.c over the guest's second serial
port (a unix socket) and to QEMU over QMP (another unix socket):

- syncs the guest's /dev/lclk0 from this host's CLOCK_REALTIME whenever a
  reading says it is not synced (UNSYNCED, DISRUPTED), and every
  RESYNC_S as a daemon would;
- samples it without pause: t1 = CLOCK_REALTIME, "S seq", the guest reads
  lclk through the mmap page and the GET_TIME ioctl and answers, t4 =
  CLOCK_REALTIME. A reading whose status is SYNCED or HOLDOVER claims
  that the time was within [time - bound, time + bound] at some instant of
  [t1, t4]: it violates the bound if time + bound < t1 or time - bound > t4;
- meanwhile takes a snapshot (savevm), waits WAIT_S, and restores it
  (loadvm) RESTORES times, DWELL_S apart.

With --race, the snapshot holds a sync measured but not yet applied (the
guest's M), so that each restore applies a measurement from before it, as
a daemon that measured just before a restore would: the guest's setter
sets with the vmclock's marker from before it measured, and the module
must refuse it (ESTALE); with --no-marker it sets as setters did before
LCLK_SET_VMCLOCK, and the test must fail.

With --daemon, lclkctl daemon keeps the guest's clock (from a chronyd on
this host that serves its CLOCK_REALTIME) and the host only samples. It
takes no reading from savevm to the first restore: the pause savevm takes
puts the guest behind, which nothing in the guest can see (README), and
which the test without --daemon resyncs. After each restore the daemon
must have the clock SYNCED again before the next one (the dwell): the
time it took is printed, and a restore it did not resync from fails.

Prints BENCH lines and a summary; exits 1 if any reading violated its bound
(or, with --daemon, a restore was not resynced from).
"""
import json
import os
import socket
import sys
import threading
import time

SYNCED, HOLDOVER, DISRUPTED = 1, 2, 3
STATUS = {0: "UNSYNCED", 1: "SYNCED", 2: "HOLDOVER", 3: "DISRUPTED"}


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


class Lines:
    """Lines from a socket, with a timeout; partial garbage is dropped."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def get(self, timeout):
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                return None
            if not data:
                raise EOFError("guest port closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("ascii", "replace").strip()


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.lines = Lines(self.sock)
        self.lines.get(10)  # greeting
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            line = self.lines.get(300)
            if line is None:
                raise TimeoutError(name)
            r = json.loads(line)
            if "return" in r or "error" in r:
                if "error" in r:
                    raise RuntimeError(f"{name}: {r['error']}")
                return r["return"]

    def hmp(self, line):
        out = self.cmd("human-monitor-command", **{"command-line": line})
        if out.strip():
            raise RuntimeError(f"{line}: {out.strip()}")


class Sampler(threading.Thread):
    def __init__(self, sock, resync_s, marker=True, syncs=True):
        super().__init__(daemon=True)
        self.syncs_guest = syncs   # False: the guest's daemon does
        self.marker = 1 if marker else 0
        self.sock = sock
        self.lines = Lines(sock)
        self.resync_ns = int(resync_s * 1e9)
        self.seq = 0
        self.stop = False
        self.lock = threading.Lock()
        self.readings = 0
        self.claimed = 0           # readings with SYNCED/HOLDOVER
        self.violations = {"mmap": 0, "ioctl": 0}
        self.status_count = {}
        self.lost = 0
        self.syncs = 0
        self.sync_failed = 0
        self.worst_ns = 0
        self.examples = []
        self.error = None
        # What happened last: "steady" (nothing yet), "savevm" (the pause
        # it takes), "restore" (a loadvm): violations are counted by it.
        self.phase = "steady"
        self.by_phase = {}
        # The first reading after each restore: its error, its status.
        self.mark = False
        self.after_restore = []
        # --daemon: host CLOCK_MONOTONIC of the last restore, and the
        # time from it to the first SYNCED reading after it (None: none).
        self.restored_at = None
        self.resynced_in = []
        # The main thread holds the sampler while QEMU pauses for savevm.
        self.go = threading.Event()
        self.go.set()
        self.idle = threading.Event()
        self.force_sync = False
        self.text_status = {}      # read()'s status before each sync

    def send(self, line):
        self.sock.sendall(line.encode() + b"\n")

    def wait(self, prefix, seq, timeout=2.0):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return None
            line = self.lines.get(left)
            if line is None:
                return None
            f = line.split()
            if len(f) >= 2 and f[0] == prefix and f[1] == str(seq):
                return f

    def sync(self):
        self.seq += 1
        seq = self.seq
        self.send(f"T {seq} {self.marker}")
        if self.wait("Q", seq) is None:
            self.sync_failed += 1
            return False
        self.send(f"A {seq} {now_ns()}")
        f = self.wait("Y", seq)
        if f is None or f[2] != "0":
            self.sync_failed += 1
            return False
        self.syncs += 1
        if len(f) > 4:
            self.text_status[f[4]] = self.text_status.get(f[4], 0) + 1
        return True

    def hold(self):
        """Stop the sampler between two requests (from the main thread)."""
        self.go.clear()
        if not self.idle.wait(10):
            raise TimeoutError("the sampler did not stop")

    def measure_held(self):
        """A sync measured and held (M): its SEQ, or None."""
        self.seq += 1
        seq = self.seq
        self.send(f"M {seq} {self.marker}")
        if self.wait("Q", seq) is None:
            return None
        self.send(f"A {seq} {now_ns()}")
        return seq if self.wait("W", seq) is not None else None

    def apply_held(self, seq):
        """Apply the held sync SEQ (G): the guest's errno, or None."""
        self.send(f"G {seq}")
        f = self.wait("Y", seq, timeout=10)
        return int(f[2]) if f is not None else None

    def sample(self):
        self.seq += 1
        seq = self.seq
        t1 = now_ns()
        self.send(f"S {seq}")
        f = self.wait("R", seq)
        t4 = now_ns()
        if f is None or len(f) != 8:
            self.lost += 1
            return None
        worst_status = None
        with self.lock:
            for name, (t, b, s) in (("mmap", f[2:5]), ("ioctl", f[5:8])):
                t, b, s = int(t), int(b), int(s)
                self.readings += 1
                self.status_count[s] = self.status_count.get(s, 0) + 1
                if s in (SYNCED, HOLDOVER):
                    self.claimed += 1
                    miss = max(t1 - (t + b), (t - b) - t4)
                    if miss > 0:
                        self.violations[name] += 1
                        self.by_phase[self.phase] = self.by_phase.get(self.phase, 0) + 1
                        self.worst_ns = max(self.worst_ns, miss)
                        if len(self.examples) < 5:
                            self.examples.append(
                                f"{name} seq {seq}: time {t} bound {b} "
                                f"status {STATUS.get(s, s)}, truth in "
                                f"[{t1}, {t4}]: off by {miss} ns beyond the bound")
                if worst_status is None or s not in (SYNCED, HOLDOVER):
                    worst_status = s
            if self.restored_at is not None and worst_status == SYNCED:
                self.resynced_in[-1] = time.monotonic() - self.restored_at
                self.restored_at = None
                if self.mark and name == "mmap":
                    self.mark = False
                    self.after_restore.append((t - (t1 + t4) // 2, s))
        return worst_status

    def restored(self):
        """A restore just ended: time the daemon's resync from now."""
        with self.lock:
            self.restored_at = time.monotonic()
            self.resynced_in.append(None)
            self.mark = True

    def run(self):
        try:
            last_sync = 0
            need = self.syncs_guest
            while not self.stop:
                if not self.go.is_set():
                    self.idle.set()
                    self.go.wait()
                    self.idle.clear()
                if not self.syncs_guest:
                    self.sample()
                    continue
                if self.force_sync:
                    self.force_sync = False
                    need = True
                if need or now_ns() - last_sync > self.resync_ns:
                    if self.sync():
                        last_sync = now_ns()
                        need = False
                    continue
                s = self.sample()
                if s is not None and s not in (SYNCED, HOLDOVER):
                    need = True
        except Exception as e:  # noqa: BLE001 - reported by the main thread
            self.error = e


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", required=True)
    ap.add_argument("--qmp", required=True)
    ap.add_argument("--restores", type=int, default=20)
    ap.add_argument("--wait", type=float, default=10.0)
    ap.add_argument("--dwell", type=float, default=3.0)
    ap.add_argument("--resync", type=float, default=8.0)
    ap.add_argument("--boot-timeout", type=float, default=180.0)
    ap.add_argument("--label", default="vm")
    ap.add_argument("--no-pause-resync", dest="pause_resync", action="store_false",
                    help="do not sync the guest after savevm's pause")
    ap.add_argument("--race", action="store_true",
                    help="each restore applies a sync measured before it")
    ap.add_argument("--no-marker", dest="marker", action="store_false",
                    help="the guest's syncs do not give the vmclock's marker")
    ap.add_argument("--daemon", action="store_true",
                    help="the guest's lclkctl daemon keeps its clock; the host only samples")
    ap.add_argument("--sync-timeout", type=float, default=120.0,
                    help="--daemon: how long the daemon may take to sync after boot")
    a = ap.parse_args()

    t_start = time.monotonic()
    port = socket.socket(socket.AF_UNIX)
    for _ in range(100):
        try:
            port.connect(a.port)
            break
        except OSError:
            time.sleep(0.1)
    qmp = Qmp(a.qmp)
    # The guest says hello when its program runs.
    hello = Lines(port)
    while True:
        line = hello.get(a.boot_timeout)
        if line is None:
            print("snapshot-restore: the guest never said hello", file=sys.stderr)
            return 2
        if line.startswith("H "):
            break
    print(f"# guest up after {time.monotonic() - t_start:.1f} s")

    if a.daemon:
        a.dwell = max(a.dwell, 8.0)
    smp = Sampler(port, a.resync, a.marker, syncs=not a.daemon)
    smp.lines.buf = hello.buf
    smp.start()
    if a.daemon:
        end = time.monotonic() + a.sync_timeout
        while smp.status_count.get(SYNCED, 0) == 0 and time.monotonic() < end and not smp.error:
            time.sleep(0.2)
        if smp.status_count.get(SYNCED, 0) == 0:
            print(f"snapshot-restore: the guest's daemon did not sync in {a.sync_timeout:.0f} s",
                  file=sys.stderr)
            return 2
        print(f"# the guest's daemon synced {time.monotonic() - t_start:.1f} s after boot")
    time.sleep(5)
    if smp.syncs == 0 and not a.daemon:
        print(f"snapshot-restore: no sync in 5 s ({smp.sync_failed} failed)", file=sys.stderr)
    t = time.monotonic()
    smp.phase = "savevm"
    held = None
    if a.pause_resync or a.race or a.daemon:
        # savevm stops the VM, and under TCG the guest's clocks stop with
        # it: the guest comes back behind by the pause, which no vmclock
        # reports (QEMU marks loads only). As whoever paused it would, the
        # host syncs it afterwards, and takes no reading meanwhile; with
        # --daemon it takes none until the first restore.
        smp.hold()
    if a.race:
        held = smp.measure_held()
        if held is None:
            print("snapshot-restore: the held sync was not measured", file=sys.stderr)
            return 2
    qmp.hmp("savevm lclk")
    print(f"# savevm took {time.monotonic() - t:.1f} s")
    if held is not None and smp.apply_held(held) != 0:
        print("snapshot-restore: the held sync failed before any restore", file=sys.stderr)
        return 2
    if (a.pause_resync or a.race) and not a.daemon:
        smp.force_sync = True
        smp.go.set()
    time.sleep(a.wait)
    load_s = []
    held_rc = {}
    for i in range(a.restores):
        t = time.monotonic()
        smp.phase = "restore"
        if held is not None:
            smp.hold()
        qmp.hmp("loadvm lclk")
        load_s.append(time.monotonic() - t)
        if held is not None:
            # the restored guest holds the sync it measured before savevm
            rc = smp.apply_held(held)
            held_rc[rc] = held_rc.get(rc, 0) + 1
            smp.go.set()
        smp.restored()
        smp.go.set()
        time.sleep(a.dwell)
        if smp.error:
            break
    smp.stop = True
    smp.join(5)
    # The guest shows its status and powers off; QEMU then closes QMP.
    try:
        smp.send("X")
        end = time.monotonic() + 20
        while time.monotonic() < end:
            qmp.lines.get(1)
        qmp.cmd("quit")
    except (OSError, RuntimeError, TimeoutError, EOFError):
        pass
    if smp.error:
        print(f"snapshot-restore: sampler: {smp.error!r}", file=sys.stderr)
        return 2

    v = smp.violations["mmap"] + smp.violations["ioctl"]
    st = ", ".join(f"{STATUS.get(k, k)} {n}" for k, n in sorted(smp.status_count.items()))
    print(f"# {a.label}: {len(load_s)} restores (loadvm {min(load_s):.2f}..{max(load_s):.2f} s), "
          f"{smp.readings} readings ({st}), {smp.claimed} with a bound, "
          f"{smp.lost} requests unanswered, {smp.syncs} syncs ({smp.sync_failed} failed)")
    print(f"# {a.label}: violations: mmap {smp.violations['mmap']}, ioctl {smp.violations['ioctl']}"
          f"{f', worst {smp.worst_ns / 1e9:.3f} s beyond the bound' if v else ''}")
    ts = ", ".join(f"{k} {n}" for k, n in sorted(smp.text_status.items()))
    print(f"# {a.label}: read()'s status before each sync: {ts}")
    ph = ", ".join(f"after {k} {n}" for k, n in sorted(smp.by_phase.items()))
    print(f"# {a.label}: violations by what came before them: {ph or 'none'}")
    if smp.after_restore:
        errs = [e for e, _ in smp.after_restore]
        sts = {}
        for _, s in smp.after_restore:
            sts[STATUS.get(s, s)] = sts.get(STATUS.get(s, s), 0) + 1
        print(f"# {a.label}: first reading after each restore: error "
              f"{min(errs) / 1e9:+.3f}..{max(errs) / 1e9:+.3f} s, status "
              + ", ".join(f"{k} {n}" for k, n in sorted(sts.items())))
    if held is not None:
        rcs = ", ".join(f"{'no answer' if k is None else os.strerror(k) if k else 'applied'} {n}"
                        for k, n in sorted(held_rc.items(), key=lambda kv: str(kv[0])))
        print(f"# {a.label}: the sync measured before savevm, set after each restore: {rcs}")
    unresynced = 0
    if a.daemon:
        took = [r for r in smp.resynced_in if r is not None]
        unresynced = len(smp.resynced_in) - len(took)
        print(f"# {a.label}: the daemon resynced after {len(took)} of {len(smp.resynced_in)} restores"
              + (f", {min(took):.1f}..{max(took):.1f} s after loadvm returned" if took else "")
              + (f"; {unresynced} still not synced {a.dwell:.0f} s after" if unresynced else ""))
        print(f"BENCH {a.label}.resync_max_s {max(took) if took else -1:.1f}")
    for e in smp.examples:
        print(f"#   {e}")
    print(f"BENCH {a.label}.disruption_violations {v}")
    print(f"BENCH {a.label}.disruption_readings {smp.readings}")
    print(f"BENCH {a.label}.disruption_restores {len(load_s)}")
    return 1 if v or unresynced else 0


if __name__ == "__main__":
    sys.exit(main())
