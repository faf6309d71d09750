# SPDX-License-Identifier: GPL-2.0
"""Mark training steps and torch.distributed collectives in logical time.

    import torch.distributed as dist
    import lclk.torch

    dist.init_process_group("gloo")
    rec = lclk.torch.Recorder("rank%d.pftrace" % dist.get_rank())
    rec.install()                     # dist.all_reduce, broadcast, ... recorded
    model = DDP(net)
    rec.register_ddp(model)           # DDP's gradient allreduces recorded
    for batch in data:
        with rec.step():
            loss = model(batch).sum(); loss.backward(); opt.step()
    rec.close()

Each rank writes a Perfetto trace (lclk.perfetto): a slice per step and per
collective, from its start to its completion, with the logical time and
bound at both ends. Collectives carry a per-process-group sequence number
("seq"), and where it comes from ("seq_by"):
- "process_group": the group's own number, as torch counts it (gloo and
  NCCL number every collective issued on a group, from a start that rank 0
  draws and the others read from the store when the group is made): the
  number of the recorded collective is the group's number just before it
  is issued, plus one. It counts what is not recorded too (DDP's broadcasts
  at construction and when it rebuilds its buckets), so equal numbers name
  the same collective on every rank even where ranks record different calls.
- "recorder": where the group's backend has no numbers (MPI, a backend
  written in Python) or with Recorder(sequence="recorder"), the recorder's
  own count per group, 1, 2, ..., of the collectives it records; ranks
  issue the collectives of a group in the same order (torch.distributed
  requires it), so equal numbers name the same collective on every rank as
  long as every rank records the same calls (install() and register_ddp()
  on all of them, or on none).

What is recorded: the torch.distributed functions install() wraps (calls
made through the module attribute, dist.all_reduce(...), after install();
a name imported before with "from torch.distributed import all_reduce" is
not replaced), and the allreduces of a DDP model given to register_ddp(),
over the model's own process group (model.process_group: a DDP model on a
sub-group, data parallel inside tensor parallel, is averaged over that
sub-group, as DDP itself does).
DDP's own broadcasts (at construction, of buffers) are made in C++ and are
not recorded. Completion of an async collective is the time its future's
callback runs, which may be later than the wire's completion by the time
the callback waits for the GIL: an upper bound, never too early.

Every check_every steps each rank reads its clock, the ranks gather status
and bound over the process group, and rank 0 names every rank whose clock
is not synced or whose bound exceeds bound_threshold_ns (5 ms by default),
as a ClockWarning (warnings) and on the "lclk" logger. Fixing the clock is
lclkctl daemon's job; the recorder only tells. The check gathers CPU
tensors, which NCCL refuses: where the group's backend is not gloo or MPI,
Recorder() makes a gloo group over the same ranks for it (check_group),
with new_group(), a collective of the whole world: with such a backend
every rank constructs its Recorder at the same point, members of the
recorder's group or not (or pass check_group=).

A step whose body raises is still recorded (its slice has an "error"
argument) and the exception goes on; no clock check follows it. close()
closes the lclk.Clock the recorder opened, not one passed in.

torch's interfaces used (checked on Debian 12's torch 1.13 with gloo; not
yet run on torch 2.x):
- DistributedDataParallel.register_comm_hook(state, hook), the supported
  way to see DDP's gradient allreduces: the hook does what DDP's default
  does (divide the bucket by the group's size, allreduce it over
  model.process_group) and records it; GradBucket.buffer().
- Work.get_future(), Future.then() and add_done_callback(): completion.
- ProcessGroup._get_sequence_number_for_group(): the group's numbers. It
  is private (an underscore), the only way torch gives them to Python;
  a backend without numbers raises RuntimeError, and the recorder counts.
- new_group(ranks, backend="gloo"), get_process_group_ranks(),
  get_backend(): the clock check's group. distributed_c10d._pg_names and
  _get_default_group() (private): group names and the default group.
What is monkeypatched, and why: install() replaces the functions of
COLLECTIVES on the torch.distributed module by recording wrappers (and
uninstall() puts them back). torch has no supported hook that tells Python
when each collective called from Python starts and completes, on every
backend: torch.profiler's record_function ranges exist only while a
profiler runs and are stamped on the profiler's clock, and the completion
hook of torch 2.x (_register_on_completion_hook) is NCCL's only. DDP is not
patched: its comm hook is the supported interface.
"""
import contextlib
import functools
import inspect
import logging
import threading
import warnings
from typing import (Any, Callable, Dict, Iterator, List, NamedTuple, Optional,
                    Protocol, Tuple)

import torch
import torch.distributed as dist

from lclk import BOUND_UNKNOWN, STATUS_SYNCED, Clock, status_name
from lclk.perfetto import Writer

__all__ = ["Recorder", "ClockWarning", "RankClock", "COLLECTIVES",
           "HookState", "allreduce_hook", "cpu_group"]

log = logging.getLogger("lclk")

# torch.distributed functions install() wraps, and the op name recorded.
COLLECTIVES: Dict[str, str] = {
    "all_reduce": "allreduce",
    "broadcast": "broadcast",
    "all_gather": "allgather",
    "all_gather_into_tensor": "allgather",
    "reduce_scatter": "reduce_scatter",
    "reduce_scatter_tensor": "reduce_scatter",
    "barrier": "barrier",
}

STEP_CATEGORY = "lclk.step"
COLLECTIVE_CATEGORY = "lclk.collective"
CHECK_CATEGORY = "lclk.check"


class Reading(Protocol):
    """What a clock's now() returns: lclk.Now's read-only fields."""
    @property
    def time_ns(self) -> int: ...
    @property
    def bound_ns(self) -> int: ...
    @property
    def status(self) -> int: ...


class ClockLike(Protocol):
    def now(self) -> Reading: ...


class ClockWarning(UserWarning):
    """A rank's clock is unsynced or its bound exceeds the threshold."""


class RankClock(NamedTuple):
    """One rank's clock as gathered by Recorder.check()."""
    rank: int
    status: int
    bound_ns: int


def group_name(group: Any) -> str:
    """A process group's name, the same on every rank: "default" for the
    world, else the name torch gave it (new_group() numbers groups in the
    order the ranks create them, which they must do alike)."""
    if group is None or group is dist.GroupMember.WORLD:
        return "default"
    names = getattr(dist.distributed_c10d, "_pg_names", {})
    name = names.get(group)
    return str(name) if name else "pg%x" % id(group)


def cpu_group(group: Any) -> Any:
    """A group over the same ranks as group whose backend takes CPU
    tensors: group itself if its backend is gloo or MPI (or, on torch 2.x,
    a device map that has gloo for the CPU), else a new gloo group. The
    latter is new_group(): a collective of the whole world, made by every
    rank alike, members of group or not."""
    backend = str(dist.get_backend(group)).lower()
    if "gloo" in backend or "mpi" in backend:
        return group
    if group is None or group is dist.GroupMember.WORLD:
        ranks = None
    else:
        ranks = dist.get_process_group_ranks(group)
    # torch 1.13 leaves new_group() unannotated
    return dist.new_group(ranks, backend="gloo")  # type: ignore[no-untyped-call]


class HookState(NamedTuple):
    """allreduce_hook's state: the recorder, and the process group the DDP
    model averages over (its process_group)."""
    recorder: "Recorder"
    group: Any


def torch_sequence_number(group: Any) -> Optional[int]:
    """The process group's own sequence number (torch counts every
    collective issued on it, recorded or not, from a start all ranks agree
    on), or None where its backend has none (a Python ProcessGroup, MPI)."""
    if group is None:                   # unannotated in torch 1.13
        group = dist.distributed_c10d._get_default_group()  # type: ignore[no-untyped-call]
    pg = group
    get = getattr(pg, "_get_sequence_number_for_group", None)
    if get is None:
        return None
    try:
        return int(get())
    except RuntimeError:                # "does not yet support sequence numbers"
        return None


class _Pending:
    __slots__ = ("op", "group", "seq", "seq_by", "step", "root", "begin", "async_op")

    def __init__(self, op: str, group: str, seq: int, seq_by: str, step: int,
                 root: Optional[int], begin: Reading, async_op: bool) -> None:
        self.op = op
        self.group = group
        self.seq = seq
        self.seq_by = seq_by
        self.step = step
        self.root = root
        self.begin = begin
        self.async_op = async_op


class Recorder:
    """Records one rank's steps and collectives into a Perfetto trace."""

    def __init__(self, path: str, clock: Optional[ClockLike] = None, *,
                 rank: Optional[int] = None, group: Any = None,
                 check_every: int = 100, bound_threshold_ns: int = 5_000_000,
                 host: Optional[str] = None, check_group: Any = None,
                 sequence: str = "torch") -> None:
        if sequence not in ("torch", "recorder"):
            raise ValueError("lclk.torch: sequence is \"torch\" or \"recorder\", not %r" % (sequence,))
        self.sequence = sequence
        self._own_clock = clock is None
        self.clock: ClockLike = clock if clock is not None else Clock()
        self.group = group
        self.rank = rank if rank is not None else dist.get_rank()
        self.check_every = check_every
        self.bound_threshold_ns = bound_threshold_ns
        self.steps = 0
        self.collectives = 0
        self._seq: Dict[str, int] = {}
        self._no_torch_seq: set[str] = set()     # groups torch does not number
        self._lock = threading.Lock()
        self._originals: Dict[str, Callable[..., Any]] = {}
        self._step_begin: Optional[Reading] = None
        self._writer = Writer(path, host=host)
        self._all_gather: Callable[..., Any] = dist.all_gather   # the check's, never recorded
        # The check gathers CPU tensors: over a group whose backend takes
        # them (NCCL refuses them), made here, while every rank constructs.
        # Without a process group (steps only, rank given), none to choose.
        if check_group is None and dist.is_available() and dist.is_initialized():
            check_group = cpu_group(group)
        self.check_group = check_group if check_group is not None else group
        self._closed = False

    # ---- steps ------------------------------------------------------------

    def step_begin(self) -> None:
        self._step_begin = self.clock.now()

    def step_end(self, error: Optional[BaseException] = None) -> None:
        """Close the step step_begin() opened; every check_every steps, check
        the clocks of all ranks (a collective: every rank must get here).
        With error (the step failed): the slice says so, and no check is
        run, since the other ranks may never join that collective."""
        begin, end = self._step_begin, self.clock.now()
        if begin is None:
            raise RuntimeError("lclk.torch: step_end() without step_begin()")
        self._step_begin = None
        args: List[Tuple[str, Any]] = [
            ("rank", self.rank), ("step", self.steps),
            ("bound_begin_ns", begin.bound_ns), ("bound_end_ns", end.bound_ns),
            ("status", status_name(end.status))]
        if error is not None:
            args.append(("error", "%s: %s" % (type(error).__name__, error)))
        self._writer.slice("steps", STEP_CATEGORY, "step %d" % self.steps,
                           begin.time_ns, end.time_ns, args)
        self.steps += 1
        if error is None and self.check_every > 0 and self.steps % self.check_every == 0:
            self.check()

    @contextlib.contextmanager
    def step(self) -> Iterator[int]:
        """with rec.step(): one training step; yields its number. A body
        that raises still ends the step (step_end(error)), then the
        exception goes on."""
        self.step_begin()
        try:
            yield self.steps
        except BaseException as e:
            self.step_end(e)
            raise
        self.step_end()

    # ---- collectives ------------------------------------------------------

    def begin(self, op: str, group: Any = None, root: Optional[int] = None,
              async_op: bool = False) -> _Pending:
        """Start recording a collective, about to be issued: the number its
        process group will give it (the group's sequence number + 1), or
        where torch numbers none (or sequence="recorder"), the next of the
        recorder's own count for the group."""
        name = group_name(group)
        n = None
        if self.sequence == "torch" and name not in self._no_torch_seq:
            n = torch_sequence_number(group)
            if n is None:
                self._no_torch_seq.add(name)
        with self._lock:
            if n is not None:
                seq, by = n + 1, "process_group"
            else:
                seq, by = self._seq.get(name, 0) + 1, "recorder"
                self._seq[name] = seq
            self.collectives += 1
        return _Pending(op, name, seq, by, self.steps, root, self.clock.now(), async_op)

    def end(self, p: _Pending, error: Optional[BaseException] = None) -> None:
        """The collective p completed (or failed with error)."""
        end = self.clock.now()
        args: List[Tuple[str, Any]] = [
            ("rank", self.rank), ("group", p.group), ("seq", p.seq), ("seq_by", p.seq_by),
            ("step", p.step), ("bound_begin_ns", p.begin.bound_ns),
            ("bound_end_ns", end.bound_ns), ("status", status_name(end.status)),
            ("async", int(p.async_op))]
        if p.root is not None:
            args.append(("root", p.root))
        if error is not None:
            args.append(("error", "%s: %s" % (type(error).__name__, error)))
        self._writer.slice("collectives", COLLECTIVE_CATEGORY, p.op,
                           p.begin.time_ns, end.time_ns, args)

    def _wrap(self, op: str, orig: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(orig)

        @functools.wraps(orig)
        def collective(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError:
                return orig(*args, **kwargs)    # let torch report the misuse
            a = bound.arguments
            async_op = bool(a.get("async_op", False))
            p = self.begin(op, a.get("group"), a.get("src"), async_op)
            try:
                work = orig(*args, **kwargs)
            except BaseException as e:
                self.end(p, e)
                raise
            if async_op and work is not None:
                self._on_completion(work.get_future(), p)
            else:
                self.end(p)
            return work

        return collective

    def _on_completion(self, fut: "torch.futures.Future[Any]", p: _Pending) -> None:
        def done(f: "torch.futures.Future[Any]") -> None:
            err = None
            try:
                f.wait()
            except BaseException as e:   # noqa: B036 - recorded, not handled
                err = e
            self.end(p, err)

        fut.add_done_callback(done)

    def install(self) -> "Recorder":
        """Replace the torch.distributed collectives (COLLECTIVES) by
        recording wrappers; uninstall() (or close()) puts them back."""
        for fname, op in COLLECTIVES.items():
            orig = getattr(dist, fname, None)
            if orig is None or fname in self._originals:
                continue
            self._originals[fname] = orig
            setattr(dist, fname, self._wrap(op, orig))
        return self

    def uninstall(self) -> None:
        for fname, orig in self._originals.items():
            setattr(dist, fname, orig)
        self._originals.clear()

    def register_ddp(self, model: Any) -> None:
        """Average DDP's gradients with allreduce_hook over the model's own
        process group (model.process_group, which may be a sub-group of the
        recorder's): as DDP's default, plus a record of each bucket's
        allreduce."""
        group = getattr(model, "process_group", None)
        model.register_comm_hook(HookState(self, group), allreduce_hook)

    # ---- the clock check -------------------------------------------------

    def check(self) -> List[RankClock]:
        """Gather every rank's clock status and bound (a collective over the
        recorder's group, on CPU tensors: over check_group); rank 0 warns about each rank that is not synced
        or whose bound exceeds bound_threshold_ns. Returns what was gathered."""
        now = self.clock.now()
        mine = torch.tensor([self.rank, now.status, now.bound_ns], dtype=torch.int64)
        world = dist.get_world_size(self.check_group)
        got = [torch.zeros(3, dtype=torch.int64) for _ in range(world)]
        self._all_gather(got, mine, group=self.check_group)
        ranks = [RankClock(*(int(x) for x in t.tolist())) for t in got]
        self._writer.instant("clock", CHECK_CATEGORY, "clock check", now.time_ns, [
            ("rank", self.rank), ("step", self.steps), ("bound_ns", now.bound_ns),
            ("status", status_name(now.status))])
        if self.rank == 0:
            for r in ranks:
                msg = self._complaint(r)
                if msg:
                    log.warning("%s", msg)
                    warnings.warn(msg, ClockWarning, stacklevel=2)
        return ranks

    def _complaint(self, r: RankClock) -> Optional[str]:
        if r.status != STATUS_SYNCED:
            bound = "unknown" if r.bound_ns == BOUND_UNKNOWN else "%.3f ms" % (r.bound_ns / 1e6)
            return "lclk: rank %d at step %d: clock %s (bound %s)" % (
                r.rank, self.steps, status_name(r.status), bound)
        if r.bound_ns > self.bound_threshold_ns:
            return "lclk: rank %d at step %d: bound %.3f ms exceeds %.3f ms" % (
                r.rank, self.steps, r.bound_ns / 1e6, self.bound_threshold_ns / 1e6)
        return None

    # ---- end --------------------------------------------------------------

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        """Put the collectives back, close the trace and the clock if the
        recorder opened it (a clock passed in is the caller's to close)."""
        self.uninstall()
        self._writer.close()
        if self._own_clock and not self._closed:
            close = getattr(self.clock, "close", None)
            if close is not None:
                close()
        self._closed = True

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# DDP checks the hook's annotations: they must be these very objects.
# torch.distributed re-exports GradBucket without "as" or __all__, which
# mypy --strict (no implicit re-export) does not follow; the object is right.
def allreduce_hook(state: "Recorder | HookState",
                   bucket: dist.GradBucket,  # type: ignore[name-defined]
                   ) -> torch.futures.Future[torch.Tensor]:
    """DDP communication hook: the mean of the bucket over the state's
    group, as DDP's default, recorded as an allreduce of that group.
    rec.register_ddp(model), or
    model.register_comm_hook(HookState(rec, model.process_group), allreduce_hook);
    a Recorder as the state means its own group (rec.group), right only
    for a model on that group."""
    if isinstance(state, HookState):
        rec, group = state.recorder, state.group
    else:
        rec, group = state, state.group
    tensor = bucket.buffer()
    tensor.div_(dist.get_world_size(group))
    p = rec.begin("allreduce", group, async_op=True)
    all_reduce = rec._originals.get("all_reduce", dist.all_reduce)
    fut: "torch.futures.Future[List[torch.Tensor]]" = all_reduce(
        tensor, group=group, async_op=True).get_future()

    def done(f: "torch.futures.Future[List[torch.Tensor]]") -> torch.Tensor:
        try:
            value = f.value()[0]
        except BaseException as e:
            rec.end(p, e)
            raise
        rec.end(p)
        return value

    return fut.then(done)
