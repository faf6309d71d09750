#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fault: a rank whose slices record no bound (an unsynced or old
#   recorder), its clock up to 3 ms off, in a run lclk.report judges
#   (issue 30 #11).
# truth: the generated run's true start times (report_verdicts.py).
# why the fault cannot move it: the truth is the generator's; the fault is
#   in what the trace says about it.
. tests/faults/lib.bash
n=200
[ "${LCLK_FAULT_LONG:-0}" = 1 ] && n=2000
PYTHONPATH=build/python/lib /usr/bin/python3 tests/faults/report_verdicts.py "$dir" "$n" \
	>"$dir/readers.report" 2>&1 || die "report_verdicts.py: $(tail -n 3 "$dir/readers.report")"
finish
