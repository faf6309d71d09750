# SPDX-License-Identifier: GPL-2.0
"""Run unittest modules and print TAP, as the repo's suites count it:
    python3 python/tests/tap.py python/tests/test_clock.py ...
A test that raises unittest.SkipTest prints "ok N - name # SKIP why"."""
import importlib.util
import os
import sys
import traceback
import unittest


class TapResult(unittest.TestResult):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def _line(self, ok: bool, test: unittest.TestCase, extra: str = "") -> None:
        self.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, test.id(), extra), flush=True)

    def addSuccess(self, test):  # noqa: N802 - unittest's names
        super().addSuccess(test)
        self._line(True, test)

    def _fail(self, test, err):
        self._line(False, test)
        for line in "".join(traceback.format_exception(*err)).splitlines():
            print("# " + line)

    def addFailure(self, test, err):  # noqa: N802
        super().addFailure(test, err)
        self._fail(test, err)

    def addError(self, test, err):  # noqa: N802
        super().addError(test, err)
        self._fail(test, err)

    def addSkip(self, test, reason):  # noqa: N802
        super().addSkip(test, reason)
        self._line(True, test, " # SKIP " + reason)


def main(paths):
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for p in paths:
        name = os.path.splitext(os.path.basename(p))[0]
        spec = importlib.util.spec_from_file_location(name, p)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        suite.addTests(loader.loadTestsFromModule(mod))
    print("TAP version 13")
    print("1..%d" % suite.countTestCases(), flush=True)
    result = TapResult()
    suite.run(result)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
