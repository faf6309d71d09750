#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/guest/torch_ddp.sh with torch as people train today: Debian sid's
# Python and python3-torch 2.x, in sid's root (scripts/release-root,
# scripts/in-root), and the lclk package the unit suite built for that
# Python (build/python-sid, tests/run-suites.sh). The job's files go in the
# repository, which the root shares. Runs in the VM with the module loaded;
# TAP.
set -u
cd "$(dirname "$0")/../.."
root=${LCLK_CACHE:-/var/cache/lclk}/sid/root
if [ ! -x "$root/usr/bin/python3" ] || [ ! -d build/python-sid/lib/lclk ]; then
	echo "1..0 # SKIP no sid root with Python, or no lclk package built for it (make check's unit suite)"
	exit 0
fi
mkdir -p build/tmp
# Fewer steps than torch_ddp.sh (300, 3 minutes under TCG): the same checks.
LCLK_DDP_STEPS=${LCLK_DDP_STEPS:-120} TMPDIR=$PWD/build/tmp LCLK_PYTHON="scripts/in-root sid python3" \
	LCLK_PYTHONPATH=build/python-sid/lib exec tests/guest/torch_ddp.sh
