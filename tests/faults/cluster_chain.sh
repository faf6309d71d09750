#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: chained waits in the cluster view (rank k waits for rank k + 1,
#   up to 4 hops) where one hop's sender claims a 20 ms bound and its
#   clock is truly 15 ms ahead (issue 30 #9).
# truth: the generator's true times (cluster_chain.c): a wait through that
#   hop was not ended by the root, whatever the stamps say.
# why the fault cannot move it: the truth is how the chains were made;
#   the fault is in what the stamps and bounds say.
. tests/faults/lib.bash
chains=1000
[ "${LCLK_FAULT_LONG:-0}" = 1 ] && chains=100000
build/tests/faults/cluster_chain "$chains" >"$dir/readers.chain" || die "cluster_chain"
finish
