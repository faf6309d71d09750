# SPDX-License-Identifier: GPL-2.0
# The C extension only; everything else is in pyproject.toml. It includes
# the repo's header-only reader: from the checkout, ../include; from an
# sdist, the copy of it that "setup.py sdist" puts at include/ (the
# checkout has none there, so the two never disagree).
import os
import re
import shutil

from setuptools import Extension, setup
from setuptools.command.sdist import sdist

here = os.path.dirname(os.path.abspath(__file__))
# lclk.h, what it includes, and <linux/lclk.h> as an installed program has it.
HEADERS = ("lclk.h", "lclk_model.h", os.path.join("uapi", "linux", "lclk.h"))


def find_include():
    for d in (os.path.join(here, "include"), os.path.join(here, "..", "include")):
        if all(os.path.exists(os.path.join(d, h)) for h in HEADERS):
            return d
    raise SystemExit("lclk: no %s: build from the checkout (python/) or an sdist"
                     % os.path.join("include", HEADERS[0]))


def find_version():
    """The version, kept in one place: debian/changelog's first entry
    (without the Debian revision); in an sdist, its PKG-INFO."""
    changelog = os.path.join(here, "..", "debian", "changelog")
    if os.path.exists(changelog):
        with open(changelog, encoding="utf-8") as f:
            m = re.match(r"lclk \(([^-)]+)", f.readline())
        if m:
            return m.group(1)
    with open(os.path.join(here, "PKG-INFO"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("Version:"):
                return line.split(":", 1)[1].strip()
    raise SystemExit("lclk: no version: build from the checkout (python/) or an sdist")


include = find_include()
# lclk_model.h includes <linux/lclk.h>, as an installed program would.
uapi = os.path.join(include, "uapi")


class SdistWithHeaders(sdist):
    """sdist, with the headers copied in at include/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        for h in HEADERS:
            dst = os.path.join(base_dir, "include", h)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(os.path.join(include, h), dst)


setup(
    version=find_version(),
    license="GPL-2.0-only",
    packages=["lclk"],
    include_package_data=False,
    package_data={"lclk": ["py.typed", "*.pyi"]},
    cmdclass={"sdist": SdistWithHeaders},
    ext_modules=[
        Extension(
            "lclk._lclk",
            sources=["lclk/_lclk.c"],
            include_dirs=[include, uapi],
            depends=[os.path.join(include, h) for h in HEADERS],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Werror",
                                "-Wno-unused-parameter",
                                "-Wno-missing-field-initializers"],
        )
    ],
)
