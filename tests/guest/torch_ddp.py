# SPDX-License-Identifier: GPL-2.0
"""The ranks of tests/guest/torch_ddp.sh: imports torch once (a minute under
TCG), then forks one process per rank; each enters its network namespace
(/run/netns/PREFIX<rank>; with --cgroup-prefix, the cgroup
/sys/fs/cgroup/CGPREFIX<rank> first), joins a gloo group over TCP and trains a small
model with DistributedDataParallel, recording steps and collectives with
lclk.torch into OUTDIR/rank<r>.pftrace (its output in OUTDIR/rank<r>.log).
With --go-dir DIR, each rank, once set up (the first barrier passed),
creates DIR/ready.<rank> and waits for DIR/go before its steps: a trace
started in between sees the steps, not the ranks joining the group.

    torch_ddp.py OUTDIR --ranks 4 --steps 200 --slow-rank 2 --slow-ms 40
"""
import time
T0 = time.monotonic()

import argparse  # noqa: E402 - after T0: the import of torch is timed
import ctypes
import datetime
import logging
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import lclk
import lclk.torch

CLONE_NEWNET = 0x40000000


def enter_netns(name):
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + name, os.O_RDONLY)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, "setns %s: %s" % (name, os.strerror(err)))
    os.close(fd)


def rank_main(a, rank):
    log = os.open(os.path.join(a.outdir, "rank%d.log" % rank), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    if a.cgroup_prefix:
        with open("/sys/fs/cgroup/%s%d/cgroup.procs" % (a.cgroup_prefix, rank), "w") as f:
            f.write(str(os.getpid()))
    enter_netns(a.netns_prefix + str(rank))
    torch.set_num_threads(1)
    logging.basicConfig(level=logging.INFO, format="rank %d: %%(message)s" % rank)
    os.environ["GLOO_SOCKET_IFNAME"] = a.ifname
    # torch 2.4+ makes its TCP store with libuv unless told otherwise, and
    # Debian's python3-torch (2.14 in sid) is built without it.
    os.environ.setdefault("USE_LIBUV", "0")
    dist.init_process_group("gloo", init_method="tcp://%s:%d" % (a.master, a.port),
                            rank=rank, world_size=a.ranks,
                            timeout=datetime.timedelta(seconds=a.timeout))
    clock = lclk.Clock(a.clock1 if rank == a.clock1_rank else "/dev/lclk0")
    rec = lclk.torch.Recorder(os.path.join(a.outdir, "rank%d.pftrace" % rank), clock,
                              check_every=a.check_every).install()
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
    model = DDP(net)
    rec.register_ddp(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    torch.manual_seed(100 + rank)
    x, y = torch.randn(32, 16), torch.randn(32, 1)
    dist.barrier()                                  # recorded: the first of "default"
    if a.go_dir:
        open(os.path.join(a.go_dir, "ready.%d" % rank), "w").close()
        while not os.path.exists(os.path.join(a.go_dir, "go")):
            time.sleep(0.001)
    start = time.monotonic()
    print("rank %d: set up in %.1f s" % (rank, start - T0), flush=True)
    for _ in range(a.steps):
        if rank == a.slow_rank:
            time.sleep(a.slow_ms / 1000)            # the straggler: late to every step
        with rec.step():
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
    dist.barrier()
    print("rank %d: %d steps in %.1f s, %d collectives, loss %.4f" % (
        rank, a.steps, time.monotonic() - start, rec.collectives, loss.item()), flush=True)
    rec.close()
    # No destroy_process_group(): after the barrier it hangs at random
    # (pytorch/pytorch#75097). Seen once here, beside another VM: rank 2's
    # gloo threads polled for 400 s after its last step, and the job hit its
    # time limit. The caller ends the process with os._exit, gloo's threads
    # with it.


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--slow-rank", type=int, default=2)
    ap.add_argument("--slow-ms", type=float, default=40)
    ap.add_argument("--check-every", type=int, default=50)
    ap.add_argument("--clock1", default="/dev/lclk1", help="the clock of --clock1-rank")
    ap.add_argument("--clock1-rank", type=int, default=3)
    ap.add_argument("--netns-prefix", default="lclk-ddp-")
    ap.add_argument("--cgroup-prefix", default="", help="join this cgroup + rank first")
    ap.add_argument("--ifname", default="eth0")
    ap.add_argument("--master", default="10.77.0.1")
    ap.add_argument("--port", type=int, default=29511)
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--go-dir", help="say ready here and wait for DIR/go before the steps")
    a = ap.parse_args()
    print("# torch imported in %.1f s" % (time.monotonic() - T0), flush=True)
    pids = {}
    for rank in range(a.ranks):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                rank_main(a, rank)
                code = 0
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        pids[pid] = rank
    failed = 0
    while pids:
        pid, status = os.wait()
        rank = pids.pop(pid)
        if os.waitstatus_to_exitcode(status) != 0:
            print("rank %d failed (status %#x)" % (rank, status), file=sys.stderr)
            failed += 1
            for other in pids:      # the rest would wait for it until the timeout
                os.kill(other, 15)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
