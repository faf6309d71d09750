#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a process maps lclk0's page, moves its children into a new time
#   namespace whose CLOCK_MONOTONIC runs 10^5 s ahead, and its forked child
#   reads through the inherited page (issue 30 #3).
# truth: CLOCK_MONOTONIC_RAW + c, c measured in the host's namespace; the
#   child reads CLOCK_MONOTONIC_RAW shifted by the namespace and takes the
#   shift off, which it knows because its parent set it.
# why the fault cannot move it: a time namespace changes what one process
#   tree reads, not time; logical time is one for the whole host.
. tests/faults/lib.bash
$lclkctl set --offset 0 --bound 100us --max-drift 50000 --allow-backward >/dev/null || die "set"
calibrate raw
read_one mmap "$(dur 2)" raw -N 100000
read_one ioctl "$(dur 2)" raw
finish
