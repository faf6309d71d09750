# SPDX-License-Identifier: GPL-2.0
"""lclk with the module loaded (tests/guest/python.sh, in the VM): readings
agree with the kernel's GET_TIME (in a time namespace too), status and
bound set with lclkctl come back, and unloading while a clock is mapped
neither succeeds nor crashes."""
import ctypes
import fcntl
import gc
import os
import struct
import subprocess
import sys
import time
import unittest

import lclk

LCLKCTL = os.path.abspath("build/lclkctl")
MODULE = os.environ.get("LCLK_MODULE") or "kmod/lclk.ko"
MODULE_ARGS = (os.environ.get("LCLK_MODULE_ARGS") or "instances=2").split()

# struct lclk_time of include/uapi/linux/lclk.h, and _IOWR(0xEC, 0x02, it)
TIME = struct.Struct("=IIqqqI20x")
GET_TIME = 3 << 30 | TIME.size << 16 | 0xEC << 8 | 0x02


def get_time(fd):
    flags, cpu, base, logical, bound, status = TIME.unpack(
        fcntl.ioctl(fd, GET_TIME, bytes(TIME.size)))
    return cpu, base, logical, bound, status


CLONE_NEWTIME = 0x80
SHIFT_S = 100000        # the shifted namespace's CLOCK_MONOTONIC runs ahead by this


def readings_agree(c):
    """In a child: c's readings bracket GET_TIME's logical time, which the
    kernel answers in this process's CLOCK_MONOTONIC, whatever its time
    namespace; prints the differences, returns the exit status."""
    before = c.now()
    cpu, base, logical, bound, status = get_time(c.fileno())
    after = c.now()
    print("now - GET_TIME: %+d ns before, %+d ns after, bound %d ns"
          % (before.time_ns - logical, after.time_ns - logical, bound))
    return 0 if before.time_ns <= logical <= after.time_ns else 1


def check_opened_in_namespace():
    """Run by test_opened_in_shifted_namespace, inside the namespace."""
    sys.exit(readings_agree(lclk.Clock()))


def check_inherited_into_namespace():
    """Run by test_inherited_into_shifted_namespace: map and read, move
    the children into a shifted time namespace, and read in one of them."""
    c = lclk.Clock()
    c.now()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWTIME):
        print("unshare(CLONE_NEWTIME):", os.strerror(ctypes.get_errno()))
        sys.exit(77)
    with open("/proc/self/timens_offsets", "w") as f:
        f.write("monotonic %d 0" % SHIFT_S)
    pid = os.fork()
    if pid == 0:
        code = readings_agree(c)
        sys.stdout.flush()
        os._exit(code)
    sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))


def run_check(name, *prefix):
    """Run guest_clock.name() in a new interpreter, after prefix."""
    path = os.pathsep.join([os.path.dirname(os.path.abspath(__file__))] + sys.path)
    return subprocess.run([*prefix, sys.executable, "-c",
                           "import guest_clock; guest_clock.%s()" % name],
                          env=dict(os.environ, PYTHONPATH=path),
                          capture_output=True, text=True)


def lclkctl(*args, dev="/dev/lclk0"):
    subprocess.run([LCLKCTL, "-d", dev, *args], check=True, stdout=subprocess.DEVNULL)


def rmmod():
    return subprocess.run(["rmmod", "lclk"], stderr=subprocess.DEVNULL).returncode


def insmod():
    subprocess.run(["tests/guest/lib/insmod.sh", MODULE, *MODULE_ARGS], check=True)


class Guest(unittest.TestCase):
    def setUp(self):
        if not os.path.exists("/dev/lclk0"):
            insmod()
        lclkctl("set", "--offset", "1000s", "--bound", "2ms", "--max-drift", "0",
                "--holdover", "1h", "--allow-backward")

    def test_agrees_with_get_time(self):
        with lclk.Clock() as c:
            for _ in range(100):
                before = c.now()
                cpu, base, logical, bound, status = get_time(c.fileno())
                after = c.now()
                self.assertLessEqual(before.time_ns, logical)
                self.assertLessEqual(logical, after.time_ns)
                # the same model at the kernel's base time: the same answer
                same = c.from_monotonic(base, cpu)
                self.assertEqual((same.time_ns, same.bound_ns, same.status),
                                 (logical, bound, status))

    def test_agrees_with_lclkctl_status(self):
        with lclk.Clock() as c:
            before = c.now().time_ns
            out = subprocess.run([LCLKCTL, "status", "--json"], check=True,
                                 capture_output=True, text=True).stdout
            after = c.now().time_ns
        import json
        t = json.loads(out)["time_ns"]
        self.assertTrue(before <= t <= after, (before, t, after))

    def test_status_and_bound_round_trip(self):
        with lclk.Clock() as c:
            lclkctl("set", "--bound", "3ms", "--max-drift", "0")
            n = c.now()
            # 3 ms, 2 ns for the reading's floors, and the rate's truncation
            # (max_drift 0 still grows 1 unit of 2^-40 per ns: 0 ns here)
            self.assertEqual((n.status, n.bound_ns, n.bound_known), (lclk.STATUS_SYNCED, 3_000_002, True))
            self.assertIn("status=synced", repr(n))
            lclkctl("set", "--bound", "1ms", "--max-drift", "1000000")   # 1 ms/s growth
            a = c.now()
            time.sleep(0.2)
            b = c.now()
            self.assertGreaterEqual(a.bound_ns, 1_000_000)
            self.assertGreaterEqual(b.bound_ns - a.bound_ns, 190_000)
            lclkctl("set", "--unsync")
            n = c.now()
            self.assertEqual((n.status, n.bound_ns, n.bound_known),
                             (lclk.STATUS_UNSYNCED, lclk.BOUND_UNKNOWN, False))
            self.assertIn("bound_ns=unknown", repr(n))
            lclkctl("set", "--bound", "1ms", "--holdover", "50ms")
            time.sleep(0.1)
            self.assertEqual(c.now().status, lclk.STATUS_HOLDOVER)

    def test_offset_and_seconds(self):
        with lclk.Clock() as c:
            n = c.now()
            self.assertAlmostEqual(n.time_ns - n.base_ns, 1000 * 10**9, delta=10**6)
            self.assertAlmostEqual(n.seconds, n.time_ns / 1e9)
            m = time.monotonic_ns()
            self.assertAlmostEqual(c.from_monotonic(m).time_ns, m + 1000 * 10**9, delta=10**6)
            self.assertLessEqual(n.time_ns, c.now_ns())

    def test_info_and_second_instance(self):
        with lclk.Clock("/dev/lclk1") as c1, lclk.Clock() as c0:
            i0, i1 = c0.info(), c1.info()
            self.assertEqual((i0["index"], i1["index"]), (0, 1))
            self.assertEqual(i0["abi_version"], 2)
            self.assertTrue(i0["mmap"])
            self.assertGreaterEqual(i0["mmap_size"], 4096)
            self.assertEqual(c1.path, "/dev/lclk1")

    def test_opened_in_shifted_namespace(self):
        # The page cannot be mapped there: the reads are GET_TIME's.
        r = run_check("check_opened_in_namespace",
                      "unshare", "--time", "--monotonic", str(SHIFT_S), "--fork")
        if "unshare failed" in r.stderr:
            self.skipTest(r.stderr.strip())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_inherited_into_shifted_namespace(self):
        # A child born there inherits the mapping: it must read right.
        r = run_check("check_inherited_into_namespace")
        if r.returncode == 77:
            self.skipTest(r.stdout.strip())
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_closed_clock_raises(self):
        c = lclk.Clock()
        c.close()
        self.assertTrue(c.closed)
        for call in (c.now, c.now_ns, c.info, lambda: c.from_monotonic(0)):
            with self.assertRaises(ValueError):
                call()

    def test_unload_refused_while_mapped_and_reads_go_on(self):
        c = lclk.Clock()
        self.assertNotEqual(rmmod(), 0, "rmmod succeeded under a mapped clock")
        a = c.now()
        time.sleep(0.01)
        b = c.now()
        self.assertGreater(b.time_ns, a.time_ns)
        self.assertEqual(b.status, lclk.STATUS_SYNCED)
        c.close()
        self.assertEqual(rmmod(), 0, "close() left the module pinned")
        with self.assertRaises(ValueError):
            c.now()
        with self.assertRaises(FileNotFoundError):
            lclk.Clock()
        insmod()

    def test_dropped_clock_unpins_module(self):
        c = lclk.Clock()
        c.now()
        del c
        gc.collect()
        self.assertEqual(rmmod(), 0, "a collected clock left the module pinned")
        insmod()

    def test_unload_attempts_while_reading_in_a_child(self):
        # A child reads in a loop while rmmod is tried: refused every time,
        # the child never crashes, and after it exits the module unloads.
        child = subprocess.Popen([sys.executable, "-c",
                                  "import lclk, select, sys\n"
                                  "c = lclk.Clock()\n"
                                  "last = n = 0\n"
                                  "print('ready', flush=True)\n"
                                  "while not select.select([sys.stdin], [], [], 0)[0]:\n"
                                  "    for _ in range(1000):\n"
                                  "        t = c.now().time_ns\n"
                                  "        assert t >= last\n"
                                  "        last = t\n"
                                  "    n += 1000\n"
                                  "print('read', n, flush=True)\n"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                 env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        self.assertEqual(child.stdout.readline().strip(), "ready")
        attempts = [rmmod() for _ in range(10) if time.sleep(0.05) is None]
        alive = child.poll() is None
        child.stdin.write("stop\n")
        child.stdin.close()
        self.assertEqual(child.wait(), 0)
        self.assertTrue(alive)
        self.assertTrue(all(rc != 0 for rc in attempts), attempts)
        self.assertTrue(child.stdout.read().startswith("read "))
        self.assertEqual(rmmod(), 0)
        insmod()

if __name__ == "__main__":
    unittest.main()
