# SPDX-License-Identifier: GPL-2.0
"""Multi-rank torch.distributed jobs for test_torch.py: N processes started
with multiprocessing's "spawn" on this host, gloo over loopback, a file
store in a temporary directory. Each rank runs one of the functions below
and puts its result (plain Python values) on a queue; run() returns them
by rank, or raises with every failed rank's traceback.

The stand-in for NCCL: RefuseCPU, a process group (a Python subclass of
torch's ProcessGroup, registered with Backend.register_backend under the
name "refusecpu") that passes its collectives to a ProcessGroupGloo but
raises on CPU tensors, with the message ProcessGroupNCCL gives them."""
import os
import queue
import tempfile
import traceback
from typing import Any, Callable, Dict, List

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

REFUSE_CPU = "refusecpu"
NCCL_CPU_ERROR = "Tensors must be CUDA and dense"


class RefuseCPU(dist.ProcessGroup):
    """A process group that refuses CPU tensors, as NCCL does."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner.rank(), inner.size())
        self.inner = inner

    @staticmethod
    def _refuse(tensors: List[torch.Tensor]) -> None:
        for t in tensors:
            if t.device.type == "cpu":
                raise RuntimeError(NCCL_CPU_ERROR)

    def allgather(self, outs: Any, ins: Any, opts: Any = None) -> Any:
        self._refuse(list(ins) + [t for o in outs for t in o])
        return self.inner.allgather(outs, ins)

    def allreduce(self, tensors: Any, opts: Any = None) -> Any:
        self._refuse(tensors)
        return self.inner.allreduce(tensors)

    def broadcast(self, tensors: Any, opts: Any = None) -> Any:
        self._refuse(tensors)
        return self.inner.broadcast(tensors)

    def barrier(self, opts: Any = None) -> Any:
        return self.inner.barrier()

    def getBackendName(self) -> str:  # noqa: N802 - torch's name
        return REFUSE_CPU


def register_refuse_cpu() -> None:
    if not hasattr(dist.Backend, REFUSE_CPU.upper()):
        dist.Backend.register_backend(
            REFUSE_CPU, lambda store, rank, size, timeout:
            RefuseCPU(dist.ProcessGroupGloo(store, rank, size, timeout)))


def _main(rank: int, world: int, store: str, backend: str,
          fn: Callable[..., Any], args: tuple, q: Any) -> None:
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    torch.set_num_threads(1)
    try:
        if backend == REFUSE_CPU:
            register_refuse_cpu()
        dist.init_process_group(backend, init_method="file://" + store,
                                rank=rank, world_size=world)
        try:
            q.put((rank, True, fn(rank, world, *args)))
        finally:
            dist.destroy_process_group()
    except BaseException:
        q.put((rank, False, traceback.format_exc()))


def run(world: int, fn: Callable[..., Any], *args: Any, backend: str = "gloo",
        timeout: float = 120) -> List[Any]:
    """fn(rank, world, *args) on world spawned ranks; their results by rank."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    with tempfile.TemporaryDirectory() as d:
        procs = [ctx.Process(target=_main, args=(r, world, os.path.join(d, "store"),
                                                 backend, fn, args, q), daemon=True)
                 for r in range(world)]
        for p in procs:
            p.start()
        got: Dict[int, Any] = {}
        errors: List[str] = []
        try:
            for _ in range(world):
                rank, ok, value = q.get(timeout=timeout)
                if ok:
                    got[rank] = value
                else:
                    errors.append("rank %d:\n%s" % (rank, value))
                    break           # the others may wait for it forever
        except queue.Empty:
            errors.append("ranks %s did not finish in %d s" % (
                sorted(set(range(world)) - set(got)), timeout))
        finally:
            for p in procs:
                p.join(timeout=0 if errors else 30)
                if p.is_alive():
                    p.kill()
                    p.join()
    if errors:
        raise AssertionError("\n".join(errors))
    return [got[r] for r in range(world)]


# ---- what the ranks run ---------------------------------------------------

class FakeClock:
    """1000 ns per reading; a fixed bound and status."""

    def __init__(self, bound: int = 100, status: int = 1) -> None:
        self.t, self.bound, self.status = 0, bound, status

    def now(self) -> Any:
        self.t += 1000
        return _Reading(self.t, self.bound, self.status)


class _Reading:
    def __init__(self, t: int, bound: int, status: int) -> None:
        self.time_ns, self.bound_ns, self.status = t, bound, status


def steps_with_checks(rank: int, world: int, outdir: str, steps: int,
                      check_every: int) -> Any:
    """steps steps with the clock check every check_every (on the
    recorder's default group: the world); rank r's bound is 100 + r.
    Returns the steps made, what a check by hand gathers at the end, and
    the (step, bound) of each clock check in the rank's trace."""
    import lclk.torch as lt
    from lclk import perfetto
    path = os.path.join(outdir, "rank%d.pftrace" % rank)
    rec = lt.Recorder(path, FakeClock(bound=100 + rank), check_every=check_every)
    for _ in range(steps):
        with rec.step():
            pass
    last = [tuple(r) for r in rec.check()]
    rec.close()
    with open(path, "rb") as f:
        s = perfetto.read_slices(f.read())
    return {"steps": rec.steps, "last": last,
            "checks": [(x.args["step"], x.args["bound_ns"]) for x in s
                       if x.category == lt.CHECK_CATEGORY]}


def ddp_grads(rank: int, world: int, groups: List[List[int]], hook: bool,
              steps: int) -> Any:
    """DDP on the sub-group of groups that holds this rank (every rank makes
    every group, in order, as new_group() requires); the same initial
    weights on every rank, a different batch on each. With hook, the lclk
    comm hook through Recorder.register_ddp. Returns the parameters'
    gradients after each step's backward, and the weights at the end."""
    import lclk.torch as lt
    made = [dist.new_group(g) for g in groups]
    mine = next(pg for g, pg in zip(groups, made) if rank in g)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    model = torch.nn.parallel.DistributedDataParallel(net, process_group=mine)
    rec = None
    path = os.path.join(tempfile.mkdtemp(), "t.pftrace")
    if hook:
        rec = lt.Recorder(path, FakeClock(), check_every=0)
        rec.register_ddp(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1000 + rank)
    grads = []
    for _ in range(steps):
        opt.zero_grad()
        x = torch.randn(5, 8, generator=gen)
        model(x).pow(2).sum().backward()
        grads.append([p.grad.tolist() for p in model.parameters()])
        opt.step()
    recorded = None
    if rec is not None:
        rec.close()
        from lclk import perfetto
        with open(path, "rb") as f:
            recorded = [(x.name, x.args["group"], x.args["seq"], x.args["seq_by"])
                        for x in perfetto.read_slices(f.read())]
    return {"grads": grads, "weights": [p.tolist() for p in model.parameters()],
            "recorded": recorded}


def gather_cpu(rank: int, world: int) -> Any:
    """all_gather of CPU tensors over the default group: the error's text,
    or None if it worked."""
    try:
        dist.all_gather([torch.zeros(1) for _ in range(world)], torch.ones(1))
    except RuntimeError as e:
        return str(e)
    return None


def record_differently(rank: int, world: int, sequence: str) -> Any:
    """Rank 0 records from the start, the others only after two
    collectives; then all make a broadcast and a barrier. Returns the
    (op, seq) each rank recorded last (those two)."""
    import lclk.torch as lt
    from lclk import perfetto
    d = tempfile.mkdtemp()
    path = os.path.join(d, "t.pftrace")
    rec = lt.Recorder(path, FakeClock(), check_every=0, sequence=sequence)
    if rank == 0:
        rec.install()
    t = torch.ones(2)
    dist.all_reduce(t)
    dist.barrier()
    rec.install()
    dist.broadcast(t, 0)
    dist.barrier()
    rec.close()
    with open(path, "rb") as f:
        s = perfetto.read_slices(f.read())
    return [(x.name, x.args["seq"]) for x in s][-2:]
