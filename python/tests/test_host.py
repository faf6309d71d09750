# SPDX-License-Identifier: GPL-2.0
"""lclk without a device (the host): clear exceptions, no crash, and the
pure-Python parts (Perfetto round trip, the report's arithmetic)."""
import errno
import gc
import os
import subprocess
import sys
import tempfile
import unittest

import lclk
from lclk import perfetto, report, timeline


TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CHECK_TRACE = os.path.join(TOP, "tests", "perfetto", "check_trace.py")
LCLKCTL = os.environ.get("LCLKCTL", os.path.join(TOP, "build", "lclkctl"))
CLUSTER_GEN = os.path.join(TOP, "build", "tests", "bench", "cluster_gen")


def check_trace(test, paths, *opts):
    """Perfetto's schema on the traces at paths (tests/perfetto/check_trace.py:
    protoc's decoding, interning, descriptors, the clock, flows); its report."""
    r = subprocess.run([sys.executable, CHECK_TRACE, "--json"] + list(opts) + list(paths),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    test.assertEqual(r.returncode, 0, r.stderr)
    import json
    return [json.loads(line) for line in r.stdout.splitlines()]


def merge(test, paths, out):
    if not os.access(LCLKCTL, os.X_OK):
        test.skipTest("%s is not built" % LCLKCTL)
    r = subprocess.run([LCLKCTL, "trace", "merge"] + list(paths) + ["-o", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    test.assertEqual(r.returncode, 0, r.stderr)


class NoDevice(unittest.TestCase):
    def test_default_path_missing_raises_filenotfound(self):
        if os.path.exists("/dev/lclk0"):
            self.skipTest("/dev/lclk0 exists")
        with self.assertRaises(FileNotFoundError) as cm:
            lclk.Clock()
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertEqual(cm.exception.filename, "/dev/lclk0")
        self.assertIn("No such file or directory", str(cm.exception))

    def test_not_an_lclk_device_raises_enotty(self):
        with self.assertRaises(OSError) as cm:
            lclk.Clock("/dev/null")
        self.assertEqual(cm.exception.errno, errno.ENOTTY)
        self.assertEqual(cm.exception.filename, "/dev/null")

    def test_path_types(self):
        with self.assertRaises(TypeError):
            lclk.Clock(42)
        with self.assertRaises(FileNotFoundError):
            lclk.Clock(b"/nonexistent/lclk")
        with self.assertRaises(FileNotFoundError):
            lclk.Clock(path=os.fsencode("/nonexistent/lclk").decode())

    def test_unopened_clock_raises_valueerror_not_crash(self):
        c = lclk.Clock.__new__(lclk.Clock)
        self.assertTrue(c.closed)
        for call in (c.now, c.now_ns, c.info, c.fileno, lambda: c.from_monotonic(1),
                     c.__enter__):
            with self.assertRaises(ValueError):
                call()
        c.close()
        c.close()
        self.assertIn("closed", repr(c))

    def test_failed_init_leaves_a_closed_clock(self):
        c = lclk.Clock.__new__(lclk.Clock)
        with self.assertRaises(OSError):
            c.__init__("/dev/null")
        self.assertTrue(c.closed)
        with self.assertRaises(ValueError):
            c.now()
        del c
        gc.collect()

    def test_now_type_not_constructible(self):
        with self.assertRaises(TypeError):
            lclk.Now()

    def test_constants(self):
        self.assertEqual((lclk.STATUS_UNSYNCED, lclk.STATUS_SYNCED, lclk.STATUS_HOLDOVER),
                         (0, 1, 2))
        self.assertEqual(lclk.BOUND_UNKNOWN, 2**63 - 1)
        self.assertEqual(lclk.status_name(1), "synced")
        self.assertEqual(lclk.status_name(7), "unknown")

    def test_typed(self):
        d = os.path.dirname(lclk.__file__)
        self.assertTrue(os.path.exists(os.path.join(d, "py.typed")))
        self.assertTrue(os.path.exists(os.path.join(d, "_lclk.pyi")))


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_LCLK = os.path.join(REPO, "build", "tests", "shim", "fake_lclk.so")

# Run by ThroughTheIoctls in a child with the shim preloaded: prints what it
# found, one "name value" a line.
THROUGH_IOCTLS = r"""
import sys, time, lclk
c = lclk.Clock(sys.argv[1])
print("closed_open", c.closed)
t0 = time.monotonic_ns(); n = c.now(); t1 = time.monotonic_ns()
print("now", n.time_ns - t0, n.time_ns - t1, n.bound_ns, n.status)
t0 = time.monotonic_ns(); ns = c.now_ns(); t1 = time.monotonic_ns()
print("now_ns", ns - t0, ns - t1)
m = c.from_monotonic(12345678)
print("from_monotonic", m.time_ns - 12345678, m.status)
c.close()
print("closed_closed", c.closed)
try:
    c.now()
except ValueError:
    print("now_closed ValueError")
"""


@unittest.skipUnless(os.path.exists(FAKE_LCLK), "no %s: make tests first" % FAKE_LCLK)
class ThroughTheIoctls(unittest.TestCase):
    """A Clock where the page cannot be used, as in a time namespace that
    shifts CLOCK_MONOTONIC (tests/shim/fake_lclk.c answers the ioctls for
    a plain file): opened there (mmap refused, EOPNOTSUPP) or inherited
    into it (the page says LCLK_PAGE_REFUSED). It reads the ioctls' time,
    is open until closed (.closed), and raises ValueError after. In the VM,
    python/tests/guest_clock.py does the same on the module."""
    OFFSET = 1_000_000_000

    def run_child(self, page):
        import subprocess
        with tempfile.NamedTemporaryFile() as dev:
            env = dict(os.environ, LD_PRELOAD=FAKE_LCLK, LCLK_FAKE_PATH=dev.name,
                       LCLK_FAKE_PAGE=page, LCLK_FAKE_OFFSET_NS=str(self.OFFSET))
            p = subprocess.run([sys.executable, "-c", THROUGH_IOCTLS, dev.name], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        return {line.split()[0]: line.split()[1:] for line in p.stdout.splitlines()}

    def check(self, got):
        self.assertEqual(got["closed_open"], ["False"])
        after_t0, before_t1, bound, status = map(int, got["now"])
        self.assertLessEqual(before_t1, self.OFFSET)        # t0 + offset <= now <= t1 + offset
        self.assertGreaterEqual(after_t0, self.OFFSET)
        self.assertEqual((bound, status), (1234, lclk.STATUS_SYNCED))
        after_t0, before_t1 = map(int, got["now_ns"])
        self.assertLessEqual(before_t1, self.OFFSET)
        self.assertGreaterEqual(after_t0, self.OFFSET)
        self.assertEqual(got["from_monotonic"], [str(self.OFFSET), str(lclk.STATUS_SYNCED)])
        self.assertEqual(got["closed_closed"], ["True"])
        self.assertEqual(got["now_closed"], ["ValueError"])

    def test_opened_where_the_page_is_refused(self):
        self.check(self.run_child("none"))

    def test_page_says_refused(self):
        self.check(self.run_child("refused"))


class Perfetto(unittest.TestCase):
    def test_varint_matches_protobuf(self):
        self.assertEqual(perfetto._varint(0), b"\x00")
        self.assertEqual(perfetto._varint(300), b"\xac\x02")
        self.assertEqual(perfetto._varint(-1), b"\xff" * 9 + b"\x01")

    def test_ids_match_tools_perfetto_c(self):
        # Values printed by tools/perfetto/perfetto.c's fnv1a64() and track_uuid(p, 1,
        # 4242) for host "gpu-node-7".
        w = perfetto.Writer(os.devnull, host="gpu-node-7", pid=4242)
        self.assertEqual(perfetto.fnv1a64("gpu-node-7"), 0x9a371f29eed4a644)
        self.assertEqual(w._process_uuid(), 0x2580ef50a4402057)
        w.close()

    def test_many_hosts_keep_their_processes_apart(self):
        # More hosts than the 511 pid ranges the writer once chose by a hash
        # of the host name, all with the same pid: each host's process stays
        # its own (Perfetto merges processes by ProcessDescriptor pid, else
        # by track), in the files opened together and in their merge.
        hosts = 600
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for i in range(hosts):
                path = os.path.join(d, "node%03d.pftrace" % i)
                w = perfetto.Writer(path, host="node%03d" % i, pid=4242)
                w.slice("steps", "lclk.step", "step 0", 1000, 2000, [("rank", i)])
                w.close()
                paths.append(path)
            ids = set()
            for path in paths:
                with open(path, "rb") as f:
                    data = f.read()
                ids.add(self._process_identity(data))
            self.assertEqual(len(ids), hosts)
            both = os.path.join(d, "all.pftrace")
            with open(both, "wb") as out:
                for path in paths:
                    with open(path, "rb") as f:
                        out.write(f.read())
            check_trace(self, [both])
            merged = os.path.join(d, "cluster.pftrace")
            merge(self, paths, merged)
            rep, = check_trace(self, [merged], "--merged")
            self.assertEqual(rep["processes"], hosts)
            with open("/proc/self/comm") as f:
                comm = f.read().strip()
            with open(merged, "rb") as f:
                slices = perfetto.read_slices(f.read())
            self.assertEqual({s.root for s in slices},
                             {"node%03d: %s (pid 4242)" % (i, comm) for i in range(hosts)})

    @staticmethod
    def _process_identity(data):
        """What Perfetto merges the step's process by: the pid of a
        ProcessDescriptor on its track's ancestors, else the process track."""
        parents, pids, track = {}, {}, None
        for _, _, pkt in perfetto.fields(data):
            for f, _, v in perfetto.fields(pkt):
                if f == perfetto.PKT_TRACK_DESCRIPTOR:
                    uuid = parent = None
                    for tf, _, tv in perfetto.fields(v):
                        if tf == perfetto.TD_UUID:
                            uuid = tv
                        elif tf == perfetto.TD_PARENT_UUID:
                            parent = tv
                        elif tf == perfetto.TD_PROCESS:
                            for pf, _, pv in perfetto.fields(tv):
                                if pf == perfetto.PD_PID:
                                    pids[uuid] = pv
                    parents[uuid] = parent
                elif f == perfetto.PKT_TRACK_EVENT and track is None:
                    track = dict((ef, ev) for ef, _, ev in perfetto.fields(v))[perfetto.TE_TRACK_UUID]
        # the step's track is a lane under the process track
        proc = parents[track]
        return ("pid", pids[proc]) if proc in pids else ("track", proc)

    def test_round_trip_with_overlapping_slices(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.pftrace")
            w = perfetto.Writer(path, host="h1", pid=4242)
            w.slice("collectives", "lclk.collective", "allreduce", 100, 300,
                    [("rank", 1), ("seq", 1), ("bound_begin_ns", -5), ("group", "default")])
            # overlaps the first: must go on another lane to nest
            w.slice("collectives", "lclk.collective", "allreduce", 200, 400, [("rank", 1), ("seq", 2)])
            w.slice("collectives", "lclk.collective", "barrier", 500, 600, [("rank", 1), ("seq", 3)])
            w.instant("clock", "lclk.check", "clock check", 700, [("bound_ns", 9)])
            w.close()
            with open(path, "rb") as f:
                data = f.read()
            check_trace(self, [path])
        s = perfetto.read_slices(data + data)   # concatenated files
        self.assertEqual(len(s), 8)
        a, b, c, i = s[:4]
        self.assertEqual((a.name, a.start_ns, a.end_ns, a.track), ("allreduce", 100, 300, "collectives"))
        self.assertEqual(a.args, {"rank": 1, "seq": 1, "bound_begin_ns": -5, "group": "default"})
        self.assertEqual((b.start_ns, b.end_ns, b.track), (200, 400, "collectives 1"))
        self.assertEqual((c.name, c.track), ("barrier", "collectives"))
        self.assertEqual((i.start_ns, i.end_ns, i.args["bound_ns"]), (700, 700, 9))

    def test_truncated_trace_is_an_error(self):
        with self.assertRaises(perfetto.DecodeError):
            perfetto.read_slices(b"\x0a\x05\x40")


def coll(rank, seq, start, end, bound, op="allreduce", **extra):
    """bound None: the slice records none (a clock that could not say)."""
    args = dict(rank=rank, seq=seq, group="default", **extra)
    if bound is not None:
        args.update(bound_begin_ns=bound, bound_end_ns=bound)
    s = perfetto.Slice("collectives", "lclk.collective", op, start, args)
    s.end_ns = end
    return s


def step(rank, k, start, end):
    s = perfetto.Slice("steps", "lclk.step", "step %d" % k, start,
                       dict(rank=rank, step=k, bound_begin_ns=10, bound_end_ns=10))
    s.end_ns = end
    return s


class TraceProcessor(unittest.TestCase):
    """Perfetto's own trace_processor_shell (scripts/trace-processor) on a
    merged trace, through tests/perfetto/check_trace.py: skipped until built."""

    def merged(self, d, recv_start, recv_end):
        """node0 sends bytes 100-149 at 1000-2000 ns; node1 receives them at
        recv_start-recv_end on its own clock: one arrow, merged."""
        paths = []
        for host, pid in (("node0", 10), ("node1", 11)):
            path = os.path.join(d, host + ".pftrace")
            w = perfetto.Writer(path, host=host, pid=pid)
            if host == "node0":
                w.slice("main", "tcp", "tcp_send", 1000, 2000,
                        [("src", "a:1"), ("dst", "b:2"), ("seq", 100), ("len", 50)])
            else:
                w.slice("main", "tcp", "tcp_recv", recv_start, recv_end,
                        [("src", "a:1"), ("dst", "b:2"), ("seq", 100), ("len", 50)])
            w.close()
            paths.append(path)
        out = os.path.join(d, "cluster.pftrace")
        merge(self, paths, out)
        return out

    def run_check(self, path, *opts):
        r = subprocess.run([sys.executable, CHECK_TRACE, "--json", "--merged"] + list(opts) + [path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        import json
        rep, = [json.loads(line) for line in r.stdout.splitlines()]
        if "tp_flows" not in rep:
            self.skipTest("trace_processor_shell is not built (scripts/trace-processor)")
        return r.returncode, rep, r.stderr

    def test_an_arrow_kept(self):
        with tempfile.TemporaryDirectory() as d:
            rc, rep, err = self.run_check(self.merged(d, 3000, 4000), "--max-lost", "0")
        self.assertEqual(rc, 0, err)
        self.assertEqual((rep["tp_flows"], rep["tp_declared_flows"], rep["tp_flows_lost"]), (1, 1, 0))
        self.assertEqual((rep["tp_processes"], rep["tp_slices"]), (2, 2))

    def test_an_arrow_back_in_time_is_lost_as_the_model_says(self):
        # node1's clock is behind: its receive ends before the send begins,
        # and trace_processor drops the arrow, as check_trace.py predicts.
        with tempfile.TemporaryDirectory() as d:
            path = self.merged(d, 300, 400)
            rc, rep, err = self.run_check(path)
            self.assertEqual(rc, 0, err)
            self.assertEqual((rep["flows_lost"], rep["tp_flows"], rep["tp_flows_lost"]), (1, 0, 1))
            rc, rep, err = self.run_check(path, "--max-lost", "0")
        self.assertEqual(rc, 1)
        self.assertIn("1 of the 1 arrows the trace declares are not in its flow table", err)


class Report(unittest.TestCase):
    def test_last_arrival_certain_only_beyond_both_bounds(self):
        a = report.analyse([coll(0, 1, 1000, 5000, 100), coll(1, 1, 1250, 5000, 100),
                            coll(0, 2, 1000, 5000, 100), coll(1, 2, 1150, 5000, 100)])
        rows = a["per_collective"]
        self.assertEqual([(r["seq"], r["last"], r["certain"]) for r in rows],
                         [(1, 1, True), (2, 1, False)])
        self.assertEqual(a["collectives"]["ambiguous"], 1)
        self.assertEqual(a["collectives"]["slowest"], {"rank": 1, "certain": 1, "last": 2, "of": 2})

    def test_causality_violation_found_and_bounds_respected(self):
        # rank 0 ends at 2000 (+-100), rank 1 starts at 2300 (+-100): impossible
        a = report.analyse([coll(0, 1, 1000, 2000, 100), coll(1, 1, 2300, 2400, 100)])
        self.assertEqual(a["collectives"]["causality_violations"], 1)
        self.assertEqual(a["collectives"]["violations"][0]["finished"], 0)
        # the same within the bounds (gap 150 < 200): not a violation
        a = report.analyse([coll(0, 1, 1000, 2000, 100), coll(1, 1, 2150, 2400, 100)])
        self.assertEqual(a["collectives"]["causality_violations"], 0)

    def test_broadcast_needs_only_the_root(self):
        a = report.analyse([coll(0, 1, 1000, 1100, 10, "broadcast", root=0),
                            coll(1, 1, 5000, 5100, 10, "broadcast", root=0)])
        self.assertEqual(a["collectives"]["causality_violations"], 0)
        a = report.analyse([coll(0, 1, 1000, 1100, 10, "broadcast", root=1),
                            coll(1, 1, 5000, 5100, 10, "broadcast", root=1)])
        self.assertEqual(a["collectives"]["causality_violations"], 1)

    def test_a_missing_bound_is_unknown_not_zero(self):
        # rank 1 starts 1000 ns after rank 0, whose bound is 100 ns; rank 1
        # recorded no bound: its start is anywhere, the order is not proven.
        a = report.analyse([coll(0, 1, 1000, 5000, 100), coll(1, 1, 2000, 5000, None)])
        self.assertEqual([(r["last"], r["certain"]) for r in a["per_collective"]], [(1, False)])
        self.assertEqual(a["collectives"]["ambiguous"], 1)
        self.assertEqual(a["collectives"]["last"][1], {"last": 1, "certain": 0})
        self.assertIsNone(a["collectives"]["slowest"])
        # the same with the bound written as unknown (an unsynced clock)
        a = report.analyse([coll(0, 1, 1000, 5000, 100),
                            coll(1, 1, 2000, 5000, lclk.BOUND_UNKNOWN)])
        self.assertEqual([r["certain"] for r in a["per_collective"]], [False])

    def test_a_missing_bound_is_never_a_causality_violation(self):
        # rank 0 ends at 2000 with no bound, rank 1 starts at 2300 (+-100):
        # with rank 0's end anywhere, nothing is proven impossible.
        a = report.analyse([coll(0, 1, 1000, 2000, None), coll(1, 1, 2300, 2400, 100)])
        self.assertEqual(a["collectives"]["causality_violations"], 0)
        a = report.analyse([coll(0, 1, 1000, 2000, 100), coll(1, 1, 2300, 2400, None)])
        self.assertEqual(a["collectives"]["causality_violations"], 0)
        a = report.analyse([coll(0, 1, 1000, 2000, lclk.BOUND_UNKNOWN), coll(1, 1, 2300, 2400, 100)])
        self.assertEqual(a["collectives"]["causality_violations"], 0)

    def test_last_arrival_certain_only_beyond_every_ranks_bounds(self):
        # rank 2 starts last, 100 ns after the runner-up (rank 1, both
        # +-10: proven), but only 150 ns after rank 0, whose bound is 1000:
        # rank 0 may have started after rank 2. Not proven last.
        a = report.analyse([coll(0, 1, 1150, 5000, 1000), coll(1, 1, 1200, 5000, 10),
                            coll(2, 1, 1300, 5000, 10)])
        self.assertEqual([(r["last"], r["certain"]) for r in a["per_collective"]], [(2, False)])
        self.assertEqual(a["collectives"]["ambiguous"], 1)

    def test_mismatched_ops_are_counted_not_compared(self):
        a = report.analyse([coll(0, 1, 0, 10, 1, "allreduce"), coll(1, 1, 0, 10, 1, "barrier")])
        self.assertEqual((a["collectives"]["mismatched"], a["collectives"]["count"]), (1, 0))

    def test_step_sigma_and_collective_share(self):
        s = [step(0, 0, 0, 1000), step(1, 0, 0, 3000),
             coll(0, 1, 200, 400, 1), coll(0, 2, 300, 600, 1),   # union 400 of 1000
             coll(1, 1, 0, 3000, 1), coll(1, 2, 0, 3000, 1)]
        a = report.analyse(s)
        self.assertEqual(a["steps"]["count"], 1)
        self.assertAlmostEqual(a["steps"]["sigma_ns"]["mean"], 1000.0)
        self.assertAlmostEqual(a["steps"]["collective_share"][0], 0.4)
        self.assertAlmostEqual(a["steps"]["collective_share"][1], 1.0)

    def test_union_inside(self):
        self.assertEqual(report.union_inside([(0, 10), (5, 20), (30, 40)], 0, 35), 25)
        self.assertEqual(report.union_inside([], 0, 35), 0)

    def test_cli_on_a_written_trace(self):
        with tempfile.TemporaryDirectory() as d:
            for r in (0, 1):
                w = perfetto.Writer(os.path.join(d, "rank%d.pftrace" % r), host="h", pid=100 + r)
                w.slice("steps", "lclk.step", "step 0", 0, 1000,
                        [("rank", r), ("step", 0), ("bound_begin_ns", 5), ("bound_end_ns", 5)])
                w.slice("collectives", "lclk.collective", "allreduce", 100 + 500 * r, 900,
                        [("rank", r), ("seq", 1), ("group", "default"),
                         ("bound_begin_ns", 5), ("bound_end_ns", 5)])
                w.close()
            out = os.path.join(d, "out.json")
            import io
            import contextlib
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = report.main([os.path.join(d, "rank0.pftrace"),
                                  os.path.join(d, "rank1.pftrace"), "--json", out])
            self.assertEqual(rc, 0)
            text = buf.getvalue()
            self.assertIn("last to arrive: rank 1, certainly at 1 of 1 collectives", text)
            self.assertIn("causality violations: 0", text)
            self.assertIn("step time sigma across ranks", text)
            self.assertTrue(os.path.getsize(out) > 0)

    def test_cli_missing_file(self):
        import io
        import contextlib
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(report.main(["/nonexistent/rank0.pftrace"]), 1)
        self.assertIn("No such file", err.getvalue())


class Timeline(unittest.TestCase):
    def test_lanes_by_host_and_an_arrow_from_send_to_receive(self):
        with tempfile.TemporaryDirectory() as d:
            data = b""
            for host, pid in (("node0", 10), ("node1", 11)):
                path = os.path.join(d, host + ".pftrace")
                w = perfetto.Writer(path, host=host, pid=pid)
                if host == "node0":
                    w.slice("main", "tcp", "tcp_send", 1000, 2000,
                            [("src", "a:1"), ("dst", "b:2"), ("seq", 100), ("len", 50)])
                    w.slice("main", "syscall", "poll", 3000, 9000, [("outcome", "data")])
                else:
                    w.slice("main", "syscall", "recvfrom", 500, 4000, [("outcome", "data")])
                    # its last byte, 149, is the send's: an arrow; 150 is no one's
                    w.slice("main", "tcp", "tcp_recv", 3500, 4000,
                            [("src", "a:1"), ("dst", "b:2"), ("seq", 120), ("len", 30)])
                    w.slice("main", "tcp", "tcp_recv", 4100, 4200,
                            [("src", "a:1"), ("dst", "b:2"), ("seq", 150), ("len", 10)])
                w.close()
                with open(path, "rb") as f:
                    data += f.read()
            paths = [os.path.join(d, h + ".pftrace") for h in ("node0", "node1")]
            check_trace(self, paths)
            merged_path = os.path.join(d, "cluster.pftrace")
            merge(self, paths, merged_path)
            # the merge's arrow survives in Perfetto's order
            rep, = check_trace(self, [merged_path], "--merged", "--flows", "1", "--max-lost", "0")
            self.assertEqual(rep["processes"], 2)
            with open(merged_path, "rb") as f:
                merged = perfetto.read_slices(f.read())
        # the merged trace reads as its inputs did: interned names, processes
        # named "HOST: COMM (pid P)", the same arrow
        self.assertEqual(sorted((s.name, s.start_ns, s.end_ns) for s in merged),
                         sorted((s.name, s.start_ns, s.end_ns) for s in perfetto.read_slices(data)))
        self.assertEqual(sorted({s.root.split(":")[0] for s in merged}), ["node0", "node1"])
        self.assertEqual([(s.start_ns, r.start_ns) for s, r in timeline.arrows(merged)],
                         [(1000, 3500)])
        self.assertEqual(timeline.render(merged, 0, 10000).count("marker-end"), 1)
        slices = perfetto.read_slices(data)
        # the recorder's process track is the root: "HOST: COMM"
        self.assertEqual(sorted({s.root.split(":")[0] for s in slices}), ["node0", "node1"])
        pairs = timeline.arrows(slices)
        self.assertEqual([(s.start_ns, r.start_ns) for s, r in pairs], [(1000, 3500)])
        svg = timeline.render(slices, 0, 10000)
        self.assertEqual(svg.count("marker-end"), 1)
        # node0's poll (no message ended it) and the legend's; node1's wait,
        # ended by a send of no bound, is drawn ambiguous
        self.assertEqual(svg.count('fill="#4a7fc1"'), 2)
        self.assertEqual(svg.count('fill="#9db8e0"'), 2)   # and the legend's
        self.assertIn(">node0: ", svg)
        self.assertIn(">node1: ", svg)
        self.assertTrue(timeline.main_thread("mpi (pid 7) / mpi (tid 7)"))

    def test_each_waits_verdict_the_bounds_and_each_rounds_straggler_are_drawn(self):
        """Two waits of host a, each ended by a message of host b: one sent
        5 ms after the wait began against 2 us of bounds (certain), one 1 us
        after against 5 ms (ambiguous); bounds of 1 ms drawn as whiskers
        where wide enough; a round of the merge's report, its straggler's
        lanes outlined."""
        def sl(root, cat, name, start, end, bound, **args):
            s = perfetto.Slice(root + " / main (tid 1)", cat, name, start,
                               dict(args, earliest_ns=start - bound, latest_ns=end + bound),
                               root=root)
            s.end_ns = end
            return s
        a, b, ms = "a: p (pid 1)", "b: p (pid 2)", 1000000
        msg = dict(src="b:1", dst="a:2", len=10)
        slices = [
            sl(a, "syscall", "poll", 0, 10 * ms, 1000, outcome="data"),
            sl(b, "tcp", "tcp_send", 5 * ms, 5 * ms + 2000, 1000, seq=0, **msg),
            sl(a, "tcp", "tcp_recv", 10 * ms, 10 * ms + 100, 1000, seq=0, **msg),
            sl(a, "syscall", "poll", 20 * ms, 30 * ms, ms, outcome="data"),
            sl(b, "tcp", "tcp_send", 20 * ms + 1000, 20 * ms + 3000, 4 * ms, seq=10, **msg),
            sl(a, "tcp", "tcp_recv", 30 * ms, 30 * ms + 100, ms, seq=10, **msg),
        ]
        v = timeline.wait_verdicts(slices)
        self.assertEqual(sorted(x[0] for x in v.values()), ["ambiguous", "certain"])
        self.assertEqual(v[id(slices[0])][0], "certain")
        self.assertEqual(v[id(slices[3])][0], "ambiguous")
        rep = {"collectives": {"by_round": [
            dict(group="default", seq=7, op="allreduce", begin_ns=0, end_ns=11 * ms, waits=1,
                 straggler="b p (pid 2)", verdict="certain"),
            dict(group="default", seq=8, op="allreduce", begin_ns=19 * ms, end_ns=31 * ms,
                 waits=1, straggler="b p (pid 2)", verdict="ambiguous")]}}
        svg = timeline.render(slices, 0, 40 * ms, report=rep)
        self.assertEqual(svg.count('fill="#1f3f7a"'), 2)     # the certain wait, the legend
        self.assertEqual(svg.count('fill="#9db8e0"'), 2)     # the ambiguous one, the legend
        self.assertEqual(svg.count('stroke-dasharray="4,2"'), 1)    # its arrow
        self.assertIn("#7 b: certain", svg)
        self.assertIn("#8 b: ambiguous", svg)
        # b's lane outlined over each round, in its verdict's colour
        self.assertEqual(svg.count('fill="none" stroke="#b22"'), 1)
        self.assertEqual(svg.count('fill="none" stroke="#e8a33c"'), 1)
        # 1 ms and 4 ms bounds are wider than half a pixel at 40 ms: whiskers
        self.assertGreaterEqual(svg.count("<title>bound 1000.000 us</title>"), 4)
        self.assertIn("<title>bound 4000.000 us</title>", svg)
        self.assertNotIn("<title>bound 1.000 us</title>", svg)     # narrower: not drawn

    def test_a_merged_trace_of_threads(self):
        # lclkctl trace's writer (through tests/bench/cluster_gen: 3 hosts, pid
        # 4242 on each, its main thread and a network thread), merged: every
        # thread is read under its own host's process, as trace_processor's
        # thread table has it, and the timeline draws the merge's arrows.
        if not os.access(CLUSTER_GEN, os.X_OK):
            self.skipTest("%s is not built" % CLUSTER_GEN)
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([CLUSTER_GEN, d, "3", "4"], check=True, stdout=subprocess.DEVNULL)
            paths = sorted(os.path.join(d, f) for f in os.listdir(d))
            out = os.path.join(d, "cluster.pftrace")
            merge(self, paths, out)
            rep, = check_trace(self, [out], "--merged", "--max-lost", "0")
            with open(out, "rb") as f:
                slices = perfetto.read_slices(f.read())
        self.assertEqual((rep["processes"], rep["threads"]), (3, 6))
        # the process's name is its comm on the writing machine, if there ("?")
        self.assertEqual(sorted(s.root.split(":")[0] for s in slices
                                if s.root.endswith(" (pid 4242)")),
                         sorted(s.root.split(":")[0] for s in slices))
        self.assertEqual(len({s.root for s in slices}), 3)
        for s in slices:
            self.assertRegex(s.track, r"^node0[0-2]: .* \(pid 4242\) / .* \(tid \d+\)$")
            self.assertTrue(s.track.startswith(s.root + " / "))
        main = [s for s in slices if timeline.main_thread(s.track)]
        self.assertTrue(0 < len(main) < len(slices))
        self.assertEqual(len(timeline.arrows(slices)), rep["flows"])
        self.assertFalse(timeline.main_thread("mpi (pid 7) / mpi (tid 9)"))


if __name__ == "__main__":
    sys.exit(unittest.main())
