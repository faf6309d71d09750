#!/bin/sh
# "make demo": boot the test bed, load lclk and show it working.
set -eu
cd "$(dirname "$0")/../.."
exec tests/vm/vm-run -s 4 -t 600 -- tests/vm/demo-guest.sh
