#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The Python package (make python) with the module loaded: agrees with
# GET_TIME and lclkctl, status and bound round-trip through lclkctl set, a
# mapped clock keeps the module (rmmod refused, reads go on, no crash) and
# close() lets it go. TAP, from python/tests/guest_clock.py.
cd "$(dirname "$0")/../.." || exit 1
[ -f build/python/lib/lclk/.built ] || { echo "1..0 # SKIP make python first"; exit 0; }
PYTHONPATH=$PWD/build/python/lib exec /usr/bin/python3 python/tests/tap.py python/tests/guest_clock.py
