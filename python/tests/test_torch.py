# SPDX-License-Identifier: GPL-2.0
"""lclk.torch in one process (world size 1, gloo on loopback) with a fake
clock: sequence numbers per group, begin/end of sync, async, failed and DDP
collectives, the clock check's warnings, and two ranks' traces through
lclkctl trace merge. Skipped without torch."""
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
import warnings

try:
    import torch
    import torch.distributed as dist
    import lclk.torch as lt
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_ranks      # spawned ranks import it by name: the path is theirs too
except ImportError as e:       # torch is optional
    torch = None
    why = str(e)

from lclk import perfetto, report, STATUS_SYNCED, STATUS_UNSYNCED, BOUND_UNKNOWN


class Reading:
    def __init__(self, t, bound, status):
        self.time_ns, self.bound_ns, self.status = t, bound, status


class FakeClock:
    """Advances 1000 ns per reading, so begin < end always; from t0, the
    bound growing by growth per reading."""

    def __init__(self, bound=100, status=STATUS_SYNCED, t0=0, growth=0):
        self.t, self.bound, self.status, self.growth = t0, bound, status, growth

    def now(self):
        self.t += 1000
        self.bound += self.growth
        return Reading(self.t, self.bound, self.status)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LCLKCTL = os.environ.get("LCLKCTL", os.path.join(REPO, "build", "lclkctl"))


@unittest.skipIf(torch is None, "no torch" if torch is None else "")
class Recorder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
        cls.tmp = tempfile.TemporaryDirectory()
        dist.init_process_group("gloo", init_method="file://" + os.path.join(cls.tmp.name, "store"),
                                rank=0, world_size=1)

    @classmethod
    def tearDownClass(cls):
        dist.destroy_process_group()
        cls.tmp.cleanup()

    def record(self, fn, clock=None, **kw):
        path = os.path.join(self.tmp.name, "t.pftrace")
        rec = lt.Recorder(path, clock or FakeClock(), check_every=0, **kw)
        try:
            fn(rec)
        finally:
            rec.close()
        with open(path, "rb") as f:
            return perfetto.read_slices(f.read())

    def test_wrapped_collectives_numbered_per_group(self):
        orig = dist.all_reduce

        def run(rec):
            rec.install()
            self.assertIsNot(dist.all_reduce, orig)
            t = torch.ones(4)
            dist.all_reduce(t)
            dist.broadcast(t, 0)
            dist.all_gather([torch.zeros(4)], t)
            dist.barrier()
            sub = dist.new_group([0])
            dist.all_reduce(t, group=sub)
            w = dist.all_reduce(t, async_op=True)
            w.wait()
            # A collective that fails: one input per rank is needed (torch
            # 2.x's gloo has reduce_scatter; 1.13's refuses it outright).
            with self.assertRaises(RuntimeError):
                dist.reduce_scatter(torch.zeros(4), [torch.ones(4), torch.ones(4)])
            torch.futures.wait_all([])                # let callbacks run
        s = self.record(run)
        self.assertIs(dist.all_reduce, orig)          # close() uninstalled
        # torch's numbers (gloo has them), from where torch's counter stood
        first = {"default": s[0].args["seq"] - 1, s[4].args["group"]: s[4].args["seq"] - 1}
        self.assertEqual({x.args["seq_by"] for x in s}, {"process_group"})
        got = [(x.name, x.args["group"], x.args["seq"] - first[x.args["group"]]) for x in s]
        self.assertEqual(got[:4], [("allreduce", "default", 1), ("broadcast", "default", 2),
                                   ("allgather", "default", 3), ("barrier", "default", 4)])
        self.assertEqual(got[4][0::2], ("allreduce", 1))
        self.assertNotEqual(got[4][1], "default")
        self.assertEqual(got[5], ("allreduce", "default", 5))
        self.assertEqual(got[6], ("reduce_scatter", "default", 6))
        self.assertIn("error", s[6].args)
        self.assertEqual(s[5].args["async"], 1)
        self.assertEqual(s[1].args["root"], 0)
        for x in s:
            self.assertLess(x.start_ns, x.end_ns)
            self.assertEqual((x.args["rank"], x.args["bound_begin_ns"], x.args["bound_end_ns"]),
                             (0, 100, 100))

    def test_ddp_steps_and_allreduces(self):
        pg = dist.distributed_c10d._get_default_group()
        after = []

        def run(rec):
            model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
            rec.register_ddp(model)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for _ in range(3):
                with rec.step():
                    opt.zero_grad()
                    model(torch.ones(8, 4)).sum().backward()
                    after.append(pg._get_sequence_number_for_group())
                    opt.step()
        s = self.record(run)
        steps = [x for x in s if x.category == "lclk.step"]
        colls = [x for x in s if x.category == "lclk.collective"]
        self.assertEqual([x.args["step"] for x in steps], [0, 1, 2])
        # torch's numbers: the bucket allreduce is the last collective of each
        # backward, and between the first two steps DDP's rebuild of its
        # buckets broadcasts twice, unrecorded, but counted.
        self.assertEqual([x.args["seq"] for x in colls], after)
        self.assertEqual([x.args["seq"] - after[0] for x in colls], [0, 3, 4])
        self.assertEqual([x.args["step"] for x in colls], [0, 1, 2])
        for c, st in zip(colls, steps):
            self.assertTrue(st.start_ns < c.start_ns < c.end_ns < st.end_ns)
        a = report.analyse(s)
        self.assertEqual((a["steps"]["count"], a["collectives"]["count"]), (3, 3))
        self.assertEqual(a["collectives"]["causality_violations"], 0)

    def test_check_warns_about_bound_and_status(self):
        for clock, needle in ((FakeClock(bound=6_000_000), "rank 0 at step 2: bound 6.000 ms exceeds 5.000 ms"),
                              (FakeClock(bound=BOUND_UNKNOWN, status=STATUS_UNSYNCED),
                               "rank 0 at step 2: clock unsynced (bound unknown)")):
            def run(rec):
                rec.check_every = 2
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always")
                    for _ in range(3):
                        with rec.step():
                            pass
                msgs = [str(x.message) for x in w if issubclass(x.category, lt.ClockWarning)]
                self.assertEqual(msgs, ["lclk: " + needle])
            s = self.record(run, clock)
            self.assertEqual(len([x for x in s if x.category == "lclk.check"]), 1)

    def test_rank_traces_merge_onto_one_timeline(self):
        """Two ranks' traces (two recorders, two hosts, clocks 300 ns apart with
        different, growing bounds) through lclkctl trace merge: every step and
        collective slice is on the merged timeline at its own logical times,
        with its rank, group and sequence number, and its window from the
        bounds its rank recorded: earliest = begin - bound at begin,
        latest = end + bound at end."""
        if not os.access(LCLKCTL, os.X_OK):
            self.skipTest("no %s: make tools first" % LCLKCTL)
        d = self.tmp.name
        paths, clocks = [], [FakeClock(100, t0=10**9, growth=7), FakeClock(5000, t0=10**9 + 300, growth=3)]
        for rank, clock in enumerate(clocks):
            paths.append(os.path.join(d, "rank%d.pftrace" % rank))
            # Two "ranks" in one process share torch's counters: the recorder's own.
            rec = lt.Recorder(paths[-1], clock, rank=rank, check_every=0, host="node%d" % rank,
                              sequence="recorder")
            try:
                rec.install()
                model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
                rec.register_ddp(model)
                for _ in range(3):
                    with rec.step():
                        model(torch.ones(8, 4)).sum().backward()    # DDP's allreduce
                        dist.barrier()
                t = torch.ones(2)
                dist.broadcast(t, 0)                                # outside a step
            finally:
                rec.close()
        ranks = []
        for path in paths:
            with open(path, "rb") as f:
                ranks.append(perfetto.read_slices(f.read()))
        self.assertEqual([len(r) for r in ranks], [10, 10])         # 3 steps, 7 collectives

        out = os.path.join(d, "merged.pftrace")
        p = subprocess.run([LCLKCTL, "trace", "merge", *paths, "-o", out, "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        j = json.loads(p.stdout)
        self.assertEqual([(h["name"], h["events"], h["logical"], h["max_bound_ns"]) for h in j["hosts"]],
                         [("rank0", 10, True, clocks[0].bound), ("rank1", 10, True, clocks[1].bound)])
        self.assertEqual(j["violations"], 0)
        with open(out, "rb") as f:
            merged = perfetto.read_slices(f.read())

        def key(x):
            return (x.args["rank"], x.category, x.name, x.start_ns, x.end_ns)
        # The same slices, at the same logical times (one timeline: no shift),
        # in the order they ended across both ranks.
        self.assertEqual(sorted(map(key, merged)), sorted(key(x) for r in ranks for x in r))
        ends = [x.end_ns for x in merged]
        self.assertEqual(ends, sorted(ends))
        self.assertEqual({x.args["rank"] for x in merged[:4]}, {0, 1})   # interleaved
        for x in merged:
            want = dict(ranks[x.args["rank"]][[key(y) for y in ranks[x.args["rank"]]].index(key(x))].args)
            self.assertEqual({k: v for k, v in x.args.items() if k not in ("earliest_ns", "latest_ns")},
                             want, x)
            self.assertNotEqual(x.args["bound_begin_ns"], x.args["bound_end_ns"])
            self.assertEqual((x.args["earliest_ns"], x.args["latest_ns"]),
                             (x.start_ns - x.args["bound_begin_ns"], x.end_ns + x.args["bound_end_ns"]), x)
        for rank in (0, 1):
            mine = [x for x in merged if x.args["rank"] == rank]
            colls = [x for x in mine if x.category == "lclk.collective"]
            self.assertEqual([(x.name, x.args["group"], x.args["seq"]) for x in colls],
                             [("allreduce", "default", 1), ("barrier", "default", 2),
                              ("allreduce", "default", 3), ("barrier", "default", 4),
                              ("allreduce", "default", 5), ("barrier", "default", 6),
                              ("broadcast", "default", 7)])
            self.assertEqual([x.args["step"] for x in mine if x.category == "lclk.step"], [0, 1, 2])
            self.assertEqual({x.track for x in colls}, {"collectives"})
        # lclk.report reads the merged trace as it reads the ranks' own.
        a, b = report.analyse(merged), report.analyse([x for r in ranks for x in r])
        self.assertEqual(a["per_collective"], b["per_collective"])
        self.assertEqual((a["collectives"]["count"], a["steps"]["count"]), (7, 3))
        self.assertEqual(a["collectives"]["causality_violations"], 0)

    def test_sequence_numbers_are_the_process_groups(self):
        """A recorded collective's seq is its process group's own sequence
        number (ProcessGroup._get_sequence_number_for_group), so it counts
        what torch issues unrecorded too (DDP's broadcasts at construction):
        the same number on every rank even where ranks record differently."""
        pg = dist.distributed_c10d._get_default_group()
        after = []

        def run(rec):
            rec.install()
            t = torch.ones(2)
            dist.all_reduce(t)
            after.append(pg._get_sequence_number_for_group())
            torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))   # broadcasts
            self.assertGreater(pg._get_sequence_number_for_group(), after[0])
            dist.barrier()
            after.append(pg._get_sequence_number_for_group())
        s = self.record(run)
        self.assertEqual([(x.name, x.args["seq"], x.args["seq_by"]) for x in s],
                         [("allreduce", after[0], "process_group"),
                          ("barrier", after[1], "process_group")])

    def test_sequence_numbers_of_groups_without_them(self):
        """A group whose backend has no sequence numbers (the stand-in
        backend, a Python ProcessGroup) is numbered by the recorder: 1, 2, ..."""
        torch_ranks.register_refuse_cpu()
        g = dist.new_group([0], backend=torch_ranks.REFUSE_CPU)
        with self.assertRaises(RuntimeError):
            g._get_sequence_number_for_group()

        def run(rec):
            rec.install()
            dist.barrier(group=g)
            dist.barrier(group=g)
        s = self.record(run)
        self.assertEqual([(x.args["seq"], x.args["seq_by"]) for x in s],
                         [(1, "recorder"), (2, "recorder")])

    def test_close_closes_the_clock_it_opened_only(self):
        """Recorder() without a clock opens lclk.Clock() (here a stand-in
        with its close(): no device on the host) and close() closes it; a
        clock passed in is the caller's and stays open."""
        class Owned(FakeClock):
            made = []

            def __init__(self):
                super().__init__()
                self.closed = False
                Owned.made.append(self)

            def close(self):
                self.closed = True
        path = os.path.join(self.tmp.name, "c.pftrace")
        with mock.patch.object(lt, "Clock", Owned):
            rec = lt.Recorder(path, check_every=0)
            self.assertEqual(len(Owned.made), 1)
            self.assertIs(rec.clock, Owned.made[0])
            rec.close()
            self.assertTrue(Owned.made[0].closed)
            rec.close()                                  # twice: harmless
            mine = Owned()
            with lt.Recorder(path, mine, check_every=0) as rec:
                with rec.step():
                    pass
            self.assertFalse(mine.closed)

    def test_step_ends_its_range_on_an_exception(self):
        """A step whose body raises is still a slice (marked with the error),
        the exception goes through, no clock check is run for it (a
        collective the other ranks may never join), and the next step works."""
        def run(rec):
            rec.check_every = 1
            with mock.patch.object(rec, "check") as check:
                with self.assertRaises(ValueError):
                    with rec.step() as n:
                        self.assertEqual(n, 0)
                        raise ValueError("bad batch")
                check.assert_not_called()
                with rec.step() as n:
                    self.assertEqual(n, 1)
                check.assert_called_once_with()
        s = self.record(run)
        steps = [x for x in s if x.category == lt.STEP_CATEGORY]
        self.assertEqual([(x.name, x.args["step"]) for x in steps], [("step 0", 0), ("step 1", 1)])
        self.assertEqual(steps[0].args["error"], "ValueError: bad batch")
        self.assertNotIn("error", steps[1].args)
        self.assertLess(steps[0].start_ns, steps[0].end_ns)
        self.assertLessEqual(steps[0].end_ns, steps[1].start_ns)

    def test_check_quiet_within_threshold(self):
        def run(rec):
            with warnings.catch_warnings():
                warnings.simplefilter("error", lt.ClockWarning)
                ranks = rec.check()
            self.assertEqual(ranks, [lt.RankClock(0, STATUS_SYNCED, 4_000_000)])
        self.record(run, FakeClock(bound=4_000_000))


@unittest.skipIf(torch is None, "no torch" if torch is None else "")
class NoProcessGroup(unittest.TestCase):
    def test_steps_without_a_process_group(self):
        """Recorder(rank=...) records steps in a process with no process
        group (check_every=0: no collective), as before the clock check
        chose its group."""
        code = ("import sys; sys.path.insert(0, %r); import torch_ranks, lclk.torch as lt\n"
                "r = lt.Recorder(sys.argv[1], torch_ranks.FakeClock(), rank=3, check_every=0)\n"
                "with r.step(): pass\n"
                "r.close()\n") % os.path.dirname(os.path.abspath(__file__))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.pftrace")
            p = subprocess.run([sys.executable, "-c", code, path], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            self.assertEqual(p.returncode, 0, p.stdout)
            with open(path, "rb") as f:
                s = perfetto.read_slices(f.read())
        self.assertEqual([(x.name, x.args["rank"]) for x in s], [("step 0", 3)])


@unittest.skipIf(torch is None, "no torch" if torch is None else "")
class MultiRank(unittest.TestCase):
    """Jobs of several ranks (spawned processes, gloo on loopback)."""

    def test_check_over_backend_that_refuses_cpu_tensors(self):
        """The default group's backend refuses CPU tensors, as NCCL does (the
        stand-in torch_ranks.RefuseCPU): the clock check at step 2 and 4 and
        one by hand still gather every rank's clock, and the recorder goes on."""
        with tempfile.TemporaryDirectory() as d:
            got = torch_ranks.run(2, torch_ranks.steps_with_checks, d, 5, 2,
                                  backend=torch_ranks.REFUSE_CPU)
        for rank, g in enumerate(got):
            self.assertEqual(g["steps"], 5)
            self.assertEqual(g["last"], [(0, STATUS_SYNCED, 100), (1, STATUS_SYNCED, 101)])
            self.assertEqual(g["checks"], [(2, 100 + rank), (4, 100 + rank), (5, 100 + rank)])

    def test_stand_in_refuses_cpu_tensors(self):
        """The stand-in does refuse them (else the test above proves nothing)."""
        got = torch_ranks.run(2, torch_ranks.gather_cpu, backend=torch_ranks.REFUSE_CPU)
        self.assertEqual(got, [torch_ranks.NCCL_CPU_ERROR] * 2)

    def test_ranks_that_record_differently_agree_on_numbers(self):
        """torch's sequence numbers name the same collective on every rank
        even when one rank records calls another does not; the recorder's
        own count (sequence="recorder") does not, as its docstring says."""
        got = torch_ranks.run(2, torch_ranks.record_differently, "torch")
        self.assertEqual(got[0], got[1])
        self.assertEqual([op for op, _ in got[0]], ["broadcast", "barrier"])
        own = torch_ranks.run(2, torch_ranks.record_differently, "recorder")
        self.assertEqual(own, [[("broadcast", 3), ("barrier", 4)], [("broadcast", 1), ("barrier", 2)]])

    def test_ddp_hook_on_subgroup_averages_over_the_subgroup(self):
        """4 ranks, DDP on new_group([0, 1]) or new_group([2, 3]) (data
        parallel inside tensor parallel): with the lclk comm hook
        (register_ddp), every gradient and weight is exactly DDP's own."""
        groups = [[0, 1], [2, 3]]
        ref = torch_ranks.run(4, torch_ranks.ddp_grads, groups, False, 3)
        hooked = torch_ranks.run(4, torch_ranks.ddp_grads, groups, True, 3)
        # The sub-groups differ from each other (not a world average).
        self.assertNotEqual(ref[0]["grads"], ref[2]["grads"])
        self.assertEqual(ref[0]["grads"], ref[1]["grads"])
        for rank in range(4):
            self.assertEqual(hooked[rank]["grads"], ref[rank]["grads"], "rank %d" % rank)
            self.assertEqual(hooked[rank]["weights"], ref[rank]["weights"], "rank %d" % rank)
        # Recorded as allreduces of the sub-group, the same numbers on its ranks.
        rec = [h["recorded"] for h in hooked]
        self.assertEqual((rec[0], rec[2]), (rec[1], rec[3]))
        self.assertEqual(len(rec[0]), 3)
        self.assertEqual({(op, by) for op, _, _, by in rec[0] + rec[2]},
                         {("allreduce", "process_group")})
        names = {g for _, g, _, _ in rec[0]}, {g for _, g, _, _ in rec[2]}
        self.assertEqual([len(n) for n in names], [1, 1])
        self.assertNotEqual(names[0], names[1])
        self.assertNotIn("default", names[0] | names[1])


if __name__ == "__main__":
    unittest.main()
