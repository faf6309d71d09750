#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# "make install" in the VM (its root is a throwaway overlay) installs the
# Python package for Debian's interpreter: from another directory, with no
# PYTHONPATH, "import lclk; print(lclk.Clock().now())" reads the loaded
# module's clock, and lclk.report runs as a module. TAP.
cd "$(dirname "$0")/../.." || exit 1
echo "TAP version 13"
echo "1..3"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if make -s install >"$log" 2>&1; then
	echo "ok 1 - make install"
else
	sed 's/^/# /' "$log" | tail -n 20
	echo "not ok 1 - make install"
fi
out=$(cd / && env -u PYTHONPATH /usr/bin/python3 -c 'import lclk; print(lclk.Clock().now())' 2>&1)
echo "# $out"
case $out in
"lclk.Now(time_ns="*", status="*")") echo "ok 2 - python3 -c 'import lclk; print(lclk.Clock().now())' after make install" ;;
*) echo "not ok 2 - python3 -c 'import lclk; print(lclk.Clock().now())' after make install" ;;
esac
if (cd / && env -u PYTHONPATH /usr/bin/python3 -m lclk.report --help | grep -q 'rank\*\.pftrace\|traces'); then
	echo "ok 3 - python3 -m lclk.report installed"
else
	echo "not ok 3 - python3 -m lclk.report installed"
fi
