# SPDX-License-Identifier: GPL-2.0
# The C extension only; everything else is in pyproject.toml. It includes
# the repo's header-only reader (../include), so build from the checkout.
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))
include = os.path.join(here, "..", "include")
# lclk_model.h includes <linux/lclk.h>, as an installed program would.
uapi = os.path.join(include, "uapi")

setup(
    packages=["lclk"],
    include_package_data=False,
    package_data={"lclk": ["py.typed", "*.pyi"]},
    ext_modules=[
        Extension(
            "lclk._lclk",
            sources=["lclk/_lclk.c"],
            include_dirs=[include, uapi],
            depends=[os.path.join(include, h) for h in
                     ("lclk.h", "lclk_model.h", "uapi/linux/lclk.h")],
            extra_compile_args=["-O2", "-Wall", "-Wextra", "-Werror",
                                "-Wno-unused-parameter",
                                "-Wno-missing-field-initializers"],
        )
    ],
)
