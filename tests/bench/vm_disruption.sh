#!/bin/sh
# BENCH vm.disruption_violations: readings of the 7.2 guest's clock whose
# bound a snapshot restore broke, over 20 restores of a snapshot taken 10 s
# earlier (tests/vm/snapshot-restore says how; about 90 s),
# BENCH vm_race.disruption_violations: the same with a sync measured
# before each restore and set after it (-s; about 90 s), and
# BENCH vm_daemon.disruption_violations and vm_daemon.resync_max_s: the
# same with lclkctl daemon keeping the guest's clock from a chronyd on
# this host (-d; about 4 min): no reading beyond its bound, and the clock
# synced again after every restore (the longest it took, in seconds).
# Needs build/kernels/7.2/lclk.ko ("make bench" builds the matrix first)
# and build/lclkctl.
cd "$(dirname "$0")/../.." || exit 1
rc=0
tests/vm/snapshot-restore -l vm || rc=1
tests/vm/snapshot-restore -s -l vm_race || rc=1
tests/vm/snapshot-restore -d -l vm_daemon || rc=1
exit "$rc"
