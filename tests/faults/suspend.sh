#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a system sleep of 1 s to 24 h with a learned rate of up to
#   500 ppm (issue 30 #5), folded by the module's own code (lclk_next()
#   with LCLK_CHANGE_SLEEP, built for the host by fault_suspend): suspending
#   the VM for hours is not practical, and the fold is all the module does
#   about a sleep.
# truth: exact integer arithmetic: a clock that has run at the learned
#   rate +- max_drift since the model was set, through the sleep.
# why the fault cannot move it: it is computed from the sleep's length,
#   not from the model.
. tests/faults/lib.bash
cases=20000
[ "${LCLK_FAULT_LONG:-0}" = 1 ] && cases=100000
build/tests/faults/fault_suspend "$cases" >"$dir/readers.arith" || die "fault_suspend"
finish
