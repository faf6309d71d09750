# SPDX-License-Identifier: GPL-2.0
"""The package's types, with Debian's mypy (python3-mypy, scripts/deps.sh):
the .pyi stub against the built extension (mypy.stubtest), and mypy --strict
over the pure-Python modules. Both run on the package "make python" built
(PYTHONPATH=build/python/lib, as tests/run-suites.sh sets it). Skipped
without mypy."""
import glob
import os
import subprocess
import sys
import unittest

import lclk

try:
    import mypy  # noqa: F401
except ImportError:
    mypy = None

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWLIST = os.path.join(HERE, "stubtest-allowlist.txt")
PKG = os.path.dirname(os.path.abspath(lclk.__file__))       # build/python/lib/lclk
LIB = os.path.dirname(PKG)
# mypy's cache next to the build: a cold run analyses torch (~40 s), a warm one ~2 s.
CACHE = os.path.join(os.path.dirname(LIB), "mypy-cache")


def run(*args):
    env = dict(os.environ, PYTHONPATH=LIB, MYPYPATH=LIB)
    p = subprocess.run([sys.executable, "-m", *args], cwd=LIB, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


@unittest.skipIf(mypy is None, "no mypy (scripts/deps.sh installs python3-mypy)")
class Types(unittest.TestCase):
    def test_stub_matches_extension(self):
        """lclk/_lclk.pyi says what lclk/_lclk.c does: names, finality, signatures."""
        self.assertTrue(glob.glob(os.path.join(PKG, "_lclk*.so")), "extension not built")
        rc, out = run("mypy.stubtest", "--allowlist", ALLOWLIST, "lclk._lclk")
        self.assertEqual(rc, 0, "stubtest:\n" + out)

    def test_mypy_strict(self):
        """The pure-Python modules pass mypy --strict (torch's own annotations included)."""
        mods = sorted(os.path.relpath(p, LIB) for p in glob.glob(os.path.join(PKG, "*.py")))
        self.assertIn("lclk/torch.py", mods)
        rc, out = run("mypy", "--strict", "--cache-dir", CACHE, *mods)
        self.assertEqual(rc, 0, "mypy --strict:\n" + out)


if __name__ == "__main__":
    unittest.main()
