# SPDX-License-Identifier: GPL-2.0
"""The package as others get it: an sdist made from the checkout (in a copy
of it, so the tree stays clean) builds and installs alone, offline, into a
virtual environment (python3 -m venv --system-site-packages: Debian's pip,
setuptools and wheel, no PEP 668 refusal, no --root), and the installed
package imports with its extension. Skipped without Debian's venv, pip,
setuptools or wheel."""
import glob
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The headers the extension includes: lclk.h, and what it includes.
HEADERS = ["include/lclk.h", "include/lclk_model.h", "include/uapi/linux/lclk.h"]


def missing():
    for mod in ("venv", "pip", "setuptools", "wheel"):
        if subprocess.run([sys.executable, "-c", "import " + mod],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
            return mod
    return None


def run(*args, **kw):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if p.returncode:
        raise AssertionError("%s: exit %d\n%s" % (" ".join(args), p.returncode, p.stdout))
    return p.stdout


# Offline: no index, no proxy; pip's own cache and config left out.
OFFLINE = dict({k: v for k, v in os.environ.items() if not k.startswith("PIP_")}, PIP_NO_INDEX="1", PIP_NO_CACHE_DIR="1", PIP_CONFIG_FILE=os.devnull,
               PIP_DISABLE_PIP_VERSION_CHECK="1", http_proxy="http://0.0.0.0:9",
               https_proxy="http://0.0.0.0:9", PYTHONPATH="")


@unittest.skipIf(missing(), "no python3 module %s" % missing())
class Sdist(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        # The checkout's python/, include/ and debian/ (the version is in its
        # changelog), as they are in git (no build output).
        tree = os.path.join(d, "checkout")
        for sub in ("python", "include", "debian"):
            shutil.copytree(os.path.join(REPO, sub), os.path.join(tree, sub),
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info",
                                                          "build", "dist"))
        cls.dist = os.path.join(d, "dist")
        run(sys.executable, "setup.py", "-q", "sdist", "--dist-dir", cls.dist,
            cwd=os.path.join(tree, "python"), env=OFFLINE)
        cls.sdist = glob.glob(os.path.join(cls.dist, "lclk-*.tar.gz"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sdist_has_the_headers(self):
        self.assertEqual(len(self.sdist), 1, os.listdir(self.dist))
        with tarfile.open(self.sdist[0]) as t:
            names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
        for want in ["setup.py", "pyproject.toml", "lclk/_lclk.c", "lclk/_lclk.pyi",
                     "lclk/py.typed", "lclk/torch.py"] + HEADERS:
            self.assertIn(want, names)

    def test_sdist_installs_into_a_venv_offline(self):
        """pip builds a wheel from the sdist alone (unpacked in its own
        directory: no ../include) and installs it into a venv; the venv's
        python imports lclk with its extension, from the venv."""
        self.assertEqual(len(self.sdist), 1, os.listdir(self.dist))
        venv = os.path.join(self.tmp.name, "venv")
        run(sys.executable, "-m", "venv", "--system-site-packages", venv)
        py = os.path.join(venv, "bin", "python")
        run(py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", self.sdist[0],
            env=OFFLINE, cwd=self.tmp.name)
        out = run(py, "-c", "import lclk, lclk._lclk, lclk.perfetto; "
                  "print(lclk.__file__); print(lclk._lclk.__file__); "
                  "print(lclk.status_name(lclk.STATUS_SYNCED))",
                  env=OFFLINE, cwd=self.tmp.name)
        files = out.split()
        self.assertTrue(all(f.startswith(venv + "/") for f in files[:2]), out)
        self.assertEqual(files[2], "synced")


@unittest.skipIf(missing() or not shutil.which("make"), "no make or python3 module %s" % missing())
class MakeInstallPython(unittest.TestCase):
    def test_into_a_venv(self):
        """make install-python PYTHON_VENV=DIR makes the venv and installs
        there (no --root, no PEP 668 question), from an sdist in a temporary
        directory: the checkout gains no build/ or egg-info."""
        def litter():
            return sorted(glob.glob(os.path.join(REPO, "python", "*.egg-info")) +
                          glob.glob(os.path.join(REPO, "python", "build")) +
                          glob.glob(os.path.join(REPO, "python", "dist")))
        before = litter()
        with tempfile.TemporaryDirectory() as d:
            venv = os.path.join(d, "venv")
            run("make", "-s", "-C", REPO, "install-python", "PYTHON_VENV=" + venv, env=OFFLINE)
            out = run(os.path.join(venv, "bin", "python"), "-c",
                      "import lclk._lclk; print(lclk._lclk.__file__)", env=OFFLINE, cwd=d)
            self.assertTrue(out.startswith(venv + "/"), out)
        self.assertEqual(litter(), before)


if __name__ == "__main__":
    unittest.main()
